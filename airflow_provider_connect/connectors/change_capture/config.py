"""The configs every change-capture connector shares, under Debezium's names and with its
defaults (``CommonConnectorConfig`` and ``RelationalDatabaseConnectorConfig``): the topic
prefix, the table and column filters, snapshots and signals, batching, heartbeats,
tombstones, skipped operations, transaction metadata and the decimal and binary handling
modes; and what they select, typed (:class:`CaptureConfig`, :class:`Filters`).

A database's connector merges :func:`capture_config_def` into its own ``ConfigDef`` (its
connection, its log, its type modes) and extends :class:`CaptureConfig` with its own
fields. What Debezium calls the container of a table differs by database: a PostgreSQL
schema, a MySQL database; the filters name it ``container``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    NonEmptyString,
    Range,
    Type,
    ValidList,
    ValidString,
)
from airflow_provider_connect.connectors.change_capture.heartbeat import Heartbeat
from airflow_provider_connect.connectors.change_capture.incremental import (
    ChunkReader,
    IncrementalSnapshots,
)
from airflow_provider_connect.connectors.change_capture.snapshot import SNAPSHOT_MODES
from airflow_provider_connect.connectors.change_capture.topics import (
    DEFAULT_HEARTBEAT_PREFIX,
    DEFAULT_TRANSACTION_TOPIC,
    heartbeat_topic,
    transaction_topic,
)
from airflow_provider_connect.connectors.change_capture.transactions import TransactionMonitor

TOPIC_PREFIX = "topic.prefix"
TABLE_INCLUDE_LIST = "table.include.list"
TABLE_EXCLUDE_LIST = "table.exclude.list"
COLUMN_INCLUDE_LIST = "column.include.list"
COLUMN_EXCLUDE_LIST = "column.exclude.list"
SNAPSHOT_MODE = "snapshot.mode"
SNAPSHOT_FETCH_SIZE = "snapshot.fetch.size"
MAX_BATCH_SIZE = "max.batch.size"
POLL_INTERVAL_MS = "poll.interval.ms"
HEARTBEAT_INTERVAL_MS = "heartbeat.interval.ms"
HEARTBEAT_ACTION_QUERY = "heartbeat.action.query"
HEARTBEAT_TOPICS_PREFIX = "topic.heartbeat.prefix"
TOMBSTONES_ON_DELETE = "tombstones.on.delete"
SKIPPED_OPERATIONS = "skipped.operations"
DECIMAL_HANDLING_MODE = "decimal.handling.mode"
BINARY_HANDLING_MODE = "binary.handling.mode"
PROVIDE_TRANSACTION_METADATA = "provide.transaction.metadata"
TOPIC_TRANSACTION = "topic.transaction"
SIGNAL_DATA_COLLECTION = "signal.data.collection"
INCREMENTAL_SNAPSHOT_CHUNK_SIZE = "incremental.snapshot.chunk.size"

OPERATIONS = ("c", "u", "d", "t", "none")

FILTERS = "Filters"
SNAPSHOT = "Snapshot"
EVENTS = "Events"
TYPES = "Types"


def modes(*names: str) -> ValidString:
    """A mode's validator: one of ``names``, in any case (Debezium's enums)."""
    return ValidString(*names, case_sensitive=False)


def capture_config_def(container: str, snapshot_modes: str) -> ConfigDef:
    """The shared configs; ``container`` names what holds a table in this database
    (``schema``, ``database``) in their documentation; ``snapshot_modes`` documents
    ``snapshot.mode``'s values as this database runs them."""
    return (
        ConfigDef()
        .define(
            TOPIC_PREFIX,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation=f"The logical name of the server: topics are <topic.prefix>."
            f"<{container}>.<table>, and it names the source partition of the offsets.",
            group="Connection",
        )
        .define(
            TABLE_INCLUDE_LIST,
            Type.LIST,
            None,
            None,
            Importance.HIGH,
            f"Regular expressions matching <{container}>.<table> of the tables to capture.",
            group=FILTERS,
        )
        .define(
            TABLE_EXCLUDE_LIST,
            Type.LIST,
            None,
            None,
            Importance.MEDIUM,
            "Tables not to capture.",
            group=FILTERS,
        )
        .define(
            COLUMN_INCLUDE_LIST,
            Type.LIST,
            None,
            None,
            Importance.MEDIUM,
            f"Regular expressions matching <{container}>.<table>.<column> of the columns to emit.",
            group=FILTERS,
        )
        .define(
            COLUMN_EXCLUDE_LIST,
            Type.LIST,
            None,
            None,
            Importance.MEDIUM,
            "Columns not to emit.",
            group=FILTERS,
        )
        .define(
            SNAPSHOT_MODE,
            Type.STRING,
            "initial",
            modes(*SNAPSHOT_MODES),
            Importance.MEDIUM,
            snapshot_modes,
            group=SNAPSHOT,
        )
        .define(
            SNAPSHOT_FETCH_SIZE,
            Type.INT,
            10_240,
            Range.at_least(1),
            Importance.LOW,
            "Rows fetched at once while reading a table.",
            group=SNAPSHOT,
        )
        .define(
            SIGNAL_DATA_COLLECTION,
            Type.STRING,
            None,
            None,
            Importance.MEDIUM,
            f"The signal table (<{container}>.<table>, columns id, type, data) whose "
            "execute-snapshot rows start incremental snapshots.",
            group=SNAPSHOT,
        )
        .define(
            INCREMENTAL_SNAPSHOT_CHUNK_SIZE,
            Type.INT,
            1024,
            Range.at_least(1),
            Importance.LOW,
            "Rows read per chunk of an incremental snapshot.",
            group=SNAPSHOT,
        )
        .define(
            MAX_BATCH_SIZE,
            Type.INT,
            2048,
            Range.at_least(1),
            Importance.LOW,
            "The most change events one poll returns.",
            group=EVENTS,
        )
        .define(
            POLL_INTERVAL_MS,
            Type.LONG,
            500,
            Range.at_least(1),
            Importance.LOW,
            "How long a poll waits for changes.",
            group=EVENTS,
        )
        .define(
            HEARTBEAT_INTERVAL_MS,
            Type.INT,
            0,
            Range.at_least(0),
            Importance.MEDIUM,
            "Emit a heartbeat to <topic.heartbeat.prefix>.<topic.prefix> this often (0: never). "
            "Heartbeats carry the stream's position, so the stored offset of a database with "
            "no captured writes still advances.",
            group=EVENTS,
        )
        .define(
            HEARTBEAT_ACTION_QUERY,
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "A statement run on the database with each heartbeat (e.g. an update of a "
            "heartbeat table, so the log moves on a database with no captured writes).",
            group=EVENTS,
        )
        .define(
            HEARTBEAT_TOPICS_PREFIX,
            Type.STRING,
            DEFAULT_HEARTBEAT_PREFIX,
            NonEmptyString(),
            Importance.LOW,
            "The heartbeat topic's prefix.",
            group=EVENTS,
        )
        .define(
            TOMBSTONES_ON_DELETE,
            Type.BOOLEAN,
            True,
            None,
            Importance.MEDIUM,
            "Follow each delete event by a tombstone (null value) with the same key.",
            group=EVENTS,
        )
        .define(
            SKIPPED_OPERATIONS,
            Type.LIST,
            "t",
            ValidList(*OPERATIONS),
            Importance.LOW,
            "Operations not emitted: c (inserts), u (updates), d (deletes), t (truncates), "
            "or none.",
            group=EVENTS,
        )
        .define(
            PROVIDE_TRANSACTION_METADATA,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "Add the transaction block to events and write BEGIN/END records to the "
            "transaction topic.",
            group=EVENTS,
        )
        .define(
            TOPIC_TRANSACTION,
            Type.STRING,
            DEFAULT_TRANSACTION_TOPIC,
            NonEmptyString(),
            Importance.LOW,
            "The transaction topic's suffix: <topic.prefix>.<topic.transaction>.",
            group=EVENTS,
        )
        .define(
            DECIMAL_HANDLING_MODE,
            Type.STRING,
            "precise",
            modes("precise", "double", "string"),
            Importance.MEDIUM,
            "Exact numerics as Connect Decimals (precise), doubles or strings.",
            group=TYPES,
        )
        .define(
            BINARY_HANDLING_MODE,
            Type.STRING,
            "bytes",
            modes("bytes", "base64", "base64-url-safe", "hex"),
            Importance.LOW,
            "Binary columns as bytes or encoded strings.",
            group=TYPES,
        )
    )


