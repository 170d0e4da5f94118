"""JDBC sink: records of topics into database tables (any SQLAlchemy URL).

Configs follow Confluent's JDBC sink connector: ``connection.url``, ``insert.mode``
(``insert``, ``upsert``, ``update``), ``pk.mode`` (``none``, ``kafka``, ``record_key``,
``record_value``), ``pk.fields``, ``table.name.format`` (``${topic}``), ``auto.create``,
``auto.evolve`` (adds columns for optional fields and fields with a default, the
default as the column's SQL default, for every schema in a batch), ``delete.enabled`` (a tombstone deletes its row),
``batch.size``, ``max.retries`` and ``retry.backoff.ms``.

Records are written through the write path both JDBC sinks share (``writer``): each ``put``
is one database transaction, consecutive records for the same table and operation become
one batched statement, in record order. Delivery is at-least-once (Kafka offsets are
committed after the transaction); upserts make replays harmless. With
``exactly.once.enabled`` the Kafka offsets are written to ``offsets.table.name`` in the same
transaction as the rows, and ``open()`` seeks the consumer to them, so every record is
written exactly once, whatever fails and whenever.

A put that fails because the database is unreachable or dropped the connection is retried
(the same records, after ``retry.backoff.ms``) up to ``max.retries`` times in a row; other
database errors (a constraint, a type) fail the task at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Column

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigValue
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.datasets import ConnectorData, listed, tables, topics
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.sink import SinkConnector, SinkRecord
from airflow_provider_connect.connectors.jdbc.config import (
    AUTO_CREATE,
    AUTO_EVOLVE,
    BATCH_SIZE,
    CONNECTION_URL,
    DELETE_ENABLED,
    EXACTLY_ONCE,
    INSERT_MODE,
    MAX_RETRIES,
    OFFSETS_TABLE,
    PK_FIELDS,
    PK_MODE,
    RETRY_BACKOFF_MS,
    SINK_CONFIG_DEF,
    TABLE_NAME_FORMAT,
    connect_engine,
    database_checks,
    list_tables,
    report_missing_tables,
    schema_of,
)
from airflow_provider_connect.connectors.jdbc.keys import key_schemas, outside_key
from airflow_provider_connect.connectors.jdbc.writer import (
    JdbcWriterTask,
    TableId,
    Write,
    WriterSettings,
    column_value,
    sql_type,
    table_columns,
)


def _column_value(_schema: Schema, value: Any) -> Any:
    return column_value(value)


def table_name(config: Mapping[str, Any], topic: str) -> str:
    name_format: str = config[TABLE_NAME_FORMAT]
    return name_format.replace("${topic}", topic)


class JdbcSinkConnector(SinkConnector):
    """Hands its config to every task; checks the keys and tables up front."""

    def version(self) -> str:
        return __version__

    def config(self) -> Any:
        return SINK_CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Reads its topics, writes a table per topic (``table.name.format``)."""
        names = listed(config.get(self.TOPICS_CONFIG))
        named = {TABLE_NAME_FORMAT: config.get(TABLE_NAME_FORMAT) or "${topic}"}
        return ConnectorData(
            topics(cluster, names),
            tables(config.get(CONNECTION_URL), (table_name(named, t) for t in names)),
        )

    def task_class(self) -> type[Task]:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self, is_deleted: bool = False) -> None:
        """Nothing to release: the tasks hold the connections."""

    def validate(self, connector_configs: dict[str, str]) -> Config:
        values = {v.name: v for v in SINK_CONFIG_DEF.validate(connector_configs)}
        if not any(v.error_messages for v in values.values()):
            parsed = SINK_CONFIG_DEF.parse(connector_configs)
            topics = [t.strip() for t in connector_configs.get("topics", "").split(",")]
            check_sink_config(parsed, [t for t in topics if t], values)
        return Config(list(values.values()))


