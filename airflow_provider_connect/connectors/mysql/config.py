"""The configs of the binlog change-capture connectors, under Debezium's names and with its
defaults (``io.debezium.connector.binlog.BinlogConnectorConfig`` and the MySQL and MariaDB
subclasses), over the configs every change-capture connector shares
(:mod:`~airflow_provider_connect.connectors.change_capture.config`).

Deliberate differences from Debezium:

* No schema history topic is kept: the binlog's own column metadata
  (``binlog_row_metadata=FULL``) describes every row, so ``schema.history.internal.*`` are
  accepted, so that Debezium's configs run unchanged, and not used.
* ``snapshot.mode`` runs ``initial``, ``initial_only``, ``when_needed``, ``no_data`` (and its
  former name ``never``) and ``always``; ``recovery`` (rebuilding a history this connector
  does not keep), ``configuration_based`` and ``custom`` are refused.
* ``snapshot.locking.mode`` runs ``minimal``, ``extended`` and ``none``; Percona's modes and
  ``custom`` are refused.
* ``time.precision.mode`` runs ``adaptive_time_microseconds`` and ``connect``.
* ``database.ssl.mode``: the TLS of PyMySQL, the server's certificate checked against the
  system's authorities under the ``verify`` modes (no Java keystores).
"""

from __future__ import annotations

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
    pattern_errors as _pattern_errors,
)
from airflow_provider_connect.connectors.mysql.database import BUILTIN_DATABASES
from airflow_provider_connect.connectors.mysql.flavors import MARIADB, MYSQL, Flavor
from airflow_provider_connect.connectors.mysql.types import TypeModes

HOSTNAME = "database.hostname"
PORT = "database.port"
USER = "database.user"
PASSWORD = "database.password"
SERVER_ID = "database.server.id"
SERVER_ID_OFFSET = "database.server.id.offset"
SSL_MODE = "database.ssl.mode"
CONNECT_TIMEOUT_MS = "connect.timeout.ms"
DATABASE_INCLUDE_LIST = "database.include.list"
DATABASE_EXCLUDE_LIST = "database.exclude.list"
SNAPSHOT_LOCKING_MODE = "snapshot.locking.mode"
INCLUDE_SCHEMA_CHANGES = "include.schema.changes"
INCLUDE_QUERY = "include.query"
SCHEMA_HISTORY = "schema.history.internal"
SCHEMA_HISTORY_TOPIC = "schema.history.internal.kafka.topic"
SCHEMA_HISTORY_SERVERS = "schema.history.internal.kafka.bootstrap.servers"
STORE_ONLY_CAPTURED_TABLES_DDL = "schema.history.internal.store.only.captured.tables.ddl"
STORE_ONLY_CAPTURED_DATABASES_DDL = "schema.history.internal.store.only.captured.databases.ddl"
TIME_PRECISION_MODE = "time.precision.mode"
BIGINT_UNSIGNED_HANDLING_MODE = "bigint.unsigned.handling.mode"
GTID_SOURCE_INCLUDES = "gtid.source.includes"
GTID_SOURCE_EXCLUDES = "gtid.source.excludes"
EVENT_PROCESSING_FAILURE_HANDLING_MODE = "event.processing.failure.handling.mode"
EVENT_DESERIALIZATION_FAILURE_HANDLING_MODE = "event.deserialization.failure.handling.mode"

FILTER_KEYS = (
    DATABASE_INCLUDE_LIST,
    DATABASE_EXCLUDE_LIST,
    TABLE_INCLUDE_LIST,
    TABLE_EXCLUDE_LIST,
    COLUMN_INCLUDE_LIST,
    COLUMN_EXCLUDE_LIST,
    GTID_SOURCE_INCLUDES,
    GTID_SOURCE_EXCLUDES,
)
FAILURE_MODES = ("fail", "warn", "skip", "ignore")

_CONNECTION = "Connection"
_BINLOG = "Binlog"


