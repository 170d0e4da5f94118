"""The initial snapshot of the binlog change-capture task (Debezium's
``BinlogSnapshotChangeEventSource``): every captured table read in one consistent snapshot
transaction, as ``r`` events at the binlog position of that snapshot, after the schema
change events of the tables read (their ``SHOW CREATE TABLE``), so the stream then starts
where the snapshot ends, without a gap or a double
(:mod:`~airflow_provider_connect.connectors.change_capture.snapshot`). A blocking snapshot
(:meth:`BinlogSnapshotChangeEventSource.blocking`, an ``execute-snapshot`` signal of type
``blocking``) reads the tables it names in a consistent snapshot of its own, without locks
or schema change events, its records at the stream's current position. Both send Debezium's
``Initial Snapshot`` notifications.

Locking (``snapshot.locking.mode``): MariaDB states the binlog position of a consistent
snapshot, so ``minimal`` and ``none`` lock nothing there; ``extended`` holds a global read
lock until the snapshot's last row is read; on MySQL ``minimal`` holds it while the position
is read (``database.py``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import SNAPSHOT_TRUE
from airflow_provider_connect.connectors.change_capture.offsets import (
    LAST_SNAPSHOT_RECORD,
    SNAPSHOT,
)
from airflow_provider_connect.connectors.change_capture.snapshot import (
    SnapshotEvents,
    SnapshotNotifications,
)
from airflow_provider_connect.connectors.mysql import envelope
from airflow_provider_connect.connectors.mysql.context import TaskContext
from airflow_provider_connect.connectors.mysql.database import Database
from airflow_provider_connect.connectors.mysql.offsets import BinlogOffsetContext
from airflow_provider_connect.connectors.mysql.tables import CapturedTable

log = logging.getLogger(__name__)


class BinlogSnapshotChangeEventSource:
    """One snapshot, read batch by batch from the first :meth:`poll` until :attr:`done`."""

    def __init__(self, context: TaskContext, tables: Sequence[str] | None = None) -> None:
        """Reads ``tables`` (``<db>.<table>`` names among the captured ones; None: every
        captured table, an initial snapshot)."""
        self.context = context
        config, connections, events = context.config, context.connections, context.events
        blocking = tables is not None
        found_tables = connections.captured_tables()
        if tables is not None:
            wanted = set(tables)
            found_tables = [(db, t) for db, t in found_tables if f"{db}.{t}" in wanted]
        snapshot = Database(config.parameters)
        connections.snapshot = snapshot
        locking = "none" if blocking else config.locking_mode
        found = snapshot.consistent_snapshot(locking, config.flavor.mariadb)
        if blocking:
            self.consistent = context.offsets.position
            current = context.offsets.position_offset()
            self._offset: Callable[[bool], dict[str, Any]] = lambda last: dict(current)
        else:
            self.consistent = BinlogOffsetContext.at(found.file, found.pos, found.gtids)
            context.offsets.restart_at(self.consistent)
            self._offset = lambda last: context.offsets.snapshot_offset(self.consistent, last)
        captured = []
        for db, table in found_tables:
            columns, key = connections.columns(db, table)
            captured.append(events.captured(db, table, columns, key))
        self._changes = (
            self._schema_changes(snapshot, captured)
            if config.include_schema_changes and not blocking
            else []
        )
        fetch = config.snapshot_fetch_size
        self._events: SnapshotEvents[CapturedTable, tuple[Any, ...]] = SnapshotEvents(
            (
                (t, snapshot.rows(t.db, t.table, [c.name for c in t.columns], fetch))
                for t in captured
            ),
            SnapshotNotifications(context.notifier, lambda t: f"{t.db}.{t.table}", captured),
        )
        log.info(
            "%s: %s snapshot of %d tables at %s:%d",
            config.connector,
            "blocking" if blocking else "initial",
            len(captured),
            found.file,
            found.pos,
        )

    @classmethod
    def blocking(
        cls, context: TaskContext, tables: Sequence[str]
    ) -> BinlogSnapshotChangeEventSource:
        """A blocking snapshot of ``tables`` (``<db>.<table>`` names; those not captured are
        left out), its records at the stream's current position."""
        return cls(context, tables)

    def _schema_changes(
        self, snapshot: Database, tables: list[CapturedTable]
    ) -> list[SourceRecord]:
        """The schema change events of the snapshot's tables: each table's
        ``SHOW CREATE TABLE``, as Debezium writes them at its snapshot's start."""
        events, offsets = self.context.events, self.context.offsets
        now_ms = int(time.time() * 1000)
        records = []
        for table in tables:
            ddl = snapshot.create_table(table.db, table.table)
            change = envelope.table_change(
                "CREATE", table.db, table.table, table.columns, table.key_columns, None, None
            )
            source = events.source(
                ts_ms=now_ms,
                snapshot=SNAPSHOT_TRUE,
                db=table.db,
                table=table.table,
                position=self.consistent,
            )
            offset = offsets.snapshot_offset(self.consistent, last=False)
            records.append(events.schema_change(table.db, ddl, [change], source, offset))
        return records

    @property
    def done(self) -> bool:
        """The batch with the snapshot's last row was returned (its connection closed)."""
        return self._events.done

    def poll(self) -> list[SourceRecord] | None:
        """The schema change events first, then the next rows of the snapshot, up to
        ``max.batch.size``; the snapshot ends with the batch holding its last row (or with
        the first batch when it has none)."""
        now_ms = int(time.time() * 1000)
        offsets, events, offset = self.context.offsets, self.context.events, self._offset

        def record(
            table: CapturedTable, row: tuple[Any, ...], marker: str, last: bool
        ) -> SourceRecord:
            return events.read(table, row, marker, offset(last), self.consistent, now_ms)

        changes, self._changes = self._changes, []
        records = changes + self._events.next_batch(self.context.config.max_batch_size, record)
        if self._events.done:
            last = records[-1] if records else None
            stored = (last.source_offset or {}) if last is not None else {}
            if last is not None and stored.get(SNAPSHOT) and not stored.get(LAST_SNAPSHOT_RECORD):
                # no rows: the last schema change ends the snapshot, so it is not taken again
                last.source_offset = offsets.snapshot_offset(self.consistent, last=True)
            self._end()
        return records or None

    def _end(self) -> None:
        snapshot, self.context.connections.snapshot = self.context.connections.snapshot, None
        if snapshot is not None:
            snapshot.end_snapshot()
            snapshot.close()
        log.info("%s: snapshot done", self.context.config.connector)