def check_sink_config(
    parsed: dict[str, Any], topics: list[str], values: dict[str, ConfigValue]
) -> None:
    """Adds per-field errors: keys the modes need, and tables that are missing."""
    mode, pk_mode = parsed[INSERT_MODE], parsed[PK_MODE]
    if mode in ("upsert", "update") and pk_mode == "none":
        values[PK_MODE].add_error_message(
            f"insert.mode {mode} needs a primary key: set pk.mode to kafka, record_key or "
            "record_value"
        )
    if parsed[DELETE_ENABLED] and pk_mode != "record_key":
        values[DELETE_ENABLED].add_error_message("delete.enabled needs pk.mode=record_key")
    if pk_mode == "kafka" and parsed[PK_FIELDS] and len(parsed[PK_FIELDS]) != 3:
        values[PK_FIELDS].add_error_message(
            "pk.mode kafka takes three names (topic, partition, offset)"
        )
    with database_checks(parsed, values) as engine:
        existing = list_tables(engine, schema_of(parsed))  # also: the database is reachable
        if parsed[AUTO_CREATE]:
            return
        report_missing_tables(
            values[TABLE_NAME_FORMAT],
            [table_name(parsed, t) for t in topics],
            existing,
            " (create them, or set auto.create=true)",
        )


class JdbcSinkTask(JdbcWriterTask):
    """Writes each ``put`` in one transaction; see the module docstring."""

    def start(self, props: dict[str, str]) -> None:
        self.parsed = SINK_CONFIG_DEF.parse(props)
        offsets = TableId(schema_of(self.parsed), self.parsed[OFFSETS_TABLE])
        settings = WriterSettings(
            insert_mode=self.parsed[INSERT_MODE],
            batch_size=self.parsed[BATCH_SIZE],
            may_create=self.parsed[AUTO_CREATE],
            may_evolve=self.parsed[AUTO_EVOLVE],
            cannot_create="auto.create is false",
            cannot_evolve="auto.evolve is false",
            max_retries=self.parsed[MAX_RETRIES],
            retry_backoff_ms=self.parsed[RETRY_BACKOFF_MS],
            offsets_table=offsets if self.parsed[EXACTLY_ONCE] else None,
        )
        self.start_writing(connect_engine(self.parsed), settings)

    def writes_of(self, records: list[SinkRecord]) -> list[Write]:
        return [w for w in map(self._write_of, records) if w is not None]

    # -- one record ------------------------------------------------------------------------
    def _write_of(self, record: SinkRecord) -> Write | None:
        table = TableId(schema_of(self.parsed), table_name(self.parsed, record.topic))
        key = outside_key(
            self.parsed[PK_MODE], self.parsed[PK_FIELDS], record, _column_value, PK_MODE
        )
        if record.value is None:
            if not self.parsed[DELETE_ENABLED]:
                return None  # a tombstone without delete.enabled: nothing to write
            return Write(record, table, key, list(key), "delete")
        if not isinstance(record.value, Struct):
            raise DataException(
                f"The JDBC sink needs struct values with a schema; {record.topic}-"
                f"{record.kafka_partition}@{record.kafka_offset} has {type(record.value).__name__} "
                "(use a converter with schemas, e.g. JsonConverter with schemas.enable=true)"
            )
        row = {name: column_value(value) for name, value in record.value.items()}
        if self.parsed[PK_MODE] == "record_value":
            key = {k: row[k] for k in self.parsed[PK_FIELDS] or list(row)}
        return Write(record, table, {**row, **key}, list(key))

    def columns_for(self, write: Write) -> list[Column[Any]]:
        value = write.record.value_schema
        assert value is not None
        mode = self.parsed[PK_MODE]
        keys = key_schemas(mode, write.key, write.record, value)
        schemas = {f.name: f.schema for f in value.fields or ()}
        return table_columns({n: sql_type(s, True) for n, s in keys.items()}, schemas)
