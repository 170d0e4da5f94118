"""The configs of the PostgreSQL change-capture connector, under Debezium's names and with
its defaults (``io.debezium.connector.postgresql.PostgresConnectorConfig``), and what they
select: the captured tables and columns, the connection parameters.

Deliberate differences from Debezium: ``plugin.name`` defaults to ``pgoutput`` (built into
PostgreSQL, no server extension), the only decoder this connector reads; the snapshot modes
are those without a custom implementation (``configuration_based`` and ``custom`` are
refused); ``database.*`` pass-through and JDBC-specific keys are not read.
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
from airflow_provider_connect.connectors.change_capture.config import (
    BINARY_HANDLING_MODE,
    COLUMN_EXCLUDE_LIST,
    COLUMN_INCLUDE_LIST,
    DECIMAL_HANDLING_MODE,
    EVENTS,
    FILTERS,
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

HOSTNAME = "database.hostname"
PORT = "database.port"
USER = "database.user"
PASSWORD = "database.password"
DBNAME = "database.dbname"
SSLMODE = "database.sslmode"
CONNECT_TIMEOUT_MS = "database.connect.timeout.ms"
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
UNAVAILABLE_VALUE_PLACEHOLDER = "unavailable.value.placeholder"

AUTOCREATE_MODES = ("all_tables", "disabled", "filtered", "no_tables")
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
        "How long a connection attempt may take.",
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


def pattern_errors(parsed: dict[str, Any]) -> dict[str, str]:
    """The filter keys whose regular expressions do not compile, with why."""
    return _pattern_errors(parsed, FILTER_KEYS)


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

    @property
    def dbname(self) -> str:
        name: str = self.parameters["dbname"]
        return name

    @classmethod
    def of(cls, props: Mapping[str, str]) -> PostgresConnectorConfig:
        """Parses ``props`` (raises :class:`ConfigException` on an invalid value)."""
        parsed = CONFIG_DEF.parse(dict(props))
        connector = props.get("name", "")
        return cls(
            **CaptureConfig.shared(parsed, props, filters(parsed)),
            slot_name=parsed[SLOT_NAME],
            slot_drop_on_stop=parsed[SLOT_DROP_ON_STOP],
            publication=parsed[PUBLICATION_NAME],
            publication_autocreate_mode=parsed[PUBLICATION_AUTOCREATE_MODE].lower(),
            parameters=connection_parameters(parsed, f"connect-{connector}"),
            type_modes=type_modes(parsed),
            status_update_interval_s=parsed[STATUS_UPDATE_INTERVAL_MS] / 1000,
            unavailable_value_placeholder=parsed[UNAVAILABLE_VALUE_PLACEHOLDER],
        )
