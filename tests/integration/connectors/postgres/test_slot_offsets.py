"""The PostgreSQL connector's replication slot and stored offsets, as Debezium 3.4 defines
them: ``lsn.flush.mode`` (the task confirms what was stored, or never) and
``offset.mismatch.strategy`` (what a start does when the stored offset and the slot's
``confirmed_flush_lsn`` disagree, in each direction), against a private PostgreSQL 15
cluster; the slot is put ahead with ``pg_replication_slot_advance``, the offset ahead by a
run under ``lsn.flush.mode=manual``. Harness tests for the matrix, one test through the
runtime's REST API and broker.

psycopg2 (like pgjdbc with Debezium's ``connector_and_driver``) confirms a keepalive's
position by itself while every message it received is confirmed: before a session's first
change arrives it may move the slot over log that carries no captured change, whatever the
mode. So a slot "left where it is" is judged as never passing the first streamed change."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.connect.errors import ConfigException, ConnectException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import (
    ConnectorHarness,
    FakeOffsetReader,
    SourceTaskHarness,
)
from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.source import (
    PostgresConnector,
    PostgresConnectorTask,
)
from tests.integration.conftest import create
from tests.integration.connectors.postgres.test_source import Db, after, cluster, db
from tests_common.kafka import committed_values
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

__all__ = ["cluster", "db"]  # the fixtures test_source.py defines


def slot_query(db: Db, column: str) -> str:
    return f"SELECT {column} FROM pg_replication_slots WHERE slot_name = 'slot_{db.name}'"


def confirmed(db: Db) -> int:
    """The slot's confirmed_flush_lsn now."""
    return int(db.one(slot_query(db, "(confirmed_flush_lsn - '0/0')::bigint")))


def slot_lsn(db: Db) -> int:
    """The slot's confirmed_flush_lsn once no session streams it (final)."""
    released = slot_query(db, "active")
    wait_until(lambda: db.one(released) is False, 20, "the slot released by its session")
    return confirmed(db)


def current_lsn(db: Db) -> int:
    return int(db.one("SELECT (pg_current_wal_lsn() - '0/0')::bigint"))


def lsn_commit(record: SourceRecord) -> int:
    return int((record.source_offset or {})["lsn_commit"])


def stream_rows(db: Db, offsets: FakeOffsetReader, ids: range, **settings: str) -> int:
    """Runs the task (``no_data``) until the rows ``ids``, inserted one transaction each, are
    streamed and committed; returns the last one's commit LSN."""
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start({**db.config, "snapshot.mode": "no_data", **settings})
        harness.poll(polls=3)
        db.run(*(f"INSERT INTO t VALUES ({i})" for i in ids))
        records = harness.poll(records=len(ids), timeout=20)
        harness.commit()
    return lsn_commit(records[-1])


@pytest.mark.parametrize(
    ("settings", "confirms"),
    [
        ({}, True),
        ({"lsn.flush.mode": "connector_and_driver"}, True),
        ({"lsn.flush.mode": "manual"}, False),
        ({"flush.lsn.source": "false"}, False),  # Debezium's deprecated switch: manual
        ({"flush.lsn.source": "false", "lsn.flush.mode": "connector"}, True),  # the new one wins
    ],
    ids=["connector", "connector_and_driver", "manual", "flush.lsn.source", "both"],
)
def test_lsn_flush_mode(db: Db, settings: dict[str, str], confirms: bool) -> None:
    db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start({**db.config, "snapshot.mode": "no_data", **settings})
        harness.poll(polls=3)
        db.run("INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)")
        records = harness.poll(records=3, timeout=20)
        harness.commit()
    first, last = lsn_commit(records[0]), lsn_commit(records[-1])
    if confirms:  # after the commit: everything stored, the slot at the last record
        assert slot_lsn(db) == last
    else:  # nothing it streamed was ever confirmed
        assert slot_lsn(db) <= first < last


