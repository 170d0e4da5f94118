"""Log-based change capture from PostgreSQL, compatible with Debezium's PostgreSQL connector
(``io.debezium.connector.postgresql.PostgresConnector``): its configs, topics, envelope,
``source`` block, keys, tombstones and type mapping, read from a logical replication slot
with the ``pgoutput`` plugin built into PostgreSQL.

Guarantees:

* **Snapshot, then stream, without a gap or a double.** The slot is created with an
  exported snapshot, the tables are read in it (``op`` ``r``), and the stream starts at the
  slot's consistent point: a row committed before it is read, a change committed after it
  is streamed, never both and never neither. A snapshot the task did not finish is taken
  again from the start (a new slot) at the next start, as Debezium does: its ``r`` events
  may then come twice.
* **The slot's position follows what is stored.** ``commit`` (after the runtime stored the
  offsets of everything polled, or committed their Kafka transaction on the exactly-once
  worker) confirms the position of the last polled event; nothing beyond it is ever
  confirmed, so the slot keeps every change not yet safely delivered. A restart resumes
  at the stored offset: events at or before it are skipped by their position (the commit
  LSN of their transaction and their index in it), so the streamed changes are delivered
  at least once, and exactly once on the exactly-once worker (KIP-618).
* **Heartbeats** (``heartbeat.interval.ms``) carry the server's position while no
  transaction is open, so the slot of a database with no captured writes still advances.
* **KIP-901**: ``stop(connector_deleted=True)`` drops the slot and the publication the
  connector created (a publication it found is kept); any other stop keeps both, so no
  change is missed while the connector is paused, stopped or reconfigured.
  ``slot.drop.on.stop`` drops the slot at every stop (Debezium's switch).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigDef
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.datasets import ConnectorData
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.signals import Signal
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from airflow_provider_connect.connectors.postgres import config as keys
from airflow_provider_connect.connectors.postgres.config import (
    CONFIG_DEF,
    Filters,
    connection_parameters,
    pattern_errors,
    skipped_operations,
    type_modes,
)
from airflow_provider_connect.connectors.postgres.database import (
    CREATED_BY,
    ColumnInfo,
    Database,
    SlotState,
    Snapshot,
    TableInfo,
    require_psycopg2,
)
from airflow_provider_connect.connectors.postgres.datasets import captured_datasets
from airflow_provider_connect.connectors.postgres.envelope import (
    HEARTBEAT_KEY_SCHEMA,
    HEARTBEAT_VALUE_SCHEMA,
    OP_CREATE,
    OP_DELETE,
    OP_READ,
    OP_TRUNCATE,
    OP_UPDATE,
    SNAPSHOT_FIRST,
    SNAPSHOT_FIRST_IN_DATA_COLLECTION,
    SNAPSHOT_INCREMENTAL,
    SNAPSHOT_LAST,
    SNAPSHOT_LAST_IN_DATA_COLLECTION,
    SNAPSHOT_TRUE,
    TRANSACTION_KEY_SCHEMA,
    TRANSACTION_VALUE_SCHEMA,
    envelope_value,
    heartbeat,
    heartbeat_topic,
    source_struct,
    transaction_begin,
    transaction_block,
    transaction_end,
    transaction_id,
    transaction_topic,
)
from airflow_provider_connect.connectors.postgres.incremental import (
    EXECUTE_SNAPSHOT,
    IncrementalSnapshots,
)
from airflow_provider_connect.connectors.postgres.pgoutput import (
    Begin,
    Commit,
    Delete,
    Insert,
    Relation,
    Truncate,
    Update,
    decode,
)
from airflow_provider_connect.connectors.postgres.signals import snapshot_signal
from airflow_provider_connect.connectors.postgres.stream import ReplicationStream
from airflow_provider_connect.connectors.postgres.tables import CapturedTable

log = logging.getLogger(__name__)

SLOT_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
FIRST_RETRY_S = 0.5
MAX_RETRY_S = 10.0
"""Backoff between attempts to reach the database again after a failure."""


def valid_slot_name(name: str) -> bool:
    """PostgreSQL's rule: at most 63 lower-case letters, digits and underscores."""
    return 0 < len(name) <= 63 and set(name) <= SLOT_NAME_CHARS