def _config_def(flavor: Flavor) -> ConfigDef:
    """The definition of ``flavor``'s connector."""
    return (
        ConfigDef()
        .define(
            HOSTNAME,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="The server's host name or address.",
            group=_CONNECTION,
        )
        .define(PORT, Type.INT, 3306, Range.between(1, 65535), Importance.HIGH, "Its port.")
        .define(
            USER,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="The user: it needs SELECT, RELOAD, REPLICATION SLAVE and "
            "REPLICATION CLIENT (and LOCK TABLES under snapshot.locking.mode extended).",
            group=_CONNECTION,
        )
        .define(
            PASSWORD, Type.PASSWORD, None, None, Importance.HIGH, "Its password.", group=_CONNECTION
        )
        .define(
            SERVER_ID,
            Type.LONG,
            validator=Range.at_least(1),
            importance=Importance.HIGH,
            documentation="The numeric id this connector reads the binlog as, a replica's "
            "server_id: unique among the server's replicas and other readers.",
            group=_CONNECTION,
        )
        .define(
            SERVER_ID_OFFSET,
            Type.LONG,
            10_000,
            None,
            Importance.LOW,
            "Accepted for Debezium's configs; not used (Debezium does not read it either).",
            group=_CONNECTION,
        )
        .define(
            SSL_MODE,
            Type.STRING,
            flavor.ssl_modes[0],
            modes(*flavor.ssl_modes),
            Importance.MEDIUM,
            "TLS to the server: " + ", ".join(flavor.ssl_modes) + ".",
            group=_CONNECTION,
        )
        .define(
            CONNECT_TIMEOUT_MS,
            Type.INT,
            30_000,
            Range.at_least(1000),
            Importance.LOW,
            "How long a connection attempt may take, and how long an open connection may wait "
            "for the server (PyMySQL's read_timeout and write_timeout, in whole seconds): a "
            "connection cut off by a network partition fails within it instead of waiting the "
            "operating system's ~15 minutes. The binlog stream is never silent that long while "
            "the server is there (it sends a heartbeat every 0.1 s while the log is idle); an "
            "ordinary statement (catalog, snapshot, signals, heartbeat action query) that sends "
            "nothing back for this long fails too: raise it for a slow "
            "snapshot.select.statement.overrides query.",
            group=_CONNECTION,
        )
        .define(
            DATABASE_INCLUDE_LIST,
            Type.LIST,
            None,
            None,
            Importance.MEDIUM,
            "Regular expressions of the databases to capture (all but the server's own by "
            "default).",
            group=FILTERS,
        )
        .define(
            DATABASE_EXCLUDE_LIST,
            Type.LIST,
            None,
            None,
            Importance.MEDIUM,
            "Databases not to capture.",
            group=FILTERS,
        )
        .define(
            GTID_SOURCE_INCLUDES,
            Type.LIST,
            None,
            None,
            Importance.LOW,
            "Regular expressions of the GTID sources whose transactions are captured (MySQL: "
            "the server UUID; MariaDB: <domain>-<server>).",
            group=FILTERS,
        )
        .define(
            GTID_SOURCE_EXCLUDES,
            Type.LIST,
            None,
            None,
            Importance.LOW,
            "GTID sources whose transactions are not captured.",
            group=FILTERS,
        )
        .merged(
            capture_config_def(
                "database",
                "initial: read the tables once, then stream; always: at every start; "
                "initial_only: read them and stop; no_data: stream only; when_needed: read "
                "them when no offsets exist or the server no longer holds the stored position.",
            )
        )
        .define(
            SNAPSHOT_LOCKING_MODE,
            Type.STRING,
            flavor.locking_modes[0],
            modes(*flavor.locking_modes),
            Importance.MEDIUM,
            "minimal: the least locking that gives a consistent snapshot (MariaDB: none, its "
            "consistent snapshot states its binlog position; MySQL: a global read lock while "
            "the position is read); extended: a global read lock for the whole snapshot; none: "
            "no lock.",
            group=SNAPSHOT,
        )
        .define(
            INCLUDE_SCHEMA_CHANGES,
            Type.BOOLEAN,
            True,
            None,
            Importance.MEDIUM,
            "Write schema change events (the DDL and the tables it changed) to <topic.prefix>.",
            group=EVENTS,
        )
        .define(
            INCLUDE_QUERY,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "Set source.query to the statement of each row change (needs "
            "binlog_annotate_row_events on MariaDB, binlog_rows_query_log_events on MySQL).",
            group=EVENTS,
        )
        .define(
            EVENT_PROCESSING_FAILURE_HANDLING_MODE,
            Type.STRING,
            "fail",
            modes(*FAILURE_MODES),
            Importance.LOW,
            "An event that cannot be read: fail the task, or warn and skip it, or skip it.",
            group=EVENTS,
        )
        .define(
            EVENT_DESERIALIZATION_FAILURE_HANDLING_MODE,
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "Debezium's former name of event.processing.failure.handling.mode.",
            group=EVENTS,
        )
        .define(
            TIME_PRECISION_MODE,
            Type.STRING,
            "adaptive_time_microseconds",
            modes("adaptive_time_microseconds", "connect"),
            Importance.MEDIUM,
            "adaptive_time_microseconds: Debezium's semantic types (TIME in microseconds); "
            "connect: Kafka Connect's Date, Time and Timestamp.",
            group=TYPES,
        )
        .define(
            BIGINT_UNSIGNED_HANDLING_MODE,
            Type.STRING,
            "long",
            modes("long", "precise"),
            Importance.LOW,
            "BIGINT UNSIGNED as int64 (long; values past 2^63-1 wrap) or as a Decimal (precise).",
            group=TYPES,
        )
        .define(
            SCHEMA_HISTORY,
            Type.STRING,
            "io.debezium.storage.kafka.history.KafkaSchemaHistory",
            None,
            Importance.LOW,
            "Accepted for Debezium's configs, not used: the binlog's column metadata "
            "(binlog_row_metadata=FULL) describes every row.",
            group=_BINLOG,
        )
        .define(
            SCHEMA_HISTORY_TOPIC,
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "Accepted for Debezium's configs, not used (no schema history topic is kept).",
            group=_BINLOG,
        )
        .define(
            SCHEMA_HISTORY_SERVERS,
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "Accepted for Debezium's configs, not used.",
            group=_BINLOG,
        )
        .define(
            STORE_ONLY_CAPTURED_TABLES_DDL,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "Write schema change events only for the DDL of captured tables (else for all).",
            group=_BINLOG,
        )
        .define(
            STORE_ONLY_CAPTURED_DATABASES_DDL,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "Write schema change events only for the DDL of captured databases.",
            group=_BINLOG,
        )
    )


