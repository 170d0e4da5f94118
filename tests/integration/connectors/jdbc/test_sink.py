"""The JDBC sink end to end through the runtime, against SQLite, PostgreSQL and MariaDB:
records in, rows out, counted and compared; exactly-once across a restart; per-field errors
for bad configs."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import uuid
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Engine, make_url

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.runtime import Connect
from tests.databases import POSTGRES_ADMIN_URL, postgres_database
from tests.records import order, send
from tests.validation import config_errors
from tests_common.kafka import new_topic, wait_until

pytestmark = pytest.mark.integration


def sink_config(db: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "JdbcSinkConnector",
        "connection.url": db,
        "topics": topic,
        "value.converter.decimal.format": "NUMERIC",
        **extra,
    }


def rows(engine: Engine, table: str) -> list[dict[str, Any]]:
    with engine.connect() as c:
        t = Table(table, MetaData(), autoload_with=c)
        return [dict(r._mapping) for r in c.execute(select(t).order_by(t.c.id))]


def row_count(engine: Engine, table: str) -> int:
    """The table's rows (0 before it exists)."""
    if not inspect(engine).has_table(table):
        return 0
    with engine.connect() as c:
        t = Table(table, MetaData(), autoload_with=c)
        return c.execute(select(func.count()).select_from(t)).scalar_one()


def test_insert_with_auto_create(engine: Engine, db: str, connect: Connect, bootstrap: str) -> None:
    topic = new_topic(bootstrap)
    send(bootstrap, topic, [order(i) for i in range(1, 501)])
    connect.add_connector("to-db", sink_config(db, topic, **{"auto.create": "true"}))
    wait_until(lambda: row_count(engine, topic) == 500, 60, "500 rows")
    stored = rows(engine, topic)
    assert [r["id"] for r in stored] == list(range(1, 501))
    assert stored[3]["amount"] == decimal.Decimal("1.00") and stored[4]["amount"] is None
    assert stored[0]["name"] == "order 1" and stored[0]["at"] == dt.datetime(2026, 11, 1, 12, 30)


def test_upsert_by_record_key_with_deletes(
    engine: Engine, db: str, connect: Connect, bootstrap: str
) -> None:
    topic = new_topic(bootstrap)
    send(bootstrap, topic, [order(i) for i in range(1, 101)], keys=list(range(1, 101)))
    send(bootstrap, topic, [order(i, "updated") for i in range(1, 51)], keys=list(range(1, 51)))
    send(bootstrap, topic, [None] * 10, keys=list(range(91, 101)))
    config = sink_config(
        db,
        topic,
        **{
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "delete.enabled": "true",
            "auto.create": "true",
        },
    )
    connect.add_connector("upserts", config)
    wait_until(lambda: row_count(engine, topic) == 90, 60, "90 rows")
    wait_until(
        lambda: sum(r["name"] == "updated" for r in rows(engine, topic)) == 50, 30, "updates"
    )
    assert {r["id"] for r in rows(engine, topic)} == set(range(1, 91))