class Position(NamedTuple):
    """Where an event is in the stream: its transaction's commit LSN and its index in that
    transaction (-1: before the transaction's first event). Totally ordered as the stream
    delivers events."""

    lsn_commit: int
    event: int


class PostgresConnector(SourceConnector):
    """One task: a slot has one reader."""

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """See :func:`~airflow_provider_connect.connectors.postgres.datasets.captured_datasets`."""
        return captured_datasets(config, cluster)

    def snapshot_signal(
        self, config: Mapping[str, str], data_collections: list[str], signal_id: str
    ) -> Signal:
        """See :func:`~airflow_provider_connect.connectors.postgres.signals.snapshot_signal`."""
        return snapshot_signal(config, data_collections, signal_id)

    def validate(self, connector_configs: dict[str, str]) -> Config:
        config = super().validate(connector_configs)
        if config.error_count:
            return config
        values = {v.name: v for v in config.config_values}
        parsed = CONFIG_DEF.parse(connector_configs)
        for key, error in pattern_errors(parsed).items():
            values[key].add_error_message(error)
        if not valid_slot_name(parsed[keys.SLOT_NAME]):
            values[keys.SLOT_NAME].add_error_message(
                "A slot name has at most 63 lower-case letters, digits and underscores"
            )
        if config.error_count:
            return config
        try:
            database = Database(connection_parameters(parsed, "connect-validate"))
        except Exception as e:
            values[keys.HOSTNAME].add_error_message(f"Could not connect to the database: {e}")
            return config
        try:
            if database.setting("wal_level") != "logical":
                values[keys.HOSTNAME].add_error_message(
                    "The server's wal_level is not logical: set wal_level = logical and restart it"
                )
            if not database.can_replicate():
                values[keys.USER].add_error_message(
                    f"User {parsed[keys.USER]} has neither the REPLICATION attribute nor superuser"
                )
            mode = parsed[keys.PUBLICATION_AUTOCREATE_MODE].lower()
            if mode == "disabled" and database.publication(parsed[keys.PUBLICATION_NAME]) is None:
                values[keys.PUBLICATION_NAME].add_error_message(
                    f"Publication {parsed[keys.PUBLICATION_NAME]} does not exist and "
                    "publication.autocreate.mode is disabled"
                )
            signal = parsed[keys.SIGNAL_DATA_COLLECTION]
            if signal and signal not in {f"{s}.{t}" for _, s, t in database.tables()}:
                values[keys.SIGNAL_DATA_COLLECTION].add_error_message(
                    f"The signal table {signal} does not exist"
                )
        finally:
            database.close()
        return config

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return PostgresConnectorTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        """Offsets are stream positions, replayed in the same order from the slot."""
        return ExactlyOnceSupport.SUPPORTED

    def stop(self, is_deleted: bool = False) -> None:
        """Nothing held here: the task owns the slot and drops it when deleted."""


def _known(value: float | None) -> float:
    """A gauge's value; NaN (left out of the sample) while unknown."""
    return math.nan if value is None else float(value)


class _Transaction:
    """The transaction being streamed."""

    def __init__(self, begin: Begin, begun: bool) -> None:
        self.begin = begin
        self.begun = begun
        """Its BEGIN record was emitted (before its first event: a transaction with no
        captured change has no BEGIN nor END, as in Debezium)."""
        self.events = 0
        self.emitted = 0
        self.counts: dict[str, int] = {}
        self.id = transaction_id(begin.xid, begin.final_lsn)


