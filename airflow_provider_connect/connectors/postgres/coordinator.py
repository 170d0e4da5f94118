"""What the PostgreSQL change-capture task runs, and in what order (Debezium's
``ChangeEventSourceCoordinator`` with PostgreSQL's slot handling): at the first poll it
decides from ``snapshot.mode``, the stored offset and the slot whether to snapshot, prepares
the publication and the slot, and starts the snapshot or the stream; the snapshot, when
there is one, runs to its end before the stream starts at the slot's consistent point."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.offsets import (
    incremental_state,
    snapshot_completed,
)
from airflow_provider_connect.connectors.change_capture.snapshot import snapshot_needed
from airflow_provider_connect.connectors.postgres.context import TaskContext
from airflow_provider_connect.connectors.postgres.database import SlotState
from airflow_provider_connect.connectors.postgres.snapshot_source import (
    PostgresSnapshotChangeEventSource,
)
from airflow_provider_connect.connectors.postgres.streaming_source import (
    PostgresStreamingChangeEventSource,
)

log = logging.getLogger(__name__)


class PostgresChangeEventSourceCoordinator:
    """The snapshot, then the stream, of one task. Used from its poll thread."""

    def __init__(self, context: TaskContext, streaming: PostgresStreamingChangeEventSource) -> None:
        self.context = context
        self.streaming = streaming
        self.snapshot: PostgresSnapshotChangeEventSource | None = None
        """The snapshot being read (None: none, or done)."""
        self.idle = False
        """Nothing is left to do: ``initial_only`` after its snapshot."""

    def open(self, stored: Mapping[str, Any] | None) -> None:
        """Starts from the ``stored`` offset: a snapshot, the stream, or nothing
        (``initial_only`` with its snapshot done)."""
        context = self.context
        config, connections, offsets = context.config, context.connections, context.offsets
        database = connections.database
        slot = database.slot(config.slot_name)
        offsets.load(stored)
        self.streaming.start_incremental(incremental_state(stored))
        snapshot = snapshot_needed(
            config.snapshot_mode, snapshot_completed(stored), lambda: self._position_lost(slot)
        )
        if config.snapshot_mode == "initial_only":
            if snapshot:
                self._start_snapshot(None, 0)
            else:
                self.idle = True
            return
        connections.prepare_publication()
        if slot is not None:
            connections.check_own(slot)
        if snapshot:
            if slot is not None:
                database.drop_slot(config.slot_name)
            consistent, exported = connections.connect_stream().create_slot(export_snapshot=True)
            self._start_snapshot(exported, consistent)
            return
        if slot is None:
            consistent, _ = connections.connect_stream().create_slot(export_snapshot=False)
            if stored is not None:
                log.warning(
                    "%s: replication slot %s was missing and is created anew: changes since "
                    "the stored offset are lost (snapshot.mode=when_needed reads the tables "
                    "again in that case)",
                    config.connector,
                    config.slot_name,
                )
            offsets.catch_up(consistent)
        self.streaming.resume()

    def _position_lost(self, slot: SlotState | None) -> bool:
        """Whether the slot no longer holds the stored position (logged)."""
        confirmed = slot.confirmed_flush_lsn if slot else None
        lost = confirmed is None or confirmed > self.context.offsets.position.lsn_commit
        if lost:
            log.warning(
                "%s: the slot no longer holds the stored position: snapshot",
                self.context.config.connector,
            )
        return lost

    def _start_snapshot(self, exported: str | None, consistent: int) -> None:
        self.snapshot = PostgresSnapshotChangeEventSource(self.context, exported, consistent)

    def poll(self) -> list[SourceRecord] | None:
        """The snapshot's next batch while it runs, else the stream's events; called after
        :meth:`open`, never while :attr:`idle`."""
        if self.snapshot is not None:
            records = self.snapshot.poll()
            if self.snapshot.done:
                self.snapshot = None
                self.idle = self.context.connections.stream is None  # initial_only
            return records
        return self.streaming.poll()
