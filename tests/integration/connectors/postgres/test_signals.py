"""Debezium 3.x's signal and notification channels on the PostgreSQL connector, through the
runtime as users run it (REST, the test broker, a private PostgreSQL cluster), judged from
the topics: signals sent on the kafka and file channels; incremental snapshots paused,
resumed and stopped; a blocking snapshot racing writers (no gap, no double, the topic ends
as the table is); every step's notification read from the sink channel's topic."""

from __future__ import annotations

import collections
import itertools
import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from tests.integration.conftest import create
from tests.integration.connectors.postgres import test_pipeline
from tests.integration.connectors.postgres.test_pipeline import (
    new_database,
    new_topic_prefix,
    rows,
    run,
    source_config,
    streaming,
)
from tests_common.kafka import committed_values, new_topic_named, produce, wait_until
from tests_common.postgres_cluster import PostgresCluster

pytestmark = pytest.mark.integration


cluster = test_pipeline.cluster
"""The private cluster, as test_pipeline.py's."""


class Capture:
    """A streaming connector on a new database with ``orders`` (ids 1..``count``),
    ``customers`` (ids 1..``count`` / 10) and a signal table, its notifications on a topic of
    their own."""

    def __init__(
        self, cluster: PostgresCluster, rest: TestClient, bootstrap: str, count: int, **extra: str
    ) -> None:
        self.cluster, self.rest, self.bootstrap = cluster, rest, bootstrap
        self.database = new_database(cluster)
        self.prefix = new_topic_prefix()
        self.notes = f"{self.prefix}-notifications"
        run(
            cluster,
            self.database,
            "CREATE TABLE signals (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT)",
            "CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL)",
            f"INSERT INTO orders SELECT g, 'item ' || g FROM generate_series(1, {count}) g",
            "CREATE TABLE customers (id INT PRIMARY KEY)",
            f"INSERT INTO customers SELECT generate_series(1, {count // 10})",
        )
        self.config = {
            **source_config(cluster, self.database, self.prefix),
            "table.include.list": "public.orders,public.customers,public.signals",
            "snapshot.mode": "no_data",
            "signal.data.collection": "public.signals",
            "incremental.snapshot.chunk.size": "50",
            "notification.enabled.channels": "sink,log",
            "notification.sink.topic.name": self.notes,
            **extra,
        }
        new_topic_named(bootstrap, f"{self.prefix}-signal")  # read before anything is sent
        create(rest, "cdc", self.config)
        streaming(cluster, self.database)

    def events(self, table: str = "orders") -> list[dict[str, Any]]:
        topic = f"{self.prefix}.public.{table}"
        return [json.loads(v)["payload"] for v in committed_values(self.bootstrap, topic) if v]

    def notifications(self) -> list[dict[str, Any]]:
        return [json.loads(v)["payload"] for v in committed_values(self.bootstrap, self.notes) if v]

    def types(self, signal_id: str) -> list[str]:
        return [n["type"] for n in self.notifications() if n["id"] == signal_id]

    def wait_for(self, signal_id: str, kind: str) -> list[str]:
        return wait_until(
            lambda: kind in (t := self.types(signal_id)) and t,
            120,
            f"the {kind} notification of {signal_id}",
            state=lambda: self.types(signal_id),
        )


def kafka_signal(capture: Capture, kind: str, data: dict[str, Any]) -> str:
    """Sends a signal on the kafka channel (the default topic, keyed by topic.prefix)."""
    signal_id = uuid.uuid4().hex
    value = json.dumps({"id": signal_id, "type": kind, "data": data}).encode()
    produce(capture.bootstrap, f"{capture.prefix}-signal", [value], [capture.prefix.encode()])
    return signal_id


