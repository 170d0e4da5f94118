"""The configs of the PostgreSQL change-capture connector, under Debezium's names and with
its defaults (``io.debezium.connector.postgresql.PostgresConnectorConfig``), and what they
select: the captured tables and columns, the connection parameters.

Deliberate differences from Debezium: ``plugin.name`` defaults to ``pgoutput`` (built into
PostgreSQL, no server extension), the only decoder this connector reads; the snapshot modes
are those without a custom implementation (``configuration_based`` and ``custom`` are
refused); ``database.*`` pass-through and JDBC-specific keys are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    NonEmptyString,
    Password,
    Range,
    Type,
    ValidList,
    ValidString,
)
from airflow_provider_connect.connectors.change_capture.snapshot import SNAPSHOT_MODES
from airflow_provider_connect.connectors.change_capture.topics import (
    DEFAULT_HEARTBEAT_PREFIX,
    DEFAULT_TRANSACTION_TOPIC,
    heartbeat_topic,
    transaction_topic,
)
from airflow_provider_connect.connectors.postgres.types import TypeModes

HOSTNAME = "database.hostname"
PORT = "database.port"
USER = "database.user"
PASSWORD = "database.password"
DBNAME = "database.dbname"
SSLMODE = "database.sslmode"
CONNECT_TIMEOUT_MS = "database.connect.timeout.ms"
TOPIC_PREFIX = "topic.prefix"
PLUGIN_NAME = "plugin.name"
SLOT_NAME = "slot.name"
SLOT_DROP_ON_STOP = "slot.drop.on.stop"
PUBLICATION_NAME = "publication.name"
PUBLICATION_AUTOCREATE_MODE = "publication.autocreate.mode"
SCHEMA_INCLUDE_LIST = "schema.include.list"
SCHEMA_EXCLUDE_LIST = "schema.exclude.list"
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
TIME_PRECISION_MODE = "time.precision.mode"
BINARY_HANDLING_MODE = "binary.handling.mode"
INTERVAL_HANDLING_MODE = "interval.handling.mode"
HSTORE_HANDLING_MODE = "hstore.handling.mode"
MONEY_FRACTION_DIGITS = "money.fraction.digits"
PROVIDE_TRANSACTION_METADATA = "provide.transaction.metadata"
TOPIC_TRANSACTION = "topic.transaction"
SIGNAL_DATA_COLLECTION = "signal.data.collection"
INCREMENTAL_SNAPSHOT_CHUNK_SIZE = "incremental.snapshot.chunk.size"
STATUS_UPDATE_INTERVAL_MS = "status.update.interval.ms"
UNAVAILABLE_VALUE_PLACEHOLDER = "unavailable.value.placeholder"

AUTOCREATE_MODES = ("all_tables", "disabled", "filtered", "no_tables")
OPERATIONS = ("c", "u", "d", "t", "none")
FILTER_KEYS = (
    SCHEMA_INCLUDE_LIST,
    SCHEMA_EXCLUDE_LIST,
    TABLE_INCLUDE_LIST,
    TABLE_EXCLUDE_LIST,
    COLUMN_INCLUDE_LIST,
    COLUMN_EXCLUDE_LIST,
)

_CONNECTION = "Connection"
_REPLICATION = "Replication"
_FILTERS = "Filters"
_SNAPSHOT = "Snapshot"
_EVENTS = "Events"
_TYPES = "Types"


def _modes(*names: str) -> ValidString:
    return ValidString(*names, case_sensitive=False)


CONFIG_DEF = (
    ConfigDef()
    .define(
        HOSTNAME,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The PostgreSQL server's host name or address.",
        group=_CONNECTION,
    )
    .define(
        PORT,
        Type.INT,
        5432,
        Range.between(1, 65535),
        Importance.HIGH,
        "Its port.",
        group=_CONNECTION,
    )
    .define(
        USER,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The user: it needs the REPLICATION attribute (or superuser), SELECT on "
        "the captured tables and, to create the publication, ownership of them (or superuser "
        "for FOR ALL TABLES).",
        group=_CONNECTION,
    )
    .define(
        PASSWORD, Type.PASSWORD, None, None, Importance.HIGH, "Its password.", group=_CONNECTION
    )
    .define(
        DBNAME,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The database whose changes are captured.",
        group=_CONNECTION,
    )
    .define(
        SSLMODE,
        Type.STRING,
        "prefer",
        _modes("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
        Importance.MEDIUM,
        "libpq's sslmode.",
        group=_CONNECTION,
    )
    .define(
        CONNECT_TIMEOUT_MS,
        Type.LONG,
        30_000,
        Range.at_least(1000),
        Importance.LOW,
        "How long a connection attempt may take.",
        group=_CONNECTION,
    )
    .define(
        TOPIC_PREFIX,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The logical name of the server: topics are <topic.prefix>.<schema>.<table>, "
        "and it names the source partition of the offsets.",
        group=_CONNECTION,
    )
    .define(
        PLUGIN_NAME,
        Type.STRING,
        "pgoutput",
        _modes("pgoutput"),
        Importance.MEDIUM,
        "The logical decoding plugin: pgoutput, built into PostgreSQL (12 and later here).",
        group=_REPLICATION,
    )
    .define(
        SLOT_NAME,
        Type.STRING,
        "debezium",
        NonEmptyString(),
        Importance.MEDIUM,
        "The replication slot: created when missing, kept across pauses, stops, restarts and "
        "reconfigurations, dropped when the connector is deleted (KIP-901).",
        group=_REPLICATION,
    )
    .define(
        SLOT_DROP_ON_STOP,
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Drop the slot whenever the task stops, not only on delete (for tests: changes made "
        "while stopped are lost).",
        group=_REPLICATION,
    )
    .define(
        PUBLICATION_NAME,
        Type.STRING,
        "dbz_publication",
        NonEmptyString(),
        Importance.MEDIUM,
        "The publication the slot streams.",
        group=_REPLICATION,
    )
    .define(
        PUBLICATION_AUTOCREATE_MODE,
        Type.STRING,
        "all_tables",
        _modes(*AUTOCREATE_MODES),
        Importance.MEDIUM,
        "all_tables: create it FOR ALL TABLES when missing; filtered: create it (or set its "
        "tables) for the captured tables; no_tables: create it empty; disabled: it must exist. "
        "A publication the connector created is dropped when the connector is deleted.",
        group=_REPLICATION,
    )
    .define(
        STATUS_UPDATE_INTERVAL_MS,
        Type.INT,
        10_000,
        Range.at_least(1),
        Importance.LOW,
        "How often the stream's position is reported to the server while idle.",
        group=_REPLICATION,
    )
    .define(
        SCHEMA_INCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.MEDIUM,
        "Regular expressions of the schemas to capture (all but the system ones by default).",
        group=_FILTERS,
    )
    .define(
        SCHEMA_EXCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.MEDIUM,
        "Schemas not to capture.",
        group=_FILTERS,
    )
    .define(
        TABLE_INCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.HIGH,
        "Regular expressions matching <schema>.<table> of the tables to capture.",
        group=_FILTERS,
    )
    .define(
        TABLE_EXCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.MEDIUM,
        "Tables not to capture.",
        group=_FILTERS,
    )
    .define(
        COLUMN_INCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.MEDIUM,
        "Regular expressions matching <schema>.<table>.<column> of the columns to emit.",
        group=_FILTERS,
    )
    .define(
        COLUMN_EXCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.MEDIUM,
        "Columns not to emit.",
        group=_FILTERS,
    )
    .define(
        SNAPSHOT_MODE,
        Type.STRING,
        "initial",
        _modes(*SNAPSHOT_MODES),
        Importance.MEDIUM,
        "initial: read the tables once, then stream; always: at every start; initial_only: "
        "read them and stop streaming; no_data: stream only; when_needed: read them when no "
        "offsets exist or the slot no longer holds the stored position.",
        group=_SNAPSHOT,
    )
    .define(
        SNAPSHOT_FETCH_SIZE,
        Type.INT,
        10_240,
        Range.at_least(1),
        Importance.LOW,
        "Rows fetched at once while reading a table.",
        group=_SNAPSHOT,
    )
    .define(
        SIGNAL_DATA_COLLECTION,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "The signal table (<schema>.<table>, columns id, type, data) whose execute-snapshot "
        "rows start incremental snapshots.",
        group=_SNAPSHOT,
    )
    .define(
        INCREMENTAL_SNAPSHOT_CHUNK_SIZE,
        Type.INT,
        1024,
        Range.at_least(1),
        Importance.LOW,
        "Rows read per chunk of an incremental snapshot.",
        group=_SNAPSHOT,
    )
    .define(
        MAX_BATCH_SIZE,
        Type.INT,
        2048,
        Range.at_least(1),
        Importance.LOW,
        "The most change events one poll returns.",
        group=_EVENTS,
    )
    .define(
        POLL_INTERVAL_MS,
        Type.LONG,
        500,
        Range.at_least(1),
        Importance.LOW,
        "How long a poll waits for changes.",
        group=_EVENTS,
    )
    .define(
        HEARTBEAT_INTERVAL_MS,
        Type.INT,
        0,
        Range.at_least(0),
        Importance.MEDIUM,
        "Emit a heartbeat to <topic.heartbeat.prefix>.<topic.prefix> this often (0: never). "
        "Heartbeats carry the stream's position, so an idle database's slot advances.",
        group=_EVENTS,
    )
    .define(
        HEARTBEAT_ACTION_QUERY,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "A statement run on the database with each heartbeat (e.g. an update of a heartbeat "
        "table, so a slot on a database with no captured writes still moves).",
        group=_EVENTS,
    )
    .define(
        HEARTBEAT_TOPICS_PREFIX,
        Type.STRING,
        DEFAULT_HEARTBEAT_PREFIX,
        NonEmptyString(),
        Importance.LOW,
        "The heartbeat topic's prefix.",
        group=_EVENTS,
    )
    .define(
        TOMBSTONES_ON_DELETE,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Follow each delete event by a tombstone (null value) with the same key.",
        group=_EVENTS,
    )
    .define(
        SKIPPED_OPERATIONS,
        Type.LIST,
        "t",
        ValidList(*OPERATIONS),
        Importance.LOW,
        "Operations not emitted: c (inserts), u (updates), d (deletes), t (truncates), or none.",
        group=_EVENTS,
    )
    .define(
        PROVIDE_TRANSACTION_METADATA,
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Add the transaction block to events and write BEGIN/END records to the transaction topic.",
        group=_EVENTS,
    )
    .define(
        TOPIC_TRANSACTION,
        Type.STRING,
        DEFAULT_TRANSACTION_TOPIC,
        NonEmptyString(),
        Importance.LOW,
        "The transaction topic's suffix: <topic.prefix>.<topic.transaction>.",
        group=_EVENTS,
    )
    .define(
        UNAVAILABLE_VALUE_PLACEHOLDER,
        Type.STRING,
        "__debezium_unavailable_value",
        None,
        Importance.LOW,
        "The value of a TOASTed column an update left unchanged (the stream does not carry it).",
        group=_EVENTS,
    )
    .define(
        DECIMAL_HANDLING_MODE,
        Type.STRING,
        "precise",
        _modes("precise", "double", "string"),
        Importance.MEDIUM,
        "numeric and money as Connect Decimals (precise), doubles or strings.",
        group=_TYPES,
    )
    .define(
        TIME_PRECISION_MODE,
        Type.STRING,
        "adaptive",
        _modes("adaptive", "adaptive_time_microseconds", "connect"),
        Importance.MEDIUM,
        "How dates, times and timestamps are represented (Debezium's semantic types, or Connect's).",
        group=_TYPES,
    )
    .define(
        BINARY_HANDLING_MODE,
        Type.STRING,
        "bytes",
        _modes("bytes", "base64", "base64-url-safe", "hex"),
        Importance.LOW,
        "bytea as bytes or encoded strings.",
        group=_TYPES,
    )
    .define(
        INTERVAL_HANDLING_MODE,
        Type.STRING,
        "numeric",
        _modes("numeric", "string"),
        Importance.LOW,
        "intervals as microseconds or ISO 8601 strings.",
        group=_TYPES,
    )
    .define(
        HSTORE_HANDLING_MODE,
        Type.STRING,
        "json",
        _modes("json", "map"),
        Importance.LOW,
        "hstore as a JSON string or a map.",
        group=_TYPES,
    )
    .define(
        MONEY_FRACTION_DIGITS,
        Type.SHORT,
        2,
        Range.at_least(0),
        Importance.LOW,
        "The scale of money values.",
        group=_TYPES,
    )
)

SESSION_OPTIONS = (
    "-c DateStyle=ISO,MDY -c IntervalStyle=iso_8601 -c extra_float_digits=3 "
    "-c bytea_output=hex -c TimeZone=UTC -c client_encoding=UTF8"
)
"""The settings every connection of the connector uses, so values arrive in one text form
from the stream and from snapshots alike (what ``types.py`` parses)."""


def connection_parameters(parsed: dict[str, Any], application: str) -> dict[str, Any]:
    """libpq keyword parameters of the configured database."""
    password = parsed[PASSWORD]
    return {
        "host": parsed[HOSTNAME],
        "port": parsed[PORT],
        "user": parsed[USER],
        "password": password.value if isinstance(password, Password) else password,
        "dbname": parsed[DBNAME],
        "sslmode": parsed[SSLMODE].lower(),
        "connect_timeout": max(1, parsed[CONNECT_TIMEOUT_MS] // 1000),
        "application_name": application,
        "options": SESSION_OPTIONS,
    }


def type_modes(parsed: dict[str, Any]) -> TypeModes:
    return TypeModes(
        decimal_handling=parsed[DECIMAL_HANDLING_MODE].lower(),
        time_precision=parsed[TIME_PRECISION_MODE].lower(),
        binary_handling=parsed[BINARY_HANDLING_MODE].lower(),
        interval_handling=parsed[INTERVAL_HANDLING_MODE].lower(),
        hstore_handling=parsed[HSTORE_HANDLING_MODE].lower(),
        money_fraction_digits=parsed[MONEY_FRACTION_DIGITS],
    )


def _patterns(values: Iterable[str] | None) -> list[re.Pattern[str]] | None:
    """Debezium's regular-expression lists: each matches a whole name, ignoring case."""
    if not values:
        return None
    return [re.compile(v.strip(), re.IGNORECASE) for v in values if v.strip()]


