"""The Iceberg sink through the real runtime when things around it fail or change: its
catalog's database crashed, its S3 warehouse frozen, the connector deleted, paused and
resumed, restarted, reconfigured mid-stream. Each time every record lands in the table
exactly once (ids compared), and the tasks run again with no human action."""

from __future__ import annotations

import pickle
import socket
import time

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaPartition
from fastapi.testclient import TestClient

from airflow_provider_connect.connectors.iceberg.committer import CHUNKS, ROUND
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState
from tests.integration.connectors.iceberg.conftest import IcebergCatalog, feeding
from tests.integration.connectors.iceberg.test_iceberg_sink import ids, sink
from tests.records import order, send
from tests_common.kafka import new_topic, wait_until
from tests_common.postgres_cluster import PostgresCluster
from tests_common.s3 import S3Endpoint

pytestmark = pytest.mark.integration

OUTAGE_S = 15
"""How long an outage is held open."""


def running(connect: Connect, name: str, tasks: int) -> bool:
    """The connector and exactly ``tasks`` tasks are RUNNING."""
    status = connect.status(name)
    states = [t["state"] for t in status.get("tasks") or []]
    return status["connector"]["state"] == "RUNNING" and states == ["RUNNING"] * tasks


def hold_outage(connect: Connect, name: str) -> None:
    """Keeps the outage going for ``OUTAGE_S``, checking meanwhile that no task fails (the
    sink raises RetriableException, which the runtime retries)."""
    deadline = time.monotonic() + OUTAGE_S
    while time.monotonic() < deadline:
        failed = [t for t in connect.status(name).get("tasks") or [] if t["state"] == "FAILED"]
        assert not failed, failed
        time.sleep(0.5)


def channel(connect: Connect, name: str) -> list[str]:
    """The connector's channel messages, readably (a failing test's state)."""
    shown = []
    for m in connect.store.channels.messages(name):
        payload = pickle.loads(m.payload)
        if m.kind == CHUNKS:
            payload = [(c.partition, c.start, c.end) for c in payload]
        elif m.kind == ROUND:
            payload = payload.positions
        shown.append(f"{m.id} {m.kind} task {m.task_id} gen {m.generation}: {payload}")
    return shown


def kafka_positions(bootstrap: str, topic: str, name: str) -> str:
    """The topic's end offsets and where the connector's group is (a failing test's state)."""
    host, port = bootstrap.split(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        return f"the broker does not answer on {bootstrap}: {e}"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"connect-{name}"})
    try:
        tps = [KafkaPartition(topic, p) for p in (0, 1)]
        ends = [consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in tps]
        group = [tp.offset for tp in consumer.committed(tps, timeout=10)]
        return f"topic ends {ends}, group at {group}"
    finally:
        consumer.close()


def every_record_once(
    connect: Connect, bootstrap: str, name: str, catalog: IcebergCatalog, table: str, total: int
) -> None:
    table_topic = name.removeprefix("iceberg-")
    """Waits for ``total`` rows in ``table``, then checks they are records 0..total-1, each
    once."""
    wait_until(
        lambda: len(catalog.rows(table)) >= total,
        60,
        f"{total} rows in {table}",
        interval_s=0.5,
        state=lambda: (
            f"{len(catalog.rows(table))} rows; {connect.status(name)}; "
            f"channel: {channel(connect, name)}; {kafka_positions(bootstrap, table_topic, name)}"
        ),
    )
    assert ids(catalog, table) == list(range(total))


def started(
    connect: Connect, bootstrap: str, catalog: IcebergCatalog, topic: str, table: str, **extra: str
) -> str:
    """Sends records 0..99, creates the sink of ``topic`` into ``table`` (its first table when
    several) and returns its name once the table holds them."""
    send(bootstrap, topic, [order(i) for i in range(100)])
    name = f"iceberg-{topic}"
    connect.add_connector(name, sink(catalog, topic, table, **extra))
    first = table.split(",")[0]
    wait_until(lambda: len(catalog.rows(first)) >= 100, 90, "the first 100 rows", interval_s=0.5)
    return name


