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
from airflow_provider_connect.connect.signals import SignalChannels, SignalDatabase
from airflow_provider_connect.connectors.change_capture.heartbeat import Heartbeat
from airflow_provider_connect.connectors.change_capture.incremental import (
    ChunkReader,
    IncrementalSnapshots,
)
from airflow_provider_connect.connectors.change_capture.notifications import (
    CHANNEL_ERROR,
    Notifier,
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
SNAPSHOT_MAX_THREADS = "snapshot.max.threads"
SIGNAL_ENABLED_CHANNELS = "signal.enabled.channels"
SIGNAL_POLL_INTERVAL_MS = "signal.poll.interval.ms"
SIGNAL_KAFKA_TOPIC = "signal.kafka.topic"
SIGNAL_KAFKA_BOOTSTRAP_SERVERS = "signal.kafka.bootstrap.servers"
SIGNAL_KAFKA_GROUP_ID = "signal.kafka.groupId"
SIGNAL_KAFKA_POLL_TIMEOUT_MS = "signal.kafka.poll.timeout.ms"
SIGNAL_CONSUMER_PREFIX = "signal.consumer."
SIGNAL_FILE = "signal.file"
NOTIFICATION_ENABLED_CHANNELS = "notification.enabled.channels"
NOTIFICATION_SINK_TOPIC_NAME = "notification.sink.topic.name"

SIGNAL_CHANNELS = ("source", "kafka", "file")
"""Debezium's signal channels this runtime reads (its ``jmx`` and ``in-process`` are Java's)."""
NOTIFICATION_CHANNELS = ("sink", "log")
"""Debezium's notification channels this runtime writes (its ``jmx`` is Java's)."""

OPERATIONS = ("c", "u", "d", "t", "none")

FILTERS = "Filters"
SNAPSHOT = "Snapshot"
EVENTS = "Events"
TYPES = "Types"
SIGNALS = "Signals and notifications"


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
            f"The signal table (<{container}>.<table>, columns id, type, data) of the "
            "source signal channel; the task also writes its incremental snapshots' window "
            "rows there.",
            group=SNAPSHOT,
        )
        .define(
            SNAPSHOT_MAX_THREADS,
            Type.INT,
            1,
            Range.at_least(1),
            Importance.MEDIUM,
            "Tables an initial or blocking snapshot reads at once, each on a connection of "
            "its own in the same consistent view of the database.",
            group=SNAPSHOT,
        )
        .define(
            SIGNAL_ENABLED_CHANNELS,
            Type.LIST,
            "source",
            ValidList(*SIGNAL_CHANNELS),
            Importance.MEDIUM,
            "Where signals are read: source (rows of signal.data.collection), kafka "
            "(signal.kafka.topic, records keyed by topic.prefix), file (JSON lines of "
            "signal.file).",
            group=SIGNALS,
        )
        .define(
            SIGNAL_POLL_INTERVAL_MS,
            Type.LONG,
            5000,
            Range.at_least(1),
            Importance.MEDIUM,
            "How often the kafka and file channels are read for new signals.",
            group=SIGNALS,
        )
        .define(
            SIGNAL_KAFKA_TOPIC,
            Type.STRING,
            None,
            None,
            Importance.HIGH,
            "The kafka channel's topic (single partition); default <topic.prefix>-signal.",
            group=SIGNALS,
        )
        .define(
            SIGNAL_KAFKA_BOOTSTRAP_SERVERS,
            Type.STRING,
            None,
            None,
            Importance.HIGH,
            "The brokers of the kafka channel's topic (required with the kafka channel). "
            "Other consumer configs pass through as signal.consumer.<config>.",
            group=SIGNALS,
        )
        .define(
            SIGNAL_KAFKA_GROUP_ID,
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "The kafka channel's consumer group, which keeps its position in the signal "
            "topic; default kafka-signal-<topic.prefix>, a group of the connector's own.",
            group=SIGNALS,
        )
        .define(
            SIGNAL_KAFKA_POLL_TIMEOUT_MS,
            Type.INT,
            0,
            Range.at_least(0),
            Importance.LOW,
            "How long a read of the kafka channel waits for signals.",
            group=SIGNALS,
        )
        .define(
            SIGNAL_FILE,
            Type.STRING,
            "file-signals.txt",
            NonEmptyString(),
            Importance.HIGH,
            "The file channel's file, read and emptied every signal.poll.interval.ms.",
            group=SIGNALS,
        )
        .define(
            NOTIFICATION_ENABLED_CHANNELS,
            Type.LIST,
            "",
            ValidList(*NOTIFICATION_CHANNELS),
            Importance.MEDIUM,
            "Where notifications of snapshot progress go: sink (records to "
            "notification.sink.topic.name), log (the task's log).",
            group=SIGNALS,
        )
        .define(
            NOTIFICATION_SINK_TOPIC_NAME,
            Type.STRING,
            None,
            None,
            Importance.HIGH,
            "The sink channel's topic (required with the sink channel).",
            group=SIGNALS,
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
    snapshot_max_threads: int
    signals: SignalReading
    notification_channels: frozenset[str]
    notification_topic: str | None

    def notifier(self) -> Notifier:
        """The task's notifications (``notification.enabled.channels``)."""
        return Notifier(self.notification_channels, self.notification_topic, self.topic_prefix)

    def incremental(
        self, chunks: ChunkReader[Any] | None, notifier: Notifier
    ) -> IncrementalSnapshots[Any] | None:
        """The task's incremental snapshots, read by ``chunks`` (None: no signal table)."""
        if chunks is None:
            return None
        return IncrementalSnapshots(chunks, self.incremental_snapshot_chunk_size, notifier)

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
            "snapshot_max_threads": parsed[SNAPSHOT_MAX_THREADS],
            "signals": SignalReading.of(parsed, props),
            "notification_channels": _names(parsed[NOTIFICATION_ENABLED_CHANNELS]),
            "notification_topic": parsed[NOTIFICATION_SINK_TOPIC_NAME] or None,
        }


