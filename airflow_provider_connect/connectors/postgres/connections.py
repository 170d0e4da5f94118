"""The task's connections to the captured database (Debezium's ``PostgresConnection`` and
``ReplicationConnection``): an ordinary one for the catalog, the publication and the slot;
the replication stream; the snapshot's, while a snapshot is read; the incremental
snapshots' chunk reader. Each opens when first needed and all close together, whatever
each of them does: after a failure the next poll opens again what it needs (the stream
resuming after the last record returned, see the core's coordinator), and the slot and the
publication stay as they were."""

from __future__ import annotations

import logging
import time

from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.database import (
    CREATED_BY,
    Database,
    SlotState,
    Snapshot,
    TableInfo,
    require_psycopg2,
)
from airflow_provider_connect.connectors.postgres.incremental import PostgresChunkReader
from airflow_provider_connect.connectors.postgres.offsets import format_lsn
from airflow_provider_connect.connectors.postgres.stream import ReplicationStream

log = logging.getLogger(__name__)


class PostgresConnections:
    """The connections of one task. Used from its poll thread, except :meth:`drop_provisioned`
    (its own connection, from any thread)."""

    def __init__(self, config: PostgresConnectorConfig) -> None:
        self.config = config
        self._database: Database | None = None
        self.stream: ReplicationStream | None = None
        self.snapshot: Snapshot | None = None
        self.chunks = (
            PostgresChunkReader(config.parameters, signal, self.table_named)
            if (signal := config.filters.signal_table)
            else None
        )
        self.slot_state: SlotState | None = None
        """The slot's state as last read (:meth:`check_slot`), for the task's metrics."""
        self.next_slot_check = 0.0

    def database(self) -> Database:
        """The ordinary connection, opened when first needed."""
        if self._database is None:
            self._database = Database(self.config.parameters)
        return self._database

    def captured_tables(self) -> list[TableInfo]:
        """The captured tables (without the signal table), as the catalog has them now."""
        database = self.database()
        return [
            database.table(oid, s, t)
            for oid, s, t in database.tables()
            if self.config.filters.table(s, t) and f"{s}.{t}" != self.config.filters.signal_table
        ]

    def captured_names(self) -> list[str]:
        """The names (``<schema>.<table>``) of the captured tables, the signal table among
        them."""
        return [
            f"{s}.{t}" for _, s, t in self.database().tables() if self.config.filters.table(s, t)
        ]

    def table_named(self, name: str) -> TableInfo | None:
        """The table ``name`` (``<schema>.<table>``) as the catalog has it now, or None."""
        database = self.database()
        for oid, schema, table in database.tables():
            if f"{schema}.{table}" == name:
                return database.table(oid, schema, table)
        return None

    # -- publication and slot -------------------------------------------------------------
    def prepare_publication(self) -> None:
        """Creates the publication (``publication.autocreate.mode``) or sets its tables
        (``filtered``); with ``disabled`` it must exist."""
        config, database = self.config, self.database()
        mode = config.publication_autocreate_mode
        existing = database.publication(config.publication)
        if mode == "disabled":
            if existing is None:
                raise ConnectException(f"Publication {config.publication} does not exist")
            return
        tables = self.captured_names()
        if existing is None:
            database.create_publication(config.publication, mode, tables, config.connector)
        elif mode == "filtered" and not existing[0]:
            database.set_publication_tables(config.publication, tables)

    def check_own(self, slot: SlotState) -> None:
        """Refuses a slot of another database or plugin; waits (retrying) while another
        session streams it, rather than ending that session."""
        name = self.config.slot_name
        if slot.database != self.config.dbname or slot.plugin != "pgoutput":
            raise ConnectException(
                f"Replication slot {name} belongs to database {slot.database} with "
                f"plugin {slot.plugin}: give this connector a slot.name of its own"
            )
        if slot.active_pid is not None:
            raise RetriableException(
                f"Replication slot {name} is in use by the session of PID "
                f"{slot.active_pid}; trying again"
            )

    def advance_slot(self, lsn: int) -> None:
        """Moves the slot's confirmed position to ``lsn`` (``pg_replication_slot_advance`` on
        the ordinary connection, before the slot is streamed; the server never moves it past
        its flushed log). The server refusing it fails the task with Debezium's message; a
        lost connection stays retriable."""
        name, target = self.config.slot_name, format_lsn(lsn)
        command = f"SELECT pg_replication_slot_advance('{name}', '{target}')"
        log.info("Seeking to %s on the replication slot with command %s", target, command)
        try:
            self.database().query("SELECT pg_replication_slot_advance(%s, %s)", (name, target))
        except require_psycopg2().errors.ObjectNotInPrerequisiteState as e:
            raise ConnectException(
                f"Cannot seek to the last known offset '{target}' on replication slot "
                f"'{name}'. Error from server: {e}"
            ) from e

    def check_slot(self) -> None:
        """Reads the slot's retained log and lag (at most every ``status.update.interval.ms``
        and after each confirmation); a failure only leaves the state as it was."""
        try:
            if self._database is not None:
                self.slot_state = self._database.slot(self.config.slot_name)
        except require_psycopg2().Error as e:
            log.debug("%s: reading the slot's state failed: %s", self.config.connector, e)
        self.next_slot_check = time.monotonic() + self.config.status_update_interval_s

    def drop_provisioned(self, publication: bool = True) -> None:
        """Drops the slot (when it is of this connector's database) and, with
        ``publication``, the publication this connector created, on a connection of its
        own."""
        config = self.config
        database = Database(config.parameters)
        try:
            slot = database.slot(config.slot_name)
            if slot is not None and slot.database == config.dbname:
                database.drop_slot(config.slot_name)
            existing = database.publication(config.publication) if publication else None
            if existing is not None and existing[1] == CREATED_BY + config.connector:
                database.drop_publication(config.publication)
        finally:
            database.close()

    # -- the stream -----------------------------------------------------------------------
    def connect_stream(self) -> ReplicationStream:
        self.stream = ReplicationStream(
            self.config.parameters, self.config.slot_name, self.config.status_update_interval_s
        )
        return self.stream

    def start_stream(self, lsn: int) -> ReplicationStream:
        """Streams the publication from ``lsn`` (on a new connection when there is none)."""
        stream = self.stream or self.connect_stream()
        stream.start(self.config.publication, lsn)
        return stream

    def confirm(self, lsn: int) -> None:
        """Confirms ``lsn`` to the server (see :meth:`ReplicationStream.confirm`); closes
        the stream when that fails: the next poll connects again."""
        if self.stream is None:
            return
        try:
            self.stream.confirm(lsn)
        except require_psycopg2().Error as e:
            log.warning("%s: confirming the stream's position failed: %s", self.config.connector, e)
            self.close_stream()
            return
        self.check_slot()

    def close_stream(self) -> None:
        if self.stream is not None:
            try:
                self.stream.close()
            finally:
                self.stream = None

    def close(self) -> None:
        """Closes the stream, the snapshot's, the chunk reader's and the ordinary
        connections, each whatever the others do (a failed one is already gone)."""
        for close in (
            self.close_stream,
            self.snapshot.close if self.snapshot is not None else None,
            self.chunks.close if self.chunks is not None else None,
            self._database.close if self._database is not None else None,
        ):
            if close is not None:
                try:
                    close()
                except Exception as e:
                    log.debug("%s: closing a connection failed: %s", self.config.connector, e)
        self.snapshot = None
        self._database = None
