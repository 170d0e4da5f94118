"""Audit-trigger change capture: every INSERT, UPDATE and DELETE on the captured tables, as
change events in a Debezium-like envelope (PostgreSQL and SQLite).

The connector's task installs, when it starts, an audit table (``audit.table.name``) and
row-level triggers on the captured tables (``table.whitelist``) that write each change
there: operation, table, before and after images as JSON. It polls the audit table in id
order and emits, per change, a record to ``topic.prefix`` + table with the table's primary
key as key and the value ``{before, after, op: c|u|d, source: {connector, db, table,
audit_id}, ts_ms}``. Offsets are audit ids (partition ``{"audit": table}``): delivery is
at-least-once, in the order the changes committed.

* Ids follow commit order: on PostgreSQL the trigger takes a transaction-scoped advisory
  lock, so writers to captured tables commit their audit rows one after another (the price
  of exact ordering); SQLite has a single writer anyway.
* ``stop(connector_deleted=True)`` (KIP-901) drops the triggers, the trigger function and
  the audit table. Any other stop (pause, stop, reconfiguration, a runtime restart) keeps
  them, so no change is missed while the connector is not running.
* Restarting reinstalls the triggers in one transaction (drop and create), picking up new
  columns without a window where changes go unrecorded.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import re
import threading
from collections.abc import Mapping
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    MetaData,
    Table,
    Text,
    inspect,
    select,
)
from sqlalchemy.engine import Connection, Engine

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    NonEmptyString,
    Range,
    Type,
)
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.datasets import ConnectorData
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    BEFORE,
    ENVELOPE_SUFFIX,
    KEY_SUFFIX,
    OP_CREATE,
    OP_DELETE,
    OP_UPDATE,
    OPERATION,
    SOURCE,
    TIMESTAMP,
    VALUE_SUFFIX,
)
from airflow_provider_connect.connectors.jdbc.config import (
    BATCH_MAX_ROWS,
    POLL_INTERVAL_MS,
    TABLE_WHITELIST,
    TOPIC_PREFIX,
    connect_engine,
    connection_config_def,
    database_checks,
    list_tables,
    report_missing_tables,
)
from airflow_provider_connect.connectors.jdbc.source import source_datasets, topic_for
from airflow_provider_connect.connectors.jdbc.types import RowConverter

AUDIT_TABLE = "audit.table.name"
OPS = {"INSERT": OP_CREATE, "UPDATE": OP_UPDATE, "DELETE": OP_DELETE}

CONFIG_DEF = (
    connection_config_def()
    .define(
        TABLE_WHITELIST,
        Type.LIST,
        validator=None,
        importance=Importance.HIGH,
        documentation="The tables whose changes are captured (each needs a primary key).",
        group="Capture",
    )
    .define(
        TOPIC_PREFIX,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="Prefixed to a table's name to give the topic of its changes.",
        group="Capture",
    )
    .define(
        AUDIT_TABLE,
        Type.STRING,
        "connect_audit",
        NonEmptyString(),
        Importance.MEDIUM,
        "The audit table the triggers write to; dropped with the triggers when the "
        "connector is deleted. Give each connector on a database its own.",
        group="Capture",
    )
    .define(
        POLL_INTERVAL_MS,
        Type.INT,
        1000,
        Range.at_least(1),
        Importance.MEDIUM,
        "How often the audit table is read when it has nothing new.",
        group="Capture",
    )
    .define(
        BATCH_MAX_ROWS,
        Type.INT,
        1000,
        Range.at_least(1),
        Importance.LOW,
        "The most changes one poll returns.",
        group="Capture",
    )
)


class AuditSourceConnector(SourceConnector):
    """One task: it owns the audit table and the triggers."""

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def validate(self, connector_configs: dict[str, str]) -> Any:
        config = super().validate(connector_configs)
        values = {v.name: v for v in config.config_values}
        if config.error_count:
            return config
        parsed = CONFIG_DEF.parse(connector_configs)
        if not parsed[TABLE_WHITELIST]:
            values[TABLE_WHITELIST].add_error_message("Name at least one table to capture")
            return config
        with database_checks(parsed, values) as engine:
            if engine.dialect.name not in AUDITS:
                values["connection.url"].add_error_message(
                    f"Change capture supports {', '.join(AUDITS)}, not {engine.dialect.name}"
                )
                return config
            existing = set(list_tables(engine, None))
            report_missing_tables(values[TABLE_WHITELIST], parsed[TABLE_WHITELIST], existing)
            for table in (t for t in parsed[TABLE_WHITELIST] if t in existing):
                if not inspect(engine).get_pk_constraint(table)["constrained_columns"]:
                    values[TABLE_WHITELIST].add_error_message(f"Table {table} has no primary key")
        return config

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return AuditSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]  # one reader keeps the audit order

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        """Offsets are audit row ids, read in commit order: a restart resumes after the last
        committed one."""
        return ExactlyOnceSupport.SUPPORTED

    def stop(self, is_deleted: bool = False) -> None:
        """Nothing held here: the task owns the audit table and drops it when deleted."""

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Its tables and their topics, named as the JDBC source names them
        (:func:`~airflow_provider_connect.connectors.jdbc.source.source_datasets`)."""
        return source_datasets(config, cluster)


