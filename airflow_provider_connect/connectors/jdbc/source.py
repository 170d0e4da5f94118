"""JDBC source: rows of database tables (any SQLAlchemy URL) into Kafka topics.

Configs follow Confluent's JDBC source connector: ``connection.url`` (a SQLAlchemy URL
here), ``mode`` (``bulk``, ``incrementing``, ``timestamp``, ``timestamp+incrementing``),
``table.whitelist``/``table.blacklist`` or ``query``, ``topic.prefix``, ``poll.interval.ms``,
``batch.max.rows``, ``table.poll.interval.ms``. A table's topic is ``topic.prefix`` + its name,
characters a topic cannot hold replaced by ``_``.

Each table is a source partition ``{"table": name}`` (``{"query": sql}`` for a query) with
offsets ``{"incrementing": id}`` and/or ``{"timestamp": iso}``: a query fetches only rows past
the committed offset, in offset order, ``batch.max.rows`` at a time. Delivery is
at-least-once (the runtime stores offsets after the records are acknowledged).

* ``incrementing``: rows whose column is greater than the last one seen (new rows only).
* ``timestamp``: rows whose timestamp is past the last one and before the database's current
  time minus ``timestamp.delay.interval.ms`` (new and updated rows); a batch never ends in the
  middle of rows sharing a timestamp, so none is skipped.
* ``timestamp+incrementing``: ordered by (timestamp, id): exact, even with equal timestamps.
* ``bulk``: the whole table at every poll, no offsets.

Tables are spread over ``tasks.max`` tasks; the connector lists them every
``table.poll.interval.ms`` and asks for new task configs when they change. Identifiers are
quoted by the dialect (SQLAlchemy), never pasted into SQL.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import MetaData, Table, column, func, or_, select, text
from sqlalchemy.engine import Connection, Engine, Row

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigValue
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.datasets import ConnectorData, listed, tables, topics
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    OffsetsOf,
    SourceConnector,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
)
from airflow_provider_connect.connectors.jdbc.config import (
    BATCH_MAX_ROWS,
    CONNECTION_URL,
    INCREMENTING_COLUMN,
    MODE,
    POLL_INTERVAL_MS,
    QUERY,
    SCHEMA_PATTERN,
    SOURCE_CONFIG_DEF,
    TABLE_BLACKLIST,
    TABLE_POLL_INTERVAL_MS,
    TABLE_WHITELIST,
    TIMESTAMP_COLUMN,
    TIMESTAMP_DELAY_MS,
    TOPIC_PREFIX,
    connect_engine,
    database_checks,
    list_tables,
    report_missing_tables,
    schema_of,
)
from airflow_provider_connect.connectors.jdbc.types import RowConverter

TABLES = "tables"  # the task config key with the task's tables (a JSON list)
INCREMENTING, TIMESTAMP = "incrementing", "timestamp"


class JdbcSourceConnector(SourceConnector):
    """Lists the tables to copy and spreads them over the tasks; watches for new tables."""

    def version(self) -> str:
        return __version__

    def config(self) -> Any:
        return SOURCE_CONFIG_DEF

    def task_class(self) -> type[Task]:
        return JdbcSourceTask

    def validate(self, connector_configs: dict[str, str]) -> Config:
        """The ConfigDef checks, then what needs the database: it is reachable, the listed
        tables exist, and the mode's columns exist in every table."""
        values = {v.name: v for v in SOURCE_CONFIG_DEF.validate(connector_configs)}
        if any(v.error_messages for v in values.values()):
            return Config(list(values.values()))
        check_source_config(SOURCE_CONFIG_DEF.parse(connector_configs), values)
        return Config(list(values.values()))

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        self.parsed = SOURCE_CONFIG_DEF.parse(props)
        self.engine = connect_engine(self.parsed)
        self.tables = self._tables()
        self.stopping = threading.Event()
        self.monitor = threading.Thread(target=self._watch_tables, daemon=True)
        self.monitor.start()

    def _tables(self) -> list[str]:
        if self.parsed[QUERY]:
            return []
        return selected_tables(self.engine, self.parsed)

    def _watch_tables(self) -> None:
        interval_s = self.parsed[TABLE_POLL_INTERVAL_MS] / 1000
        while not self.stopping.wait(interval_s):
            try:
                tables = self._tables()
            except Exception:  # the database is briefly away: look again next time
                continue
            if tables != self.tables:
                self.tables = tables
                self.context.request_task_reconfiguration()

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self.parsed[QUERY]:
            return [{**self.props, TABLES: "[]"}]
        count = min(max_tasks, len(self.tables))
        groups = [self.tables[i::count] for i in range(count)]
        return [{**self.props, TABLES: json.dumps(group)} for group in groups]

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """See :func:`source_datasets`."""
        return source_datasets(config, cluster)

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        """Supported in the modes with offsets: a restart re-reads from the committed ones.
        Bulk mode re-reads whole tables by design."""
        mode = connector_config.get(MODE, "")
        return ExactlyOnceSupport.UNSUPPORTED if mode == "bulk" else ExactlyOnceSupport.SUPPORTED

    def stop(self, is_deleted: bool = False) -> None:
        self.stopping.set()
        self.monitor.join(timeout=5)
        self.engine.dispose()


