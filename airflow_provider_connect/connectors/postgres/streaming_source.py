"""The stream of the PostgreSQL change-capture task (Debezium's
``PostgresStreamingChangeEventSource``): ``pgoutput`` messages from the slot become change
events, with transaction metadata, incremental snapshots and heartbeats.

A restart resumes at the stored offset: events at or before it are skipped by their
position (the commit LSN of their transaction and their index in it), so the streamed
changes are delivered at least once, and exactly once on the exactly-once worker (KIP-618).
Heartbeats carry the server's position while no transaction is open, so the slot of a
database with no captured writes still advances."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    OP_CREATE,
    OP_DELETE,
    OP_TRUNCATE,
    OP_UPDATE,
    SNAPSHOT_INCREMENTAL,
)
from airflow_provider_connect.connectors.change_capture.heartbeat import Heartbeat
from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots
from airflow_provider_connect.connectors.change_capture.signals import SIGNAL_COLUMNS
from airflow_provider_connect.connectors.change_capture.transactions import (
    TransactionContext,
    TransactionMonitor,
)
from airflow_provider_connect.connectors.postgres.context import TaskContext
from airflow_provider_connect.connectors.postgres.database import ColumnInfo, TableInfo
from airflow_provider_connect.connectors.postgres.envelope import (
    MESSAGE_DATA_COLLECTION,
    transaction_id,
)
from airflow_provider_connect.connectors.postgres.events import LogicalDecodingMessages
from airflow_provider_connect.connectors.postgres.offsets import Position
from airflow_provider_connect.connectors.postgres.pgoutput import (
    BEGIN,
    COMMIT,
    INSERT,
    NEW_ROW_KINDS,
    NEW_TUPLE_AT,
    Commit,
    Delete,
    Insert,
    LogicalMessage,
    Relation,
    Truncate,
    Update,
    begin_fields,
    commit_lsn,
    decode,
    new_row_relation,
)
from airflow_provider_connect.connectors.postgres.tables import CapturedTable


class _Transaction:
    """The transaction being streamed: its BEGIN's fields (:class:`~.pgoutput.Begin`'s), how
    many of its changes the stream has delivered (captured or not), its metadata (made when
    first asked for: only with transaction metadata)."""

    __slots__ = ("_metadata", "begun", "commit_time_us", "events", "final_lsn", "xid")

    def __init__(self, final_lsn: int, commit_time_us: int, xid: int, begun: bool) -> None:
        self.final_lsn = final_lsn
        self.commit_time_us = commit_time_us
        self.xid = xid
        self.begun = begun
        """Its BEGIN record was delivered before a restart."""
        self.events = 0
        self._metadata: TransactionContext | None = None

    @property
    def metadata(self) -> TransactionContext:
        if self._metadata is None:
            self._metadata = TransactionContext(
                transaction_id(self.xid, self.final_lsn), self.commit_time_us // 1000, self.begun
            )
        return self._metadata


class PostgresStreamingChangeEventSource:
    """The stream, from the offset context's position. Used from the task's poll thread."""

    def __init__(
        self, context: TaskContext, transactions: TransactionMonitor, heartbeat: Heartbeat
    ) -> None:
        self.context = context
        self.offsets = context.offsets
        self.events = context.events
        self.transactions = transactions
        self.heartbeat = heartbeat
        self.tables: dict[int, CapturedTable] = {}
        self.transaction: _Transaction | None = None
        self.last_commit_lsn: int | None = None
        self.signal_oid: int | None = None
        self.signal_columns: dict[str, int] = {}
        self.incremental: IncrementalSnapshots[TableInfo] | None = context.offsets.incremental
        self.snapshotted: dict[TableInfo, CapturedTable] = {}
        """The tables of incremental snapshots' rows, as their chunks were read."""
        self.behind_ms: float | None = None
        """How far the last streamed change is behind its commit, in ms (None: unknown)."""
        self.messages = LogicalDecodingMessages(context.config, context.offsets.partition)
        self.now_ms = 0
        """When the connector processed the messages being decoded (ms since the epoch):
        the ``ts_ms`` of their events, read once per batch of messages (:meth:`_decode`)."""
        self._creates = bool(context.events.events(OP_CREATE))
        self._updates = bool(context.events.events(OP_UPDATE))
        self._handlers: dict[type, Callable[[Any, int, list[SourceRecord]], None]] = {
            Insert: self._row,
            Update: self._row,
            Delete: self._row,
            Relation: self._relation,
            Truncate: self._truncate,
            LogicalMessage: self._message,
        }
        """What each decoded message is handed to (others are skipped; :meth:`_decode`
        takes Begin and Commit, and most inserts and updates, from their bytes)."""
        self._row_changes: dict[type, Callable[..., None]] = {
            Insert: self._created,
            Update: self._updated,
            Delete: self._deleted,
        }

    def save(self) -> int | None:
        """What :meth:`restore` goes back to: the last commit LSN (``source.sequence``)."""
        return self.last_commit_lsn

    def restore(self, saved: int | None) -> None:
        """Back to ``saved`` after a failed poll: no transaction open, the last commit LSN
        as it was, so the replayed events are written as they would have been."""
        self.transaction, self.last_commit_lsn = None, saved

    def resume(self) -> None:
        """Streams from the current position (a new connection after a failure)."""
        self.context.connections.start_stream(self.offsets.position.lsn_commit)
        self.transaction = None

    def poll(self) -> list[SourceRecord] | None:
        """The events the stream delivers within ``poll.interval.ms``, up to
        ``max.batch.size`` messages, and a heartbeat when one is due."""
        connections = self.context.connections
        connections.database()  # after a failure, the ordinary connection first, as at the start
        if connections.stream is None or not connections.stream.streaming:
            self.resume()
        assert connections.stream is not None
        records: list[SourceRecord] = []
        messages = connections.stream.read(
            self.context.config.max_batch_size, self.context.config.poll_interval_s
        )
        if messages:
            self._decode(messages, records)
        if records and (last := records[-1].source_offset):
            commit_us = self.offsets.commit_time_us(last)
            if commit_us is not None:
                self.behind_ms = time.time() * 1000 - commit_us / 1000  # once a poll
        if self.incremental is not None and self.transaction is None:
            self.incremental.next_chunk()
        if self.heartbeat.due():
            records.append(self._heartbeat())
        if time.monotonic() >= connections.next_slot_check:
            connections.check_slot()
        return records or None

    def _decode(self, messages: list[tuple[int, bytes]], records: list[SourceRecord]) -> None:
        """Appends the events of a batch of ``(lsn, payload)`` messages, in order. Begin and
        Commit are read from their bytes, and so are the inserts and updates
        :meth:`_new_row` takes; the other messages are decoded (:func:`~.pgoutput.decode`)
        and handed to their handler. The clock is read once for the batch (:attr:`now_ms`,
        each event's ``ts_ms``, when the connector processed it): Debezium reads it for each
        event; the two differ by the batch's decoding time (tens of milliseconds for a full
        batch, more when a Relation message in it makes the connector read the catalog)."""
        self.now_ms = int(time.time() * 1000)
        handlers, new_row = self._handlers, self._new_row
        for lsn, payload in messages:
            kind = payload[0] if payload else None
            if kind == BEGIN:
                self._begin(payload)
            elif kind == COMMIT:
                self._commit(payload, records)
            elif kind not in NEW_ROW_KINDS or not new_row(payload, lsn, records):
                message = decode(payload)
                handler = handlers.get(type(message))
                if handler is not None:
                    handler(message, lsn, records)

    def _begin(self, payload: bytes) -> None:
        """A transaction starts (resumed inside it after a restart: its BEGIN record was
        delivered already)."""
        final_lsn, commit_time_us, xid = begin_fields(payload)
        position = self.offsets.position
        resumed = position.lsn_commit == final_lsn and position.event >= 0
        self.transaction = _Transaction(final_lsn, commit_time_us, xid, resumed)

    def _offset(self, lsn: int) -> dict[str, Any] | None:
        """Counts the transaction's next change (at ``lsn``; captured or not) and moves to
        it: its offset, or None when it was delivered before a restart."""
        transaction = self.transaction
        assert transaction is not None
        transaction.events = event = transaction.events + 1
        return self.offsets.next_change(
            transaction.final_lsn, event, lsn, transaction.xid, transaction.commit_time_us
        )

    def _truncate(self, message: Truncate, lsn: int, records: list[SourceRecord]) -> None:
        """A truncate's events, one per captured table, unless ``t`` is skipped."""
        offset = self._offset(lsn)
        if offset is None or not self.events.events(OP_TRUNCATE):
            return
        for oid in message.relations:
            if (table := self.tables.get(oid)) is not None:
                self._event(table, OP_TRUNCATE, None, None, lsn, offset, None, records)

    def _new_row(self, payload: bytes, lsn: int, records: list[SourceRecord]) -> bool:
        """The event of an Insert, or of an Update that carries no old row, of a captured
        table while no incremental snapshot runs, made straight from the message's bytes
        (:attr:`CapturedTable.reader`): the event :meth:`_row` would make of the decoded
        message. False when the message is not one of these (it is then decoded)."""
        relation = new_row_relation(payload)
        if relation is None or self.incremental is not None or relation == self.signal_oid:
            return False  # a signal goes to _row, before any table of that oid
        table = self.tables.get(relation)
        if table is None or table.reader is None:
            return False
        offset = self._offset(lsn)
        if offset is None:
            return True
        insert = payload[0] == INSERT
        if self._creates if insert else self._updates:
            after, key = table.reader(payload, NEW_TUPLE_AT)
            op = OP_CREATE if insert else OP_UPDATE
            self._event(table, op, None, after, lsn, offset, key, records)
        return True

    def _row(
        self, message: Insert | Update | Delete, lsn: int, records: list[SourceRecord]
    ) -> None:
        """A row change: a signal (an insert into the signal table), or the events of a
        captured table's change."""
        offset = self._offset(lsn)
        if offset is None:
            return
        if message.relation == self.signal_oid:
            if isinstance(message, Insert):
                self._signal(message.new, lsn, records)
            return
        table = self.tables.get(message.relation)
        if table is None:
            return
        if self.incremental is not None:
            self._superseding(table, message)
        self._row_changes[type(message)](table, message, lsn, offset, records)

    def _created(
        self,
        table: CapturedTable,
        message: Insert,
        lsn: int,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> None:
        """An insert's ``c`` event, unless ``c`` is skipped."""
        if self._creates:
            after, key = table.row_and_key(message.new)
            self._event(table, OP_CREATE, None, after, lsn, offset, key, records)

    def _updated(
        self,
        table: CapturedTable,
        message: Update,
        lsn: int,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> None:
        """An update's ``u`` event (its old row with REPLICA IDENTITY FULL), or the events
        of a change of the row's key (:meth:`_row_events`)."""
        old, new = message.old, message.new
        if old is not None and not table.same_key(old, new):
            self._row_events(table, OP_UPDATE, old, new, True, lsn, offset, records)
        elif self._updates:
            after, key = table.row_and_key(new)
            before = None if old is None else table.row(old)
            self._event(table, OP_UPDATE, before, after, lsn, offset, key, records)

    def _deleted(
        self,
        table: CapturedTable,
        message: Delete,
        lsn: int,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> None:
        """A delete's events (:meth:`_row_events`)."""
        self._row_events(table, OP_DELETE, message.old, None, False, lsn, offset, records)

    def _row_events(
        self,
        table: CapturedTable,
        op: str,
        old: tuple[Any, ...],
        new: tuple[Any, ...] | None,
        key_changed: bool,
        lsn: int,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> None:
        """The events of a delete or of an update that changed the row's key, as the
        core's rules make them
        (:meth:`~airflow_provider_connect.connectors.change_capture.events.ChangeRecords.events`):
        a delete, its tombstone, a create (of an update's new row)."""
        old_row: Struct | None = None
        old_key: Struct | None = None
        for event in self.events.events(op, key_changed):
            if event == OP_CREATE:
                assert new is not None
                after, key = table.row_and_key(new)
                self._event(table, OP_CREATE, None, after, lsn, offset, key, records)
                continue
            if old_row is None:
                old_row, old_key = table.row_and_key(old)
            if event == OP_DELETE:
                self._event(table, OP_DELETE, old_row, None, lsn, offset, old_key, records)
            else:
                records.append(self.events.tombstone(table, offset, old_key))

    def _superseding(self, table: CapturedTable, message: Insert | Update | Delete) -> None:
        """Tells the incremental snapshot of the rows ``message`` changes."""
        assert self.incremental is not None
        for image in (getattr(message, "old", None), getattr(message, "new", None)):
            if image is not None:
                self.incremental.on_change(table.full_name, table.key_text(image))

    def _signal(self, values: tuple[Any, ...], lsn: int, records: list[SourceRecord]) -> None:
        """A row of the signal table: a signal, or a window of a chunk whose rows are
        emitted at its close, their offset with the snapshot's progress after it."""
        transaction = self.transaction
        assert transaction is not None
        signal_id, kind, data = (values[self.signal_columns[c]] for c in SIGNAL_COLUMNS)
        rows = self.context.signals.on_source_row(signal_id, kind, data)
        if not rows:
            return
        offset = self.offsets.change_offset(lsn, transaction.xid, transaction.commit_time_us)
        now_ms = int(time.time() * 1000)
        for info, row in rows:
            table = self.snapshotted.get(info) or self.snapshotted.setdefault(
                info, self.events.captured(info)
            )
            records.append(self.events.read(table, row, SNAPSHOT_INCREMENTAL, offset, now_ms))

    def _event(
        self,
        table: CapturedTable,
        op: str,
        before: Any,
        after: Any,
        lsn: int,
        offset: dict[str, Any],
        key: Any,
        records: list[SourceRecord],
    ) -> None:
        """Appends the change event (after its transaction's BEGIN record, first time)."""
        transaction = self.transaction
        assert transaction is not None
        source = table.source.block(
            transaction.commit_time_us, transaction.xid, lsn, self.last_commit_lsn
        )
        block = None
        if self.transactions.enabled:
            block = self.transactions.event(transaction.metadata, table.full_name, offset, records)
        records.append(
            self.events.streamed(table, offset, key, op, source, before, after, block, self.now_ms)
        )

    def _message(self, message: LogicalMessage, lsn: int, records: list[SourceRecord]) -> None:
        """A logical decoding message (``pg_logical_emit_message``), emitted when its prefix
        is included. A transactional one arrives inside its transaction and is one of its
        events (its position, transaction block and count, as a change's). A
        non-transactional one arrives alone when the server decodes it, after every
        transaction committed before ``lsn`` and before any committed after: it is placed at
        ``Position(lsn, -1)``, before the events of a transaction committed at ``lsn``, so a
        restart resumes after it and confirming ``lsn`` releases nothing not yet stored."""
        messages, offsets = self.messages, self.offsets
        transaction = self.transaction
        if not message.transactional:
            if offsets.advance(Position(lsn, -1)) and messages.included(message.prefix):
                records.append(
                    messages.record(
                        message,
                        offsets.position_offset(),
                        int(time.time() * 1_000_000),
                        None,
                        lsn,
                        self.last_commit_lsn,
                        None,
                    )
                )
            return
        offset = self._offset(lsn)
        if offset is None or not messages.included(message.prefix):
            return
        assert transaction is not None
        block = self.transactions.event(
            transaction.metadata, MESSAGE_DATA_COLLECTION, offset, records
        )
        records.append(
            messages.record(
                message,
                offset,
                transaction.commit_time_us,
                transaction.xid,
                lsn,
                self.last_commit_lsn,
                block,
            )
        )

    def _commit(self, payload: bytes, records: list[SourceRecord]) -> None:
        """The transaction's end: with transaction metadata, the position moves past its
        last event and its END record follows."""
        transaction = self.transaction
        assert transaction is not None
        self.last_commit_lsn = commit_lsn(payload)
        self.transaction = None
        if not self.transactions.enabled:
            return
        if self.offsets.advance(Position(transaction.final_lsn, transaction.events + 1)):
            message = decode(payload)
            assert isinstance(message, Commit)
            self.transactions.end(
                transaction.metadata,
                message.commit_time_us // 1000,
                self.offsets.position_offset(),
                records,
            )

    def _relation(self, relation: Relation, lsn: int, records: list[SourceRecord]) -> None:
        """A table's shape, at its first change in this session or after it changed."""
        if not self.context.config.filters.table(relation.namespace, relation.name):
            self.tables.pop(relation.oid, None)
            return
        if f"{relation.namespace}.{relation.name}" == self.context.config.filters.signal_table:
            self.signal_oid = relation.oid
            self.signal_columns = {c.name: i for i, c in enumerate(relation.columns)}
            return
        database = self.context.connections.database()
        catalog = {
            c.name: c
            for c in database.table(relation.oid, relation.namespace, relation.name).columns
        }
        columns = []
        for column in relation.columns:
            known = catalog.get(column.name)
            columns.append(
                ColumnInfo(
                    column.name,
                    database.type(column.type_oid, column.modifier),
                    known.optional if known is not None else True,
                    known.key if known is not None else False,
                )
            )
        info = TableInfo(relation.oid, relation.namespace, relation.name, tuple(columns))
        self.tables[relation.oid] = self.events.captured(info)

    def _heartbeat(self) -> SourceRecord:
        """A heartbeat, with the server's position as its offset when no transaction is
        open: every transaction before it has been received, so confirming it is safe."""
        stream = self.context.connections.stream
        assert stream is not None
        if self.context.config.heartbeat_action_query:
            self.context.connections.database().query(self.context.config.heartbeat_action_query)
        if self.transaction is None:
            self.offsets.catch_up(Position(stream.server_position, -1))
        return self.heartbeat.record(self.offsets.position_offset())
