"""Audit-trigger change capture end to end, on SQLite and PostgreSQL: changes come out in
order with their images; pause, stop and reconfiguration keep the triggers and audit table
(no change is missed), and a delete through the REST API or the Airflow teardown drops them."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    inspect,
    text,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from airflow_provider_connect.connectors.audit import _PostgresAudit
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import DeleteConnectorOperator
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.store import DeletionState
from tests.databases import database
from tests.validation import config_errors
from tests_common.kafka import new_topic_named, read_values, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Change capture supports SQLite and PostgreSQL."""
    with database(request.param, tmp_path, "captured.db") as url:
        yield url


def items(engine: Engine) -> Table:
    table = Table(
        "items",
        MetaData(),
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("name", String(40), nullable=False),
        Column("price", Numeric(8, 2)),
        Column("updated", DateTime, nullable=False),
    )
    table.create(engine)
    return table


AT = dt.datetime(2026, 11, 1, 8, 0)


def capture_config(db: str, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "AuditSourceConnector",
        "connection.url": db,
        "table.whitelist": "items",
        "topic.prefix": prefix,
        "poll.interval.ms": "100",
        "value.converter": "JsonConverter",
        "value.converter.decimal.format": "NUMERIC",
        **extra,
    }


def events(bootstrap: str, topic: str, expected: int) -> list[dict[str, Any]]:
    values = read_values(bootstrap, topic, expected, timeout_s=60)
    return [json.loads(v)["payload"] for v in values if v is not None]


def capture_objects(engine: Engine) -> tuple[bool, list[str]]:
    """Whether the audit table exists, and the names of the triggers in the database."""
    with engine.connect() as c:
        if engine.dialect.name == "sqlite":
            triggers = c.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
        else:
            triggers = c.execute(text("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"))
        names = sorted(r[0] for r in triggers)
    return inspect(engine).has_table("connect_audit"), names


def wait_for_state(connect: Connect, name: str, state: str) -> None:
    hook_state = lambda: connect.status(name)["connector"]["state"]  # noqa: E731
    wait_until(lambda: hook_state() == state, 60, f"{name} {state}")


def test_changes_in_order_with_images(
    engine: Engine, db: str, connect: Connect, bootstrap: str
) -> None:
    table = items(engine)
    prefix = f"cdc-{uuid.uuid4().hex[:8]}-"
    topic = new_topic_named(bootstrap, prefix + "items")
    connect.add_connector("capture", capture_config(db, prefix))
    wait_until(lambda: capture_objects(engine)[0], 60, "the audit table installed")
    with engine.begin() as c:
        c.execute(
            table.insert(),
            [
                {"id": i, "name": f"item {i}", "price": decimal.Decimal(i) / 2, "updated": AT}
                for i in (1, 2, 3)
            ],
        )
    with engine.begin() as c:
        c.execute(table.update().where(table.c.id == 2).values(name="renamed", price=None))
    with engine.begin() as c:
        c.execute(table.delete().where(table.c.id == 3))
    changes = events(bootstrap, topic, 5)
    assert [(e["op"], (e["after"] or e["before"])["id"]) for e in changes] == [
        ("c", 1),
        ("c", 2),
        ("c", 3),
        ("u", 2),
        ("d", 3),
    ]
    update = changes[3]
    assert update["before"]["name"] == "item 2" and update["before"]["price"] == 1.0
    assert update["after"] == {**update["before"], "name": "renamed", "price": None}
    assert changes[4]["after"] is None and changes[0]["before"] is None
    assert (
        changes[0]["source"]["table"] == "items" and changes[0]["source"]["connector"] == "capture"
    )
    assert [e["source"]["audit_id"] for e in changes] == sorted(
        e["source"]["audit_id"] for e in changes
    )