def test_deleting_the_connector_keeps_its_tables_and_removes_its_channel(
    connect: Connect, bootstrap: str, local_catalog: IcebergCatalog
) -> None:
    topic = new_topic(bootstrap, partitions=2)
    name = started(
        connect, bootstrap, local_catalog, topic, "db.kept_a,db.kept_b", **{"tasks.max": "2"}
    )
    wait_until(lambda: len(local_catalog.rows("db.kept_b")) >= 100, 30, "db.kept_b", interval_s=0.5)
    assert connect.store.channels.messages(name), "the committed positions are in the channel"
    connect.delete_connector(name)
    wait_until(
        lambda: (d := connect.store.configs.deletion(name)) and d.state is DeletionState.DONE,
        60,
        "the deletion done",
    )
    assert connect.store.channels.messages(name) == []
    assert ids(local_catalog, "db.kept_a") == ids(local_catalog, "db.kept_b") == list(range(100))


@pytest.mark.parametrize(
    "tasks",
    [1, pytest.param(2, marks=pytest.mark.faults, id="2")],
    ids=lambda n: str(n),
)
def test_pause_resume_and_restart_mid_stream(
    connect: Connect, bootstrap: str, rest: TestClient, local_catalog: IcebergCatalog, tasks: int
) -> None:
    topic = new_topic(bootstrap, partitions=2)
    name = started(
        connect, bootstrap, local_catalog, topic, "db.paused", **{"tasks.max": str(tasks)}
    )
    with feeding(bootstrap, topic, range(100, 1500)):
        assert rest.put(f"/connectors/{name}/pause").status_code == 202
        wait_until(
            lambda: {t["state"] for t in connect.status(name)["tasks"]} == {"PAUSED"}, 30, "paused"
        )
        assert rest.put(f"/connectors/{name}/resume").status_code == 202
        wait_until(lambda: running(connect, name, tasks), 30, "resumed")
        restart = rest.post(f"/connectors/{name}/restart", params={"includeTasks": "true"})
        assert restart.status_code in (200, 202, 204), restart.text
        wait_until(lambda: running(connect, name, tasks), 60, "RUNNING after the restart")
        every_record_once(connect, bootstrap, name, local_catalog, "db.paused", 1500)


@pytest.mark.parametrize(
    "tasks",
    [1, pytest.param(2, marks=pytest.mark.faults, id="2")],
    ids=lambda n: str(n),
)
def test_reconfiguring_mid_stream(
    connect: Connect, bootstrap: str, local_catalog: IcebergCatalog, tasks: int
) -> None:
    """A new commit interval (and, in the long variant, a second task): a new generation of
    tasks takes over from the committed positions."""
    topic = new_topic(bootstrap, partitions=2)
    name = started(connect, bootstrap, local_catalog, topic, "db.reconfigured")
    with feeding(bootstrap, topic, range(100, 1500)):
        config = sink(local_catalog, topic, "db.reconfigured")
        interval = {"iceberg.control.commit.interval-ms": "500"}
        connect.update_connector(name, {**config, **interval, "tasks.max": str(tasks)})
        wait_until(lambda: running(connect, name, tasks), 60, f"{tasks} tasks RUNNING")
        every_record_once(connect, bootstrap, name, local_catalog, "db.reconfigured", 1500)


def test_a_crash_of_the_catalogs_database_is_waited_out(
    catalog_cluster: PostgresCluster,
    cluster_catalog: IcebergCatalog,
    connect: Connect,
    bootstrap: str,
) -> None:
    """The catalog fixtures come first: the runtime stops before the catalog goes."""
    topic = new_topic(bootstrap, partitions=2)
    name = started(connect, bootstrap, cluster_catalog, topic, "db.outage", **{"tasks.max": "2"})
    with feeding(bootstrap, topic, range(100, 1000)):
        with catalog_cluster.crashed():
            hold_outage(connect, name)
        every_record_once(connect, bootstrap, name, cluster_catalog, "db.outage", 1000)
    wait_until(lambda: running(connect, name, 2), 30, "both tasks RUNNING")


def test_a_frozen_s3_warehouse_is_waited_out(
    s3: S3Endpoint, postgres_s3_catalog: IcebergCatalog, connect: Connect, bootstrap: str
) -> None:
    """The catalog fixtures come first: the runtime stops before the catalog goes."""
    topic = new_topic(bootstrap, partitions=2)
    name = started(
        connect, bootstrap, postgres_s3_catalog, topic, "db.frozen", **{"tasks.max": "2"}
    )
    with feeding(bootstrap, topic, range(100, 1000)):
        s3.freeze()
        try:
            hold_outage(connect, name)
        finally:
            s3.thaw()
        every_record_once(connect, bootstrap, name, postgres_s3_catalog, "db.frozen", 1000)
    wait_until(lambda: running(connect, name, 2), 30, "both tasks RUNNING")
