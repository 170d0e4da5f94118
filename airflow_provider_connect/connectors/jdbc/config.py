"""Configs of the JDBC connectors, with Confluent's JDBC connector names, and the database
connection they share."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import create_engine, event, inspect
from sqlalchemy.engine import Engine, make_url

from airflow_provider_connect.connect.config import (
    ConfigDef,
    ConfigValue,
    Importance,
    NonEmptyString,
    Password,
    Range,
    Type,
    ValidString,
)

CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
SCHEMA_PATTERN = "schema.pattern"
MODE = "mode"
INCREMENTING_COLUMN = "incrementing.column.name"
TIMESTAMP_COLUMN = "timestamp.column.name"
TIMESTAMP_DELAY_MS = "timestamp.delay.interval.ms"
TABLE_WHITELIST = "table.whitelist"
TABLE_BLACKLIST = "table.blacklist"
QUERY = "query"
TOPIC_PREFIX = "topic.prefix"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_ROWS = "batch.max.rows"
TABLE_POLL_INTERVAL_MS = "table.poll.interval.ms"

MODES = ("bulk", "incrementing", "timestamp", "timestamp+incrementing")


def connection_config_def(
    user_key: str = CONNECTION_USER, user_required: bool = False, schema_pattern: bool = True
) -> ConfigDef:
    """The database connection, shared by the JDBC connectors: the URL, the user (config
    ``user_key``: Debezium's sink names it ``connection.username`` and requires it), the
    password and, with ``schema_pattern``, the tables' database schema."""
    definition = (
        ConfigDef()
        .define(
            CONNECTION_URL,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="The database's SQLAlchemy URL, e.g. postgresql+psycopg://host/db, "
            "mysql+pymysql://host/db or sqlite:////path/to.db, or a JDBC URL of those "
            "(jdbc:postgresql://host:5432/db, jdbc:mysql://, jdbc:mariadb://, jdbc:sqlite:).",
            group="Database",
        )
        .define(
            user_key,
            Type.STRING,
            ConfigDef.NO_DEFAULT if user_required else None,
            NonEmptyString() if user_required else None,
            importance=Importance.HIGH,
            documentation="The database user (SQLite has none)"
            + ("." if user_required else ", when not in the URL."),
            group="Database",
        )
        .define(
            CONNECTION_PASSWORD,
            Type.PASSWORD,
            None,
            importance=Importance.HIGH,
            documentation="The password, when not in the URL.",
            group="Database",
        )
    )
    if not schema_pattern:
        return definition
    return definition.define(
        SCHEMA_PATTERN,
        Type.STRING,
        None,
        importance=Importance.MEDIUM,
        documentation="The database schema of the tables (default: the connection's).",
        group="Database",
    )


SOURCE_CONFIG_DEF = (
    connection_config_def()
    .define(
        MODE,
        Type.STRING,
        validator=ValidString(*MODES),
        importance=Importance.HIGH,
        documentation="How new rows are found: bulk (the whole table at each poll), "
        "incrementing (a strictly increasing column), timestamp (a last-modified column), "
        "timestamp+incrementing (both: exact for new and updated rows).",
        group="Mode",
    )
    .define(
        INCREMENTING_COLUMN,
        Type.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="The strictly increasing column, for the incrementing modes.",
        group="Mode",
    )
    .define(
        TIMESTAMP_COLUMN,
        Type.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="The last-modified timestamp column, for the timestamp modes.",
        group="Mode",
    )
    .define(
        TIMESTAMP_DELAY_MS,
        Type.LONG,
        0,
        Range.at_least(0),
        Importance.LOW,
        "How long after its timestamp a row is read, so transactions still writing older "
        "timestamps can commit first.",
        group="Mode",
    )
    .define(
        TABLE_WHITELIST,
        Type.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="The tables to copy (default: all but the blacklist).",
        group="Tables",
    )
    .define(
        TABLE_BLACKLIST,
        Type.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Tables not to copy.",
        group="Tables",
    )
    .define(
        QUERY,
        Type.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="A custom SELECT to copy instead of tables; its rows go to topic.prefix.",
        group="Tables",
    )
    .define(
        TOPIC_PREFIX,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="Prefixed to a table's name to give its topic (the topic, for a query).",
        group="Connector",
    )
    .define(
        POLL_INTERVAL_MS,
        Type.INT,
        5000,
        Range.at_least(1),
        Importance.HIGH,
        "How often each table is queried for new rows.",
        group="Connector",
    )
    .define(
        BATCH_MAX_ROWS,
        Type.INT,
        100,
        Range.at_least(1),
        Importance.LOW,
        "The most rows one query returns (a table with more is queried again at once).",
        group="Connector",
    )
    .define(
        TABLE_POLL_INTERVAL_MS,
        Type.LONG,
        60_000,
        Range.at_least(1),
        Importance.LOW,
        "How often the list of tables is read, to notice new or dropped tables.",
        group="Connector",
    )
)


def connect_engine(parsed: dict[str, Any], user_key: str = CONNECTION_USER) -> Engine:
    """An engine for the configured database (user and password override the URL's); the
    user is the config ``user_key`` (Debezium's sink names it ``connection.username``)."""
    url = make_url(sqlalchemy_url(parsed[CONNECTION_URL]))
    sqlite = url.get_backend_name() == "sqlite"
    if parsed.get(user_key) and not sqlite:  # SQLite has no users
        url = url.set(username=parsed[user_key])
    password = parsed.get(CONNECTION_PASSWORD)
    if isinstance(password, Password):
        password = password.value
    if password and not sqlite:
        url = url.set(password=password)
    engine = create_engine(url, pool_pre_ping=True)
    if sqlite:
        _transactional_ddl(engine)
    return engine


_JDBC_SCHEMES = {
    "postgresql": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
    "mariadb": "mysql+pymysql",
}


def sqlalchemy_url(url: str) -> str:
    """``url`` as SQLAlchemy takes it: a JDBC URL of PostgreSQL, MySQL, MariaDB or SQLite
    (``jdbc:postgresql://host:5432/db``, ``jdbc:sqlite:/path/to.db``) becomes the
    SQLAlchemy URL of the same database; anything else is taken as a SQLAlchemy URL."""
    if not url.startswith("jdbc:"):
        return url
    scheme, _, rest = url.removeprefix("jdbc:").partition(":")
    if scheme == "sqlite":
        return f"sqlite:///{rest}"
    if scheme not in _JDBC_SCHEMES or not rest.startswith("//"):
        raise ValueError(
            f"Unsupported JDBC URL {url}: use jdbc:postgresql://, jdbc:mysql://, "
            "jdbc:mariadb://, jdbc:sqlite: or a SQLAlchemy URL"
        )
    return f"{_JDBC_SCHEMES[scheme]}:{rest}"


def _transactional_ddl(engine: Engine) -> None:
    """pysqlite commits DDL statements on its own; begin every transaction explicitly, so
    DDL (trigger installs, table creation) is atomic on SQLite as elsewhere."""

    @event.listens_for(engine, "connect")
    def no_implicit_transactions(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")


def schema_of(parsed: dict[str, Any]) -> str | None:
    return parsed.get(SCHEMA_PATTERN) or None


def list_tables(engine: Engine, schema: str | None) -> list[str]:
    """The database's tables (not views) in ``schema``."""
    return list(inspect(engine).get_table_names(schema=schema))


INSERT_MODE = "insert.mode"
PK_MODE = "pk.mode"
PK_FIELDS = "pk.fields"
TABLE_NAME_FORMAT = "table.name.format"
AUTO_CREATE = "auto.create"
AUTO_EVOLVE = "auto.evolve"
DELETE_ENABLED = "delete.enabled"
BATCH_SIZE = "batch.size"
EXACTLY_ONCE = "exactly.once.enabled"
OFFSETS_TABLE = "offsets.table.name"
MAX_RETRIES = "max.retries"
RETRY_BACKOFF_MS = "retry.backoff.ms"

INSERT_MODES = ("insert", "upsert", "update")
PK_MODES = ("none", "kafka", "record_key", "record_value")


def with_exactly_once(definition: ConfigDef) -> ConfigDef:
    """``definition`` with the sinks' exactly-once delivery: ``exactly.once.enabled`` and
    ``offsets.table.name``."""
    return definition.define(
        EXACTLY_ONCE,
        Type.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Store the Kafka offsets in offsets.table.name in the same transaction "
        "as the rows, and resume from them: each record is written exactly once.",
        group="Delivery",
    ).define(
        OFFSETS_TABLE,
        Type.STRING,
        "__connect_offsets",
        NonEmptyString(),
        Importance.LOW,
        "The table of the Kafka offsets, with exactly.once.enabled.",
        group="Delivery",
    )


SINK_CONFIG_DEF = (
    with_exactly_once(
        connection_config_def()
        .define(
            INSERT_MODE,
            Type.STRING,
            "insert",
            ValidString(*INSERT_MODES),
            Importance.HIGH,
            "insert: INSERT rows; upsert: insert or replace by primary key; update: UPDATE rows "
            "by primary key.",
            group="Writes",
        )
        .define(
            PK_MODE,
            Type.STRING,
            "none",
            ValidString(*PK_MODES),
            Importance.HIGH,
            "Where the primary key comes from: none; kafka (topic, partition, offset); "
            "record_key (the key's fields, or the key itself named by pk.fields); record_value "
            "(fields of the value).",
            group="Writes",
        )
        .define(
            PK_FIELDS,
            Type.LIST,
            "",
            importance=Importance.MEDIUM,
            documentation="The primary key's columns (record_key, record_value: default all "
            "fields; kafka: three names).",
            group="Writes",
        )
        .define(
            TABLE_NAME_FORMAT,
            Type.STRING,
            "${topic}",
            NonEmptyString(),
            Importance.MEDIUM,
            "The table of a record; ${topic} stands for its topic.",
            group="Writes",
        )
        .define(
            DELETE_ENABLED,
            Type.BOOLEAN,
            False,
            importance=Importance.MEDIUM,
            documentation="Delete the row of a tombstone (null value); needs pk.mode=record_key.",
            group="Writes",
        )
        .define(
            BATCH_SIZE,
            Type.INT,
            3000,
            Range.at_least(1),
            Importance.MEDIUM,
            "The most rows one statement writes.",
            group="Writes",
        )
        .define(
            AUTO_CREATE,
            Type.BOOLEAN,
            False,
            importance=Importance.MEDIUM,
            documentation="Create a missing table from the record's schema.",
            group="DDL",
        )
        .define(
            AUTO_EVOLVE,
            Type.BOOLEAN,
            False,
            importance=Importance.MEDIUM,
            documentation="Add columns for new optional fields (never drops or changes columns).",
            group="DDL",
        )
    )
    .define(
        MAX_RETRIES,
        Type.INT,
        10,
        Range.at_least(0),
        Importance.MEDIUM,
        "The maximum number of times to retry a put that failed because the database was "
        "unreachable or dropped the connection, before the task fails.",
        group="Retries",
    )
    .define(
        RETRY_BACKOFF_MS,
        Type.INT,
        3000,
        Range.at_least(0),
        Importance.MEDIUM,
        "The time in milliseconds to wait following an error before a retry attempt is made.",
        group="Retries",
    )
)


@contextmanager
def database_checks(
    parsed: dict[str, Any], values: dict[str, ConfigValue], user_key: str = CONNECTION_USER
) -> Iterator[Engine]:
    """An engine for a connector's ``validate``; when the database cannot be reached (or a
    check fails on it), the error goes to ``connection.url`` and the checks end there."""
    try:
        engine = connect_engine(parsed, user_key)
        try:
            yield engine
        finally:
            engine.dispose()
    except Exception as e:
        values[CONNECTION_URL].add_error_message(f"Could not connect to the database: {e}")


def report_missing_tables(
    value: ConfigValue, wanted: Iterable[str], existing: Iterable[str], hint: str = ""
) -> None:
    """Adds "Tables not found" to ``value`` for the wanted tables that do not exist."""
    present = set(existing)
    missing = [t for t in wanted if t not in present]
    if missing:
        value.add_error_message(f"Tables not found in the database: {', '.join(missing)}{hint}")
