"""PostgreSQL's side of the change-capture core's coordinator
(:class:`~airflow_provider_connect.connectors.change_capture.coordinator.ChangeEventSourceCoordinator`;
Debezium's ``PostgresChangeEventSourceFactory`` with its slot handling): the slot read at
each start, the publication prepared, and a snapshot in the slot's exported snapshot (a
new slot) or the stream from the loaded position (in the slot, created when missing)."""

from __future__ import annotations

import logging

from airflow_provider_connect.connectors.postgres.context import TaskContext
from airflow_provider_connect.connectors.postgres.database import SlotState
from airflow_provider_connect.connectors.postgres.offsets import Position
from airflow_provider_connect.connectors.postgres.snapshot_source import (
    PostgresSnapshotChangeEventSource,
)
from airflow_provider_connect.connectors.postgres.streaming_source import (
    PostgresStreamingChangeEventSource,
)

log = logging.getLogger(__name__)


class PostgresChangeEventSources:
    """A :class:`~airflow_provider_connect.connectors.change_capture.coordinator.ChangeEventSources`
    of one task. Used from its poll thread."""

    def __init__(self, context: TaskContext, streaming: PostgresStreamingChangeEventSource) -> None:
        self.context = context
        self.streaming = streaming
        self.slot: SlotState | None = None
        """The slot as :meth:`prepare` read it (None: there is none)."""

    def prepare(self) -> None:
        """Reads the slot (on the ordinary connection, opened here)."""
        self.slot = self.context.connections.database().slot(self.context.config.slot_name)

    def position_lost(self) -> bool:
        """Whether the slot no longer holds the loaded position (logged)."""
        confirmed = self.slot.confirmed_flush_lsn if self.slot else None
        lost = confirmed is None or confirmed > self.context.offsets.position.lsn_commit
        if lost:
            log.warning(
                "%s: the slot no longer holds the stored position: snapshot",
                self.context.config.connector,
            )
        return lost

    def snapshot(self, then_stream: bool) -> PostgresSnapshotChangeEventSource:
        """With ``then_stream``, the publication prepared and the slot created anew with an
        exported snapshot, read at the slot's consistent point; else a snapshot of its own."""
        if not then_stream:
            return PostgresSnapshotChangeEventSource(self.context, None, 0)
        self._prepare_publication_and_slot()
        config, connections = self.context.config, self.context.connections
        if self.slot is not None:
            connections.database().drop_slot(config.slot_name)
        consistent, exported = connections.connect_stream().create_slot(export_snapshot=True)
        return PostgresSnapshotChangeEventSource(self.context, exported, consistent)

    def stream(self, resumed: bool) -> None:
        """The publication prepared, the stream started from the loaded position in the slot
        (created at its consistent point when missing: logged when ``resumed``, as changes
        since the stored offset are lost)."""
        self._prepare_publication_and_slot()
        config, connections = self.context.config, self.context.connections
        if self.slot is None:
            consistent, _ = connections.connect_stream().create_slot(export_snapshot=False)
            if resumed:
                log.warning(
                    "%s: replication slot %s was missing and is created anew: changes since "
                    "the stored offset are lost (snapshot.mode=when_needed reads the tables "
                    "again in that case)",
                    config.connector,
                    config.slot_name,
                )
            self.context.offsets.catch_up(Position(consistent, -1))
        self.streaming.resume()

    def close(self) -> None:
        self.context.connections.close()

    def _prepare_publication_and_slot(self) -> None:
        self.context.connections.prepare_publication()
        if self.slot is not None:
            self.context.connections.check_own(self.slot)