CONFIG_DEFS = {MYSQL.name: _config_def(MYSQL), MARIADB.name: _config_def(MARIADB)}


def pattern_errors(parsed: dict[str, Any]) -> dict[str, str]:
    """The filter keys whose regular expressions do not compile, with why."""
    return _pattern_errors(parsed, FILTER_KEYS)


def conflicts(parsed: dict[str, Any]) -> dict[str, str]:
    """Include and exclude lists set together, on the exclude list's key with Debezium's
    message."""
    pairs = (
        (DATABASE_INCLUDE_LIST, DATABASE_EXCLUDE_LIST),
        (TABLE_INCLUDE_LIST, TABLE_EXCLUDE_LIST),
        (COLUMN_INCLUDE_LIST, COLUMN_EXCLUDE_LIST),
    )
    found = {
        exclude: f'"{include}" is already specified'
        for include, exclude in pairs
        if parsed[include] and parsed[exclude]
    }
    if parsed[GTID_SOURCE_INCLUDES] and parsed[GTID_SOURCE_EXCLUDES]:
        found[GTID_SOURCE_EXCLUDES] = "Cannot specify GTID excludes when includes are provided."
    return found


def system_database(database: str) -> bool:
    """The server's own databases, never captured."""
    return database.lower() in BUILTIN_DATABASES


def filters(parsed: dict[str, Any]) -> Filters:
    """The captured databases, tables and columns."""
    return Filters.of(parsed, DATABASE_INCLUDE_LIST, DATABASE_EXCLUDE_LIST, system_database)


