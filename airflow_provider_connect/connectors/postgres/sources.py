"""PostgreSQL's side of the change-capture core's coordinator
(:class:`~airflow_provider_connect.connectors.change_capture.coordinator.ChangeEventSourceCoordinator`;
Debezium's ``PostgresChangeEventSourceFactory`` with its slot handling): the slot read at
each start, the publication prepared, and a snapshot in the slot's exported snapshot (a
new slot) or the stream from the loaded position (in the slot, created when missing).

At a start from a stored offset, ``offset.mismatch.strategy`` settles where the offset's
commit LSN and the slot's ``confirmed_flush_lsn`` disagree (Debezium's
``PostgresReplicationConnection.startStreaming`` and log position check):

=================  =============================  ==========================================
strategy           slot ahead of the offset       offset ahead of the slot
=================  =============================  ==========================================
no_validation      streams (the server starts at  streams from the offset
                   the slot: logged)
trust_offset       fails (``when_needed``:        advances the slot to the offset
                   snapshot)
trust_slot         the offset moves to the slot   streams from the offset
trust_greater_lsn  the offset moves to the slot   advances the slot to the offset
=================  =============================  ==========================================

A missing slot is the slot ahead of every offset: ``trust_offset`` fails, the others create
it anew. The slot is never advanced under ``lsn.flush.mode=manual``. With no stored offset
nothing is compared: the stream starts at the slot's position."""

from __future__ import annotations

import logging

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.postgres.context import TaskContext
from airflow_provider_connect.connectors.postgres.database import SlotState
from airflow_provider_connect.connectors.postgres.offsets import Position, format_lsn
from airflow_provider_connect.connectors.postgres.snapshot_source import (
    PostgresSnapshotChangeEventSource,
)
from airflow_provider_connect.connectors.postgres.streaming_source import (
    PostgresStreamingChangeEventSource,
)

log = logging.getLogger(__name__)

SLOT_TRUSTED = frozenset({"trust_slot", "trust_greater_lsn"})
"""Strategies that move the offset to a slot ahead of it (no log position check)."""
SLOT_ADVANCED = frozenset({"trust_offset", "trust_greater_lsn"})
"""Strategies that advance the slot to an offset ahead of it."""

FLUSH_MODE_LOGS = {
    "connector": "Using LSN flush mode 'connector': the connector flushes the LSN of what the "
    "runtime stored; consider heartbeat.interval.ms to prevent WAL growth on low-activity "
    "databases.",
    "manual": "Using LSN flush mode 'manual': LSN will NOT be flushed to the database and WAL "
    "logs will NOT be cleared automatically. User is responsible for external LSN management.",
    "connector_and_driver": "Using LSN flush mode 'connector_and_driver': the connector flushes "
    "the LSN of what the runtime stored, and psycopg2 flushes a keepalive's LSN while every "
    "message it received is flushed, to prevent WAL growth on low-activity databases.",
}
"""Logged at each start (Debezium's wording, where its driver is psycopg2 here)."""
STRATEGY_LOGS = {
    "no_validation": "Using offset mismatch strategy 'no_validation': Connector will not "
    "validate slot position and will attempt to stream from the stored offset. Slot "
    "recreation is not detected.",
    "trust_offset": "Using offset mismatch strategy 'trust_offset': Validates and advances "
    "slot to offset when offset is ahead. Fails when slot is ahead, detecting slot recreation "
    "and preventing silent data issues.",
    "trust_slot": "Using offset mismatch strategy 'trust_slot': Treats the replication slot "
    "as authoritative. Advances offset to slot when slot is ahead, trusting server-side "
    "tracking.",
    "trust_greater_lsn": "Using offset mismatch strategy 'trust_greater_lsn': Self-healing "
    "mode that synchronizes to max(offset_lsn, slot_lsn), providing automatic recovery in "
    "either direction.",
}
"""Logged at each start (Debezium's)."""


class PostgresChangeEventSources:
    """A :class:`~airflow_provider_connect.connectors.change_capture.coordinator.ChangeEventSources`
    of one task. Used from its poll thread."""

    def __init__(self, context: TaskContext, streaming: PostgresStreamingChangeEventSource) -> None:
        self.context = context
        self.streaming = streaming
        self.slot: SlotState | None = None
        """The slot as :meth:`prepare` read it (None: there is none)."""
        mode, strategy = context.config.lsn_flush_mode, context.config.offset_mismatch_strategy
        log.log(logging.WARNING if mode == "manual" else logging.INFO, FLUSH_MODE_LOGS[mode])
        log.info(STRATEGY_LOGS[strategy])

    def prepare(self) -> None:
        """Reads the slot (on the ordinary connection, opened here)."""
        self.slot = self.context.connections.database().slot(self.context.config.slot_name)

    def position_lost(self) -> bool:
        """Whether the slot no longer holds the loaded position (logged); never under a
        strategy that trusts the slot, which the stream then follows."""
        if self.context.config.offset_mismatch_strategy in SLOT_TRUSTED:
            return False
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
        """The publication prepared, the stored offset and the slot reconciled when
        ``resumed`` (see the module docstring), the stream started from the loaded position
        in the slot (created at its consistent point when missing: logged when ``resumed``,
        as changes since the stored offset are lost)."""
        self._prepare_publication_and_slot()
        config, connections = self.context.config, self.context.connections
        if resumed:
            self._reconcile()
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

    def _reconcile(self) -> None:
        """Applies ``offset.mismatch.strategy`` to the loaded offset and the slot."""
        config, offsets = self.context.config, self.context.offsets
        strategy, stored = config.offset_mismatch_strategy, offsets.position.lsn_commit
        slot = self.slot.confirmed_flush_lsn if self.slot is not None else None
        if slot is not None and slot <= stored:  # the offset is ahead, or they agree
            if slot < stored and strategy in SLOT_ADVANCED and config.lsn_flush_mode != "manual":
                self.context.connections.advance_slot(stored)
            return
        where = f"slot {config.slot_name} at {format_lsn(slot)}" if slot else "no slot"
        if strategy == "trust_offset":
            log.warning("Last recorded offset is no longer available on the server.")
            raise ConnectException(
                f"The connector is trying to read change stream starting at "
                f"{format_lsn(stored)} ({where}), but this is no longer available on the server. "
                "Reconfigure the connector to use a snapshot mode when needed."
            )
        if slot is None:  # created anew by the caller, which logs it
            return
        trusted = strategy in SLOT_TRUSTED
        log.log(
            logging.INFO if trusted else logging.WARNING,
            "%s: %s is ahead of the stored offset %s (offset.mismatch.strategy=%s): %s",
            config.connector,
            where,
            format_lsn(stored),
            strategy,
            "streaming from the slot"
            if trusted
            else "the server streams from the slot, changes committed between are not read",
        )
        if trusted:
            offsets.catch_up(Position(slot, -1))

    def blocking_snapshot(self, tables: list[str]) -> PostgresSnapshotChangeEventSource:
        """A blocking snapshot of ``tables``, in a snapshot of its own, its records at the
        stream's position."""
        return PostgresSnapshotChangeEventSource.blocking(self.context, tables)

    def close(self) -> None:
        self.context.connections.close()

    def _prepare_publication_and_slot(self) -> None:
        self.context.connections.prepare_publication()
        if self.slot is not None:
            self.context.connections.check_own(self.slot)