def advance_slot_to_the_end(db: Db) -> int:
    slot_lsn(db)  # released
    db.run(f"SELECT pg_replication_slot_advance('slot_{db.name}', pg_current_wal_lsn())")
    return slot_lsn(db)


@pytest.mark.parametrize(
    ("strategy", "mode", "outcome"),
    [
        ("no_validation", "no_data", "stored"),
        ("trust_offset", "no_data", "fails"),
        ("trust_offset", "when_needed", "snapshot"),
        ("trust_slot", "no_data", "slot"),
        ("trust_slot", "when_needed", "slot"),
        ("trust_greater_lsn", "no_data", "slot"),
    ],
)
def test_slot_ahead_of_the_stored_offset(
    db: Db, strategy: str, mode: str, outcome: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Debezium's behaviour where the slot passed the offset (a manual advance, a recreated
    slot): no_validation streams (the server starts at the slot), trust_offset fails (or
    snapshots under when_needed), trust_slot and trust_greater_lsn move the offset to the
    slot. Either way row 2, committed between, is not streamed."""
    db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    offsets = FakeOffsetReader()
    stored = stream_rows(db, offsets, range(1, 2))
    db.run("INSERT INTO t VALUES (2)")
    ahead = advance_slot_to_the_end(db)
    config = {**db.config, "snapshot.mode": mode, "offset.mismatch.strategy": strategy}
    caplog.set_level(logging.INFO, "airflow_provider_connect.connectors.postgres")
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        if outcome == "fails":
            with pytest.raises(ConnectException, match="no longer available on the server"):
                harness.poll(polls=1)
            assert "Last recorded offset is no longer available on the server." in caplog.text
            return
        first = harness.poll(polls=5)
        if outcome == "snapshot":
            assert sorted(after(r)["id"] for r in first) == [1, 2]
            return
        assert first == []
        task: Any = harness.task
        position = task.offsets.position.lsn_commit
        assert position == (ahead if outcome == "slot" else stored)
        ahead_log = "streaming from the slot" if outcome == "slot" else "are not read"
        assert ahead_log in caplog.text
        db.run("INSERT INTO t VALUES (3)")
        assert [after(r)["id"] for r in harness.poll(records=1, timeout=20)] == [3]


@pytest.mark.parametrize(
    ("strategy", "settings", "advanced"),
    [
        ("no_validation", {}, False),
        ("trust_offset", {}, True),
        ("trust_offset", {"lsn.flush.mode": "manual"}, False),  # never advanced under manual
        ("trust_slot", {}, False),
        ("trust_greater_lsn", {}, True),
    ],
    ids=["no_validation", "trust_offset", "trust_offset-manual", "trust_slot", "greater_lsn"],
)
def test_stored_offset_ahead_of_the_slot(
    db: Db, strategy: str, settings: dict[str, str], advanced: bool
) -> None:
    """trust_offset and trust_greater_lsn advance the slot to the stored offset at the start
    (before anything is committed), the others leave it; none streams again what was
    stored."""
    db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    offsets = FakeOffsetReader()
    stored = stream_rows(db, offsets, range(1, 3), **{"lsn.flush.mode": "manual"})
    behind = slot_lsn(db)
    assert behind < stored
    config = {
        **db.config,
        "snapshot.mode": "no_data",
        "offset.mismatch.strategy": strategy,
        **settings,
    }
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        assert harness.poll(polls=5) == []  # rows 1 and 2 were stored
    assert slot_lsn(db) == (stored if advanced else behind)


def test_no_stored_offset_streams_from_the_slot_under_every_strategy(db: Db) -> None:
    """Nothing to compare: each strategy streams from the slot's position, whatever the slot
    passed (here, rows committed before it)."""
    db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    stream_rows(db, FakeOffsetReader(), range(1, 2))
    strategies = ("no_validation", "trust_offset", "trust_slot", "trust_greater_lsn")
    for row, strategy in enumerate(strategies, start=2):
        db.run(f"INSERT INTO t VALUES ({-row})")  # passed by the slot: never streamed
        advance_slot_to_the_end(db)
        config = {**db.config, "snapshot.mode": "no_data", "offset.mismatch.strategy": strategy}
        with SourceTaskHarness(PostgresConnectorTask) as harness:  # no offsets
            harness.start(config)
            assert harness.poll(polls=3) == []
            db.run(f"INSERT INTO t VALUES ({row})")
            assert [after(r)["id"] for r in harness.poll(records=1, timeout=20)] == [row]


def test_unknown_values_are_refused_naming_the_field(db: Db) -> None:
    bad = {**db.config, "lsn.flush.mode": "sometimes", "offset.mismatch.strategy": "trust_me"}
    with ConnectorHarness(PostgresConnector) as harness:
        errors = harness.validate(bad)
    assert set(errors) == {"lsn.flush.mode", "offset.mismatch.strategy"}
    assert "connector, manual, connector_and_driver" in errors["lsn.flush.mode"][0]
    assert "trust_greater_lsn" in errors["offset.mismatch.strategy"][0]
    with pytest.raises(ConfigException, match="lsn.flush.mode"):
        PostgresConnectorConfig.of(bad)
    # Debezium's values in any case; connector_and_driver heartbeats when nothing else would
    config = PostgresConnectorConfig.of(
        {
            **db.config,
            "lsn.flush.mode": "CONNECTOR_AND_DRIVER",
            "offset.mismatch.strategy": "Trust_Slot",
        }
    )
    assert (config.lsn_flush_mode, config.offset_mismatch_strategy) == (
        "connector_and_driver",
        "trust_slot",
    )
    assert config.heartbeat_interval_s == 600
    assert PostgresConnectorConfig.of(db.config).heartbeat_interval_s == 0


def test_manual_then_trust_greater_lsn_through_the_runtime(
    db: Db, rest: TestClient, bootstrap: str
) -> None:
    """Through REST and the broker: under manual the runtime stores the offsets and the slot
    stays before the first change; reconfigured to connector with trust_greater_lsn, the
    restarted task advances the slot to the stored offset, streams only the new row, and the
    slot follows its commits."""
    db.run("CREATE TABLE t (id INT PRIMARY KEY)")
    config = {
        **{k: v for k, v in db.config.items() if k != "name"},
        "snapshot.mode": "no_data",
        "topic.prefix": db.name,
        "lsn.flush.mode": "manual",
        "offset.mismatch.strategy": "trust_greater_lsn",
    }
    create(rest, "cdc", config)
    topic = f"{db.name}.public.t"

    def stored_lsn() -> int:
        offsets = rest.get("/connectors/cdc/offsets").json()["offsets"]
        return int(offsets[0]["offset"]["lsn_commit"]) if offsets else 0

    def ids() -> list[int]:
        values = committed_values(bootstrap, topic)
        return [json.loads(v)["payload"]["after"]["id"] for v in values if v]

    wait_until(db.slot_exists, 120, "the task streaming its slot")
    db.run("INSERT INTO t VALUES (1)")
    before_row_2 = current_lsn(db)
    db.run("INSERT INTO t VALUES (2)")
    wait_until(lambda: stored_lsn() > before_row_2, 60, "row 2's offset stored")
    stored = stored_lsn()
    assert confirmed(db) < before_row_2  # manual: what it streamed was never confirmed

    config["lsn.flush.mode"] = "connector"
    assert rest.put("/connectors/cdc/config", json=config).status_code == 200
    wait_until(lambda: confirmed(db) >= stored, 60, "the slot advanced to the stored offset")
    db.run("INSERT INTO t VALUES (3)")
    wait_until(lambda: stored_lsn() > stored, 60, "row 3's offset stored")
    wait_until(lambda: confirmed(db) == stored_lsn(), 60, "the slot following the commits")
    assert sorted(ids()) == [1, 2, 3]  # each once (keyed across partitions)
