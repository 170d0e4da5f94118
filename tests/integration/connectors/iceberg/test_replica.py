"""PostgreSQL's changes into an Iceberg replica, as users run it: the change-capture
connector (Debezium's envelope, raw: no unwrapping) and the Iceberg sink in upsert mode with
the record key's fields as id columns, one standalone runtime; inserts, updates and deletes
while the runtime is killed with -9 and started again; the replica then equals its source."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.integration.connectors.iceberg.conftest import sqlite_local
from tests.integration.connectors.postgres.test_pipeline import (
    new_database,
    new_topic_prefix,
    rows,
    run,
    source_config,
)
from tests_common.broker import free_port
from tests_common.kafka import wait_until
from tests_common.postgres_cluster import PostgresCluster, postgres_cluster_or_skip
from tests_common.processes import kill_tree, rest_get, start_runtime, write_properties

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster_or_skip() as pg:
        yield pg


def test_the_replica_equals_its_source_through_a_kill_9(
    cluster: PostgresCluster, bootstrap: str, tmp_path: Path
) -> None:
    database, prefix = new_database(cluster), new_topic_prefix()
    run(
        cluster,
        database,
        "CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL, qty INT)",
        "INSERT INTO orders SELECT g, 'item ' || g, g FROM generate_series(1, 100) g",
    )
    (tmp_path / "warehouse").mkdir()
    catalog = sqlite_local(tmp_path)
    port = free_port()
    worker = {
        "bootstrap.servers": bootstrap,
        "offset.storage.file.filename": str(tmp_path / "offsets.db"),
        "listeners": f"http://127.0.0.1:{port}",
        "offset.flush.interval.ms": "300",
        "task.heartbeat.interval.ms": "200",
        "consumer.session.timeout.ms": "6000",
        "spark.master": "local[2]",
    }
    cdc = {"name": "cdc", **source_config(cluster, database, prefix)}
    replica = {
        "name": "replica",
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics": f"{prefix}.public.orders",
        "iceberg.tables": "replica.orders",
        "iceberg.tables.auto-create-enabled": "true",
        "iceberg.tables.upsert-mode-enabled": "true",
        "iceberg.control.commit.interval-ms": "1000",
        **catalog.config(),
    }
    args = [
        "standalone",
        str(write_properties(tmp_path / "worker.properties", worker)),
        str(write_properties(tmp_path / "cdc.properties", cdc)),
        str(write_properties(tmp_path / "replica.properties", replica)),
    ]
    log, done = tmp_path / "runtime.log", threading.Event()

    def changes() -> None:  # per transaction: 5 inserts, 3 updates, 2 deletes
        url = cluster.dsn.rsplit("/", 1)[0] + "/" + database
        with psycopg.connect(url, autocommit=True) as conn:
            for n in range(101, 701, 5):
                with conn.transaction():
                    conn.execute(
                        "INSERT INTO orders SELECT g, 'item ' || g, g FROM generate_series(%s::int, %s::int) g",
                        (n, n + 4),
                    )
                    conn.execute(
                        "UPDATE orders SET qty = qty + 1000 WHERE id IN (%s, %s, %s)",
                        (n - 7, n - 50, n),
                    )
                    conn.execute("DELETE FROM orders WHERE id IN (%s, %s)", (n - 30, n + 1))
                if done.wait(0.02):
                    return

    def replica_rows() -> list[tuple[int, str, int]]:
        return sorted((r["id"], r["item"], r["qty"]) for r in catalog.rows("replica.orders"))

    runtime = start_runtime(args, log)
    feeding = threading.Thread(target=changes)
    try:
        wait_until(lambda: len(replica_rows()) >= 100, 120, "the snapshot in the replica")
        feeding.start()
        wait_until(
            lambda: len(replica_rows()) >= 200, 120, "changes in the replica before the kill"
        )
        kill_tree(runtime)
        runtime = start_runtime(args, log)
        wait_until(lambda: rest_get(f"http://127.0.0.1:{port}/connectors"), 120, "REST is back")
        feeding.join()
        source = rows(cluster, database, "SELECT id, item, qty FROM orders ORDER BY id")
        wait_until(lambda: replica_rows() == source, 180, "the replica equal to its source")
    finally:
        done.set()
        if feeding.is_alive():
            feeding.join()
        kill_tree(runtime)