def source_datasets(config: Mapping[str, str], cluster: str | None) -> ConnectorData:
    """What a JDBC (or audit) source reads and writes: the tables of ``table.whitelist`` and
    a topic per table, as the task names it (:func:`topic_for`); for a ``query``, its topic
    (the prefix) alone."""
    prefix = config.get(TOPIC_PREFIX) or ""
    if config.get(QUERY):
        return ConnectorData([], topics(cluster, [prefix]))
    names = listed(config.get(TABLE_WHITELIST))
    return ConnectorData(
        tables(config.get(CONNECTION_URL), names, config.get(SCHEMA_PATTERN)),
        topics(cluster, (topic_for(prefix, t) for t in names)),
    )


def selected_tables(engine: Engine, parsed: dict[str, Any]) -> list[str]:
    """The tables to copy, sorted: the whitelist, or every table but the blacklist's."""
    existing = list_tables(engine, schema_of(parsed))
    if parsed[TABLE_WHITELIST]:
        return sorted(t for t in existing if t in set(parsed[TABLE_WHITELIST]))
    return sorted(t for t in existing if t not in set(parsed[TABLE_BLACKLIST]))


def check_source_config(parsed: dict[str, Any], values: dict[str, ConfigValue]) -> None:
    """Adds per-field errors for what only the database can tell."""
    mode = parsed[MODE]
    if parsed[TABLE_WHITELIST] and parsed[TABLE_BLACKLIST]:
        values[TABLE_BLACKLIST].add_error_message(
            "table.whitelist and table.blacklist cannot both be set"
        )
    if parsed[QUERY] and (parsed[TABLE_WHITELIST] or parsed[TABLE_BLACKLIST]):
        values[QUERY].add_error_message("A query cannot be combined with table.whitelist/blacklist")
    needed = [
        c
        for m, c in ((INCREMENTING, INCREMENTING_COLUMN), (TIMESTAMP, TIMESTAMP_COLUMN))
        if m in mode
    ]
    for key in needed:
        if not parsed[key]:
            values[key].add_error_message(f"Mode {mode} needs {key}")
    with database_checks(parsed, values) as engine:
        existing = list_tables(engine, schema_of(parsed))
        report_missing_tables(values[TABLE_WHITELIST], parsed[TABLE_WHITELIST], existing)
        if not parsed[QUERY]:
            for table in selected_tables(engine, parsed):
                columns = {c.name for c in reflect(engine, table, parsed).columns}
                for key in needed:
                    if parsed[key] and parsed[key] not in columns:
                        values[key].add_error_message(
                            f"Column {parsed[key]} not found in table {table}"
                        )