def test_update_mode_and_auto_evolve(
    engine: Engine, db: str, connect: Connect, bootstrap: str
) -> None:
    topic = new_topic(bootstrap)
    table = Table(
        topic,
        MetaData(),
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("name", String(50)),
    )
    table.create(engine)
    with engine.begin() as c:
        c.execute(table.insert(), [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}])
    richer = SchemaBuilder.struct().name("order").field("id", Schema.INT32_SCHEMA)
    richer = (
        richer.field("name", Schema.STRING_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    send(bootstrap, topic, [Struct(richer).put("id", 2).put("name", "TWO").put("note", "evolved")])
    config = sink_config(
        db,
        topic,
        **{
            "insert.mode": "update",
            "pk.mode": "record_value",
            "pk.fields": "id",
            "auto.evolve": "true",
        },
    )
    connect.add_connector("updates", config)
    wait_until(lambda: rows(engine, topic)[-1].get("note") == "evolved", 60, "row 2 updated")
    assert rows(engine, topic) == [
        {"id": 1, "name": "one", "note": None},
        {"id": 2, "name": "TWO", "note": "evolved"},
    ]


def test_exactly_once_across_a_restart(
    engine: Engine, db: str, worker_props: dict[str, str], spark: Any, bootstrap: str
) -> None:
    """Records keep arriving while the runtime stops and another starts; the table, which
    has no key to absorb duplicates, ends with each record exactly once."""
    topic = new_topic(bootstrap)
    total, step = 6_000, 200
    done = threading.Event()

    def write() -> None:
        for first in range(1, total + 1, step):
            send(bootstrap, topic, [order(i) for i in range(first, first + step)])
            if done.wait(0.05):
                return

    writer = threading.Thread(target=write)
    writer.start()
    config = sink_config(db, topic, **{"auto.create": "true", "exactly.once.enabled": "true"})
    # A consumer group of its own (connect-<name>): the broker outlives the test, and a
    # group the previous parameter's runtimes used can hold a newcomer's first join back.
    name = f"once-{topic}"
    try:
        first = Connect("first", worker_props)
        first.start()
        try:
            first.add_connector(name, config)
            wait_until(
                lambda: row_count(engine, topic) >= 1000,
                60,
                "some rows written",
                state=lambda: first.status(name),
            )
        finally:
            first.stop()
        second = Connect("second", worker_props)
        second.start()
        try:
            wait_until(
                lambda: row_count(engine, topic) == total,
                120,
                f"{total} rows",
                state=lambda: second.status(name),
            )
        finally:
            second.stop()
    finally:
        done.set()
        writer.join()
    assert [r["id"] for r in rows(engine, topic)] == list(range(1, total + 1))


def test_bad_configs_name_their_fields(engine: Engine, db: str) -> None:
    def errors(**extra: str) -> dict[str, list[str]]:
        return config_errors(sink_config(db, "orders", **extra))

    assert "insert.mode" in errors(**{"insert.mode": "merge", "auto.create": "true"})
    upsert = errors(**{"insert.mode": "upsert", "auto.create": "true"})
    assert list(upsert) == ["pk.mode"] and "needs a primary key" in upsert["pk.mode"][0]
    deletes = errors(**{"delete.enabled": "true", "pk.mode": "record_value", "auto.create": "true"})
    assert list(deletes) == ["delete.enabled"]
    missing = errors()
    assert list(missing) == ["table.name.format"] and "orders" in missing["table.name.format"][0]


def test_a_database_outage_is_retried_without_loss(connect: Connect, bootstrap: str) -> None:
    """The sink's database login is disabled and its sessions are killed mid-stream, then
    enabled again: puts fail and are retried (max.retries, retry.backoff.ms), the task stays
    RUNNING, and every record arrives (upsert by id makes replays harmless)."""
    topic, total, step = new_topic(bootstrap), 4_000, 200
    role = f"sink_{uuid.uuid4().hex[:8]}"
    roles = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with postgres_database() as url:
            admin = create_engine(url, isolation_level="AUTOCOMMIT")
            try:
                _outage(connect, bootstrap, topic, admin, url, role, total, step)
            finally:
                connect.delete_connector("outage")
                wait_until(
                    lambda: (d := connect.store.configs.deletion("outage")) and d.finished_at,
                    60,
                    "the connector deleted",
                )
                admin.dispose()
    finally:
        with roles.connect() as c:
            c.execute(text(f"DROP ROLE IF EXISTS {role}"))
        roles.dispose()


def _outage(
    connect: Connect,
    bootstrap: str,
    topic: str,
    admin: Engine,
    url: str,
    role: str,
    total: int,
    step: int,
) -> None:
    with admin.connect() as c:
        c.execute(text(f"CREATE ROLE {role} LOGIN"))
        c.execute(text(f"GRANT CREATE, USAGE ON SCHEMA public TO {role}"))
    outage = threading.Event()

    def write() -> None:
        for first in range(1, total + 1, step):
            send(bootstrap, topic, [order(i) for i in range(first, first + step)])
            if first + step > total // 2:
                outage.wait(60)  # the second half is written while the database is away

    config = sink_config(
        make_url(url).set(username=role).render_as_string(hide_password=False),
        topic,
        **{
            "auto.create": "true",
            "insert.mode": "upsert",
            "pk.mode": "record_value",
            "pk.fields": "id",
            "max.retries": "1000",
            "retry.backoff.ms": "200",
        },
    )
    writer = threading.Thread(target=write)
    writer.start()
    try:
        connect.add_connector("outage", config)
        wait_until(lambda: row_count(admin, topic) >= step, 60, "rows before the outage")
        with admin.connect() as c:
            c.execute(text(f"ALTER ROLE {role} NOLOGIN"))
            c.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = :r"),
                {"r": role},
            )
    finally:
        outage.set()
        writer.join()
    during = row_count(admin, topic)  # the second half was all sent after the logins stopped
    assert during < total
    with admin.connect() as c:
        c.execute(text(f"ALTER ROLE {role} LOGIN"))
    wait_until(lambda: row_count(admin, topic) == total, 120, f"{total} rows after the outage")
    assert connect.status("outage")["tasks"][0]["state"] == "RUNNING"
    assert [r["id"] for r in rows(admin, topic)] == list(range(1, total + 1))
    print(f"database outage: {during} of {total} rows while away, {total} of {total} after")
