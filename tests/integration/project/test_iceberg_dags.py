"""The Iceberg example DAGs run for real with ``dag.test()``: ``postgres_to_iceberg``
replicates a table of a private PostgreSQL cluster (``wal_level = logical``) into an Iceberg
table of the examples' SQL catalog on SQLite, through a live runtime, the test broker and
Spark; ``iceberg_replica_report`` then reports the table's snapshot."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from airflow_provider_connect.operators.connector import DeleteConnectorOperator
from airflow_provider_connect.store import MetadataStore
from tests.integration.project.test_dags import (
    airflow_db,
    assert_cleaned_up,
    load_dag,
    stack,
    task_states,
)
from tests_common.broker import free_port
from tests_common.kafka import wait_until
from tests_common.postgres_cluster import PostgresCluster

__all__ = ["airflow_db", "stack"]  # the fixtures, used here by name

pytestmark = pytest.mark.integration


def test_postgres_to_iceberg_replicates_changes_and_the_report_sees_the_commits(
    stack: None, store: MetadataStore, pg_cluster: PostgresCluster
) -> None:
    """The DAG snapshots a table and streams its changes into the Iceberg replica, upserted
    by id and deleted on a delete; the report reads the replica's snapshot; a teardown's
    delete of the capture connector then drops its slot (KIP-901)."""
    from iceberg_replica import CATALOG, TABLE  # beside the DAGs, on sys.path (conftest)
    from pyiceberg.catalog import load_catalog

    source = f"dagice{free_port()}"
    admin = psycopg.connect(pg_cluster.dsn, autocommit=True)
    admin.execute(f"CREATE DATABASE {source}")
    admin.close()
    url = f"{pg_cluster.dsn.rsplit('/', 1)[0]}/{source}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL)")
        conn.execute("INSERT INTO orders SELECT g, 'item ' || g FROM generate_series(1, 100) g")
    name = f"lake{free_port()}"
    dag_run = load_dag("postgres_to_iceberg").test(
        run_conf={"name": name, "port": pg_cluster.port, "dbname": source}
    )
    assert str(dag_run.state) == "success", task_states(dag_run)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE orders SET item = 'changed' WHERE id <= 10")
        conn.execute("DELETE FROM orders WHERE id > 90")
        expected = conn.execute("SELECT id, item FROM orders ORDER BY id").fetchall()

    def replicated() -> list[tuple[Any, ...]]:
        table = load_catalog("iceberg", **CATALOG).load_table(TABLE)
        rows = table.scan(selected_fields=("id", "item")).to_arrow().to_pylist()
        return sorted((r["id"], r["item"]) for r in rows)

    wait_until(lambda: replicated() == expected, 180, "the replica equal to the source")

    report_run = load_dag("iceberg_replica_report").test()
    assert str(report_run.state) == "success", task_states(report_run)
    (report,) = report_run.get_task_instances()
    result = report.xcom_pull(task_ids="report")
    snapshot = load_catalog("iceberg", **CATALOG).load_table(TABLE).current_snapshot()
    assert snapshot is not None and result["snapshot_id"] == snapshot.snapshot_id
    assert result["commit_id"] == snapshot.summary["kafka.connect.commit-id"]

    DeleteConnectorOperator(
        task_id="teardown", connector_name=f"{name}-capture", poll_interval=0.2, timeout=60
    ).execute(context={})
    assert_cleaned_up(store, f"{name}-capture")
    with psycopg.connect(url, autocommit=True) as conn:
        slots = conn.execute("SELECT count(*) FROM pg_replication_slots").fetchone()
    assert slots == (0,)
