"""The stream of the binlog change-capture task (Debezium's
``BinlogStreamingChangeEventSource``): the binlog's row events become change events, its DDL
schema change events (and new table schemas), with transaction metadata, incremental
snapshots and heartbeats.

Positions: a transaction starts at its GTID event (or its ``BEGIN`` without GTIDs); each
event handled in it counts, and each row of a rows event is placed by the count before its
event and its index (:mod:`.offsets`). A restart reads the interrupted transaction again from
its start and the core's offset context drops what was handed out already, so the streamed
changes are delivered at least once, and exactly once on the exactly-once worker (KIP-618).
A commit moves the position past the transaction and adds its GTID to the set the offsets
carry; heartbeats carry that position while no transaction is open.

Table schemas: each rows event comes with its table's columns as the binlog describes them
(``binlog_row_metadata=FULL``); the catalog's details (declared types, defaults) are taken for
the columns whose name and base type match, so rows written before a DDL that the stream
reaches later (a DDL made while the connector was stopped) decode as they were written."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    OP_CREATE,
    OP_DELETE,
    OP_TRUNCATE,
    OP_UPDATE,
    SNAPSHOT_FALSE,
    SNAPSHOT_INCREMENTAL,
)
from airflow_provider_connect.connectors.change_capture.heartbeat import Heartbeat
from airflow_provider_connect.connectors.change_capture.signals import SIGNAL_COLUMNS
from airflow_provider_connect.connectors.change_capture.transactions import (
    TransactionContext,
    TransactionMonitor,
)
from airflow_provider_connect.connectors.mysql import binlog, ddl, envelope
from airflow_provider_connect.connectors.mysql.context import TaskContext
from airflow_provider_connect.connectors.mysql.database import require_pymysql
from airflow_provider_connect.connectors.mysql.ddl import classify
from airflow_provider_connect.connectors.mysql.gtids import GtidFilter, mariadb_added, mysql_added
from airflow_provider_connect.connectors.mysql.offsets import Position
from airflow_provider_connect.connectors.mysql.tables import CapturedTable
from airflow_provider_connect.connectors.mysql.types import Column, nullable_columns

log = logging.getLogger(__name__)

_IN_TRANSACTION = (
    binlog.TableMapEvent,
    binlog.WriteRowsEvent,
    binlog.UpdateRowsEvent,
    binlog.DeleteRowsEvent,
    binlog.XAPrepareEvent,
)
"""Events that belong to a transaction: rows without a BEGIN the stream showed open one."""
_TABLE_DDL = (ddl.CREATE_TABLE, ddl.ALTER_TABLE, ddl.DROP_TABLE, ddl.RENAME_TABLE)
_DATABASE_DDL = (ddl.CREATE_DATABASE, ddl.ALTER_DATABASE, ddl.DROP_DATABASE)


def _binlog_key(primary_key: str | tuple[str, ...] | None) -> list[str]:
    """The key columns a TABLE_MAP's FULL metadata gives (mysql-replication gives one column
    as a string, several as a tuple, none as ``""`` or None)."""
    if not primary_key:
        return []
    return [primary_key] if isinstance(primary_key, str) else list(primary_key)


def _events_of(statement: ddl.Statement, sql: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """The schema change events of ``statement`` (its text ``sql``), each with its DDL and
    tables: one per table dropped (``DROP TABLE a, b``) and per table renamed (``RENAME
    TABLE a TO b, c TO d``, the event about the new name), else one about all its tables."""
    tables = statement.tables
    if statement.kind == ddl.RENAME_TABLE and len(statement.ddls) * 2 == len(tables):
        return [(text, (tables[2 * i + 1],)) for i, text in enumerate(statement.ddls)]
    if statement.kind == ddl.DROP_TABLE and len(statement.ddls) == len(tables):
        return [(text, (table,)) for text, table in zip(statement.ddls, tables, strict=True)]
    return [(statement.ddls[0] if statement.ddls else sql, tables)]


LINGER_S = 0.01
"""How long a poll goes on reading after its first record: events keep coming under load,
and a record waits no longer than this (or the server's idle heartbeat) to be handed on."""


class _Image(NamedTuple):
    """A row image of a rows event: its values by column, and why some are None."""

    values: dict[str, Any]
    none_sources: dict[str, str]

    def row(self, table: CapturedTable) -> Struct:
        return table.binlog_row(self.values, self.none_sources)


class _Transaction:
    """The transaction being streamed: where it starts, its GTID, how many of its events
    were handled, its metadata."""

    def __init__(
        self, file: str, begin: int, gtid: str | None, begun: bool, metadata: TransactionContext
    ) -> None:
        self.file = file
        self.begin = begin
        self.gtid = gtid
        self.begun = begun
        """A ``BEGIN`` opened it (its end is a ``COMMIT`` or XID); else it is one statement."""
        self.events = 0
        self.captured = True
        """Its GTID source is captured (``gtid.source.*``)."""
        self.thread: int | None = None
        self.query: str | None = None
        self.event_start = begin
        """Where the event being handled starts (``source.pos``)."""
        self.metadata = metadata


class BinlogStreamingChangeEventSource:
    """The stream, from the offset context's position. Used from the task's poll thread."""

    def __init__(
        self, context: TaskContext, transactions: TransactionMonitor, heartbeat: Heartbeat
    ) -> None:
        self.context = context
        self.transactions = transactions
        self.heartbeat = heartbeat
        config = context.config
        self.mariadb = config.flavor.mariadb
        self.gtid_filter = GtidFilter(config.gtid_includes, config.gtid_excludes, self.mariadb)
        self.file = ""
        self.gtids: str | None = None
        self.transaction: _Transaction | None = None
        self.catalog: dict[tuple[str, str], tuple[dict[str, Column], list[str]]] = {}
        """Each captured table's columns (by name) and key as the catalog had them last."""
        self.tables: dict[tuple[Any, ...], tuple[CapturedTable, envelope.StreamedSource]] = {}
        """The captured tables by their binlog shape (database, table, columns)."""
        self.nullable: dict[int, list[bool]] = {}
        """Whether each column of a table id is nullable, as its last TABLE_MAP says."""
        self.incremental = context.offsets.incremental
        self.behind_ms: float | None = None
        """How far the last streamed change is behind its commit, in ms (None: unknown)."""

    def save(self) -> None:
        """Nothing of its own to go back to: :meth:`resume` starts from the position."""

    def restore(self, saved: None) -> None:
        """After a failed poll: no transaction open (the stream starts again at one)."""
        self.transaction = None

    def resume(self) -> None:
        """Streams from the current position (a new connection after a failure)."""
        position = self.context.offsets.position
        self.context.connections.start_stream(position)
        self.file, self.gtids, self.transaction = position.file, position.gtids, None

    def poll(self) -> list[SourceRecord] | None:
        """The events the binlog delivers within ``poll.interval.ms``, up to
        ``max.batch.size`` records, and a heartbeat when one is due."""
        config, connections = self.context.config, self.context.connections
        if connections.stream is None:
            self.resume()
        assert connections.stream is not None
        records: list[SourceRecord] = []
        deadline = time.monotonic() + config.poll_interval_s
        first = None
        try:
            for event in connections.stream.read(deadline):
                self._handle(event, records)
                if not records:
                    continue
                first = first or time.monotonic()
                if len(records) >= config.max_batch_size or time.monotonic() - first >= LINGER_S:
                    break
        except require_pymysql().err.OperationalError as e:
            if e.args and e.args[0] in binlog.FATAL:
                raise ConnectException(f"The server refused the binlog session: {e}") from e
            raise
        if self.incremental is not None and self.transaction is None:
            self.incremental.next_chunk()
        if self.heartbeat.due():
            records.append(self._heartbeat())
        return records or None

    # -- events ---------------------------------------------------------------------------
    def _handle(self, event: Any, records: list[SourceRecord]) -> None:
        packet = event.packet
        start = packet.log_pos - packet.event_size
        if isinstance(event, binlog.RotateEvent):
            self.file = event.next_binlog
            if self.transaction is None:
                self._move_to(event.position)
            return
        self.context.offsets.server_id = packet.server_id
        self.context.offsets.ts_sec = event.timestamp
        if isinstance(event, (binlog.MariadbGtidEvent, binlog.GtidEvent)):
            if self.transaction is not None:  # the last one had no end the stream showed
                self._end_unfinished(start, records)
            standalone = self.mariadb and bool(event.flags & 1)  # FL_STANDALONE
            self._begin(
                start, event.gtid, begun=self.mariadb and not standalone, ts=event.timestamp
            )
        elif isinstance(event, binlog.QueryEvent):
            self._query(event, start, packet.log_pos, records)
            return
        elif self.transaction is None and not isinstance(event, _IN_TRANSACTION):
            self._move_to(packet.log_pos)
            return
        if self.transaction is None:  # rows without a BEGIN the stream showed: one of its own
            self._begin(start, None, begun=True, ts=event.timestamp)
        transaction = self.transaction
        assert transaction is not None
        transaction.event_start = start
        if isinstance(event, (binlog.XidEvent, binlog.XAPrepareEvent)):
            self._commit(packet.log_pos, event.timestamp, records)
            return
        elif isinstance(
            event, (binlog.WriteRowsEvent, binlog.UpdateRowsEvent, binlog.DeleteRowsEvent)
        ):
            if transaction.captured:
                self._rows(event, records)
        elif isinstance(event, binlog.TableMapEvent):
            self.nullable[event.table_id] = nullable_columns(event.null_bitmask, event.column_count)
        elif isinstance(event, (binlog.MariadbAnnotateRowsEvent, binlog.RowsQueryLogEvent)):
            query = getattr(event, "query", None) or getattr(event, "sql_statement", b"")
            transaction.query = (
                query.decode(errors="replace") if isinstance(query, bytes) else query
            )
        if self.transaction is not None:
            self.transaction.events += 1

    def _begin(self, start: int, gtid: str | None, *, begun: bool, ts: int) -> None:
        """A transaction starts at ``start``: resumed inside it after a restart when the
        stored position is in it past its start (its BEGIN record was written then)."""
        position = self.context.offsets.position
        resumed = position.file == self.file and position.pos == start and position.event > 0
        tx_id = envelope.transaction_id(gtid, self.file, start)
        self.transaction = _Transaction(
            self.file, start, gtid, begun, TransactionContext(tx_id, ts * 1000, resumed)
        )
        self.transaction.captured = self.gtid_filter.captured(gtid)

    def _query(self, event: Any, start: int, end: int, records: list[SourceRecord]) -> None:
        sql: str = event.query
        word = sql.strip().split(None, 1)[0].upper() if sql.strip() else ""
        if word == "BEGIN":
            if self.transaction is None:  # no GTIDs: the BEGIN starts it
                self._begin(start, None, begun=True, ts=event.timestamp)
            assert self.transaction is not None
            self.transaction.begun = True
            self.transaction.thread = None if self.mariadb else event.slave_proxy_id
            self.transaction.events += 1
            return
        if word == "XA" and self.transaction is not None:  # XA START, END, PREPARE, COMMIT
            xa = sql.split()[1].upper() if len(sql.split()) > 1 else ""
            if xa in ("START", "BEGIN"):
                self.transaction.begun = True
            self.transaction.events += 1
            if xa in ("START", "BEGIN", "END", "PREPARE"):
                return
            self._commit(end, event.timestamp, records)  # XA COMMIT or ROLLBACK: one statement
            return
        if word == "XA":  # XA START without GTIDs
            self._begin(start, None, begun=True, ts=event.timestamp)
            return
        if word in ("COMMIT", "ROLLBACK") and self.transaction is not None:
            if word == "ROLLBACK":
                log.warning(
                    "%s: a transaction at %s:%d ended in ROLLBACK (changes to non-transactional "
                    "tables): its changes stream as logged",
                    self.context.config.connector,
                    self.transaction.file,
                    self.transaction.begin,
                )
            self._commit(end, event.timestamp, records)
            return
        if self.transaction is None:  # a statement of its own
            self._begin(start, None, begun=False, ts=event.timestamp)
        transaction = self.transaction
        assert transaction is not None
        schema = event.schema.decode() if isinstance(event.schema, bytes) else event.schema
        transaction.event_start = start
        self._statement(sql, schema or None, records)
        transaction.events += 1
        if sql.rstrip().upper().endswith("START TRANSACTION"):  # CREATE TABLE ... SELECT
            transaction.begun = True  # its rows follow, then an XID
        elif not transaction.begun:  # DDL commits itself
            self._commit(end, event.timestamp, records)

    def _statement(self, sql: str, schema: str | None, records: list[SourceRecord]) -> None:
        """A statement of a QUERY event: a DDL refreshes the tables it changes and makes
        schema change events (one per table dropped and per table renamed, as Debezium
        writes them); a TRUNCATE makes ``t`` events."""
        statement = classify(sql, schema)
        if statement.kind == ddl.DML:
            log.warning(
                "%s: received DML %r: the binlog holds statements, not rows (binlog_format "
                "must be ROW)",
                self.context.config.connector,
                sql[:200],
            )
            return
        if statement.kind == ddl.TRUNCATE:
            self._truncate(statement.tables, records)
            return
        if statement.kind not in _TABLE_DDL + _DATABASE_DDL:
            return
        for db, table in statement.tables:
            self.catalog.pop((db, table), None)
        changed = set(statement.tables)
        self.tables = {shape: t for shape, t in self.tables.items() if shape[:2] not in changed}
        for row, (ddl_text, tables) in enumerate(_events_of(statement, sql), start=1):
            position = self._event_position(row)
            if position is None:
                continue  # replayed after a restart
            changes = [
                self._table_change(statement.kind, db, table)
                for db, table in tables
                if self._captured(db, table)
            ]
            self._schema_change(statement, tables, ddl_text, changes, position, records)

    def _captured(self, db: str, table: str) -> bool:
        return self.context.config.filters.table(db, table)

    def _table_change(self, kind: str, db: str, table: str) -> Struct:
        """The ``tableChanges`` entry of ``db.table`` after ``kind`` (its columns as the
        catalog has them now; none once dropped)."""
        if kind == ddl.DROP_TABLE:
            return envelope.table_change(envelope.CHANGE_DROP, db, table, [], [], None, None)
        columns, key = self._catalog(db, table)
        change = envelope.CHANGE_CREATE if kind == ddl.CREATE_TABLE else envelope.CHANGE_ALTER
        return envelope.table_change(change, db, table, list(columns.values()), key, None, None)

    def _schema_change(
        self,
        statement: ddl.Statement,
        tables: Sequence[tuple[str, str]],
        ddl_text: str,
        changes: list[Struct],
        position: Position,
        records: list[SourceRecord],
    ) -> None:
        """The schema change event of ``ddl_text`` (of ``statement``) about ``tables``, as
        the configs choose (``include.schema.changes``, only captured tables' or
        databases')."""
        config = self.context.config
        database = statement.database or (tables[0][0] if tables else "")
        if not config.include_schema_changes:
            return
        if config.only_captured_tables_ddl and statement.kind in _TABLE_DDL and not changes:
            return
        if config.only_captured_databases_ddl and not config.filters.container(database):
            return
        transaction = self.transaction
        source = self.context.events.source(
            ts_ms=(self.context.offsets.ts_sec or 0) * 1000,
            snapshot=SNAPSHOT_FALSE,
            db=database,
            table=",".join(t for _, t in tables) or None,
            position=position._replace(pos=transaction.event_start) if transaction else position,
            server_id=self.context.offsets.server_id,
            gtid=transaction.gtid if transaction else None,
        )
        offset = self.context.offsets.position_offset()
        records.append(
            self.context.events.schema_change(database, ddl_text, changes, source, offset)
        )

    def _truncate(self, tables: Sequence[tuple[str, str]], records: list[SourceRecord]) -> None:
        if not self.context.events.events(OP_TRUNCATE):
            return
        position = self._event_position(1)
        if position is None:
            return
        offset = self.context.offsets.position_offset()
        for db, name in tables:
            if not self._captured(db, name):
                continue
            columns, key = self._catalog(db, name)
            table, source = self._table(db, name, list(columns.values()), key)
            self._event(table, source, OP_TRUNCATE, None, None, None, offset, 0, records)

    def _rows(self, event: Any, records: list[SourceRecord]) -> None:
        db, name = event.schema, event.table
        transaction = self.transaction
        assert transaction is not None
        signal = self.context.config.filters.signal_table
        is_signal = signal is not None and f"{db}.{name}" == signal
        if not is_signal and not self._captured(db, name):
            return
        table, source = self._binlog_table(event)
        for index, row in enumerate(event.rows):
            position = self._event_position(index + 1)
            if position is None:
                continue
            offset = self.context.offsets.position_offset()
            if is_signal:
                if isinstance(event, binlog.WriteRowsEvent):
                    self._signal(row["values"], offset, records)
                continue
            if isinstance(event, binlog.WriteRowsEvent):
                op, old, new = OP_CREATE, None, _Image(row["values"], row["none_sources"])
            elif isinstance(event, binlog.DeleteRowsEvent):
                op, old, new = OP_DELETE, _Image(row["values"], row["none_sources"]), None
            else:
                old = _Image(row["before_values"], row["before_none_sources"])
                new = _Image(row["after_values"], row["after_none_sources"])
                op = OP_UPDATE
            if self.incremental is not None:
                for image in (old, new):
                    if image is not None:
                        key = tuple(image.values.get(k) for k in table.key_columns)
                        self.incremental.on_change(f"{db}.{name}", key)
            try:
                self._row_change(table, source, op, old, new, offset, index, records)
            except Exception as e:  # a value its column's mapping cannot take
                self._unreadable(event, index, e)
        self.behind_ms = time.time() * 1000 - event.timestamp * 1000

    def _unreadable(self, event: Any, row: int, error: Exception) -> None:
        """A row that could not be made into events: the task fails
        (``event.processing.failure.handling.mode=fail``, the default), or the row is
        skipped, with a warning under ``warn``."""
        mode = self.context.config.failure_handling
        where = f"row {row} of the {type(event).__name__} of {event.schema}.{event.table}"
        if mode == "fail":
            raise ConnectException(f"Could not read {where}: {error}") from error
        if mode == "warn":
            log.warning("%s: skipped %s: %s", self.context.config.connector, where, error)

    def _event_position(self, row: int) -> Position | None:
        """The position of the current event's ``row`` (1-based; 1 for a statement), moved
        to; None when the task is there or past it already (a replay)."""
        transaction = self.transaction
        assert transaction is not None
        offsets = self.context.offsets
        position = offsets.at(
            transaction.file, transaction.begin, self.gtids, transaction.events, row
        )
        return position if offsets.advance(position) else None

    def _row_change(
        self,
        table: CapturedTable,
        source: envelope.StreamedSource,
        op: str,
        old: _Image | None,
        new: _Image | None,
        offset: dict[str, Any],
        row: int,
        records: list[SourceRecord],
    ) -> None:
        """The events of a row change, as the core's rules make them
        (:meth:`~airflow_provider_connect.connectors.change_capture.events.ChangeRecords.events`)."""
        key_changed = (
            old is not None and new is not None and not table.same_key(old.values, new.values)
        )
        old_key = None
        for kind in self.context.events.events(op, key_changed):
            if kind in (OP_CREATE, OP_UPDATE):
                assert new is not None
                before = None if kind == OP_CREATE or old is None else old.row(table)
                after = new.row(table)
                key = table.binlog_key(new.values)
                self._event(table, source, kind, before, after, key, offset, row, records)
                continue
            assert old is not None
            old_key = table.binlog_key(old.values) if old_key is None else old_key
            if kind == OP_DELETE:
                before = old.row(table)
                self._event(table, source, OP_DELETE, before, None, old_key, offset, row, records)
            else:
                records.append(self.context.events.tombstone(table, offset, old_key))

    def _event(
        self,
        table: CapturedTable,
        source: envelope.StreamedSource,
        op: str,
        before: Any,
        after: Any,
        key: Any,
        offset: dict[str, Any],
        row: int,
        records: list[SourceRecord],
    ) -> None:
        """Appends the change event (after its transaction's BEGIN record, first time)."""
        transaction = self.transaction
        assert transaction is not None
        offsets = self.context.offsets
        block = source.block(
            (offsets.ts_sec or 0) * 1_000_000,
            offsets.server_id,
            transaction.gtid,
            transaction.file,
            transaction.event_start,
            row,
            transaction.thread,
            transaction.query if self.context.config.include_query else None,
        )
        metadata = self.transactions.event(
            transaction.metadata, f"{table.db}.{table.table}", offset, records
        )
        records.append(
            self.context.events.change(
                table, offset, key, op, block, before=before, after=after, transaction=metadata
            )
        )

    def _commit(self, end: int, ts: int, records: list[SourceRecord]) -> None:
        """The transaction's end: its GTID joins the set, the position moves past it, and
        with transaction metadata its END record follows."""
        transaction = self.transaction
        assert transaction is not None
        self.transaction = None
        if transaction.gtid is not None:
            added = mariadb_added if self.mariadb else mysql_added
            self.gtids = added(self.gtids, transaction.gtid)
        self._move_to(end)
        self.transactions.end(
            transaction.metadata, ts * 1000, self.context.offsets.position_offset(), records
        )

    def _end_unfinished(self, start: int, records: list[SourceRecord]) -> None:
        """The open transaction's end, which the stream did not show (a new GTID event came
        at ``start``): ended there, so that its GTID joins the set, with a warning."""
        transaction = self.transaction
        assert transaction is not None
        log.warning(
            "%s: the transaction at %s:%d has no end in the binlog; taken as ended at %d",
            self.context.config.connector,
            transaction.file,
            transaction.begin,
            start,
        )
        self._commit(start, self.context.offsets.ts_sec or 0, records)

    def _move_to(self, pos: int) -> None:
        """Outside a transaction: the position moves to ``pos`` of the current file."""
        offsets = self.context.offsets
        offsets.catch_up(offsets.at(self.file, pos, self.gtids))

    # -- tables ---------------------------------------------------------------------------
    def _catalog(self, db: str, table: str) -> tuple[dict[str, Column], list[str]]:
        """``db.table``'s columns and key as the catalog has them (read once after each
        DDL on it)."""
        found = self.catalog.get((db, table))
        if found is None:
            columns, key = self.context.connections.columns(db, table)
            found = self.catalog[db, table] = ({c.name: c for c in columns}, key)
        return found

    def _binlog_table(self, event: Any) -> tuple[CapturedTable, envelope.StreamedSource]:
        """The captured table of a rows event, of the columns the binlog gives it."""
        db, name = event.schema, event.table
        shape = (db, name, tuple((c.name, c.type, c.unsigned) for c in event.columns))
        found = self.tables.get(shape)
        if found is None:
            known, key = self._catalog(db, name)
            nullable = self.nullable.get(event.table_id) or [True] * len(event.columns)
            columns = [
                Column.of_binlog(c, known.get(c.name), optional)
                for c, optional in zip(event.columns, nullable, strict=True)
            ]
            if any(c.name is None for c in event.columns):
                raise ConnectException(
                    f"The binlog gives no column names for {db}.{name}: set "
                    "binlog_row_metadata=FULL on the server"
                )
            names = {c.name for c in columns}
            if not key or not set(key) <= names:
                key = _binlog_key(event.primary_key)
            found = self.tables[shape] = self._table(db, name, columns, key)
        return found

    def _table(
        self, db: str, name: str, columns: list[Column], key: list[str]
    ) -> tuple[CapturedTable, envelope.StreamedSource]:
        table = self.context.events.captured(db, name, columns, key)
        config = self.context.config
        source = envelope.StreamedSource(
            self.context.events.source_schema,
            version=__version__,
            connector=config.flavor.name,
            name=config.topic_prefix,
            db=db,
            table=name,
        )
        return table, source

    # -- signals and heartbeats -----------------------------------------------------------
    def _signal(
        self, values: dict[str, Any], offset: dict[str, Any], records: list[SourceRecord]
    ) -> None:
        """A row of the signal table: a signal, or a window of a chunk whose rows are
        emitted at its close, their offset with the snapshot's progress after it."""
        signal_id, kind, data = (values.get(c) for c in SIGNAL_COLUMNS)
        rows = self.context.signals.on_source_row(signal_id, kind, data)
        if not rows:
            return
        offset = self.context.offsets.position_offset()
        now_ms = int(time.time() * 1000)
        events, position = self.context.events, self.context.offsets.position
        for chunk_table, row in rows:
            table = events.captured(
                chunk_table.db, chunk_table.name, chunk_table.info, chunk_table.key
            )
            records.append(events.read(table, row, SNAPSHOT_INCREMENTAL, offset, position, now_ms))

    def _heartbeat(self) -> SourceRecord:
        """A heartbeat (after the heartbeat action query, when set) at the current
        position."""
        query = self.context.config.heartbeat_action_query
        if query:
            try:
                self.context.connections.database().execute(query)
            except require_pymysql().err.ProgrammingError as e:  # the statement, not the server
                raise ConnectException(f"Could not execute heartbeat action query: {e}") from e
        return self.heartbeat.record(self.context.offsets.position_offset())