def connection_parameters(parsed: dict[str, Any], ssl_mode: str) -> dict[str, Any]:
    """PyMySQL's ``connect`` arguments for the configured server, in utf8mb4 (each ordinary
    connection sets its session to UTC itself: :class:`~.database.Database`); a read or a
    write waits at most ``connect.timeout.ms`` (whole seconds, one at least), so a dead link
    fails the statement instead of hanging it."""
    password = parsed[PASSWORD]
    timeout = max(1, parsed[CONNECT_TIMEOUT_MS] // 1000)
    parameters: dict[str, Any] = {
        "host": parsed[HOSTNAME],
        "port": parsed[PORT],
        "user": parsed[USER],
        "password": (password.value if isinstance(password, Password) else password) or "",
        "charset": "utf8mb4",
        "connect_timeout": timeout,
        "read_timeout": timeout,
        "write_timeout": timeout,
    }
    if ssl_mode not in ("disabled", "disable"):
        verify = ssl_mode in ("verify_ca", "verify-ca", "verify_identity", "verify-full")
        parameters["ssl"] = {}
        parameters["ssl_verify_cert"] = verify
        parameters["ssl_verify_identity"] = ssl_mode in ("verify_identity", "verify-full")
    return parameters


def type_modes(parsed: dict[str, Any]) -> TypeModes:
    return TypeModes(
        decimal_handling=parsed[DECIMAL_HANDLING_MODE].lower(),
        time_precision=parsed[TIME_PRECISION_MODE].lower(),
        bigint_unsigned=parsed[BIGINT_UNSIGNED_HANDLING_MODE].lower(),
        binary_handling=parsed[BINARY_HANDLING_MODE].lower(),
    )


@dataclass(frozen=True)
class BinlogConnectorConfig(CaptureConfig):
    """A task's config, read once from its props (Debezium's ``BinlogConnectorConfig``):
    what the task's parts read, typed."""

    flavor: Flavor
    server_id: int
    parameters: dict[str, Any]
    """PyMySQL's ``connect`` arguments (:func:`connection_parameters`)."""
    tls_required: bool
    """``database.ssl.mode=required``: a plain connection is refused (PyMySQL falls back to
    one where it does not verify the certificate; the ``verify`` modes it refuses itself)."""
    locking_mode: str
    include_schema_changes: bool
    include_query: bool
    only_captured_tables_ddl: bool
    only_captured_databases_ddl: bool
    failure_handling: str
    """``fail``, ``warn``, ``skip`` or ``ignore``: what an unreadable event does."""
    gtid_includes: tuple[str, ...]
    gtid_excludes: tuple[str, ...]
    type_modes: TypeModes

    @classmethod
    def of(cls, flavor: Flavor, props: Mapping[str, str]) -> BinlogConnectorConfig:
        """Parses ``props`` (raises :class:`ConfigException` on an invalid value)."""
        parsed = CONFIG_DEFS[flavor.name].parse(dict(props))
        for key, message in {**pattern_errors(parsed), **conflicts(parsed)}.items():
            raise ConfigException.invalid(key, parsed[key], message)
        ssl_mode = parsed[SSL_MODE].lower()
        failure = (
            parsed[EVENT_DESERIALIZATION_FAILURE_HANDLING_MODE]
            or parsed[EVENT_PROCESSING_FAILURE_HANDLING_MODE]
        )
        return cls(
            **CaptureConfig.shared(parsed, props, filters(parsed)),
            flavor=flavor,
            server_id=parsed[SERVER_ID],
            parameters=connection_parameters(parsed, ssl_mode),
            tls_required=ssl_mode == "required",
            locking_mode=parsed[SNAPSHOT_LOCKING_MODE].lower(),
            include_schema_changes=parsed[INCLUDE_SCHEMA_CHANGES],
            include_query=parsed[INCLUDE_QUERY],
            only_captured_tables_ddl=parsed[STORE_ONLY_CAPTURED_TABLES_DDL],
            only_captured_databases_ddl=parsed[STORE_ONLY_CAPTURED_DATABASES_DDL],
            failure_handling=str(failure).lower(),
            gtid_includes=tuple(parsed[GTID_SOURCE_INCLUDES] or ()),
            gtid_excludes=tuple(parsed[GTID_SOURCE_EXCLUDES] or ()),
            type_modes=type_modes(parsed),
        )