class PostgresConnectorTask(SourceTask):
    """Snapshots, then streams the slot; see the module docstring. Connections are opened
    at the first ``poll``, not in ``start``: a task started only to be stopped as deleted
    (KIP-901) opens nothing but what dropping the slot needs."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.parsed = CONFIG_DEF.parse(props)
        self.connector = props.get("name", "")
        self.prefix: str = self.parsed[keys.TOPIC_PREFIX]
        self.slot_name: str = self.parsed[keys.SLOT_NAME]
        if not valid_slot_name(self.slot_name):
            raise ConnectException(f"Invalid slot.name {self.slot_name!r}")
        self.publication: str = self.parsed[keys.PUBLICATION_NAME]
        self.parameters = connection_parameters(self.parsed, f"connect-{self.connector}")
        self.filters = Filters.of(self.parsed)
        self.modes = type_modes(self.parsed)
        self.skipped = skipped_operations(self.parsed)
        self.tombstones: bool = self.parsed[keys.TOMBSTONES_ON_DELETE]
        self.metadata: bool = self.parsed[keys.PROVIDE_TRANSACTION_METADATA]
        self.max_batch: int = self.parsed[keys.MAX_BATCH_SIZE]
        self.poll_s: float = self.parsed[keys.POLL_INTERVAL_MS] / 1000
        self.heartbeat_s: float = self.parsed[keys.HEARTBEAT_INTERVAL_MS] / 1000
        self.heartbeat_topic = heartbeat_topic(
            self.prefix, self.parsed[keys.HEARTBEAT_TOPICS_PREFIX]
        )
        self.transaction_topic = transaction_topic(self.prefix, props)
        self.partition = {"server": self.prefix}
        self.stopping = threading.Event()
        self.deleted = False
        self.database: Database | None = None
        self.stream: ReplicationStream | None = None
        self.snapshot: Snapshot | None = None
        self.snapshot_records: Any = None
        self.idle = False
        self.position = Position(0, -1)
        self.last_commit_lsn: int | None = None
        self.transaction: _Transaction | None = None
        self.tables: dict[int, CapturedTable] = {}
        self.next_heartbeat = time.monotonic() + self.heartbeat_s
        self.signal_table: str | None = self.parsed[keys.SIGNAL_DATA_COLLECTION]
        self.signal_oid: int | None = None
        self.signal_columns: dict[str, int] = {}
        self.incremental: IncrementalSnapshots | None = None
        self.opened = False
        self.recorded: Position | None = None
        self.retry_s = FIRST_RETRY_S
        self.captured_infos: dict[TableInfo, CapturedTable] = {}
        self.slot_state: SlotState | None = None
        self.next_slot_check = 0.0
        self.behind_ms: float | None = None
        self._register_metrics()

    def _register_metrics(self) -> None:
        """The slot's retained log and lag, and how far the stream is behind, as the task's
        metrics (KIP-877): through ConnectHook.plugin_metrics, on the Connectors page and at
        ``/metrics``."""
        metrics = self.context.plugin_metrics()
        for name, description, read in (
            (
                "slot-retained-bytes",
                "Write-ahead log the replication slot holds back on the server, in bytes",
                lambda: _known(self.slot_state.retained_bytes if self.slot_state else None),
            ),
            (
                "slot-lag-bytes",
                "Write-ahead log written since the slot's confirmed position, in bytes",
                lambda: _known(self.slot_state.lag_bytes if self.slot_state else None),
            ),
            (
                "milliseconds-behind-source",
                "Time from the last streamed change's commit to its processing",
                lambda: _known(self.behind_ms),
            ),
        ):
            metrics.add_metric(metrics.metric_name(name, description), read)

    # -- poll -----------------------------------------------------------------------------
    def poll(self) -> list[SourceRecord] | None:
        if self.stopping.is_set():
            return None
        returned = self.position  # where the records returned so far end
        try:
            if not self.opened:
                try:
                    self._open()
                except BaseException:
                    self._close_connections()  # the next poll decides again, from scratch
                    raise
                self.opened = True
            if self.snapshot_records is not None:
                return self._remember(self._snapshot_batch())
            if self.idle:
                self.stopping.wait(self.poll_s)
                return None
            if self.database is None:
                self.database = Database(self.parameters)
            if self.stream is None or not self.stream.streaming:
                self._resume_stream()
            records = self._remember(self._stream_batch())
        except require_psycopg2().Error as e:
            if self.stopping.is_set():
                return None
            if self.snapshot_records is not None:
                raise ConnectException(f"The snapshot's connection failed: {e}") from e
            # This poll's records are dropped: the stream resumes after the last returned.
            self.position, self.transaction = returned, None
            self._close_connections()
            self.stopping.wait(self.retry_s)
            self.retry_s = min(self.retry_s * 2, MAX_RETRY_S)
            raise RetriableException(f"The connection to the database failed: {e}") from e
        self.retry_s = FIRST_RETRY_S
        return records

    def _remember(self, records: list[SourceRecord] | None) -> list[SourceRecord] | None:
        """Notes the position of the last record returned: what ``commit`` may confirm."""
        if records:
            offset = records[-1].source_offset or {}
            self.recorded = Position(offset["lsn_commit"], offset["event"])
        return records

    def _open(self) -> None:
        """Decides whether to snapshot (``snapshot.mode`` and the stored offset), prepares
        the publication and the slot, and starts the snapshot or the stream."""
        self.database = database = Database(self.parameters)
        stored = self.context.offset_storage_reader().offset(self.partition)
        mode = self.parsed[keys.SNAPSHOT_MODE].lower()
        complete = stored is not None and not (
            stored.get("snapshot") and not stored.get("last_snapshot_record")
        )
        slot = database.slot(self.slot_name)
        if stored is not None:  # Debezium's own offsets name the commit LSN lsn_commit or lsn
            lsn = stored.get("lsn_commit", stored.get("lsn", 0))
            self.position = self.recorded = Position(int(lsn), int(stored.get("event", -1)))
        if self.signal_table:
            self.incremental = IncrementalSnapshots(
                self.parameters,
                self.signal_table,
                self.parsed[keys.INCREMENTAL_SNAPSHOT_CHUNK_SIZE],
                self._table_named,
                (stored or {}).get("incremental"),
            )
        snapshot = mode == "always" or (
            mode in ("initial", "initial_only", "when_needed") and not complete
        )
        if mode == "when_needed" and complete and not snapshot:
            confirmed = slot.confirmed_flush_lsn if slot else None
            snapshot = confirmed is None or confirmed > self.position.lsn_commit
            if snapshot:
                log.warning(
                    "%s: the slot no longer holds the stored position: snapshot", self.connector
                )
        if mode == "initial_only":
            if snapshot:
                self._start_snapshot(Snapshot(self.parameters, None, self._fetch_size()), 0)
            else:
                self.idle = True
            return
        self._prepare_publication()
        if slot is not None:
            self._check_own(slot)
        if snapshot:
            if slot is not None:
                database.drop_slot(self.slot_name)
            stream = self._connect_stream()
            consistent, exported = stream.create_slot(export_snapshot=True)
            self._start_snapshot(
                Snapshot(self.parameters, exported, self._fetch_size()), consistent
            )
            return
        if slot is None:
            stream = self._connect_stream()
            consistent, _ = stream.create_slot(export_snapshot=False)
            if stored is not None:
                log.warning(
                    "%s: replication slot %s was missing and is created anew: changes since "
                    "the stored offset are lost (snapshot.mode=when_needed reads the tables "
                    "again in that case)",
                    self.connector,
                    self.slot_name,
                )
            self.position = max(self.position, Position(consistent, -1))
        self._resume_stream()

    def _check_own(self, slot: SlotState) -> None:
        """Refuses a slot of another database or plugin; waits (retrying) while another
        session streams it, rather than ending that session."""
        if slot.database != self.parameters["dbname"] or slot.plugin != "pgoutput":
            raise ConnectException(
                f"Replication slot {self.slot_name} belongs to database {slot.database} with "
                f"plugin {slot.plugin}: give this connector a slot.name of its own"
            )
        if slot.active_pid is not None:
            raise RetriableException(
                f"Replication slot {self.slot_name} is in use by the session of PID "
                f"{slot.active_pid}; trying again"
            )

    def _fetch_size(self) -> int:
        return int(self.parsed[keys.SNAPSHOT_FETCH_SIZE])

    def _connect_stream(self) -> ReplicationStream:
        self.stream = ReplicationStream(
            self.parameters, self.slot_name, self.parsed[keys.STATUS_UPDATE_INTERVAL_MS] / 1000
        )
        return self.stream

    def _resume_stream(self) -> None:
        """Streams from the current position (a new connection after a failure)."""
        stream = self.stream or self._connect_stream()
        stream.start(self.publication, self.position.lsn_commit)
        self.transaction = None

    def _prepare_publication(self) -> None:
        assert self.database is not None
        mode = self.parsed[keys.PUBLICATION_AUTOCREATE_MODE].lower()
        existing = self.database.publication(self.publication)
        if mode == "disabled":
            if existing is None:
                raise ConnectException(f"Publication {self.publication} does not exist")
            return
        tables = [f"{s}.{t}" for _, s, t in self.database.tables() if self.filters.table(s, t)]
        if existing is None:
            self.database.create_publication(self.publication, mode, tables, self.connector)
        elif mode == "filtered" and not existing[0]:
            self.database.set_publication_tables(self.publication, tables)

    # -- snapshot -------------------------------------------------------------------------
    def _start_snapshot(self, snapshot: Snapshot, consistent: int) -> None:
        assert self.database is not None
        self.snapshot = snapshot
        self.position = Position(consistent, -1)
        signal = self.filters.signal_table
        tables = [
            self.database.table(oid, s, t)
            for oid, s, t in self.database.tables()
            if self.filters.table(s, t) and f"{s}.{t}" != signal
        ]
        self.snapshot_records = self._snapshot_events(tables)
        log.info("%s: snapshot of %d tables at %X", self.connector, len(tables), consistent)

    def _snapshot_events(self, tables: list[TableInfo]) -> Any:
        """``(table, row, marker)`` of every snapshot row, the marker as Debezium's
        ``source.snapshot`` says where the row is (first, last, first or last of its
        table)."""
        assert self.snapshot is not None and self.database is not None
        pending: tuple[CapturedTable, tuple[Any, ...], str] | None = None
        first = True
        for info in tables:
            table = self._captured(info)
            rows = (row for batch in self.snapshot.rows(info, self.database.quote) for row in batch)
            previous = next(rows, None)
            in_table = SNAPSHOT_FIRST_IN_DATA_COLLECTION
            while previous is not None:
                row = next(rows, None)
                marker = in_table if row is not None else SNAPSHOT_LAST_IN_DATA_COLLECTION
                if pending is not None:
                    yield pending
                pending = (table, previous, SNAPSHOT_FIRST if first else marker)
                first, in_table, previous = False, SNAPSHOT_TRUE, row
        if pending is not None:
            yield (pending[0], pending[1], SNAPSHOT_LAST)

    def _snapshot_batch(self) -> list[SourceRecord] | None:
        """The next rows of the snapshot, up to ``max.batch.size``; the snapshot ends with
        the batch holding its last row (or with the first batch when it has none)."""
        records = []
        now_ms = int(time.time() * 1000)
        last = True
        for table, row, marker in self.snapshot_records:
            last = marker == SNAPSHOT_LAST
            offset = {"lsn_commit": self.position.lsn_commit, "event": -1, "snapshot": True}
            if last:
                offset["last_snapshot_record"] = True
            source = self._source(table, now_ms * 1000, marker)
            value = envelope_value(
                table.envelope, op=OP_READ, source=source, ts_ms=now_ms, after=table.row(row)
            )
            records.append(self._record(table, offset, table.key(row), value))
            if last or len(records) >= self.max_batch:
                break
        if last:
            self._end_snapshot()
        return records or None

    def _end_snapshot(self) -> None:
        self.snapshot_records = None
        if self.snapshot is not None:
            self.snapshot.close()
            self.snapshot = None
        log.info("%s: snapshot done", self.connector)
        if self.stream is None:
            self.idle = True  # initial_only

    # -- stream ---------------------------------------------------------------------------
    def _stream_batch(self) -> list[SourceRecord] | None:
        assert self.stream is not None
        records: list[SourceRecord] = []
        for lsn, payload in self.stream.read(self.max_batch, self.poll_s):
            message = decode(payload)
            if isinstance(message, (Insert, Update, Delete, Truncate)):
                self._change(message, lsn, records)
            elif isinstance(message, Begin):
                # resumed inside it after a restart: its BEGIN was delivered already
                resumed = self.position.lsn_commit == message.final_lsn
                self.transaction = _Transaction(message, begun=resumed and self.position.event >= 0)
            elif isinstance(message, Commit):
                self._commit(message, records)
            elif isinstance(message, Relation):
                self._relation(message)
        if records and (last := records[-1].source_offset) and "ts_usec" in last:
            self.behind_ms = time.time() * 1000 - last["ts_usec"] / 1000  # once a poll
        if self.incremental is not None and self.transaction is None:
            self.incremental.next_chunk()
        if self.heartbeat_s and time.monotonic() >= self.next_heartbeat:
            records.append(self._heartbeat())
        if time.monotonic() >= self.next_slot_check:
            self._check_slot()
        return records or None

    def _advance(self, event: int) -> bool:
        """Moves to event ``event`` of the current transaction; False when the stored
        position is at or past it (a replay after a restart: the event was delivered)."""
        assert self.transaction is not None
        position = Position(self.transaction.begin.final_lsn, event)
        if position <= self.position:
            return False
        self.position = position
        return True

    def _change(
        self, message: Insert | Update | Delete | Truncate, lsn: int, records: list[SourceRecord]
    ) -> None:
        transaction = self.transaction
        assert transaction is not None
        transaction.events += 1
        if not self._advance(transaction.events):
            return
        offset: dict[str, Any] = {
            "lsn_commit": transaction.begin.final_lsn,
            "event": transaction.events,
            "lsn_proc": lsn,
            "txId": transaction.begin.xid,
            "ts_usec": transaction.begin.commit_time_us,
        }
        if self.incremental is not None and (state := self.incremental.state) is not None:
            offset["incremental"] = state
        if isinstance(message, Truncate):
            if OP_TRUNCATE not in self.skipped:
                for oid in message.relations:
                    if (table := self.tables.get(oid)) is not None:
                        self._event(table, OP_TRUNCATE, None, None, lsn, offset, None, records)
            return
        if message.relation == self.signal_oid:
            if isinstance(message, Insert) and self.incremental is not None:
                self._signal(message.new, offset, records)
            return
        table = self.tables.get(message.relation)
        if table is None:
            return
        if self.incremental is not None:
            self._superseding(table, message, offset)
        if isinstance(message, Insert):
            self._emit(table, OP_CREATE, None, message.new, lsn, offset, records)
        elif isinstance(message, Delete):
            self._delete(table, message.old, lsn, offset, records)
        elif message.old is not None and not table.same_key(message.old, message.new):
            self._delete(table, message.old, lsn, offset, records)  # Debezium: d, tombstone, c
            self._emit(table, OP_CREATE, None, message.new, lsn, offset, records)
        else:  # the old row only with REPLICA IDENTITY FULL
            before = None if message.old is None else table.row(message.old)
            self._emit(table, OP_UPDATE, before, message.new, lsn, offset, records)

    def _superseding(
        self, table: CapturedTable, message: Insert | Update | Delete, offset: dict[str, Any]
    ) -> None:
        """Tells the incremental snapshot of the rows ``message`` changes."""
        assert self.incremental is not None
        for image in (getattr(message, "old", None), getattr(message, "new", None)):
            if image is not None:
                self.incremental.on_change(table.info.full_name, table.key_text(image))

    def _emit(
        self,
        table: CapturedTable,
        op: str,
        before: Any,
        new: tuple[Any, ...],
        lsn: int,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> None:
        if op not in self.skipped:
            after = table.row(new)
            self._event(table, op, before, after, lsn, offset, table.key(new), records)

    def _signal(
        self, values: tuple[Any, ...], offset: dict[str, Any], records: list[SourceRecord]
    ) -> None:
        """A row of the signal table: a snapshot request, or a window of a chunk."""
        assert self.incremental is not None and self.database is not None
        signal_id, kind, data = (values[self.signal_columns[c]] for c in ("id", "type", "data"))
        if kind == EXECUTE_SNAPSHOT:
            captured = [
                f"{s}.{t}" for _, s, t in self.database.tables() if self.filters.table(s, t)
            ]
            self.incremental.on_signal(kind, data, [t for t in captured if t != self.signal_table])
            return
        rows = self.incremental.on_window(str(signal_id), str(kind))
        state = self.incremental.state
        offset = {k: v for k, v in offset.items() if k != "incremental"}
        if state is not None:
            offset["incremental"] = state
        now_ms = int(time.time() * 1000)
        for info, row in rows:
            table = self.captured_infos.get(info) or self.captured_infos.setdefault(
                info, self._captured(info)
            )
            source = self._source(table, now_ms * 1000, SNAPSHOT_INCREMENTAL)
            value = envelope_value(
                table.envelope, op=OP_READ, source=source, ts_ms=now_ms, after=table.row(row)
            )
            records.append(self._record(table, offset, table.key(row), value))

    def _table_named(self, name: str) -> TableInfo | None:
        assert self.database is not None
        for oid, schema, table in self.database.tables():
            if f"{schema}.{table}" == name:
                return self.database.table(oid, schema, table)
        return None

    def _delete(
        self,
        table: CapturedTable,
        old: tuple[Any, ...],
        lsn: int,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> None:
        if OP_DELETE in self.skipped:
            return
        key = table.key(old)
        self._event(table, OP_DELETE, table.row(old), None, lsn, offset, key, records)
        if self.tombstones:
            records.append(
                SourceRecord(
                    self.partition, offset, table.topic, key_schema=table.key_schema, key=key
                )
            )

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
        begin = transaction.begin
        source = table.source.block(begin.commit_time_us, begin.xid, lsn, self.last_commit_lsn)
        block = None
        if self.metadata:
            if not transaction.begun:
                transaction.begun = True
                key_, value_ = transaction_begin(transaction.id, begin.commit_time_us // 1000)
                records.append(self._metadata_record(key_, value_, offset))
            transaction.emitted += 1
            name = table.info.full_name
            transaction.counts[name] = order = transaction.counts.get(name, 0) + 1
            block = transaction_block(transaction.id, transaction.emitted, order)
        now_ms = int(time.time() * 1000)
        value = envelope_value(
            table.envelope,
            op=op,
            source=source,
            ts_ms=now_ms,
            before=before,
            after=after,
            transaction=block,
        )
        records.append(self._record(table, offset, key, value))

    def _source(self, table: CapturedTable, ts_us: int, marker: str) -> Any:
        """The ``source`` block of a snapshot's event (streamed events take the table's
        :class:`StreamedSource`): at the stream's position, in no transaction."""
        return source_struct(
            version=__version__,
            name=self.prefix,
            ts_ms=ts_us // 1000,
            ts_us=ts_us,
            snapshot=marker,
            db=self.parameters["dbname"],
            schema=table.info.schema,
            table=table.info.name,
            tx_id=None,
            lsn=self.position.lsn_commit,
        )

    def _record(
        self, table: CapturedTable, offset: dict[str, Any], key: Any, value: Any
    ) -> SourceRecord:
        return SourceRecord(
            self.partition,
            offset,
            table.topic,
            key_schema=table.key_schema,
            key=key,
            value_schema=table.envelope,
            value=value,
        )

    def _commit(self, message: Commit, records: list[SourceRecord]) -> None:
        transaction = self.transaction
        assert transaction is not None
        self.last_commit_lsn = message.commit_lsn
        self.transaction = None
        if not self.metadata:
            return
        self.transaction = transaction  # for _advance
        if self._advance(transaction.events + 1) and transaction.begun:
            key, value = transaction_end(
                transaction.id,
                message.commit_time_us // 1000,
                transaction.emitted,
                transaction.counts,
            )
            records.append(self._metadata_record(key, value, self._position_offset()))
        self.transaction = None

    def _position_offset(self) -> dict[str, Any]:
        """The current position as an offset, with the incremental snapshot's progress."""
        offset: dict[str, Any] = dict(self.position._asdict())
        if self.incremental is not None and (state := self.incremental.state) is not None:
            offset["incremental"] = state
        return offset

    def _metadata_record(self, key: Any, value: Any, offset: dict[str, Any]) -> SourceRecord:
        return SourceRecord(
            self.partition,
            offset,
            self.transaction_topic,
            key_schema=TRANSACTION_KEY_SCHEMA,
            key=key,
            value_schema=TRANSACTION_VALUE_SCHEMA,
            value=value,
        )

    def _relation(self, relation: Relation) -> None:
        """A table's shape, at its first change in this session or after it changed."""
        assert self.database is not None
        if not self.filters.table(relation.namespace, relation.name):
            self.tables.pop(relation.oid, None)
            return
        if f"{relation.namespace}.{relation.name}" == self.signal_table:
            self.signal_oid = relation.oid
            self.signal_columns = {c.name: i for i, c in enumerate(relation.columns)}
            return
        catalog = {
            c.name: c
            for c in self.database.table(relation.oid, relation.namespace, relation.name).columns
        }
        columns = []
        for column in relation.columns:
            known = catalog.get(column.name)
            columns.append(
                ColumnInfo(
                    column.name,
                    self.database.type(column.type_oid, column.modifier),
                    known.optional if known is not None else True,
                    known.key if known is not None else False,
                )
            )
        info = TableInfo(relation.oid, relation.namespace, relation.name, tuple(columns))
        self.tables[relation.oid] = self._captured(info)

    def _captured(self, info: TableInfo) -> CapturedTable:
        return CapturedTable(
            info,
            self.prefix,
            self.filters,
            self.modes,
            True,
            self.parsed[keys.UNAVAILABLE_VALUE_PLACEHOLDER],
            __version__,
            self.parameters["dbname"],
        )

    def _heartbeat(self) -> SourceRecord:
        """A heartbeat, with the server's position as its offset when no transaction is
        open: every transaction before it has been received, so confirming it is safe."""
        assert self.stream is not None and self.database is not None
        self.next_heartbeat = time.monotonic() + self.heartbeat_s
        query = self.parsed[keys.HEARTBEAT_ACTION_QUERY]
        if query:
            self.database.query(query)
        if self.transaction is None:
            self.position = max(self.position, Position(self.stream.server_position, -1))
        key, value = heartbeat(self.prefix, int(time.time() * 1000))
        return SourceRecord(
            self.partition,
            self._position_offset(),
            self.heartbeat_topic,
            key_schema=HEARTBEAT_KEY_SCHEMA,
            key=key,
            value_schema=HEARTBEAT_VALUE_SCHEMA,
            value=value,
        )

    # -- acknowledgements and the end -----------------------------------------------------
    def commit(self) -> None:
        """Everything polled so far is stored (or committed, exactly-once): the slot may
        release the log before the last polled position."""
        if self.stream is None or self.recorded is None or self.stopping.is_set():
            return
        try:
            self.stream.confirm(self.recorded.lsn_commit)
        except require_psycopg2().Error as e:  # the next poll connects again
            log.warning("%s: confirming the stream's position failed: %s", self.connector, e)
            self._close_stream()
            return
        self._check_slot()

    def _check_slot(self) -> None:
        """Reads the slot's retained log and lag (at most every ``status.update.interval.ms``
        and after each confirmation); a failure only leaves the metrics as they were."""
        try:
            if self.database is not None:
                self.slot_state = self.database.slot(self.slot_name)
        except require_psycopg2().Error as e:
            log.debug("%s: reading the slot's state failed: %s", self.connector, e)
        self.next_slot_check = time.monotonic() + self.parsed[keys.STATUS_UPDATE_INTERVAL_MS] / 1000

    def stop(self, connector_deleted: bool = False) -> None:
        """Deleted: drops the slot and the publication the connector created (KIP-901),
        ending the session that streams the slot (this task's own poll, which then
        returns). ``stopped`` drops them again in case a first poll created them
        meanwhile."""
        self.stopping.set()
        if connector_deleted:
            self.deleted = True
            self._drop_provisioned()

    def _drop_provisioned(self, publication: bool = True) -> None:
        """Drops the slot (when it is of this connector's database) and, with
        ``publication``, the publication this connector created."""
        database = Database(self.parameters)
        try:
            slot = database.slot(self.slot_name)
            if slot is not None and slot.database == self.parameters["dbname"]:
                database.drop_slot(self.slot_name)
            existing = database.publication(self.publication) if publication else None
            if existing is not None and existing[1] == CREATED_BY + self.connector:
                database.drop_publication(self.publication)
        finally:
            database.close()

    def stopped(self) -> None:
        """Closes every connection; drops the slot when deleted (again: see ``stop``) or
        with ``slot.drop.on.stop``."""
        self._close_connections()
        if self.deleted or self.parsed[keys.SLOT_DROP_ON_STOP]:
            self._drop_provisioned(publication=self.deleted)

    def _close_connections(self) -> None:
        """Closes the stream, the snapshot and the ordinary connections, each whatever the
        others do (a failed one is already gone)."""
        for close in (
            self._close_stream,
            self.snapshot.close if self.snapshot is not None else None,
            self.incremental.close if self.incremental is not None else None,
            self.database.close if self.database is not None else None,
        ):
            if close is not None:
                try:
                    close()
                except Exception as e:
                    log.debug("%s: closing a connection failed: %s", self.connector, e)
        self.snapshot = None
        self.database = None

    def _close_stream(self) -> None:
        if self.stream is not None:
            try:
                self.stream.close()
            finally:
                self.stream = None
