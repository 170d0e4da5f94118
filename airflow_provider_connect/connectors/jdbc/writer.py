"""The write path both JDBC sinks share (Confluent's and Debezium's): what each record does
to a table (a :class:`Write`), applied one ``put`` per database transaction.

A sink task subclasses :class:`JdbcWriterTask`: it turns records into writes
(``writes_of``) and says which columns a write needs (``columns_for``); the base class does
the rest, the same way for both sinks.

Guarantees:

* Each ``put`` is one database transaction: consecutive writes for the same table,
  operation and columns become one batched statement (at most ``batch_size`` rows), in
  record order, so a delete after an insert of the same row (or the other way round) keeps
  its effect. A truncate is a ``TRUNCATE TABLE`` on PostgreSQL and a ``DELETE`` without
  condition elsewhere (MySQL's ``TRUNCATE`` would commit the transaction half way).
* Missing tables are created and missing columns added before the data transaction, when
  the settings allow it (``may_create``, ``may_evolve``); only optional columns and columns
  with a default are ever added, nothing is dropped or changed. A delete or truncate of a
  table that does not exist does nothing.
* Delivery is at-least-once (the runtime commits Kafka offsets after ``put`` returned); with
  ``offsets_table`` the offsets are written in the same transaction as the rows and
  ``open()`` seeks the consumer to them, so each record is written exactly once.
* A put that fails because the database is unreachable or dropped the connection is
  retried (the same records, after ``retry_backoff_ms``) up to ``max_retries`` times in a
  row; other database errors (a constraint, a type) fail the task at once.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from abc import abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Literal, NamedTuple

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
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.types import TypeEngine

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.data import Schema, Type
from airflow_provider_connect.connect.data.logical import Date, Decimal, Time, Timestamp
from airflow_provider_connect.connect.errors import (
    ConnectException,
    DataException,
    RetriableException,
)
from airflow_provider_connect.connect.sink import SinkRecord, SinkTask, TopicPartition

Op = Literal["write", "delete", "truncate"]

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


def table_columns(
    key: Mapping[str, TypeEngine[Any]], fields: Mapping[str, Schema], types: Any = sql_type
) -> list[Column[Any]]:
    """The columns of a table: the primary key's (``key``: their types), then a column per
    field not in the key, typed by ``types(schema)``, nullable when the field is optional,
    with the field's default as the column's SQL default."""
    columns: list[Column[Any]] = [
        Column(n, t, primary_key=True, autoincrement=False) for n, t in key.items()
    ]
    for name, schema in fields.items():
        if name not in key:
            columns.append(
                Column(
                    name,
                    types(schema),
                    nullable=schema.optional,
                    server_default=server_default(schema.default_value),
                )
            )
    return columns


class TableId(NamedTuple):
    """A table: its database schema (None: the connection's) and name."""

    schema: str | None
    name: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


class Write:
    """What one record does to its table: the columns it writes (``write``), the key it
    deletes (``delete``; ``row`` holds the key), or the whole table (``truncate``)."""

    __slots__ = ("columns", "key", "op", "record", "row", "table")

    def __init__(
        self,
        record: SinkRecord,
        table: TableId,
        row: dict[str, Any],
        key: list[str],
        op: Op = "write",
    ) -> None:
        self.record = record
        self.table = table
        self.row = row
        self.key = key
        self.op = op
        self.columns = tuple(row)


@dataclass(frozen=True)
class WriterSettings:
    """How writes are applied; each sink maps its own configs onto these."""

    insert_mode: str  # insert, upsert or update
    batch_size: int
    may_create: bool
    may_evolve: bool
    cannot_create: str  # why a table may not be created, e.g. "auto.create is false"
    cannot_evolve: str
    max_retries: int
    retry_backoff_ms: int
    offsets_table: TableId | None  # exactly once: the Kafka offsets' table


class JdbcWriterTask(SinkTask):
    """A sink task writing records to tables through :class:`Write`\\ s; see the module
    docstring for what it guarantees."""

    def version(self) -> str:
        return __version__

    @abstractmethod
    def writes_of(self, records: list[SinkRecord]) -> list[Write]:
        """What ``records`` do to tables, in record order (records that do nothing left out)."""

    @abstractmethod
    def columns_for(self, write: Write) -> list[Column[Any]]:
        """The columns of the table ``write`` would create (a ``write`` op's record)."""

    def start_writing(self, engine: Engine, settings: WriterSettings) -> None:
        """Called by the subclass's ``start`` with the database and its settings."""
        self.engine = engine
        self.settings = settings
        self.retries_left = settings.max_retries
        self.tables: dict[TableId, Table] = {}
        self.offsets_table: Table | None = None
        if settings.offsets_table is not None:
            self.offsets_table = Table(
                settings.offsets_table.name,
                MetaData(schema=settings.offsets_table.schema),
                Column("topic", String(255), primary_key=True),
                Column("partition", Integer, primary_key=True, autoincrement=False),
                Column("offset", BigInteger, nullable=False),
            )
            self.offsets_table.create(self.engine, checkfirst=True)

    def open(self, partitions: list[TopicPartition]) -> None:
        """With an offsets table: resume each partition after its last written record."""
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
                    f"Writing failed {self.settings.max_retries + 1} times in a row: {e}"
                ) from e
            self.retries_left -= 1
            self.context.timeout(self.settings.retry_backoff_ms)
            raise RetriableException(f"Writing failed and will be retried: {e}") from e
        self.retries_left = self.settings.max_retries

    def _put(self, records: list[SinkRecord]) -> None:
        writes = self.writes_of(records)
        for table_id, group in groupby(writes, key=lambda w: w.table):
            self._ensure_table(table_id, list(group))
        with self.engine.begin() as connection:
            runs = groupby(writes, key=lambda w: (w.table, w.op, w.columns))
            for (table_id, op, _), run in runs:
                table = self.tables.get(table_id)
                if table is None:
                    continue  # deletes or a truncate of a table that does not exist
                if op == "truncate":
                    _truncate(connection, table)
                    continue
                for chunk in _chunks(list(run), self.settings.batch_size):
                    self._execute(connection, table, chunk, op == "delete")
            if self.offsets_table is not None:
                self._store_offsets(connection, records)

    # -- tables ----------------------------------------------------------------------------
    def _ensure_table(self, table_id: TableId, writes: list[Write]) -> None:
        """Reflects the table once; creates it or adds columns for fields it lacks, before
        the data transaction. The columns are those of every value schema in the batch
        (records of a schema and of its evolution may share one)."""
        table = self.tables[table_id] if table_id in self.tables else self._reflect(table_id)
        wanted = {c for w in writes if w.op == "write" for c in w.columns}
        missing = wanted - set(table.columns.keys()) if table is not None else wanted
        if table is not None and not missing:
            return
        samples = {w.record.value_schema: w for w in writes if w.op == "write"}
        if not samples:
            return
        by_name: dict[str, Column[Any]] = {}
        for sample in samples.values():
            for column in self.columns_for(sample):
                by_name.setdefault(column.name, column)
        columns = list(by_name.values())
        if table is None:
            if not self.settings.may_create:
                raise ConnectException(
                    f"Table {table_id} does not exist and {self.settings.cannot_create}"
                )
            metadata = MetaData(schema=table_id.schema)
            Table(table_id.name, metadata, *columns).create(self.engine, checkfirst=True)
        else:
            if not self.settings.may_evolve:
                raise ConnectException(
                    f"Table {table_id} has no column(s) {', '.join(sorted(missing))} and "
                    f"{self.settings.cannot_evolve}"
                )
            with self.engine.begin() as connection:
                operations = Operations(MigrationContext.configure(connection))
                for column in (c for c in columns if c.name in missing):
                    if not column.nullable and column.server_default is None:
                        raise ConnectException(
                            f"Cannot add required column {column.name} to {table_id}: only "
                            "optional fields and fields with a default become new columns"
                        )
                    operations.add_column(table_id.name, column, schema=table_id.schema)
        self._reflect(table_id)  # the table as it is now

    def _reflect(self, table_id: TableId) -> Table | None:
        if not inspect(self.engine).has_table(table_id.name, schema=table_id.schema):
            return None
        table = Table(table_id.name, MetaData(), autoload_with=self.engine, schema=table_id.schema)
        self.tables[table_id] = table
        return table

    # -- statements ------------------------------------------------------------------------
    def _execute(
        self, connection: Connection, table: Table, batch: list[Write], delete: bool
    ) -> None:
        key = batch[0].key
        if delete:
            where = and_(*(table.c[k] == bindparam(f"k_{k}") for k in key))
            connection.execute(table.delete().where(where), [_prefixed(w.row, "k_") for w in batch])
            return
        rows = [w.row for w in batch]
        mode = self.settings.insert_mode
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


def _truncate(connection: Connection, table: Table) -> None:
    """Empties ``table`` inside the put's transaction."""
    if connection.dialect.name == "postgresql":
        quoted = connection.dialect.identifier_preparer.format_table(table)
        connection.execute(text(f"TRUNCATE TABLE {quoted}"))
    else:
        connection.execute(table.delete())


def server_default(value: Any) -> Any:
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


def column_value(value: Any) -> Any:
    """Timestamps are written as naive UTC (the columns carry no time zone)."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _prefixed(row: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {prefix + k: v for k, v in row.items()}


def _chunks(items: list[Write], size: int) -> Iterator[list[Write]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
