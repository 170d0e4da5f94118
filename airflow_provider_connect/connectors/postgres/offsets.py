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

from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots
from airflow_provider_connect.connectors.change_capture.offsets import OffsetContext

LSN_COMMIT = "lsn_commit"
EVENT = "event"
LSN_PROC = "lsn_proc"
TX_ID = "txId"
TS_USEC = "ts_usec"
_DEBEZIUM_LSN = "lsn"


def format_lsn(lsn: int) -> str:
    """``lsn`` as PostgreSQL writes it (``16/B374D848``)."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


class Position(NamedTuple):
    """Where an event is in the stream: its transaction's commit LSN and its index in that
    transaction (-1: before the transaction's first event). Totally ordered as the stream
    delivers events."""

    lsn_commit: int
    event: int


class PostgresOffsetContext(OffsetContext[Position]):
    """The task's position in the stream (a :class:`Position`, from ``Position(0, -1)``) and
    the offsets built from it: the core's :meth:`~OffsetContext.load`,
    :meth:`~OffsetContext.advance`, :meth:`~OffsetContext.catch_up` (to ``Position(lsn,
    -1)``: before any event committed at ``lsn``), :meth:`~OffsetContext.restart_at` and
    :meth:`~OffsetContext.record` move it; :meth:`change_offset` is a streamed change's."""

    def __init__(self, server: str, incremental: IncrementalSnapshots[Any] | None) -> None:
        super().__init__({"server": server}, Position(0, -1), incremental)

    def position_keys(self, position: Position) -> dict[str, Any]:
        return {LSN_COMMIT: position.lsn_commit, EVENT: position.event}

    def position_of(self, offset: Mapping[str, Any]) -> Position:
        lsn = offset.get(LSN_COMMIT, offset.get(_DEBEZIUM_LSN, 0))
        return Position(int(lsn), int(offset.get(EVENT, -1)))

    def change_offset(self, lsn: int, xid: int, commit_time_us: int) -> dict[str, Any]:
        """The offset of the streamed change at ``lsn`` at the current position, in the
        transaction ``xid`` committed at ``commit_time_us``."""
        position = self.position
        return self._change(position.lsn_commit, position.event, lsn, xid, commit_time_us)

    def next_change(
        self, lsn_commit: int, event: int, lsn: int, xid: int, commit_time_us: int
    ) -> dict[str, Any] | None:
        """Moves to the streamed change ``Position(lsn_commit, event)`` (:meth:`advance`) and
        returns its :meth:`change_offset`; None when the task is at or past it already (the
        change was delivered before a restart). One call for what every change needs."""
        position = Position(lsn_commit, event)
        if position <= self.position:
            return None
        self.position = position
        return self._change(lsn_commit, event, lsn, xid, commit_time_us)

    def _change(
        self, lsn_commit: int, event: int, lsn: int, xid: int, commit_time_us: int
    ) -> dict[str, Any]:
        """A streamed change's offset, one dict built at once (made for every event)."""
        return self.with_incremental(
            {
                LSN_COMMIT: lsn_commit,
                EVENT: event,
                LSN_PROC: lsn,
                TX_ID: xid,
                TS_USEC: commit_time_us,
            }
        )

    @staticmethod
    def commit_time_us(offset: Mapping[str, Any]) -> int | None:
        """The commit time a streamed change's offset carries (None for other offsets)."""
        return offset.get(TS_USEC)