def _patterns(values: Iterable[str] | None) -> list[re.Pattern[str]] | None:
    """Debezium's regular-expression lists: each matches a whole name, ignoring case."""
    if not values:
        return None
    return [re.compile(v.strip(), re.IGNORECASE) for v in values if v.strip()]


def pattern_errors(parsed: dict[str, Any], keys: Iterable[str]) -> dict[str, str]:
    """The filter ``keys`` whose regular expressions do not compile, with why."""
    errors = {}
    for key in keys:
        for pattern in parsed[key] or ():
            try:
                re.compile(pattern)
            except re.error as e:
                errors[key] = f"Invalid regular expression {pattern!r}: {e}"
    return errors


@dataclass(frozen=True)
class Filters:
    """Which tables and columns are captured, as Debezium's include and exclude lists say
    (an include list wins over its exclude list, which is then not read). A container is
    what holds a table: a PostgreSQL schema, a MySQL database."""

    container_include: list[re.Pattern[str]] | None
    container_exclude: list[re.Pattern[str]] | None
    table_include: list[re.Pattern[str]] | None
    table_exclude: list[re.Pattern[str]] | None
    column_include: list[re.Pattern[str]] | None
    column_exclude: list[re.Pattern[str]] | None
    signal_table: str | None
    """The signal table (``signal.data.collection``), ``<container>.<table>``."""
    system: Callable[[str], bool]
    """Whether a container is the database's own (never captured)."""

    @classmethod
    def of(
        cls,
        parsed: dict[str, Any],
        container_include: str,
        container_exclude: str,
        system: Callable[[str], bool],
    ) -> Filters:
        """The filters of ``parsed`` configs, the containers' under the keys
        ``container_include`` and ``container_exclude``."""
        return cls(
            _patterns(parsed[container_include]),
            _patterns(parsed[container_exclude]),
            _patterns(parsed[TABLE_INCLUDE_LIST]),
            _patterns(parsed[TABLE_EXCLUDE_LIST]),
            _patterns(parsed[COLUMN_INCLUDE_LIST]),
            _patterns(parsed[COLUMN_EXCLUDE_LIST]),
            parsed[SIGNAL_DATA_COLLECTION],
            system,
        )

    def container(self, container: str) -> bool:
        """Whether tables of ``container`` may be captured (its own include and exclude
        lists; never the database's own)."""
        if self.system(container):
            return False
        return _allowed(container, self.container_include, self.container_exclude)

    def table(self, container: str, table: str) -> bool:
        """Whether ``container.table`` is captured (the signal table always is: its inserts
        are how signals arrive in the stream)."""
        name = f"{container}.{table}"
        if name == self.signal_table:
            return True
        if not self.container(container):
            return False
        return _allowed(name, self.table_include, self.table_exclude)

    def column(self, container: str, table: str, column: str) -> bool:
        return _allowed(f"{container}.{table}.{column}", self.column_include, self.column_exclude)


