"""The configs of the PostgreSQL change-capture connector, under Debezium's names and with
its defaults (``io.debezium.connector.postgresql.PostgresConnectorConfig``), and what they
select: the captured tables and columns, the connection parameters.

Deliberate differences from Debezium: ``plugin.name`` defaults to ``pgoutput`` (built into
PostgreSQL, no server extension), the only decoder this connector reads; the snapshot modes
are those without a custom implementation (``configuration_based`` and ``custom`` are
refused); ``database.*`` pass-through and JDBC-specific keys are not read.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    NonEmptyString,
    Password,
    Range,
    Type,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connectors.change_capture.config import (
    BINARY_HANDLING_MODE,
    COLUMN_EXCLUDE_LIST,
    COLUMN_INCLUDE_LIST,
    DECIMAL_HANDLING_MODE,
    EVENTS,
    FILTERS,
    SNAPSHOT,
    TABLE_EXCLUDE_LIST,
    TABLE_INCLUDE_LIST,
    TYPES,
    CaptureConfig,
    Filters,
    capture_config_def,
    modes,
)
from airflow_provider_connect.connectors.change_capture.config import (
    SIGNAL_DATA_COLLECTION as SIGNAL_DATA_COLLECTION,
)
from airflow_provider_connect.connectors.change_capture.config import (
    TOPIC_PREFIX as TOPIC_PREFIX,
)
from airflow_provider_connect.connectors.change_capture.config import (
    pattern_errors as _pattern_errors,
)
from airflow_provider_connect.connectors.postgres.types import TypeModes

log = logging.getLogger(__name__)

HOSTNAME = "database.hostname"
PORT = "database.port"
USER = "database.user"
PASSWORD = "database.password"
DBNAME = "database.dbname"
SSLMODE = "database.sslmode"
CONNECT_TIMEOUT_MS = "database.connect.timeout.ms"
TCP_KEEPALIVE = "database.tcpKeepAlive"
PLUGIN_NAME = "plugin.name"
SLOT_NAME = "slot.name"
SLOT_DROP_ON_STOP = "slot.drop.on.stop"
PUBLICATION_NAME = "publication.name"
PUBLICATION_AUTOCREATE_MODE = "publication.autocreate.mode"
SCHEMA_INCLUDE_LIST = "schema.include.list"
SCHEMA_EXCLUDE_LIST = "schema.exclude.list"
TIME_PRECISION_MODE = "time.precision.mode"
INTERVAL_HANDLING_MODE = "interval.handling.mode"
HSTORE_HANDLING_MODE = "hstore.handling.mode"
MONEY_FRACTION_DIGITS = "money.fraction.digits"
STATUS_UPDATE_INTERVAL_MS = "status.update.interval.ms"
SNAPSHOT_ISOLATION_MODE = "snapshot.isolation.mode"
SNAPSHOT_ISOLATION_MODES = ("serializable", "repeatable_read", "read_committed", "read_uncommitted")
LSN_FLUSH_MODE = "lsn.flush.mode"
FLUSH_LSN_SOURCE = "flush.lsn.source"
OFFSET_MISMATCH_STRATEGY = "offset.mismatch.strategy"
UNAVAILABLE_VALUE_PLACEHOLDER = "unavailable.value.placeholder"
MESSAGE_PREFIX_INCLUDE_LIST = "message.prefix.include.list"
MESSAGE_PREFIX_EXCLUDE_LIST = "message.prefix.exclude.list"

AUTOCREATE_MODES = ("all_tables", "disabled", "filtered", "no_tables")
LSN_FLUSH_MODES = ("connector", "manual", "connector_and_driver")
OFFSET_MISMATCH_STRATEGIES = ("no_validation", "trust_offset", "trust_slot", "trust_greater_lsn")
DRIVER_FLUSH_HEARTBEAT_S = 600.0
"""The heartbeat interval ``connector_and_driver`` sets when there would be none (Debezium's)."""
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
_FILTERS = FILTERS
_TYPES = TYPES


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
        modes("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
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
        "How long a connection attempt may take; with database.tcpKeepAlive (the default), "
        "also how long an open connection (the replication stream, snapshot and catalog "
        "queries) may go without the server's network answering: it then fails within about "
        "this timeout (TCP keepalive probes from a third of it idle, tcp_user_timeout for "
        "data left unacknowledged) instead of waiting the operating system's ~15 minutes, and "
        "the task fails, or restarts as the runtime's restart settings say.",
        group=_CONNECTION,
    )
    .define(
        TCP_KEEPALIVE,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Probe idle connections with TCP keepalives and give up on a connection whose server "
        "stopped answering after database.connect.timeout.ms (libpq's keepalives_idle, "
        "keepalives_interval, keepalives_count and tcp_user_timeout, from a third of it); "
        "false: no keepalives (libpq's keepalives=0), and a connection cut off by a network "
        "partition waits as long as the operating system lets it.",
        group=_CONNECTION,
    )
    .define(
        PLUGIN_NAME,
        Type.STRING,
        "pgoutput",
        modes("pgoutput"),
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
        modes(*AUTOCREATE_MODES),
        Importance.MEDIUM,
        "all_tables: create it FOR ALL TABLES when missing; filtered: create it (or set its "
        "tables) for the captured tables; no_tables: create it empty; disabled: it must exist. "
        "A publication the connector created is dropped when the connector is deleted.",
        group=_REPLICATION,
    )
    .define(
        SNAPSHOT_ISOLATION_MODE,
        Type.STRING,
        "serializable",
        modes(*SNAPSHOT_ISOLATION_MODES),
        Importance.LOW,
        "The isolation level of a snapshot read without the slot's exported snapshot (a "
        "blocking snapshot, or initial_only): serializable (read only, deferrable), "
        "repeatable_read, read_committed or read_uncommitted. The initial snapshot in the "
        "slot's snapshot is always repeatable_read. With read_committed and read_uncommitted, "
        "the connections of snapshot.max.threads do not share one view.",
        group=SNAPSHOT,
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
        LSN_FLUSH_MODE,
        Type.STRING,
        "connector",
        modes(*LSN_FLUSH_MODES),
        Importance.LOW,
        "connector: the task confirms the position of what the runtime stored to the slot; "
        "manual: it never confirms (the slot is advanced by someone else); "
        "connector_and_driver: as connector, and with no heartbeat configured and no "
        "transaction metadata, heartbeats every 10 minutes (Debezium's fallback). psycopg2 "
        "itself confirms a keepalive's position while everything received is confirmed. "
        "Replaces flush.lsn.source.",
        group=_REPLICATION,
    )
    .define(
        FLUSH_LSN_SOURCE,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Deprecated: lsn.flush.mode. When lsn.flush.mode is not set, true means connector and "
        "false manual.",
        group=_REPLICATION,
    )
    .define(
        OFFSET_MISMATCH_STRATEGY,
        Type.STRING,
        "no_validation",
        modes(*OFFSET_MISMATCH_STRATEGIES),
        Importance.LOW,
        "What a start does when the stored offset and the slot's confirmed_flush_lsn disagree. "
        "no_validation: streams from the offset (the server starts at the slot's position when "
        "that is later); trust_offset: advances the slot to an offset ahead of it, fails when "
        "the slot is ahead; trust_slot: moves the offset to a slot ahead of it; "
        "trust_greater_lsn: both, to the greater of the two.",
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
    .merged(
        capture_config_def(
            "schema",
            "initial: read the tables once, then stream; always: at every start; initial_only: "
            "read them and stop streaming; no_data: stream only; when_needed: read them when no "
            "offsets exist or the slot no longer holds the stored position.",
        )
    )
    .define(
        UNAVAILABLE_VALUE_PLACEHOLDER,
        Type.STRING,
        "__debezium_unavailable_value",
        None,
        Importance.LOW,
        "The value of a TOASTed column an update left unchanged (the stream does not carry it).",
        group=EVENTS,
    )
    .define(
        MESSAGE_PREFIX_INCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.MEDIUM,
        "Regular expressions matching the prefixes of the logical decoding messages "
        "(pg_logical_emit_message) to emit to <topic.prefix>.message (all by default).",
        group=EVENTS,
    )
    .define(
        MESSAGE_PREFIX_EXCLUDE_LIST,
        Type.LIST,
        None,
        None,
        Importance.MEDIUM,
        "Prefixes of the logical decoding messages not to emit (not with "
        "message.prefix.include.list).",
        group=EVENTS,
    )
    .define(
        TIME_PRECISION_MODE,
        Type.STRING,
        "adaptive",
        modes("adaptive", "adaptive_time_microseconds", "connect"),
        Importance.MEDIUM,
        "How dates, times and timestamps are represented (Debezium's semantic types, or Connect's).",
        group=_TYPES,
    )
    .define(
        INTERVAL_HANDLING_MODE,
        Type.STRING,
        "numeric",
        modes("numeric", "string"),
        Importance.LOW,
        "intervals as microseconds or ISO 8601 strings.",
        group=_TYPES,
    )
    .define(
        HSTORE_HANDLING_MODE,
        Type.STRING,
        "json",
        modes("json", "map"),
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
    """libpq keyword parameters of the configured database, for every connection of the
    connector (the replication stream's too): with ``database.tcpKeepAlive``, those that
    fail a connection whose server stopped answering (:func:`keepalive_parameters`)."""
    password = parsed[PASSWORD]
    keepalives = (
        keepalive_parameters(parsed[CONNECT_TIMEOUT_MS])
        if parsed[TCP_KEEPALIVE]
        else {"keepalives": 0}
    )
    return {
        **keepalives,
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


def keepalive_parameters(timeout_ms: int) -> dict[str, int]:
    """libpq's parameters that fail an open connection within about ``timeout_ms`` (at
    least 2 s) of its peer's network going silent: TCP keepalive probes once it has been
    idle a third of it, then every sixth, as many as fill it (what bounds a read waiting
    for an answer that will never come, where nothing is sent), and ``tcp_user_timeout``
    (Linux) for data sent and not acknowledged (what bounds a write, and, once probes are
    out, the probing too)."""
    bound_s = max(1, math.ceil(timeout_ms / 1000))
    idle_s = max(1, bound_s // 3)
    interval_s = max(1, bound_s // 6)
    return {
        "keepalives": 1,
        "keepalives_idle": idle_s,
        "keepalives_interval": interval_s,
        "keepalives_count": max(1, math.ceil((bound_s - idle_s) / interval_s)),
        "tcp_user_timeout": timeout_ms,
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


def pattern_errors(parsed: dict[str, Any]) -> dict[str, str]:
    """The filter keys whose regular expressions do not compile, with why; and the message
    prefix exclude list set beside the include list (Debezium's error)."""
    errors = _pattern_errors(parsed, (*FILTER_KEYS, *MESSAGE_PREFIX_KEYS))
    if parsed[MESSAGE_PREFIX_INCLUDE_LIST] and parsed[MESSAGE_PREFIX_EXCLUDE_LIST]:
        errors[MESSAGE_PREFIX_EXCLUDE_LIST] = _BOTH_MESSAGE_LISTS
    return errors


MESSAGE_PREFIX_KEYS = (MESSAGE_PREFIX_INCLUDE_LIST, MESSAGE_PREFIX_EXCLUDE_LIST)
_BOTH_MESSAGE_LISTS = (
    f"The '{MESSAGE_PREFIX_EXCLUDE_LIST}' value is invalid: "
    f'"{MESSAGE_PREFIX_INCLUDE_LIST}" is already specified'
)


@dataclass(frozen=True)
class MessageFilter:
    """Which logical decoding messages are emitted, by their prefix (Debezium's
    ``LogicalDecodingMessageFilter``): those an include pattern matches whole, ignoring
    case, or, without an include list, those no exclude pattern matches; all without
    either."""

    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, parsed: dict[str, Any]) -> MessageFilter:
        """The filter of ``parsed`` configs; raises :class:`ConfigException` when both lists
        are set."""
        include, exclude = (
            tuple(re.compile(p.strip(), re.IGNORECASE) for p in parsed[key] or () if p.strip())
            for key in MESSAGE_PREFIX_KEYS
        )
        if include and exclude:
            raise ConfigException(_BOTH_MESSAGE_LISTS, name=MESSAGE_PREFIX_EXCLUDE_LIST)
        return cls(include, exclude)

    def __call__(self, prefix: str) -> bool:
        if self.include:
            return any(p.fullmatch(prefix) for p in self.include)
        return not any(p.fullmatch(prefix) for p in self.exclude)


SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast"})


def system_schema(schema: str) -> bool:
    """PostgreSQL's own schemas, never captured."""
    return schema in SYSTEM_SCHEMAS or schema.startswith("pg_temp")


def filters(parsed: dict[str, Any]) -> Filters:
    """The captured schemas, tables and columns."""
    return Filters.of(parsed, SCHEMA_INCLUDE_LIST, SCHEMA_EXCLUDE_LIST, system_schema)


@dataclass(frozen=True)
class PostgresConnectorConfig(CaptureConfig):
    """A task's config, read once from its props (Debezium's ``PostgresConnectorConfig``):
    what the task's parts read, typed, under the names of their keys."""

    slot_name: str
    slot_drop_on_stop: bool
    publication: str
    publication_autocreate_mode: str
    parameters: dict[str, Any]
    """libpq's parameters of the captured database (:func:`connection_parameters`)."""
    type_modes: TypeModes
    status_update_interval_s: float
    unavailable_value_placeholder: str
    message_filter: MessageFilter
    """The logical decoding messages emitted (``message.prefix.*.list``)."""
    snapshot_isolation_mode: str
    """``snapshot.isolation.mode`` (lower-case)."""
    lsn_flush_mode: str
    """``lsn.flush.mode`` (lower-case), ``flush.lsn.source`` mapped when it is not set."""
    offset_mismatch_strategy: str
    """``offset.mismatch.strategy`` (lower-case)."""

    @property
    def dbname(self) -> str:
        name: str = self.parameters["dbname"]
        return name

    @classmethod
    def of(cls, props: Mapping[str, str]) -> PostgresConnectorConfig:
        """Parses ``props`` (raises :class:`ConfigException` on an invalid value)."""
        parsed = CONFIG_DEF.parse(dict(props))
        connector = props.get("name", "")
        shared = CaptureConfig.shared(parsed, props, filters(parsed))
        flush_mode = lsn_flush_mode(parsed, props)
        if (
            flush_mode == "connector_and_driver"
            and not shared["heartbeat_interval_s"]
            and not shared["provide_transaction_metadata"]
        ):
            shared["heartbeat_interval_s"] = DRIVER_FLUSH_HEARTBEAT_S
            log.warning(
                "heartbeat.interval.ms was internally set to 600000 ms since "
                "lsn.flush.mode=connector_and_driver requires periodic opportunities to propagate "
                "LSNs to Kafka. If this behavior is not desired, explicitly set "
                "heartbeat.interval.ms to more than 0 or enable provide.transaction.metadata."
            )
        return cls(
            **shared,
            slot_name=parsed[SLOT_NAME],
            slot_drop_on_stop=parsed[SLOT_DROP_ON_STOP],
            publication=parsed[PUBLICATION_NAME],
            publication_autocreate_mode=parsed[PUBLICATION_AUTOCREATE_MODE].lower(),
            parameters=connection_parameters(parsed, f"connect-{connector}"),
            type_modes=type_modes(parsed),
            status_update_interval_s=parsed[STATUS_UPDATE_INTERVAL_MS] / 1000,
            unavailable_value_placeholder=parsed[UNAVAILABLE_VALUE_PLACEHOLDER],
            message_filter=MessageFilter.of(parsed),
            snapshot_isolation_mode=parsed[SNAPSHOT_ISOLATION_MODE].lower(),
            lsn_flush_mode=flush_mode,
            offset_mismatch_strategy=parsed[OFFSET_MISMATCH_STRATEGY].lower(),
        )


def lsn_flush_mode(parsed: dict[str, Any], props: Mapping[str, str]) -> str:
    """``lsn.flush.mode``; when it is not set, the deprecated ``flush.lsn.source`` mapped as
    Debezium maps it (true: ``connector``, false: ``manual``), with Debezium's warning."""
    if LSN_FLUSH_MODE not in props and FLUSH_LSN_SOURCE in props:
        log.warning(
            "Property '%s' is deprecated and replaced by '%s' and will be removed in a future "
            "build.",
            FLUSH_LSN_SOURCE,
            LSN_FLUSH_MODE,
        )
        return "connector" if parsed[FLUSH_LSN_SOURCE] else "manual"
    mode: str = parsed[LSN_FLUSH_MODE].lower()
    return mode
