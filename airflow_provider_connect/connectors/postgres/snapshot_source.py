"""The snapshots of the PostgreSQL change-capture task (Debezium's
``PostgresSnapshotChangeEventSource``): tables read in one snapshot of the database, as
``r`` events.

* The **initial snapshot** reads every captured table in the snapshot the slot exported
  when it was created, its records at the slot's consistent point, so the stream then
  starts where the snapshot ends, without a gap or a double
  (:mod:`~airflow_provider_connect.connectors.change_capture.snapshot`); under
  ``initial_only`` it reads in a fresh snapshot of its own.
* A **blocking snapshot** (:meth:`PostgresSnapshotChangeEventSource.blocking`, an
  ``execute-snapshot`` signal of type ``blocking``) reads the tables it names in a fresh
  snapshot of its own, its records at the stream's current position, without the initial
  snapshot's offset keys: a restart after it streams on, it takes no snapshot again.

With ``snapshot.max.threads`` above 1, up to that many tables are read at once, each on a
connection of its own in the same snapshot (the slot's, or the one the first connection
exports); the records still come table after table, each table's rows together, with
Debezium's ``source.snapshot`` markers. Both send Debezium's ``Initial Snapshot``
notifications (``STARTED``, ``IN_PROGRESS`` and ``TABLE_SCAN_COMPLETED`` of each table as
its rows are reached and its last row is returned, ``COMPLETED`` with the last batch).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.snapshot import (
    SnapshotEvents,
    SnapshotNotifications,
)
from airflow_provider_connect.connectors.postgres.context import TaskContext
from airflow_provider_connect.connectors.postgres.database import Snapshot
from airflow_provider_connect.connectors.postgres.offsets import Position
from airflow_provider_connect.connectors.postgres.tables import CapturedTable

log = logging.getLogger(__name__)


class PostgresSnapshotChangeEventSource:
    """One snapshot, read batch by batch from the first :meth:`poll` until :attr:`done`.
    Used from the task's poll thread (its reading threads are its own)."""

    def __init__(
        self,
        context: TaskContext,
        exported: str | None,
        consistent: int | None,
        tables: Sequence[str] | None = None,
    ) -> None:
        """Reads ``tables`` (``<schema>.<table>`` names among the captured ones; None: every
        captured table) in the snapshot ``exported`` (None: a snapshot of its own). An
        initial snapshot's records are at the log position ``consistent``; with None (a
        blocking snapshot, :meth:`blocking`) they are at the stream's current position."""
        self.context = context
        config, connections, events = context.config, context.connections, context.events
        snapshot = Snapshot(
            config.parameters,
            exported,
            config.snapshot_fetch_size,
            config.snapshot_max_threads,
            config.snapshot_isolation_mode,
        )
        connections.snapshot = snapshot
        self._offset = self._offsets(consistent)
        infos = connections.captured_tables()
        if tables is not None:
            wanted = set(tables)
            infos = [info for info in infos if info.full_name in wanted]
        captured = [events.captured(info) for info in infos]
        self._events: SnapshotEvents[CapturedTable, tuple[Any, ...]] = SnapshotEvents(
            snapshot.tables(
                captured,
                lambda table: table.info,
                connections.database().quote,
                f"{config.connector}-snapshot",
            ),
            SnapshotNotifications(context.notifier, lambda t: t.info.full_name, captured),
        )
        log.info(
            "%s: %s snapshot of %d tables (%d connections)",
            config.connector,
            "initial" if consistent is not None else "blocking",
            len(captured),
            len(snapshot.connections),
        )

    @classmethod
    def blocking(
        cls, context: TaskContext, tables: Sequence[str]
    ) -> PostgresSnapshotChangeEventSource:
        """A blocking snapshot of ``tables`` (``<schema>.<table>`` names; those not captured
        are left out), read in a fresh snapshot of its own, its records at the stream's
        current position (``context.offsets.position_offset()``, taken now)."""
        return cls(context, None, None, tables)

    def _offsets(self, consistent: int | None) -> Callable[[bool], dict[str, Any]]:
        """What makes a record's offset (given whether it is the snapshot's last)."""
        offsets = self.context.offsets
        if consistent is None:
            current = offsets.position_offset()
            return lambda last: dict(current)
        position = Position(consistent, -1)
        offsets.restart_at(position)
        return lambda last: offsets.snapshot_offset(position, last)

    @property
    def done(self) -> bool:
        """The batch with the snapshot's last row was returned (its connections closed)."""
        return self._events.done

    def poll(self) -> list[SourceRecord] | None:
        """The next rows of the snapshot, up to ``max.batch.size``; the snapshot ends with
        the batch holding its last row (or with the first batch when it has none)."""
        now_ms = int(time.time() * 1000)
        offset, events = self._offset, self.context.events

        def record(
            table: CapturedTable, row: tuple[Any, ...], marker: str, last: bool
        ) -> SourceRecord:
            return events.read(table, row, marker, offset(last), now_ms)

        records = self._events.next_batch(self.context.config.max_batch_size, record)
        if self._events.done:
            self._end()
        return records or None

    def _end(self) -> None:
        snapshot, self.context.connections.snapshot = self.context.connections.snapshot, None
        if snapshot is not None:
            snapshot.close()
        log.info("%s: snapshot done", self.context.config.connector)