def _allowed(
    name: str,
    include: list[re.Pattern[str]] | None,
    exclude: list[re.Pattern[str]] | None,
) -> bool:
    if include is not None:
        return any(p.fullmatch(name) for p in include)
    if exclude is not None:
        return not any(p.fullmatch(name) for p in exclude)
    return True


def skipped_operations(parsed: dict[str, Any]) -> frozenset[str]:
    ops = {o.strip().lower() for o in parsed[SKIPPED_OPERATIONS] or ()}
    return frozenset() if "none" in ops else frozenset(ops)


@dataclass(frozen=True)
class CaptureConfig:
    """What the change-capture core reads of a task's config, typed; a database's config
    extends it with its own fields (:meth:`shared` gives these)."""

    connector: str
    """The connector's name (``name``): it names the connections."""
    topic_prefix: str
    filters: Filters
    skipped_operations: frozenset[str]
    tombstones_on_delete: bool
    provide_transaction_metadata: bool
    transaction_topic: str
    max_batch_size: int
    poll_interval_s: float
    heartbeat_interval_s: float
    heartbeat_topic: str
    heartbeat_action_query: str | None
    snapshot_mode: str
    snapshot_fetch_size: int
    incremental_snapshot_chunk_size: int

    def incremental(self, chunks: ChunkReader[Any] | None) -> IncrementalSnapshots[Any] | None:
        """The task's incremental snapshots, read by ``chunks`` (None: no signal table)."""
        if chunks is None:
            return None
        return IncrementalSnapshots(chunks, self.incremental_snapshot_chunk_size)

    def transaction_monitor(self, partition: dict[str, Any]) -> TransactionMonitor:
        """The task's transaction metadata (``provide.transaction.metadata``)."""
        return TransactionMonitor(
            self.provide_transaction_metadata, self.transaction_topic, partition
        )

    def heartbeat(self, partition: dict[str, Any]) -> Heartbeat:
        """The task's heartbeats (``heartbeat.interval.ms``)."""
        return Heartbeat(
            self.heartbeat_interval_s, self.topic_prefix, self.heartbeat_topic, partition
        )

    @staticmethod
    def shared(
        parsed: dict[str, Any], props: Mapping[str, str], filters: Filters
    ) -> dict[str, Any]:
        """The fields above, of ``parsed`` configs (from ``props``, the task's)."""
        prefix: str = parsed[TOPIC_PREFIX]
        return {
            "connector": props.get("name", ""),
            "topic_prefix": prefix,
            "filters": filters,
            "skipped_operations": skipped_operations(parsed),
            "tombstones_on_delete": parsed[TOMBSTONES_ON_DELETE],
            "provide_transaction_metadata": parsed[PROVIDE_TRANSACTION_METADATA],
            "transaction_topic": transaction_topic(prefix, props),
            "max_batch_size": parsed[MAX_BATCH_SIZE],
            "poll_interval_s": parsed[POLL_INTERVAL_MS] / 1000,
            "heartbeat_interval_s": parsed[HEARTBEAT_INTERVAL_MS] / 1000,
            "heartbeat_topic": heartbeat_topic(prefix, parsed[HEARTBEAT_TOPICS_PREFIX]),
            "heartbeat_action_query": parsed[HEARTBEAT_ACTION_QUERY] or None,
            "snapshot_mode": parsed[SNAPSHOT_MODE].lower(),
            "snapshot_fetch_size": int(parsed[SNAPSHOT_FETCH_SIZE]),
            "incremental_snapshot_chunk_size": parsed[INCREMENTAL_SNAPSHOT_CHUNK_SIZE],
        }
