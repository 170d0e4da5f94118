"""The PostgreSQL connector's connections when a network partition cuts the captured
database off (a private cluster in a host of the test's own, ``tests_common.netns``: every
packet dropped, no reset): the replication stream and an ordinary connection waiting for a
query's answer fail within about ``database.connect.timeout.ms`` (TCP keepalives and
tcp_user_timeout, ``database.tcpKeepAlive``) instead of waiting the kernel's ~15 minutes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.database import Database, require_psycopg2
from airflow_provider_connect.connectors.postgres.stream import ReplicationStream
from tests_common import netns
from tests_common.postgres_cluster import PostgresCluster, postgres_cluster_or_skip
from tests_common.processes import wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())
    ),
]

BOUND_S = 4
"""database.connect.timeout.ms, in seconds: how long a silent network may go unnoticed."""
SLACK_S = 3
"""What the test allows beyond the bound (a keepalive interval, scheduling)."""


@pytest.fixture
def cluster() -> Iterator[PostgresCluster]:
    with netns.NetworkHost() as host, postgres_cluster_or_skip(host=host) as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as admin:
            admin.execute("CREATE TABLE t (id int PRIMARY KEY)")
            admin.execute("CREATE PUBLICATION p FOR ALL TABLES")
        yield cluster


def parameters(cluster: PostgresCluster) -> dict[str, object]:
    """The connector's libpq parameters of the cluster (keepalives on, Debezium's default)."""
    return PostgresConnectorConfig.of(
        {
            "name": "cut",
            "topic.prefix": "cut",
            "database.hostname": cluster.address,
            "database.port": str(cluster.port),
            "database.user": "postgres",
            "database.dbname": "postgres",
            "database.connect.timeout.ms": str(BOUND_S * 1000),
        }
    ).parameters


def test_a_stream_read_fails_within_the_bound(cluster: PostgresCluster) -> None:
    """A stream that delivered a change is cut off while idle: its reads fail by the bound
    (the status updates psycopg2 sends go unacknowledged)."""
    stream = ReplicationStream(parameters(cluster), "s", 1.0)
    try:
        stream.create_slot(export_snapshot=False)
        stream.start("p", 0)
        with psycopg.connect(cluster.dsn, autocommit=True) as writer:
            writer.execute("INSERT INTO t VALUES (1)")
        wait_until(lambda: stream.read(100, 0.2), 20, "a change streamed")
        assert cluster.host is not None
        with cluster.host.partitioned():
            cut_at = time.monotonic()
            with pytest.raises(require_psycopg2().Error):
                while time.monotonic() - cut_at < BOUND_S + SLACK_S + 15:
                    stream.read(100, 0.5)
            took = time.monotonic() - cut_at
    finally:
        stream.close()
    assert took < BOUND_S + SLACK_S


def test_a_query_waiting_for_its_answer_fails_within_the_bound(cluster: PostgresCluster) -> None:
    """A connection waiting for a query's answer sends nothing: only the keepalive probes
    find the network gone."""
    database = Database(parameters(cluster))
    pid = database.query("SELECT pg_backend_pid()")[0][0]
    failed: list[tuple[BaseException, float]] = []

    def wait_for_answer() -> None:
        try:
            database.query("SELECT pg_sleep(600)")
        except require_psycopg2().Error as e:
            failed.append((e, time.monotonic()))

    waiter = threading.Thread(target=wait_for_answer, daemon=True)
    waiter.start()
    with psycopg.connect(cluster.dsn, autocommit=True) as watcher:
        wait_until(
            lambda: (
                watcher.execute(
                    "SELECT wait_event FROM pg_stat_activity WHERE pid = %s", (pid,)
                ).fetchone()
                == ("PgSleep",)
            ),
            20,
            "the query under way",
        )
    assert cluster.host is not None
    try:
        with cluster.host.partitioned():
            cut_at = time.monotonic()
            waiter.join(BOUND_S + SLACK_S + 15)
    finally:
        if waiter.is_alive():  # healed: end the query, or closing would wait for it
            with psycopg.connect(cluster.dsn, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            waiter.join(30)
        database.close()
    assert failed, "the query still waits"
    assert failed[0][1] - cut_at < BOUND_S + SLACK_S