class _Audit:
    """The audit table and triggers of one dialect."""

    def __init__(self, engine: Engine, audit: str) -> None:
        self.engine = engine
        self.audit = audit
        self.quote = engine.dialect.identifier_preparer.quote

    def name(self, table: str, suffix: str) -> str:
        return self.quote(re.sub(r"\W", "_", f"{self.audit}_{table}_{suffix}"))

    def install(self, connection: Connection, tables: dict[str, list[str]]) -> None:
        raise NotImplementedError

    def remove(self, connection: Connection, tables: list[str]) -> None:
        raise NotImplementedError


def advisory_lock_key(audit_table: str) -> int:
    """The PostgreSQL advisory lock the triggers writing to ``audit_table`` take: a signed
    64-bit hash of the whole name, so audit tables that share a prefix never share a lock
    (their writers serialize only with writers of the same audit table)."""
    digest = hashlib.sha256(audit_table.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class _PostgresAudit(_Audit):
    def install(self, connection: Connection, tables: dict[str, list[str]]) -> None:
        audit, function = self.quote(self.audit), self.name("fn", "audit")
        connection.exec_driver_sql(
            f"CREATE TABLE IF NOT EXISTS {audit} (id BIGSERIAL PRIMARY KEY, "
            "table_name TEXT NOT NULL, operation TEXT NOT NULL, before JSONB, after JSONB, "
            "changed_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        lock = advisory_lock_key(self.audit)
        connection.exec_driver_sql(
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
            f"BEGIN\n  PERFORM pg_advisory_xact_lock({lock});\n"
            f"  INSERT INTO {audit} (table_name, operation, before, after) VALUES (TG_TABLE_NAME, TG_OP,\n"
            "    CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,\n"
            "    CASE WHEN TG_OP IN ('INSERT', 'UPDATE') THEN to_jsonb(NEW) END);\n"
            "  RETURN NULL;\nEND\n$body$"
        )
        for table in tables:
            trigger = self.name(table, "trg")
            connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS {trigger} ON {self.quote(table)}")
            connection.exec_driver_sql(
                f"CREATE TRIGGER {trigger} AFTER INSERT OR UPDATE OR DELETE ON {self.quote(table)} "
                f"FOR EACH ROW EXECUTE FUNCTION {function}()"
            )

    def remove(self, connection: Connection, tables: list[str]) -> None:
        existing = set(inspect(connection).get_table_names())
        for table in (t for t in tables if t in existing):
            trigger = self.name(table, "trg")
            connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS {trigger} ON {self.quote(table)}")
        connection.exec_driver_sql(f"DROP FUNCTION IF EXISTS {self.name('fn', 'audit')}()")
        connection.exec_driver_sql(f"DROP TABLE IF EXISTS {self.quote(self.audit)}")


class _SqliteAudit(_Audit):
    def install(self, connection: Connection, tables: dict[str, list[str]]) -> None:
        audit = self.quote(self.audit)
        connection.exec_driver_sql(
            f"CREATE TABLE IF NOT EXISTS {audit} (id INTEGER PRIMARY KEY AUTOINCREMENT, "
            "table_name TEXT NOT NULL, operation TEXT NOT NULL, before TEXT, after TEXT, "
            "changed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
        )
        for table, columns in tables.items():
            for op in OPS:
                trigger = self.name(table, op.lower())
                images = {
                    "INSERT": ("NULL", self._image("NEW", columns)),
                    "UPDATE": (self._image("OLD", columns), self._image("NEW", columns)),
                    "DELETE": (self._image("OLD", columns), "NULL"),
                }[op]
                connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS {trigger}")
                connection.exec_driver_sql(
                    f"CREATE TRIGGER {trigger} AFTER {op} ON {self.quote(table)} BEGIN "
                    f"INSERT INTO {audit} (table_name, operation, before, after) VALUES "
                    f"({_literal(table)}, '{op}', {images[0]}, {images[1]}); END"
                )

    def _image(self, row: str, columns: list[str]) -> str:
        pairs = ", ".join(f"{_literal(c)}, {row}.{self.quote(c)}" for c in columns)
        return f"json_object({pairs})"

    def remove(self, connection: Connection, tables: list[str]) -> None:
        for table in tables:
            for op in OPS:
                connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS {self.name(table, op.lower())}")
        connection.exec_driver_sql(f"DROP TABLE IF EXISTS {self.quote(self.audit)}")


AUDITS: dict[str, type[_Audit]] = {"postgresql": _PostgresAudit, "sqlite": _SqliteAudit}


def _literal(text: str) -> str:
    """A SQL string literal (quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


SOURCE_SCHEMA = (
    SchemaBuilder.struct()
    .name("airflow_provider_connect.audit.Source")
    .field("connector", Schema.STRING_SCHEMA)
    .field("db", Schema.STRING_SCHEMA)
    .field("table", Schema.STRING_SCHEMA)
    .field("audit_id", Schema.INT64_SCHEMA)
    .build()
)


class _Captured:
    """A captured table: its row and key converters, envelope schema and topic."""

    def __init__(self, name: str, table: Table, topic: str) -> None:
        self.row = RowConverter.for_columns(name + VALUE_SUFFIX, list(table.columns), optional=True)
        self.key = RowConverter.for_columns(name + KEY_SUFFIX, list(table.primary_key.columns))
        self.topic = topic
        self.envelope = (
            SchemaBuilder.struct()
            .name(name + ENVELOPE_SUFFIX)
            .field(BEFORE, self.row.schema)
            .field(AFTER, self.row.schema)
            .field(OPERATION, Schema.STRING_SCHEMA)
            .field(SOURCE, SOURCE_SCHEMA)
            .field(TIMESTAMP, Schema.INT64_SCHEMA)
            .build()
        )

    def image(self, document: Any) -> Struct | None:
        """A before or after image from the audit table's JSON (a str on SQLite)."""
        if document is None:
            return None
        values = (
            json.loads(document, parse_float=decimal.Decimal)
            if isinstance(document, str)
            else document
        )
        return self.row.struct({n: _json_value(values.get(n)) for n, _ in self.row.fields})


def _json_value(value: Any) -> Any:
    """Undoes JSON's encoding of bytea (``\\x…`` hex)."""
    if isinstance(value, str) and value.startswith("\\x"):
        try:
            return bytes.fromhex(value[2:])
        except ValueError:
            return value
    return value


class AuditSourceTask(SourceTask):
    """Installs the audit table and triggers, then reads changes in order; see the module
    docstring."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.parsed = CONFIG_DEF.parse(props)
        self.connector = props.get("name", "")
        self.engine = connect_engine(self.parsed)
        if self.engine.dialect.name not in AUDITS:
            raise ConnectException(f"Change capture does not support {self.engine.dialect.name}")
        self.audit_name = self.parsed[AUDIT_TABLE]
        self.audits = AUDITS[self.engine.dialect.name](self.engine, self.audit_name)
        self.tables = list(self.parsed[TABLE_WHITELIST])
        self.stopping = threading.Event()
        reflected = {t: Table(t, MetaData(), autoload_with=self.engine) for t in self.tables}
        with self.engine.begin() as connection:
            self.audits.install(
                connection,
                {t: [str(c.name) for c in table.columns] for t, table in reflected.items()},
            )
        self.audit = Table(
            self.audit_name,
            MetaData(),
            Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
            Column("table_name", Text),
            Column("operation", Text),
            Column("before", Text),
            Column("after", Text),
            Column("changed_at", Text),
        )
        self.db = self.engine.url.database or ""
        self.captured = {
            t: _Captured(t, table, topic_for(self.parsed[TOPIC_PREFIX], t))
            for t, table in reflected.items()
        }
        self.partition = {"audit": self.audit_name}
        stored = self.context.offset_storage_reader().offset(self.partition) or {}
        self.last_id: int = stored.get("id", 0)

    def poll(self) -> list[SourceRecord] | None:
        query = (
            select(
                self.audit.c.id,
                self.audit.c.table_name,
                self.audit.c.operation,
                self.audit.c.before,
                self.audit.c.after,
            )
            .where(self.audit.c.id > self.last_id)
            .order_by(self.audit.c.id)
            .limit(self.parsed[BATCH_MAX_ROWS])
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        if not rows:
            self.stopping.wait(self.parsed[POLL_INTERVAL_MS] / 1000)
            return None
        records = []
        now_ms = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
        for audit_id, table, operation, before, after in rows:
            self.last_id = audit_id
            captured = self.captured.get(table)
            if captured is None:
                continue
            value = Struct(captured.envelope)
            value.put(BEFORE, captured.image(before)).put(AFTER, captured.image(after))
            value.put(OPERATION, OPS[operation]).put(TIMESTAMP, now_ms)
            value.put(
                SOURCE,
                Struct(SOURCE_SCHEMA)
                .put("connector", self.connector)
                .put("db", self.db)
                .put("table", table)
                .put("audit_id", audit_id),
            )
            image = value.get(AFTER) or value.get(BEFORE)
            key = Struct(captured.key.schema)
            for field in key.schema.fields or ():
                key.put(field.name, image.get(field.name))
            records.append(
                SourceRecord(
                    self.partition,
                    {"id": audit_id},
                    captured.topic,
                    key_schema=captured.key.schema,
                    key=key,
                    value_schema=captured.envelope,
                    value=value,
                )
            )
        return records

    def stop(self, connector_deleted: bool = False) -> None:
        """Deleted: drops the triggers and the audit table (KIP-901); otherwise keeps them."""
        self.stopping.set()
        if connector_deleted:
            with self.engine.begin() as connection:
                self.audits.remove(connection, self.tables)

    def stopped(self) -> None:
        self.engine.dispose()
