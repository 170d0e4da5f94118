"""The offsets of the PostgreSQL change-capture task (Debezium's ``PostgresOffsetContext``),
under the partition ``{"server": <topic.prefix>}``.

Their keys, as stored by every release so far (stored offsets of existing deployments
resume): ``lsn_commit`` (the commit LSN of the event's transaction) and ``event`` (its index
in that transaction; -1 before the first) place the stream; a streamed change adds
``lsn_proc`` (its own LSN), ``txId`` and ``ts_usec`` (its transaction's xid and commit
time); the core adds ``snapshot``, ``last_snapshot_record`` and ``incremental``
(:mod:`~airflow_provider_connect.connectors.change_capture.offsets`). Debezium's own
offsets, which name the commit LSN ``lsn``, are read too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from airflow_provider_connect.connectors.change_capture.offsets import OffsetContext

LSN_COMMIT = "lsn_commit"
EVENT = "event"
LSN_PROC = "lsn_proc"
TX_ID = "txId"
TS_USEC = "ts_usec"
_DEBEZIUM_LSN = "lsn"


class Position(NamedTuple):
    """Where an event is in the stream: its transaction's commit LSN and its index in that
    transaction (-1: before the transaction's first event). Totally ordered as the stream
    delivers events."""

    lsn_commit: int
    event: int


class PostgresOffsetContext(OffsetContext):
    """The task's position in the stream and the offsets built from it."""

    def __init__(self, server: str) -> None:
        super().__init__()
        self.partition: dict[str, Any] = {"server": server}
        self.position = Position(0, -1)
        """The position of the last event handed out (or skipped as already stored)."""
        self.recorded: Position | None = None
        """The position of the last record returned by a poll: what may be confirmed."""

    def load(self, stored: Mapping[str, Any] | None) -> None:
        """Resumes at the ``stored`` offset (none: stays where it is)."""
        if stored is not None:
            lsn = stored.get(LSN_COMMIT, stored.get(_DEBEZIUM_LSN, 0))
            self.position = self.recorded = Position(int(lsn), int(stored.get(EVENT, -1)))

    def stream_position(self) -> dict[str, Any]:
        return {LSN_COMMIT: self.position.lsn_commit, EVENT: self.position.event}

    def change_offset(self, lsn: int, xid: int, commit_time_us: int) -> dict[str, Any]:
        """The offset of the streamed change at ``lsn`` at the current position, in the
        transaction ``xid`` committed at ``commit_time_us``."""
        position = self.position  # one dict built at once: this is done for every event
        return self.with_incremental(
            {
                LSN_COMMIT: position.lsn_commit,
                EVENT: position.event,
                LSN_PROC: lsn,
                TX_ID: xid,
                TS_USEC: commit_time_us,
            }
        )

    def advance(self, lsn_commit: int, event: int) -> bool:
        """Moves to event ``event`` of the transaction committed at ``lsn_commit``; False
        when the position is at or past it already (a replay after a restart: the event was
        delivered)."""
        position = Position(lsn_commit, event)
        if position <= self.position:
            return False
        self.position = position
        return True

    def catch_up(self, lsn: int) -> None:
        """Moves to ``lsn`` (before any event committed there) unless already past it."""
        self.position = max(self.position, Position(lsn, -1))

    def restart_at(self, lsn: int) -> None:
        """Moves to ``lsn`` (the consistent point of a new snapshot), whatever came before."""
        self.position = Position(lsn, -1)

    def record(self, offset: Mapping[str, Any]) -> None:
        """Notes ``offset`` as that of the last record returned."""
        self.recorded = Position(offset[LSN_COMMIT], offset[EVENT])

    @staticmethod
    def commit_time_us(offset: Mapping[str, Any]) -> int | None:
        """The commit time a streamed change's offset carries (None for other offsets)."""
        return offset.get(TS_USEC)
