"""Debezium's JDBC sink (``io.debezium.connector.jdbc.JdbcSinkConnector``): Debezium change
events, or flat records, into database tables.

Configs are Debezium's (``JdbcSinkConnectorConfig``), with its defaults: ``connection.url``
(a JDBC URL of PostgreSQL, MySQL, MariaDB or SQLite, or a SQLAlchemy URL),
``connection.username``, ``connection.password``, ``insert.mode`` (``insert``, ``upsert``,
``update``), ``delete.enabled``, ``truncate.enabled``, ``primary.key.mode`` (``none``,
``kafka``, ``record_key``, ``record_value``), ``primary.key.fields``, ``schema.evolution``
(``none``, ``basic``, ``validate-only``), ``collection.name.format`` (``${topic}``, its dots
as ``_``; ``${source.<field>}`` for a field of the event's ``source`` block; a dotted result
is ``schema.table``), ``quote.identifiers``, ``use.time.zone``, ``batch.size``,
``field.include.list``/``field.exclude.list``, ``flush.max.retries`` and
``flush.retry.delay.ms``; ``table.name.format`` and ``database.time_zone`` are taken as the
deprecated aliases they are.

What a record does, as ``JdbcChangeEventSink`` decides it:

* a change event (a struct value whose schema is named ``*.Envelope``, or unnamed with an
  ``op`` field): ``c``, ``r``, ``u`` write ``after`` (per ``insert.mode``); ``d`` deletes the
  row of its key with ``delete.enabled`` (``record_value``: the key fields of ``before``);
  ``t`` empties the table with ``truncate.enabled``; other events (``m``) are skipped;
* a tombstone (no value, no value schema) deletes the row of its key with
  ``delete.enabled`` and ``primary.key.mode=record_key`` (after the ``d`` event it follows,
  a no-op), and is skipped otherwise;
* a flat record (e.g. after ``ExtractNewRecordState``) writes its value; a null value with
  a schema deletes its key's row with ``delete.enabled``;
* schema change events are skipped with a warning, as records whose
  ``collection.name.format`` needs a ``source`` block they do not have.

Rows are written through the write path the JDBC sinks share (``writer``): one database
transaction per ``put``, batches of ``batch.size`` rows, in record order. Delivery is
at-least-once, and exactly once with ``exactly.once.enabled`` (the Kafka offsets in
``offsets.table.name``, in the rows' transaction), an addition of this project.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Column, inspect
from sqlalchemy.engine import Engine

from airflow_provider_connect.connect.config import (
    Config,
    ConfigDef,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonEmptyString,
    Range,
    Type,
    ValidString,
)
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.datasets import ConnectorData, listed, tables, topics
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    BEFORE,
    ENVELOPE_SUFFIX,
    OP_CREATE,
    OP_DELETE,
    OP_READ,
    OP_TRUNCATE,
    OP_UPDATE,
    OPERATION,
    SOURCE,
)
from airflow_provider_connect.connectors.jdbc.config import (
    BATCH_SIZE,
    CONNECTION_URL,
    DELETE_ENABLED,
    EXACTLY_ONCE,
    INSERT_MODE,
    INSERT_MODES,
    OFFSETS_TABLE,
    PK_MODES,
    connect_engine,
    connection_config_def,
    database_checks,
    with_exactly_once,
)
from airflow_provider_connect.connectors.jdbc.debezium_types import column_type, converter
from airflow_provider_connect.connectors.jdbc.keys import field_schema, key_schemas, outside_key
from airflow_provider_connect.connectors.jdbc.sink import JdbcSinkConnector
from airflow_provider_connect.connectors.jdbc.writer import (
    JdbcWriterTask,
    TableId,
    Write,
    WriterSettings,
    table_columns,
)

log = logging.getLogger(__name__)

CONNECTION_USERNAME = "connection.username"
TRUNCATE_ENABLED = "truncate.enabled"
PRIMARY_KEY_MODE = "primary.key.mode"
PRIMARY_KEY_FIELDS = "primary.key.fields"
SCHEMA_EVOLUTION = "schema.evolution"
COLLECTION_NAME_FORMAT = "collection.name.format"
QUOTE_IDENTIFIERS = "quote.identifiers"
USE_TIME_ZONE = "use.time.zone"
FIELD_INCLUDE_LIST = "field.include.list"
FIELD_EXCLUDE_LIST = "field.exclude.list"
FLUSH_MAX_RETRIES = "flush.max.retries"
FLUSH_RETRY_DELAY_MS = "flush.retry.delay.ms"
DEPRECATED_ALIASES = {
    "table.name.format": COLLECTION_NAME_FORMAT,
    "database.time_zone": USE_TIME_ZONE,
}
SCHEMA_EVOLUTION_MODES = ("none", "basic", "validate-only")
_SOURCE_PLACEHOLDER = re.compile(r"\$\{source\.(.*?)}")


def _check_time_zone(name: str, value: Any) -> None:
    try:
        ZoneInfo(value)
    except (ValueError, KeyError) as e:  # ZoneInfoNotFoundError is a KeyError
        raise ConfigException(
            f"Failed to resolve time zone '{value}', please specify a correct time zone value",
            name=name,
        ) from e


CONFIG_DEF = with_exactly_once(
    connection_config_def(CONNECTION_USERNAME, user_required=True, schema_pattern=False)
    .define(
        INSERT_MODE,
        Type.STRING,
        "insert",
        ValidString(*INSERT_MODES, case_sensitive=False),
        Importance.LOW,
        "The insertion mode to use. 'insert' - the default mode, uses standard SQL insert "
        "statements; 'upsert' - uses upsert semantics for the database if its supported and "
        "requires setting primary.key.mode and primary.key.fields; 'update' - uses update "
        "semantics for the database if its supported.",
        group="Connector",
    )
    .define(
        DELETE_ENABLED,
        Type.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Whether to treat `null` record values as deletes. Requires "
        "primary.key.mode to be `record_key` (or `record_value`).",
        group="Connector",
    )
    .define(
        TRUNCATE_ENABLED,
        Type.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Whether to process debezium event `t` as truncate statement.",
        group="Connector",
    )
    .define(
        COLLECTION_NAME_FORMAT,
        Type.STRING,
        "${topic}",
        NonEmptyString(),
        Importance.MEDIUM,
        "A format string for the table, which may contain '${topic}' as a placeholder for "
        "the original topic name (its dots as underscores) and '${source.<field>}' for a "
        "field of the change event's source block, e.g. ${source.schema}.${source.table}.",
        group="Connector",
    )
    .define(
        PRIMARY_KEY_MODE,
        Type.STRING,
        "none",
        ValidString(*PK_MODES, case_sensitive=False),
        Importance.HIGH,
        "The primary key mode: none, kafka (__connect_topic, __connect_partition, "
        "__connect_offset), record_key (the key's fields, or the key itself named by "
        "primary.key.fields) or record_value (fields of the value).",
        group="Connector",
    )
    .define(
        PRIMARY_KEY_FIELDS,
        Type.LIST,
        "",
        importance=Importance.LOW,
        documentation="A comma-separated list of primary key field names. This is "
        "interpreted differently depending on primary.key.mode.",
        group="Connector",
    )
    .define(
        SCHEMA_EVOLUTION,
        Type.STRING,
        "none",
        ValidString(*SCHEMA_EVOLUTION_MODES, case_sensitive=False),
        Importance.LOW,
        "Controls how schema evolution is handled by the sink connector: none (tables must "
        "exist with every column), basic (missing tables are created, missing columns "
        "added), validate-only (as none, and the tables the topics name are checked when the "
        "config is validated).",
        group="Connector",
    )
    .define(
        QUOTE_IDENTIFIERS,
        Type.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="When enabled, table and column names keep their case (quoted as the "
        "dialect needs); when disabled, they are folded to lower case, as the database folds "
        "unquoted names.",
        group="Connector",
    )
    .define(
        USE_TIME_ZONE,
        Type.STRING,
        "UTC",
        LambdaValidator(_check_time_zone, "A time zone ID, e.g. UTC or Europe/Paris"),
        Importance.MEDIUM,
        "The timezone used when inserting temporal values. Defaults to UTC.",
        group="Connector",
    )
    .define(
        BATCH_SIZE,
        Type.INT,
        500,
        Range.at_least(1),
        Importance.MEDIUM,
        "Specifies how many records to attempt to batch together into the destination table, "
        "when possible.",
        group="Connector",
    )
    .define(
        FIELD_INCLUDE_LIST,
        Type.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="A comma-separated list of the fields to write (<field> or "
        "<topic>:<field>); the others are left out.",
        group="Filters",
    )
    .define(
        FIELD_EXCLUDE_LIST,
        Type.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="A comma-separated list of the fields not to write (<field> or "
        "<topic>:<field>).",
        group="Filters",
    )
    .define(
        FLUSH_MAX_RETRIES,
        Type.INT,
        5,
        Range.at_least(0),
        Importance.LOW,
        "Max retry count when fail to flush (the database unreachable or the connection "
        "lost). Default is 5.",
        group="Connector advanced",
    )
    .define(
        FLUSH_RETRY_DELAY_MS,
        Type.LONG,
        1000,
        Range.at_least(0),
        Importance.LOW,
        "Delay to retry when fail to flush.",
        group="Connector advanced",
    )
)


def with_aliases(props: Mapping[str, str]) -> dict[str, str]:
    """``props`` with Debezium's deprecated names (``table.name.format``,
    ``database.time_zone``) under their current names, unless those are set."""
    resolved = dict(props)
    for old, new in DEPRECATED_ALIASES.items():
        if old in resolved and new not in resolved:
            resolved[new] = resolved.pop(old)
    return resolved


class CollectionNames:
    """``collection.name.format`` applied to records, as Debezium's
    ``DefaultCollectionNamingStrategy``; names folded to lower case unless
    ``quote.identifiers``."""

    def __init__(self, name_format: str, quote_identifiers: bool) -> None:
        self.name_format = name_format
        self.fold: Callable[[str], str] = str if quote_identifiers else str.lower

    def of_topic(self, topic: str) -> str:
        """The name with ``${topic}`` resolved (``${source.…}`` left as it is)."""
        return self.name_format.replace("${topic}", topic.replace(".", "_"))

    def table(self, record: SinkRecord) -> TableId | None:
        """The record's table; None when the format needs a ``source`` block the record
        does not have."""
        name = self.of_topic(record.topic)
        if "${source." in name:
            value = record.value
            if not (isinstance(value, Struct) and is_change_event(value.schema)):
                return None
            source = value.get(SOURCE)
            name = _SOURCE_PLACEHOLDER.sub(lambda m: str(source.get(m.group(1))), name)
        return table_id(self.fold(name))


def table_id(name: str) -> TableId:
    """``schema.table`` or ``table`` (a database before them, ``db.schema.table``, is left out:
    the connection's database is written)."""
    parts = name.split(".")
    return TableId(parts[-2] if len(parts) > 1 else None, parts[-1])


def is_change_event(schema: Schema) -> bool:
    """Debezium's test: an ``*.Envelope`` schema, or an unnamed one with an ``op`` field."""
    if schema.name is not None:
        return schema.name.endswith(ENVELOPE_SUFFIX)
    return schema.fields is not None and schema.field(OPERATION) is not None


class DebeziumJdbcSinkConnector(JdbcSinkConnector):
    """Debezium's JDBC sink: hands its config to every task; checks it up front."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def task_class(self) -> type[Task]:
        return DebeziumJdbcSinkTask

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Reads its topics, writes the tables their names give (those that need no
        ``source`` block)."""
        config = with_aliases(config)
        names = listed(config.get(self.TOPICS_CONFIG))
        naming = CollectionNames(
            config.get(COLLECTION_NAME_FORMAT) or "${topic}",
            config.get(QUOTE_IDENTIFIERS, "false").strip().lower() == "true",
        )
        resolved = (naming.fold(naming.of_topic(t)) for t in names)
        return ConnectorData(
            topics(cluster, names),
            tables(config.get(CONNECTION_URL), (n for n in resolved if "${" not in n)),
        )

    def validate(self, connector_configs: dict[str, str]) -> Config:
        configs = with_aliases(connector_configs)
        values = {v.name: v for v in CONFIG_DEF.validate(configs)}
        if not any(v.error_messages for v in values.values()):
            check_config(configs, values)
        return Config(list(values.values()))


def check_config(configs: dict[str, str], values: dict[str, ConfigValue]) -> None:
    """Adds Debezium's per-field errors (the key an insert mode or deletes need, both field
    filters), then checks the database: reachable, and with ``validate-only`` the tables of
    the topics present."""
    parsed = CONFIG_DEF.parse(configs)
    mode, pk_mode = parsed[INSERT_MODE].lower(), parsed[PRIMARY_KEY_MODE].lower()
    if mode == "upsert" and PRIMARY_KEY_MODE not in configs:
        fields = "" if PRIMARY_KEY_FIELDS in configs else f" and '{PRIMARY_KEY_FIELDS}'"
        values[INSERT_MODE].add_error_message(
            f"When using UPSERT, please define '{PRIMARY_KEY_MODE}'{fields}."
        )
    elif mode in ("upsert", "update") and pk_mode == "none":
        values[PRIMARY_KEY_MODE].add_error_message(
            f"insert.mode {mode} needs a primary key: set {PRIMARY_KEY_MODE} to kafka, "
            "record_key or record_value"
        )
    if parsed[DELETE_ENABLED] and pk_mode not in ("record_key", "record_value"):
        values[DELETE_ENABLED].add_error_message(
            f"When '{DELETE_ENABLED}' is set to 'true', the '{PRIMARY_KEY_MODE}' option must "
            "be set to 'record_key' or 'record_value'."
        )
    if parsed[FIELD_INCLUDE_LIST] and parsed[FIELD_EXCLUDE_LIST]:
        values[FIELD_EXCLUDE_LIST].add_error_message(
            f"Cannot define both {FIELD_EXCLUDE_LIST} and {FIELD_INCLUDE_LIST}. Please "
            "specify only one."
        )
    if any(v.error_messages for v in values.values()):
        return
    with database_checks(parsed, values, CONNECTION_USERNAME) as engine:
        with engine.connect():
            pass  # the database is reachable with these credentials
        if parsed[SCHEMA_EVOLUTION].lower() == "validate-only":
            _check_tables_exist(parsed, configs, engine, values[SCHEMA_EVOLUTION])


def _check_tables_exist(
    parsed: dict[str, Any], configs: dict[str, str], engine: Engine, value: ConfigValue
) -> None:
    """Debezium's ``CollectionsExistsValidator``: the tables the listed topics name exist."""
    naming = CollectionNames(parsed[COLLECTION_NAME_FORMAT], parsed[QUOTE_IDENTIFIERS])
    names = {naming.fold(naming.of_topic(t)) for t in listed(configs.get("topics"))}
    names = {n for n in names if "${source." not in n}
    if not names:
        if "${topic}" in parsed[COLLECTION_NAME_FORMAT] and not configs.get("topics.regex"):
            value.add_error_message(
                f"'{SCHEMA_EVOLUTION}=validate-only' requires 'topics' or 'topics.regex' when "
                f"'{COLLECTION_NAME_FORMAT}' contains '${{topic}}'."
            )
        return
    inspector = inspect(engine)
    for name in sorted(names):
        table = table_id(name)
        if not inspector.has_table(table.name, schema=table.schema):
            value.add_error_message(
                f"Target table '{table}' does not exist, but '{SCHEMA_EVOLUTION}' is set to "
                "'validate-only'. Create the target table before the connector processes "
                f"records or use '{SCHEMA_EVOLUTION}=basic'."
            )


class FieldFilter:
    """``field.include.list`` / ``field.exclude.list`` (the exclude list wins), entries
    ``<field>`` or ``<topic>:<field>``, as Debezium's ``FieldFilterFactory``."""

    def __init__(self, include: list[str], exclude: list[str]) -> None:
        self.entries = [tuple(e.strip().split(":")) for e in exclude or include]
        self.include = not exclude

    def keeps(self, topic: str, field: str) -> bool:
        if not self.entries:
            return True
        for entry in self.entries:
            if entry == (field,) or entry == (topic, field):
                return self.include
        return not self.include


class DebeziumJdbcSinkTask(JdbcWriterTask):
    """Writes Debezium change events and flat records; see the module docstring."""

    def start(self, props: dict[str, str]) -> None:
        parsed = CONFIG_DEF.parse(with_aliases(props))
        self.parsed = parsed
        self.mode: str = parsed[PRIMARY_KEY_MODE].lower()
        self.key_fields: list[str] = [] if self.mode == "kafka" else parsed[PRIMARY_KEY_FIELDS]
        self.names = CollectionNames(parsed[COLLECTION_NAME_FORMAT], parsed[QUOTE_IDENTIFIERS])
        self.zone = ZoneInfo(parsed[USE_TIME_ZONE])
        self.fields = FieldFilter(parsed[FIELD_INCLUDE_LIST], parsed[FIELD_EXCLUDE_LIST])
        self.converters: dict[Schema, Callable[[Any], Any]] = {}
        self.warned: set[str] = set()
        evolution = parsed[SCHEMA_EVOLUTION].lower()
        offsets = TableId(None, parsed[OFFSETS_TABLE])
        settings = WriterSettings(
            insert_mode=parsed[INSERT_MODE].lower(),
            batch_size=parsed[BATCH_SIZE],
            may_create=evolution == "basic",
            may_evolve=evolution == "basic",
            cannot_create=f"{SCHEMA_EVOLUTION} is {evolution}",
            cannot_evolve=f"{SCHEMA_EVOLUTION} is {evolution}",
            max_retries=parsed[FLUSH_MAX_RETRIES],
            retry_backoff_ms=parsed[FLUSH_RETRY_DELAY_MS],
            offsets_table=offsets if parsed[EXACTLY_ONCE] else None,
        )
        self.start_writing(connect_engine(parsed, CONNECTION_USERNAME), settings)

    def writes_of(self, records: list[SinkRecord]) -> list[Write]:
        return [w for w in map(self._write_of, records) if w is not None]

    # -- one record ------------------------------------------------------------------------
    def _write_of(self, record: SinkRecord) -> Write | None:
        event = self._event(record)
        if event is None:
            return None
        op, payload = event
        table = self.names.table(record)
        if table is None:
            self._warn_once(record.topic, "its table name needs a change event's source block")
            return None
        if op == "truncate":
            return (
                Write(record, table, {}, [], "truncate") if self.parsed[TRUNCATE_ENABLED] else None
            )
        if op == "delete":
            if not self.parsed[DELETE_ENABLED]:
                return None
            if payload is None and self.mode != "record_key":
                return None  # a tombstone: only record_key mode knows its row
            key = self._fold(self._key(record, payload))
            return Write(record, table, key, list(key), "delete")
        if payload is None:
            raise DataException(
                f"{record.topic}-{record.kafka_partition}@{record.kafka_offset} is a change "
                "event without its row (after)"
            )
        key = self._fold(self._key(record, payload))
        row = {
            self.names.fold(name): self._value(field.schema, payload.get(name))
            for name, field in self._fields(record.topic, payload.schema)
        }
        return Write(record, table, {**row, **key}, list(key))

    def _event(self, record: SinkRecord) -> tuple[str, Struct | None] | None:
        """What the record is: ``write`` (of the payload), ``delete`` (of the payload's or
        the key's row; no payload: the key's), ``truncate``; None for what is skipped."""
        value, schema = record.value, record.value_schema
        if value is None:
            return ("delete", None)  # a tombstone, or a flat record's delete
        if schema is not None and schema.name and "SchemaChangeValue" in schema.name:
            self._warn_once(record.topic, "schema change events are not supported")
            return None
        if not isinstance(value, Struct):
            raise DataException(
                f"The Debezium JDBC sink needs struct values with a schema; {record.topic}-"
                f"{record.kafka_partition}@{record.kafka_offset} has {type(value).__name__} "
                "(use a converter with schemas, e.g. JsonConverter with schemas.enable=true)"
            )
        if not is_change_event(value.schema):
            return ("write", value)
        op = value.get(OPERATION)
        if op in (OP_CREATE, OP_READ, OP_UPDATE):
            return ("write", value.get(AFTER))
        if op == OP_DELETE:
            return ("delete", value.get(BEFORE))
        if op == OP_TRUNCATE:
            return ("truncate", None)
        return None  # a message ('m'): no row

    def _key(self, record: SinkRecord, payload: Struct | None) -> dict[str, Any]:
        """The primary key's columns and values (names as in the record)."""
        if self.mode != "record_value":
            return outside_key(self.mode, self.key_fields, record, self._value, PRIMARY_KEY_MODE)
        if payload is None:
            raise DataException(f"{record.topic}: record_value keys need the event's row")
        names = self.key_fields or [name for name, _ in self._fields(record.topic, payload.schema)]
        schema = payload.schema
        return {n: self._value(field_schema(schema, n), payload.get(n)) for n in names}

    def _fields(self, topic: str, schema: Schema) -> list[tuple[str, Any]]:
        return [(f.name, f) for f in schema.fields or () if self.fields.keeps(topic, f.name)]

    def _fold(self, row: dict[str, Any]) -> dict[str, Any]:
        return {self.names.fold(name): value for name, value in row.items()}

    def _value(self, schema: Schema, value: Any) -> Any:
        if value is None:
            return None
        convert = self.converters.get(schema)
        if convert is None:
            convert = self.converters[schema] = converter(schema, self.zone)
        return convert(value)

    def _warn_once(self, topic: str, why: str) -> None:
        if topic not in self.warned:
            self.warned.add(topic)
            log.warning("Ignoring records of topic %s: %s", topic, why)

    # -- tables ----------------------------------------------------------------------------
    def columns_for(self, write: Write) -> list[Column[Any]]:
        event = self._event(write.record)
        assert event is not None and event[1] is not None
        payload = event[1]
        names = list(self._key(write.record, payload))
        keys = key_schemas(self.mode, names, write.record, payload.schema)
        fields = {
            name: field.schema for name, field in self._fields(write.record.topic, payload.schema)
        }
        fold = self.names.fold
        return table_columns(
            {fold(n): column_type(s, True) for n, s in keys.items()},
            {fold(n): s for n, s in fields.items()},
            column_type,
        )