def topic_for(prefix: str, table: str) -> str:
    """``prefix`` + the table's name, with characters a topic name cannot hold as ``_``."""
    return prefix + re.sub(r"[^a-zA-Z0-9._-]", "_", table)


def reflect(engine: Engine, table: str, parsed: dict[str, Any]) -> Table:
    return Table(table, MetaData(), autoload_with=engine, schema=schema_of(parsed))


def _position(selectable: Any, column_name: str) -> int:
    """Where the column ``column_name`` is in the rows of ``select(selectable)``."""
    wanted = selectable.c[column_name]
    return next(i for i, c in enumerate(selectable.columns) if c is wanted)


class _Source:
    """One table or query: what to select from, the record schema, the position reached,
    and where the mode's columns are in its rows (None for a column the mode lacks)."""

    def __init__(
        self, task: JdbcSourceTask, name: str, selectable: Any, partition: dict[str, str]
    ) -> None:
        self.name = name
        self.selectable = selectable
        self.partition = partition
        self.incrementing_at, self.timestamp_at = (
            _position(selectable, task.parsed[key]) if kind in task.mode else None
            for kind, key in ((INCREMENTING, INCREMENTING_COLUMN), (TIMESTAMP, TIMESTAMP_COLUMN))
        )
        self.converter = (
            RowConverter.for_columns(name, list(selectable.columns))
            if isinstance(selectable, Table)
            else None  # a custom query: typed from its first rows
        )
        stored = task.context.offset_storage_reader().offset(partition) or {}
        self.incrementing: int | None = stored.get(INCREMENTING)
        raw_timestamp = stored.get(TIMESTAMP)
        self.timestamp = dt.datetime.fromisoformat(raw_timestamp) if raw_timestamp else None
        self.due = 0.0  # monotonic time of the next poll

    def offset(self, row: Row[Any]) -> dict[str, Any] | None:
        """The offset committed with ``row``: ``{"incrementing": id}`` and/or
        ``{"timestamp": iso}``, None in bulk mode."""
        offset: dict[str, Any] = {}
        if self.incrementing_at is not None:
            offset[INCREMENTING] = int(row[self.incrementing_at])
        if self.timestamp_at is not None:
            offset[TIMESTAMP] = _moment(row[self.timestamp_at]).isoformat()
        return offset or None