def test_kafka_and_file_signals_run_incremental_snapshots_told_by_notifications(
    cluster: PostgresCluster, rest: TestClient, bootstrap: str, tmp_path: Path
) -> None:
    signal_file = tmp_path / "signals.txt"
    capture = Capture(
        cluster,
        rest,
        bootstrap,
        300,
        **{
            "signal.enabled.channels": "source,kafka,file",
            "signal.kafka.bootstrap.servers": bootstrap,
            "signal.file": str(signal_file),
            "signal.poll.interval.ms": "100",
        },
    )
    # a signal keyed for another connector is not this one's
    other = {"type": "execute-snapshot", "data": {"data-collections": ["public.orders"]}}
    produce(bootstrap, f"{capture.prefix}-signal", [json.dumps(other).encode()], [b"other"])
    first = kafka_signal(capture, "execute-snapshot", {"data-collections": ["public.orders"]})
    types = capture.wait_for(first, "COMPLETED")
    assert types[0] == "STARTED" and types[-2:] == ["TABLE_SCAN_COMPLETED", "COMPLETED"]
    assert types.count("IN_PROGRESS") == 7  # 300 rows in chunks of 50, and the empty last
    done = next(
        n
        for n in capture.notifications()
        if n["id"] == first and n["type"] == "TABLE_SCAN_COMPLETED"
    )
    assert done["aggregate_type"] == "Incremental Snapshot"
    assert done["additional_data"] == {
        "connector_name": capture.prefix,
        "data_collections": "public.orders",
        "scanned_collection": "public.orders",
        "total_rows_scanned": "300",
        "status": "SUCCEEDED",
    }
    reads = collections.Counter(e["after"]["id"] for e in capture.events() if e["op"] == "r")
    assert reads == collections.Counter(range(1, 301))

    # the file channel: a line the task reads and removes
    second = uuid.uuid4().hex
    signal = {
        "id": second,
        "type": "execute-snapshot",
        "data": {"data-collections": ["public.orders"]},
    }
    signal_file.write_text(json.dumps(signal) + "\n")
    capture.wait_for(second, "COMPLETED")
    assert signal_file.read_text() == ""
    reads = collections.Counter(e["after"]["id"] for e in capture.events() if e["op"] == "r")
    assert reads == collections.Counter({i: 2 for i in range(1, 301)})


def test_an_incremental_snapshot_pauses_resumes_and_stops(
    cluster: PostgresCluster, rest: TestClient, bootstrap: str
) -> None:
    """Each request is paused in the transaction that asks for it, before its first chunk,
    so the test does not race the snapshot: the stream acts on the rows in their order."""
    capture = Capture(cluster, rest, bootstrap, 2000, **{"incremental.snapshot.chunk.size": "20"})

    def source_signals(*signals: tuple[str, dict[str, Any]]) -> str:
        """Inserts the signals in one transaction; the first one's id."""
        ids = [uuid.uuid4().hex[:20] for _ in signals]
        values = ", ".join(
            f"('{i}', '{kind}', '{json.dumps(data)}')"
            for i, (kind, data) in zip(ids, signals, strict=True)
        )
        run(cluster, capture.database, f"INSERT INTO signals VALUES {values}")
        return ids[0]

    def marker_streamed(customer: int) -> None:
        """A change inserted now and streamed: the task has polled past what came before."""
        run(cluster, capture.database, f"INSERT INTO customers VALUES ({customer})")
        wait_until(
            lambda: customer in {e["after"]["id"] for e in capture.events("customers")},
            120,
            f"customer {customer} streamed",
        )

    orders = {"data-collections": ["public.orders"]}
    first = source_signals(("execute-snapshot", orders), ("pause-snapshot", {}))
    capture.wait_for(first, "PAUSED")
    marker_streamed(10_001)
    marker_streamed(10_002)  # the polls after the pause are all out
    assert capture.types(first) == ["STARTED", "PAUSED"]  # no chunk while paused
    source_signals(("resume-snapshot", {}))
    types = capture.wait_for(first, "COMPLETED")
    assert types[:3] == ["STARTED", "PAUSED", "RESUMED"]
    assert types[-2:] == ["TABLE_SCAN_COMPLETED", "COMPLETED"]
    reads = collections.Counter(e["after"]["id"] for e in capture.events() if e["op"] == "r")
    assert reads == collections.Counter(range(1, 2001))

    second = source_signals(("execute-snapshot", orders), ("pause-snapshot", {}))
    capture.wait_for(second, "PAUSED")
    source_signals(("stop-snapshot", orders))
    types = capture.wait_for(second, "ABORTED")
    assert types == ["STARTED", "PAUSED", "ABORTED"]
    stopped = next(
        n for n in capture.notifications() if n["id"] == second and n["type"] == "ABORTED"
    )
    assert stopped["additional_data"]["data_collections"] == "public.orders"
    marker_streamed(10_003)
    reads = collections.Counter(e["after"]["id"] for e in capture.events() if e["op"] == "r")
    assert reads == collections.Counter(range(1, 2001))  # nothing of the stopped one