@pytest.mark.parametrize("deleted_by", ["rest", "airflow"])
def test_only_a_delete_drops_the_capture(
    engine: Engine, db: str, connect: Connect, connection: str, bootstrap: str, deleted_by: str
) -> None:
    table = items(engine)
    prefix = f"cdc-{uuid.uuid4().hex[:8]}-"
    topic = new_topic_named(bootstrap, prefix + "items")
    connect.add_connector("capture", capture_config(db, prefix))
    wait_for_state(connect, "capture", "RUNNING")
    wait_until(lambda: all(capture_objects(engine)), 60, "the audit table and triggers")
    installed = capture_objects(engine)  # installed in one transaction: all or nothing

    hook = ConnectHook(connection)
    changes = 0
    for step, change in enumerate(("pause", "stop", "reconfigure")):
        if change == "pause":
            hook.pause_connector("capture")
            hook.wait_for_state("capture", "PAUSED", timeout_s=60, poll_interval_s=0.2)
        elif change == "stop":
            hook.stop_connector("capture")
            hook.wait_for_state("capture", "STOPPED", timeout_s=60, poll_interval_s=0.2)
        else:
            hook.patch_connector("capture", {"poll.interval.ms": "150"})
        with engine.begin() as c:  # a change while not running (or being reconfigured)
            c.execute(table.insert(), [{"id": step, "name": change, "updated": AT}])
        changes += 1
        assert capture_objects(engine) == installed
        hook.resume_connector("capture")
        hook.wait_for_running("capture", timeout_s=60, poll_interval_s=0.2)
    assert [e["after"]["name"] for e in events(bootstrap, topic, changes)] == [
        "pause",
        "stop",
        "reconfigure",
    ]  # nothing missed

    if deleted_by == "rest":
        with TestClient(create_app(connect.store, connect.worker)) as client:
            assert client.delete("/connectors/capture").status_code == 204
        wait_until(
            lambda: (
                (d := connect.store.configs.deletion("capture")) is not None
                and d.state is DeletionState.DONE
            ),
            60,
            "the cleanup",
        )
    else:
        DeleteConnectorOperator(
            task_id="teardown", connector_name="capture", poll_interval=0.2, deferrable=False
        ).execute(context={})
    assert capture_objects(engine) == (False, [])
    hook.close()


def test_bad_configs_name_their_fields(engine: Engine, db: str) -> None:
    Table("no_key", MetaData(), Column("name", String(10))).create(engine)

    def errors(**extra: str) -> dict[str, list[str]]:
        return config_errors(capture_config(db, "p-", **extra))

    assert errors(**{"table.whitelist": "nope"}) == {
        "table.whitelist": ["Tables not found in the database: nope"]
    }
    assert errors(**{"table.whitelist": "no_key"}) == {
        "table.whitelist": ["Table no_key has no primary key"]
    }


def test_audit_tables_sharing_a_prefix_do_not_serialize_each_others_writers(
    tmp_path: Path,
) -> None:
    """``connect_audit_a`` and ``connect_audit_b`` take different advisory locks: a writer
    of one waits for another writer of the same audit table only."""
    with database("postgresql", tmp_path) as url:
        engine = create_engine(url, connect_args={"options": "-c lock_timeout=2s"})
        try:
            with engine.begin() as c:
                for table in ("a_items", "b_items"):
                    c.execute(text(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY)"))
                _PostgresAudit(engine, "connect_audit_a").install(c, {"a_items": ["id"]})
                _PostgresAudit(engine, "connect_audit_b").install(c, {"b_items": ["id"]})
            with engine.connect() as holder, engine.connect() as other:
                holder.begin()
                holder.execute(text("INSERT INTO a_items VALUES (1)"))  # holds audit a's lock
                with other.begin():
                    other.execute(text("INSERT INTO b_items VALUES (1)"))
                with pytest.raises(OperationalError, match="lock timeout"), other.begin():
                    other.execute(text("INSERT INTO a_items VALUES (2)"))
                holder.rollback()
        finally:
            engine.dispose()
