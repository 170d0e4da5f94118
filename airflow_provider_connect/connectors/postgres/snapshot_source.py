"""The initial snapshot of the PostgreSQL change-capture task (Debezium's
``PostgresSnapshotChangeEventSource``): every captured table read in one snapshot of the
database, as ``r`` events at the stream's position. With the slot's exported snapshot
(taken at the slot's consistent point) the stream then starts where the snapshot ends,
without a gap or a double (:mod:`~airflow_provider_connect.connectors.change_capture.snapshot`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.snapshot import SnapshotEvents
from airflow_provider_connect.connectors.postgres.context import TaskContext
from airflow_provider_connect.connectors.postgres.database import Snapshot
from airflow_provider_connect.connectors.postgres.offsets import Position
from airflow_provider_connect.connectors.postgres.tables import CapturedTable

log = logging.getLogger(__name__)


class PostgresSnapshotChangeEventSource:
    """One snapshot, read batch by batch from the first :meth:`poll` until :attr:`done`."""

    def __init__(self, context: TaskContext, exported: str | None, consistent: int) -> None:
        """Reads in the snapshot ``exported`` (None: a snapshot of its own), whose records
        are at the position ``consistent``."""
        self.context = context
        config, connections, events = context.config, context.connections, context.events
        snapshot = Snapshot(config.parameters, exported, config.snapshot_fetch_size)
        connections.snapshot = snapshot
        self.consistent = Position(consistent, -1)
        context.offsets.restart_at(self.consistent)
        tables = connections.captured_tables()
        quote = connections.database().quote
        self._events: SnapshotEvents[CapturedTable, tuple[Any, ...]] = SnapshotEvents(
            (events.captured(info), (row for batch in snapshot.rows(info, quote) for row in batch))
            for info in tables
        )
        log.info("%s: snapshot of %d tables at %X", config.connector, len(tables), consistent)

    @property
    def done(self) -> bool:
        """The batch with the snapshot's last row was returned (its connection closed)."""
        return self._events.done

    def poll(self) -> list[SourceRecord] | None:
        """The next rows of the snapshot, up to ``max.batch.size``; the snapshot ends with
        the batch holding its last row (or with the first batch when it has none)."""
        now_ms = int(time.time() * 1000)
        offsets, events = self.context.offsets, self.context.events

        def record(
            table: CapturedTable, row: tuple[Any, ...], marker: str, last: bool
        ) -> SourceRecord:
            offset = offsets.snapshot_offset(self.consistent, last)
            return events.read(table, row, marker, offset, now_ms)

        records = self._events.next_batch(self.context.config.max_batch_size, record)
        if self._events.done:
            self._end()
        return records or None

    def _end(self) -> None:
        snapshot, self.context.connections.snapshot = self.context.connections.snapshot, None
        if snapshot is not None:
            snapshot.close()
        log.info("%s: snapshot done", self.context.config.connector)
