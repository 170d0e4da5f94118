"""The offsets of the binlog change-capture task (Debezium's ``BinlogOffsetContext``), under
the partition ``{"server": <topic.prefix>}``, with Debezium's keys: ``file`` and ``pos`` (where
to restart: the start of the current transaction while in one, else the next event), ``event``
(the events of that transaction already handled, counted from its start) and ``row`` (the rows
of the next rows event already emitted), ``gtids`` (the GTID set handled before the current
transaction), ``server_id`` and ``ts_sec`` (the last event's origin and time); the core adds
``snapshot``, ``last_snapshot_record`` and ``incremental``
(:mod:`~airflow_provider_connect.connectors.change_capture.offsets`).

A restart reads the interrupted transaction again from its start (by file and position, or by
GTID set: the set before it) and skips what was handed out already: a position is ordered as
the log delivers events on one server (:class:`Position`), so the core's
:meth:`~OffsetContext.advance` drops the replayed events. ``event`` and ``row`` are left out
when zero, as Debezium leaves them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots
from airflow_provider_connect.connectors.change_capture.offsets import OffsetContext

FILE = "file"
POS = "pos"
EVENT = "event"
ROW = "row"
GTIDS = "gtids"
SERVER_ID = "server_id"
TS_SEC = "ts_sec"


def file_number(file: str) -> int:
    """The sequence number of binlog file ``file`` (``bin.000042`` → 42; 0 for none)."""
    _, _, suffix = file.rpartition(".")
    return int(suffix) if suffix.isdigit() else 0


class Position(NamedTuple):
    """Where an event is in the log: the restart point (``file``, whose number orders it, and
    ``pos``), the events of the current transaction handled before it and the rows of its
    rows event handed out up to it (``row`` 0: before the event's first). Totally ordered as
    the log of one server delivers events; ``gtids`` rides along, unordered."""

    file_number: int
    pos: int
    event: int
    row: int
    file: str
    gtids: str | None


START = Position(0, 0, 0, 0, "", None)


class BinlogOffsetContext(OffsetContext[Position]):
    """The task's position in the binlog and the offsets built from it; the streaming source
    sets it as events arrive (:meth:`~OffsetContext.advance`), the snapshot's consistent
    point starts it (:meth:`~OffsetContext.restart_at`)."""

    def __init__(self, server: str, incremental: IncrementalSnapshots[Any] | None) -> None:
        super().__init__({"server": server}, START, incremental)
        self.server_id = 0
        """The origin server of the last event (its header's id)."""
        self.ts_sec: int | None = None
        """The time of the last event, in seconds since the epoch."""

    def position_keys(self, position: Position) -> dict[str, Any]:
        keys: dict[str, Any] = {FILE: position.file, POS: position.pos}
        if position.gtids:
            keys[GTIDS] = position.gtids
        if position.event:
            keys[EVENT] = position.event
        if position.row:
            keys[ROW] = position.row
        if self.server_id:
            keys[SERVER_ID] = self.server_id
        if self.ts_sec is not None:
            keys[TS_SEC] = self.ts_sec
        return keys

    def position_of(self, offset: Mapping[str, Any]) -> Position:
        file = str(offset.get(FILE) or "")
        return Position(
            file_number(file),
            int(offset.get(POS) or 0),
            int(offset.get(EVENT) or 0),
            int(offset.get(ROW) or 0),
            file,
            offset.get(GTIDS) or None,
        )

    @staticmethod
    def at(file: str, pos: int, gtids: str | None, event: int = 0, row: int = 0) -> Position:
        """The position ``event`` events and ``row`` rows past the restart point
        ``file``/``pos``."""
        return Position(file_number(file), pos, event, row, file, gtids)
