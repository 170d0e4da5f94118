"""JDBC sink: records of topics into database tables (any SQLAlchemy URL).

Configs follow Confluent's JDBC sink connector: ``connection.url``, ``insert.mode``
(``insert``, ``upsert``, ``update``), ``pk.mode`` (``none``, ``kafka``, ``record_key``,
``record_value``), ``pk.fields``, ``table.name.format`` (``${topic}``), ``auto.create``,
``auto.evolve`` (adds columns for optional fields and fields with a default, the
default as the column's SQL default, for every schema in a batch), ``delete.enabled`` (a tombstone deletes its row),
``batch.size``, ``max.retries`` and ``retry.backoff.ms``.

Each ``put`` is one database transaction: consecutive records for the same table and
operation become one batched statement, in record order. Delivery is at-least-once (Kafka
offsets are committed after the transaction); upserts make replays harmless. With
``exactly.once.enabled`` the Kafka offsets are written to ``offsets.table.name`` in the same
transaction as the rows, and ``open()`` seeks the consumer to them, so every record is
written exactly once, whatever fails and whenever.

A put that fails because the database is unreachable or dropped the connection is retried
(the same records, after ``retry.backoff.ms``) up to ``max.retries`` times in a row; other
database errors (a constraint, a type) fail the task at once.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Iterator, Mapping
from itertools import groupby
from typing import Any

from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    SmallInteger,
    String,
    Table,
    Text,
    and_,
    bindparam,
    false,
    inspect,
    select,
    text,
    true,
)
from sqlalchemy import Date as SqlDate
from sqlalchemy import DateTime as SqlDateTime
from sqlalchemy import Time as SqlTime
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.types import TypeEngine

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigValue
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema, Struct, Type
from airflow_provider_connect.connect.data.logical import Date, Decimal, Time, Timestamp
from airflow_provider_connect.connect.datasets import ConnectorData, listed, tables, topics
from airflow_provider_connect.connect.errors import (
    ConnectException,
    DataException,
    RetriableException,
)
from airflow_provider_connect.connect.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connectors.jdbc.config import (
    AUTO_CREATE,
    AUTO_EVOLVE,
    BATCH_SIZE,
    CONNECTION_URL,
    DELETE_ENABLED,
    EXACTLY_ONCE,
    INSERT_MODE,
    KAFKA_PK_FIELDS,
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

_PRIMITIVE_TYPES: dict[Type, type[TypeEngine[Any]] | TypeEngine[Any]] = {
    Type.INT8: SmallInteger,
    Type.INT16: SmallInteger,
    Type.INT32: Integer,
    Type.INT64: BigInteger,
    Type.FLOAT32: Float(precision=24),
    Type.FLOAT64: Float(precision=53),
    Type.BOOLEAN: Boolean,
    Type.BYTES: LargeBinary,
}


def sql_type(schema: Schema, key: bool = False) -> TypeEngine[Any]:
    """The column type for a field's schema (a key's strings get a bounded VARCHAR)."""
    params = schema.parameters or {}
    if schema.name == Decimal.LOGICAL_NAME:
        precision = int(params.get("connect.decimal.precision", "38"))
        return Numeric(precision, int(params[Decimal.SCALE_FIELD]))
    logical: dict[str, type[TypeEngine[Any]]] = {
        Date.LOGICAL_NAME: SqlDate,
        Time.LOGICAL_NAME: SqlTime,
    }
    if schema.name in logical:
        return logical[schema.name]()
    if schema.name == Timestamp.LOGICAL_NAME:
        return SqlDateTime()
    if schema.type is Type.STRING:
        return String(255) if key else Text()
    found = _PRIMITIVE_TYPES.get(schema.type)
    if found is None:
        raise DataException(f"The JDBC sink cannot store {schema.type.value} fields")
    return found() if isinstance(found, type) else found


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


class _Write:
    """What one record does to its table: the columns it writes, or the key it deletes."""

    __slots__ = ("columns", "delete", "key", "record", "row", "table")

    def __init__(
        self, record: SinkRecord, table: str, row: dict[str, Any], key: list[str], delete: bool
    ) -> None:
        self.record = record
        self.table = table
        self.row = row
        self.key = key
        self.delete = delete
        self.columns = tuple(row)


class JdbcSinkTask(SinkTask):
    """Writes each ``put`` in one transaction; see the module docstring."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.parsed = SINK_CONFIG_DEF.parse(props)
        self.retries_left = self.parsed[MAX_RETRIES]
        self.engine = connect_engine(self.parsed)
        self.tables: dict[str, Table] = {}
        self.offsets_table: Table | None = None
        if self.parsed[EXACTLY_ONCE]:
            self.offsets_table = Table(
                self.parsed[OFFSETS_TABLE],
                MetaData(schema=schema_of(self.parsed)),
                Column("topic", String(255), primary_key=True),
                Column("partition", Integer, primary_key=True, autoincrement=False),
                Column("offset", BigInteger, nullable=False),
            )
            self.offsets_table.create(self.engine, checkfirst=True)

    def open(self, partitions: list[TopicPartition]) -> None:
        """With exactly.once.enabled: resume each partition after its last written record."""
        if self.offsets_table is None or not partitions:
            return
        table = self.offsets_table
        with self.engine.connect() as connection:
            stored = {
                TopicPartition(r.topic, r.partition): r.offset
                for r in connection.execute(select(table))
            }
        self.context.offset({tp: stored[tp] for tp in partitions if tp in stored})

    def put(self, records: list[SinkRecord]) -> None:
        if not records:
            return  # an idle poll's empty put: no transaction to open
        try:
            self._put(records)
        except (OperationalError, InterfaceError) as e:
            if self.retries_left == 0:
                raise ConnectException(
                    f"Writing failed {self.parsed[MAX_RETRIES] + 1} times in a row: {e}"
                ) from e
            self.retries_left -= 1
            self.context.timeout(self.parsed[RETRY_BACKOFF_MS])
            raise RetriableException(f"Writing failed and will be retried: {e}") from e
        self.retries_left = self.parsed[MAX_RETRIES]

    def _put(self, records: list[SinkRecord]) -> None:
        writes = [w for w in map(self._write_of, records) if w is not None]
        for name, group in groupby(writes, key=lambda w: w.table):
            self._ensure_table(name, list(group))
        with self.engine.begin() as connection:
            runs = groupby(writes, key=lambda w: (w.table, w.delete, w.columns))
            for (name, delete, _), run in runs:
                batch = list(run)
                for chunk in _chunks(batch, self.parsed[BATCH_SIZE]):
                    self._execute(connection, self.tables[name], chunk, delete)
            if self.offsets_table is not None and records:
                self._store_offsets(connection, records)

    # -- one record ------------------------------------------------------------------------
    def _write_of(self, record: SinkRecord) -> _Write | None:
        table = table_name(self.parsed, record.topic)
        key = self._key_columns(record)
        if record.value is None:
            if not self.parsed[DELETE_ENABLED]:
                return None  # a tombstone without delete.enabled: nothing to write
            return _Write(record, table, key, list(key), True)
        if not isinstance(record.value, Struct):
            raise DataException(
                f"The JDBC sink needs struct values with a schema; {record.topic}-"
                f"{record.kafka_partition}@{record.kafka_offset} has {type(record.value).__name__} "
                "(use a converter with schemas, e.g. JsonConverter with schemas.enable=true)"
            )
        row = {name: _column_value(value) for name, value in record.value.items()}
        if self.parsed[PK_MODE] == "record_value":
            key = {k: row[k] for k in self.parsed[PK_FIELDS] or list(row)}
        return _Write(record, table, {**row, **key}, list(key), False)

    def _key_columns(self, record: SinkRecord) -> dict[str, Any]:
        mode, fields = self.parsed[PK_MODE], self.parsed[PK_FIELDS]
        if mode == "kafka":
            names = fields or KAFKA_PK_FIELDS
            return dict(
                zip(names, (record.topic, record.kafka_partition, record.kafka_offset), strict=True)
            )
        if mode == "record_key":
            if isinstance(record.key, Struct):
                names = fields or [f.name for f in record.key.schema.fields or ()]
                return {n: _column_value(record.key.get(n)) for n in names}
            if record.key is None:
                raise DataException(
                    f"pk.mode record_key, but {record.topic} has a record without a key"
                )
            return {(fields or ["__connect_key"])[0]: _column_value(record.key)}
        return {}

    # -- tables ----------------------------------------------------------------------------
    def _ensure_table(self, name: str, writes: list[_Write]) -> None:
        """Reflects the table once; creates it (auto.create) or adds columns (auto.evolve)
        for fields it lacks, before the data transaction. The columns are those of every
        value schema in the batch (records of a schema and of its evolution may share one)."""
        table = self.tables[name] if name in self.tables else self._reflect(name)
        wanted = {c for w in writes for c in w.columns}
        missing = wanted - set(table.columns.keys()) if table is not None else wanted
        if table is not None and not missing:
            return
        samples = {w.record.value_schema: w for w in writes if not w.delete}
        if not samples:
            return
        by_name: dict[str, Column[Any]] = {}
        for sample in samples.values():
            for column in self._columns_for(sample):
                by_name.setdefault(column.name, column)
        columns = list(by_name.values())
        if table is None:
            if not self.parsed[AUTO_CREATE]:
                raise ConnectException(f"Table {name} does not exist and auto.create is false")
            metadata = MetaData(schema=schema_of(self.parsed))
            Table(name, metadata, *columns).create(self.engine, checkfirst=True)
        else:
            if not self.parsed[AUTO_EVOLVE]:
                raise ConnectException(
                    f"Table {name} has no column(s) {', '.join(sorted(missing))} and auto.evolve is false"
                )
            with self.engine.begin() as connection:
                operations = Operations(MigrationContext.configure(connection))
                for column in (c for c in columns if c.name in missing):
                    if not column.nullable and column.server_default is None:
                        raise ConnectException(
                            f"Cannot add required column {column.name} to {name}: "
                            "auto.evolve adds optional fields and fields with a default only"
                        )
                    operations.add_column(name, column, schema=schema_of(self.parsed))
        self._reflect(name)  # the table as it is now

    def _reflect(self, name: str) -> Table | None:
        schema = schema_of(self.parsed)
        if not inspect(self.engine).has_table(name, schema=schema):
            return None
        table = Table(name, MetaData(), autoload_with=self.engine, schema=schema)
        self.tables[name] = table
        return table

    def _columns_for(self, write: _Write) -> list[Column[Any]]:
        record = write.record
        assert isinstance(record.value, Struct)
        schemas = {f.name: f.schema for f in record.value.schema.fields or ()}
        mode = self.parsed[PK_MODE]
        key_types: dict[str, TypeEngine[Any]]
        if mode == "kafka":
            types: list[TypeEngine[Any]] = [String(255), Integer(), BigInteger()]
            key_types = dict(zip(write.key, types, strict=True))
        elif mode == "record_key" and isinstance(record.key, Struct):
            key_fields = {f.name: f.schema for f in record.key.schema.fields or ()}
            key_types = {n: sql_type(key_fields[n], True) for n in write.key}
        elif mode == "record_key":
            assert record.key_schema is not None
            key_types = {write.key[0]: sql_type(record.key_schema, True)}
        else:
            key_types = {n: sql_type(schemas[n], True) for n in write.key}
        columns: list[Column[Any]] = [
            Column(n, t, primary_key=True, autoincrement=False) for n, t in key_types.items()
        ]
        for name, schema in schemas.items():
            if name not in key_types:
                columns.append(
                    Column(
                        name,
                        sql_type(schema),
                        nullable=schema.optional,
                        server_default=_server_default(schema.default_value),
                    )
                )
        return columns

    # -- statements ------------------------------------------------------------------------
    def _execute(
        self, connection: Connection, table: Table, batch: list[_Write], delete: bool
    ) -> None:
        key = batch[0].key
        if delete:
            where = and_(*(table.c[k] == bindparam(f"k_{k}") for k in key))
            connection.execute(table.delete().where(where), [_prefixed(w.row, "k_") for w in batch])
            return
        rows = [w.row for w in batch]
        mode = self.parsed[INSERT_MODE]
        if mode == "insert":
            connection.execute(table.insert(), rows)
        elif mode == "upsert":
            connection.execute(upsert(connection, table, key), rows)
        else:
            values = [c for c in batch[0].columns if c not in key]
            statement = (
                table.update()
                .where(and_(*(table.c[k] == bindparam(f"k_{k}") for k in key)))
                .values({c: bindparam(f"v_{c}") for c in values})
            )
            connection.execute(
                statement,
                [
                    {
                        **_prefixed({k: w.row[k] for k in key}, "k_"),
                        **_prefixed({c: w.row[c] for c in values}, "v_"),
                    }
                    for w in batch
                ],
            )

    def _store_offsets(self, connection: Connection, records: list[SinkRecord]) -> None:
        """The next offset of each partition, in the same transaction as the rows."""
        assert self.offsets_table is not None
        latest: dict[tuple[str, int], int] = {}
        for record in records:
            latest[(record.topic, record.kafka_partition)] = record.kafka_offset + 1
        rows = [{"topic": t, "partition": p, "offset": o} for (t, p), o in latest.items()]
        connection.execute(upsert(connection, self.offsets_table, ["topic", "partition"]), rows)

    def stop(self, connector_deleted: bool = False) -> None:
        self.engine.dispose()


