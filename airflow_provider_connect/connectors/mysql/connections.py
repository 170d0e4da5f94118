"""The task's connections to the server (Debezium's ``BinlogConnectorConnection`` and its
binary log client): an ordinary one for the catalog, checks and heartbeats; the binlog
stream; the snapshot's, while a snapshot is read. Each opens when first needed and all
close together, whatever each of them does: after a failure the next poll opens again what
it needs, the stream resuming after the last record returned (see the core's coordinator)."""

from __future__ import annotations

import logging

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.mysql.binlog import BinlogStream
from airflow_provider_connect.connectors.mysql.config import BinlogConnectorConfig
from airflow_provider_connect.connectors.mysql.database import Database
from airflow_provider_connect.connectors.mysql.offsets import Position
from airflow_provider_connect.connectors.mysql.types import Column

log = logging.getLogger(__name__)

_CIPHER = "SHOW SESSION STATUS LIKE 'Ssl_cipher'"
"""The session's TLS cipher: empty on a plain connection."""


class BinlogConnections:
    """The connections of one task. Used from its poll thread, except :meth:`close` (from
    any thread)."""

    def __init__(self, config: BinlogConnectorConfig) -> None:
        self.config = config
        self._database: Database | None = None
        self.stream: BinlogStream | None = None
        self.snapshot: Database | None = None
        """The snapshot's connection, in its snapshot transaction, while a snapshot is read."""

    def database(self) -> Database:
        """The ordinary connection, opened when first needed (and checked then: the server's
        settings the connector needs, with a message that says what to change)."""
        if self._database is None:
            database = Database(self.config.parameters)
            try:
                problems = database.server_problems(self.config.flavor.name, self.config.server_id)
            except BaseException:
                database.close()
                raise
            if self.config.tls_required and not database.query(_CIPHER)[0][1]:
                problems.append(("", "database.ssl.mode is required, but the server offers no TLS"))
            if problems:
                database.close()
                raise ConnectException("; ".join(message for _, message in problems))
            self._database = database
        return self._database

    def captured_tables(self) -> list[tuple[str, str]]:
        """``(database, table)`` of the captured tables, the signal table aside."""
        filters = self.config.filters
        return [
            (db, table)
            for db, table in self.database().tables()
            if filters.table(db, table) and f"{db}.{table}" != filters.signal_table
        ]

    def columns(self, db: str, table: str) -> tuple[list[Column], list[str]]:
        """The columns of ``db.table`` as the catalog has them now, and its key's."""
        database = self.database()
        columns = [Column.of_information_schema(row) for row in database.columns(db, table)]
        return columns, database.primary_key(db, table)

    def start_stream(self, position: Position) -> BinlogStream:
        """The binlog read from ``position``: after its GTID set when it has one and the
        server keeps GTIDs, else from its file and position."""
        self.close_stream()
        config = self.config
        self.stream = BinlogStream(
            config.parameters,
            config.server_id,
            mariadb=config.flavor.mariadb,
            file=position.file,
            pos=position.pos,
            gtids=position.gtids,
            annotate=config.include_query,
            timeout_s=config.parameters["connect_timeout"],
        )
        log.info(
            "%s: reading the binlog from %s",
            config.connector,
            f"GTID set {position.gtids}" if position.gtids else f"{position.file}:{position.pos}",
        )
        return self.stream

    def close_stream(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            stream.close()

    def close(self) -> None:
        """Closes every connection, whatever each does."""
        for close in (self.close_stream, self._close_snapshot, self._close_database):
            try:
                close()
            except Exception as e:  # the others still close
                log.debug("%s: closing a connection: %s", self.config.connector, e)

    def _close_snapshot(self) -> None:
        snapshot, self.snapshot = self.snapshot, None
        if snapshot is not None:
            snapshot.close()

    def _close_database(self) -> None:
        database, self._database = self._database, None
        if database is not None:
            database.close()