def test_a_blocking_snapshot_racing_writers_has_no_gap_and_no_double(
    cluster: PostgresCluster, rest: TestClient, bootstrap: str
) -> None:
    capture = Capture(
        cluster,
        rest,
        bootstrap,
        3000,
        **{
            "signal.enabled.channels": "kafka",
            "signal.kafka.bootstrap.servers": bootstrap,
            "signal.poll.interval.ms": "100",
            "snapshot.max.threads": "2",  # both tables read at once, in one view
        },
    )
    done = threading.Event()
    written: list[float] = []  # each write's commit time, in ms

    def writer() -> None:  # deletes and updates of rows 1..500, inserts from 3001, until done
        dsn = cluster.dsn.rsplit("/", 1)[0] + "/" + capture.database
        with psycopg.connect(dsn, autocommit=True) as conn:
            for i in itertools.count(1):
                if i <= 500 and i % 5 == 0:
                    conn.execute("DELETE FROM orders WHERE id = %s", (i,))
                else:
                    conn.execute(
                        "UPDATE orders SET item = %s WHERE id = %s", (f"changed {i}", i % 500 + 1)
                    )
                conn.execute("INSERT INTO orders VALUES (%s, 'new')", (3000 + i,))
                written.append(time.time() * 1000)
                if done.is_set():
                    return

    def blocking(kind: str) -> list[dict[str, Any]]:
        return [
            n
            for n in capture.notifications()
            if n["aggregate_type"] == "Initial Snapshot" and n["type"] == kind
        ]

    feeding = threading.Thread(target=writer)
    feeding.start()
    try:
        wait_until(lambda: len(written) > 50, 60, "the writer writing")
        kafka_signal(
            capture,
            "execute-snapshot",
            {"data-collections": ["public.orders", "public.customers"], "type": "blocking"},
        )
        wait_until(lambda: blocking("COMPLETED"), 120, "the blocking snapshot's COMPLETED")
    finally:
        done.set()
        feeding.join()
    (started,), (completed,) = blocking("STARTED"), blocking("COMPLETED")
    during = [t for t in written if started["timestamp"] <= t <= completed["timestamp"]]
    assert during, "writes committed while the snapshot ran"
    table = dict(rows(cluster, capture.database, "SELECT id, item FROM orders"))

    def replayed() -> dict[int, str]:
        state: dict[int, str] = {}
        for event in capture.events():
            if event["op"] == "d":
                state.pop(event["before"]["id"], None)
            else:
                state[event["after"]["id"]] = event["after"]["item"]
        return state

    wait_until(lambda: replayed() == table, 120, "the topic ending as the table is")
    reads = collections.Counter(e["after"]["id"] for e in capture.events() if e["op"] == "r")
    assert max(reads.values()) == 1  # no double
    assert set(range(501, 3001)) <= set(reads)  # no gap: every row no writer touched
    customers = collections.Counter(e["after"]["id"] for e in capture.events("customers"))
    assert customers == collections.Counter(range(1, 301))