def upsert(connection: Connection, table: Table, key: list[str]) -> Any:
    """INSERT … ON CONFLICT/DUPLICATE KEY UPDATE in the connection's dialect."""
    name = connection.dialect.name
    if name in ("postgresql", "sqlite"):
        statement = (postgresql if name == "postgresql" else sqlite).insert(table)
        others = {c.name: statement.excluded[c.name] for c in table.columns if c.name not in key}
        if not others:
            return statement.on_conflict_do_nothing(index_elements=key)
        return statement.on_conflict_do_update(index_elements=key, set_=others)
    if name in ("mysql", "mariadb"):
        statement = mysql.insert(table)
        others = {c.name: statement.inserted[c.name] for c in table.columns if c.name not in key}
        return statement.on_duplicate_key_update(others or {key[0]: statement.inserted[key[0]]})
    raise ConnectException(f"insert.mode upsert is not supported on {name}")


def _server_default(value: Any) -> Any:
    """A field's default as its column's SQL default (what rows that predate the column
    get), for the defaults a literal states: text, finite numbers and booleans (as the
    dialect writes them: ``true`` on PostgreSQL, ``1`` on SQLite)."""
    if isinstance(value, bool):
        return true() if value else false()
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return text(str(value))
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return text(str(value))
    if isinstance(value, str):
        return value
    return None


def _column_value(value: Any) -> Any:
    """Timestamps are written as naive UTC (the columns carry no time zone)."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _prefixed(row: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {prefix + k: v for k, v in row.items()}


def _chunks(items: list[_Write], size: int) -> Iterator[list[_Write]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