def _names(values: Iterable[str] | None) -> frozenset[str]:
    return frozenset(v.strip() for v in values or () if v.strip())


@dataclass(frozen=True)
class SignalReading:
    """Where the task reads signals (``signal.enabled.channels`` and each channel's
    configs); what senders are told of them is :func:`described_channels`."""

    enabled: frozenset[str]
    poll_interval_s: float
    kafka_topic: str
    kafka_consumer: dict[str, str]
    """The kafka channel's consumer configs (confluent-kafka's names)."""
    kafka_poll_timeout_s: float
    file: str

    @classmethod
    def of(cls, parsed: dict[str, Any], props: Mapping[str, str]) -> SignalReading:
        consumer = {
            k.removeprefix(SIGNAL_CONSUMER_PREFIX): v
            for k, v in props.items()
            if k.startswith(SIGNAL_CONSUMER_PREFIX)
        }
        consumer.setdefault("bootstrap.servers", parsed[SIGNAL_KAFKA_BOOTSTRAP_SERVERS] or "")
        consumer.setdefault(
            "group.id", parsed[SIGNAL_KAFKA_GROUP_ID] or f"kafka-signal-{parsed[TOPIC_PREFIX]}"
        )
        return cls(
            _names(parsed[SIGNAL_ENABLED_CHANNELS]),
            parsed[SIGNAL_POLL_INTERVAL_MS] / 1000,
            signal_topic(parsed),
            consumer,
            parsed[SIGNAL_KAFKA_POLL_TIMEOUT_MS] / 1000,
            parsed[SIGNAL_FILE],
        )


def described_channels(
    parsed: dict[str, Any], table: str | None, database: SignalDatabase
) -> SignalChannels:
    """The signal channels of ``parsed`` configs as senders reach them (the snapshot
    operators, :meth:`~airflow_provider_connect.connect.source.SourceConnector.signal_channels`):
    the source channel's ``table`` in ``database``."""
    return SignalChannels(
        enabled=parsed[SIGNAL_ENABLED_CHANNELS],
        topic_prefix=parsed[TOPIC_PREFIX],
        kafka_topic=signal_topic(parsed),
        kafka_bootstrap_servers=parsed[SIGNAL_KAFKA_BOOTSTRAP_SERVERS],
        file=parsed[SIGNAL_FILE],
        table=table,
        database=database,
    )


def signal_topic(parsed: dict[str, Any]) -> str:
    """The kafka signal channel's topic: ``signal.kafka.topic``, else
    ``<topic.prefix>-signal``."""
    return str(parsed[SIGNAL_KAFKA_TOPIC] or f"{parsed[TOPIC_PREFIX]}-signal")


def channel_errors(parsed: dict[str, Any]) -> dict[str, str]:
    """The signal and notification channels' missing configs, with Debezium's messages."""
    errors = {}
    signals = _names(parsed[SIGNAL_ENABLED_CHANNELS])
    if "kafka" in signals and not parsed[SIGNAL_KAFKA_BOOTSTRAP_SERVERS]:
        errors[SIGNAL_KAFKA_BOOTSTRAP_SERVERS] = (
            "The 'signal.kafka.bootstrap.servers' value is invalid: A value is required"
        )
    notifications = _names(parsed[NOTIFICATION_ENABLED_CHANNELS])
    if "sink" in notifications and not parsed[NOTIFICATION_SINK_TOPIC_NAME]:
        errors[NOTIFICATION_SINK_TOPIC_NAME] = CHANNEL_ERROR
    return errors