class JdbcSourceTask(SourceTask):
    """Polls its tables in turn; see the module docstring for the query of each mode."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.parsed = SOURCE_CONFIG_DEF.parse(props)
        self.mode = self.parsed[MODE]
        self.engine = connect_engine(self.parsed)
        self.stopping = threading.Event()
        self.topic_prefix = self.parsed[TOPIC_PREFIX]
        query = self.parsed[QUERY]
        if query:
            with self.engine.connect() as connection:
                names = list(
                    connection.execute(text(f"SELECT * FROM ({query}) q WHERE 1 = 0")).keys()
                )
            subquery = text(query).columns(*(column(n) for n in names)).subquery("q")
            self.sources = [_Source(self, self.topic_prefix, subquery, {"query": query})]
        else:
            self.sources = [
                _Source(self, t, reflect(self.engine, t, self.parsed), {"table": t})
                for t in json.loads(props[TABLES])
            ]

    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        """The new rows of the tables due: one table's as a batch, several tables' as a
        list."""
        now = time.monotonic()
        due = [s for s in self.sources if s.due <= now]
        if not due:
            wait = min(s.due for s in self.sources) - now if self.sources else 1.0
            self.stopping.wait(min(wait, 1.0))
            return None
        with self.engine.connect() as connection:
            batches = [self._poll_one(connection, source) for source in due]
        return SourceRecordBatch.poll_of([b for b in batches if b is not None])

    def _poll_one(self, connection: Connection, source: _Source) -> SourceRecordBatch | None:
        limit = self.parsed[BATCH_MAX_ROWS]
        rows = self._rows(connection, source, limit)
        full = len(rows) >= limit and self.mode != "bulk"
        source.due = time.monotonic() + (0 if full else self.parsed[POLL_INTERVAL_MS] / 1000)
        topic = (
            self.topic_prefix if self.parsed[QUERY] else topic_for(self.topic_prefix, source.name)
        )
        if not rows:
            return None
        if source.converter is None:
            names = [c.name for c in source.selectable.columns]
            source.converter = RowConverter.for_rows(source.name, names, rows)
        values = source.converter.structs(rows)
        offsets = self._advance(source, rows)
        partition = None if self.mode == "bulk" else source.partition
        return SourceRecordBatch(partition, offsets, topic, values, source.converter.schema)

    def _rows(self, connection: Connection, source: _Source, limit: int) -> list[Row[Any]]:
        """The next rows of ``source`` (values by position, in its columns' order)."""
        table = source.selectable
        query = select(table)
        inc = table.c[self.parsed[INCREMENTING_COLUMN]] if INCREMENTING in self.mode else None
        ts = table.c[self.parsed[TIMESTAMP_COLUMN]] if TIMESTAMP in self.mode else None
        if self.mode == "bulk":
            return self._fetch(connection, query)
        if ts is not None:
            upper = self._upper_bound(connection, ts)
            query = query.where(ts < upper)
            if inc is not None:
                if source.timestamp is not None:
                    after = (ts == source.timestamp) & (inc > (source.incrementing or -1))
                    query = query.where(or_(after, ts > source.timestamp))
                return self._fetch(connection, query.order_by(ts, inc).limit(limit))
            if source.timestamp is not None:
                query = query.where(ts > source.timestamp)
            rows = self._fetch(connection, query.order_by(ts).limit(limit))
            if len(rows) == limit:  # never stop inside a group of equal timestamps
                at = source.timestamp_at
                assert at is not None  # set in the modes with a timestamp column
                boundary = rows[-1][at]
                rows = [r for r in rows if r[at] != boundary]
                rows += self._fetch(connection, select(table).where(ts == boundary))
            return rows
        assert inc is not None
        if source.incrementing is not None:
            query = query.where(inc > source.incrementing)
        return self._fetch(connection, query.order_by(inc).limit(limit))

    @staticmethod
    def _fetch(connection: Connection, query: Any) -> list[Row[Any]]:
        return list(connection.execute(query).all())

    def _upper_bound(self, connection: Connection, ts: Any) -> Any:
        """The database's current time minus ``timestamp.delay.interval.ms``, in the
        column's terms (naive UTC for a column without a time zone)."""
        now = connection.execute(select(func.current_timestamp())).scalar_one()
        if isinstance(now, str):
            now = dt.datetime.fromisoformat(now)
        if now.tzinfo is not None and not getattr(ts.type, "timezone", False):
            now = now.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return now - dt.timedelta(milliseconds=self.parsed[TIMESTAMP_DELAY_MS])

    @staticmethod
    def _advance(source: _Source, rows: Sequence[Row[Any]]) -> OffsetsOf:
        """Moves the source's position past the last of ``rows`` (not empty); returns the
        offsets to commit with the rows, each made when read (:meth:`_Source.offset`)."""
        last = rows[-1]
        if source.incrementing_at is not None:
            source.incrementing = int(last[source.incrementing_at])
        if source.timestamp_at is not None:
            source.timestamp = _moment(last[source.timestamp_at])
        return OffsetsOf(rows, source.offset)

    def stop(self, connector_deleted: bool = False) -> None:
        self.stopping.set()

    def stopped(self) -> None:
        self.engine.dispose()


def _moment(value: Any) -> dt.datetime:
    """A timestamp column's value as a datetime (a custom query's may be ISO text)."""
    return dt.datetime.fromisoformat(value) if isinstance(value, str) else value