def pattern_errors(parsed: dict[str, Any]) -> dict[str, str]:
    """The filter keys whose regular expressions do not compile, with why."""
    errors = {}
    for key in FILTER_KEYS:
        for pattern in parsed[key] or ():
            try:
                re.compile(pattern)
            except re.error as e:
                errors[key] = f"Invalid regular expression {pattern!r}: {e}"
    return errors


SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast"})


@dataclass(frozen=True)
class Filters:
    """Which tables and columns are captured, as Debezium's include and exclude lists say
    (an include list wins over its exclude list, which is then not read)."""

    schema_include: list[re.Pattern[str]] | None
    schema_exclude: list[re.Pattern[str]] | None
    table_include: list[re.Pattern[str]] | None
    table_exclude: list[re.Pattern[str]] | None
    column_include: list[re.Pattern[str]] | None
    column_exclude: list[re.Pattern[str]] | None
    signal_table: str | None
    """The signal table (``signal.data.collection``), ``<schema>.<table>``."""

    @classmethod
    def of(cls, parsed: dict[str, Any]) -> Filters:
        return cls(
            _patterns(parsed[SCHEMA_INCLUDE_LIST]),
            _patterns(parsed[SCHEMA_EXCLUDE_LIST]),
            _patterns(parsed[TABLE_INCLUDE_LIST]),
            _patterns(parsed[TABLE_EXCLUDE_LIST]),
            _patterns(parsed[COLUMN_INCLUDE_LIST]),
            _patterns(parsed[COLUMN_EXCLUDE_LIST]),
            parsed[SIGNAL_DATA_COLLECTION],
        )

    def table(self, schema: str, table: str) -> bool:
        """Whether ``schema.table`` is captured (the signal table always is: its inserts are
        how signals arrive in the stream)."""
        name = f"{schema}.{table}"
        if name == self.signal_table:
            return True
        if schema in SYSTEM_SCHEMAS or schema.startswith("pg_temp"):
            return False
        if not _allowed(schema, self.schema_include, self.schema_exclude):
            return False
        return _allowed(name, self.table_include, self.table_exclude)

    def column(self, schema: str, table: str, column: str) -> bool:
        return _allowed(f"{schema}.{table}.{column}", self.column_include, self.column_exclude)


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
class PostgresConnectorConfig:
    """A task's config, read once from its props (Debezium's ``PostgresConnectorConfig``):
    what the task's parts read, typed, under the names of their keys."""

    connector: str
    """The connector's name (``name``): it names the connections and the publication's
    creator."""
    topic_prefix: str
    slot_name: str
    slot_drop_on_stop: bool
    publication: str
    publication_autocreate_mode: str
    parameters: dict[str, Any]
    """libpq's parameters of the captured database (:func:`connection_parameters`)."""
    filters: Filters
    type_modes: TypeModes
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
    status_update_interval_s: float
    unavailable_value_placeholder: str

    @property
    def dbname(self) -> str:
        name: str = self.parameters["dbname"]
        return name

    @classmethod
    def of(cls, props: Mapping[str, str]) -> PostgresConnectorConfig:
        """Parses ``props`` (raises :class:`ConfigException` on an invalid value)."""
        parsed = CONFIG_DEF.parse(dict(props))
        connector = props.get("name", "")
        prefix: str = parsed[TOPIC_PREFIX]
        return cls(
            connector=connector,
            topic_prefix=prefix,
            slot_name=parsed[SLOT_NAME],
            slot_drop_on_stop=parsed[SLOT_DROP_ON_STOP],
            publication=parsed[PUBLICATION_NAME],
            publication_autocreate_mode=parsed[PUBLICATION_AUTOCREATE_MODE].lower(),
            parameters=connection_parameters(parsed, f"connect-{connector}"),
            filters=Filters.of(parsed),
            type_modes=type_modes(parsed),
            skipped_operations=skipped_operations(parsed),
            tombstones_on_delete=parsed[TOMBSTONES_ON_DELETE],
            provide_transaction_metadata=parsed[PROVIDE_TRANSACTION_METADATA],
            transaction_topic=transaction_topic(prefix, props),
            max_batch_size=parsed[MAX_BATCH_SIZE],
            poll_interval_s=parsed[POLL_INTERVAL_MS] / 1000,
            heartbeat_interval_s=parsed[HEARTBEAT_INTERVAL_MS] / 1000,
            heartbeat_topic=heartbeat_topic(prefix, parsed[HEARTBEAT_TOPICS_PREFIX]),
            heartbeat_action_query=parsed[HEARTBEAT_ACTION_QUERY] or None,
            snapshot_mode=parsed[SNAPSHOT_MODE].lower(),
            snapshot_fetch_size=int(parsed[SNAPSHOT_FETCH_SIZE]),
            incremental_snapshot_chunk_size=parsed[INCREMENTAL_SNAPSHOT_CHUNK_SIZE],
            status_update_interval_s=parsed[STATUS_UPDATE_INTERVAL_MS] / 1000,
            unavailable_value_placeholder=parsed[UNAVAILABLE_VALUE_PLACEHOLDER],
        )
