"""DAG integrity: the example DAGs import without errors and do no work at import (parsing
them does not touch the metadata database)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from airflow.dag_processing.dagbag import DagBag

from airflow_provider_connect.assets import table_asset

DAGS = Path(__file__).resolve().parents[3] / "dags"


@pytest.fixture
def bag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DagBag:
    extra = {"metadata_url": f"sqlite:///{tmp_path / 'never-opened.db'}"}
    monkeypatch.setenv(
        "AIRFLOW_CONN_CONNECT_DEFAULT", json.dumps({"conn_type": "connect", "extra": extra})
    )
    bag = DagBag(dag_folder=str(DAGS))
    assert not (tmp_path / "never-opened.db").exists()
    return bag


def test_dags_import_cleanly(bag: DagBag) -> None:
    assert bag.import_errors == {}
    assert set(bag.dag_ids) == {
        "connect_runtime",
        "connector_lifecycle",
        "daily_file_ingestion",
        "file_to_table",
        "iceberg_replica_report",
        "lines_report",
        "mariadb_replication",
        "postgres_replication",
        "postgres_to_iceberg",
        "s3_landing_report",
        "snapshot_backfill",
        "topic_to_s3",
    }


def test_connector_lifecycle_shape(bag: DagBag) -> None:
    dag = bag.dags["connector_lifecycle"]
    assert {t.task_id for t in dag.tasks} == {"create", "healthy", "caught_up", "delete"}
    delete = dag.get_task("delete")
    assert delete.is_teardown and {t.task_id for t in delete.upstream_list} >= {"create"}
    assert dag.get_task("create").is_setup
    assert set(dag.params) == {"connector_name", "config", "source_offset"}
    assert dag.get_task("healthy").mode == "reschedule"  # frees the worker slot between pokes


def test_connect_runtime_shape(bag: DagBag) -> None:
    dag = bag.dags["connect_runtime"]
    runtime, serving = dag.get_task("runtime"), dag.get_task("serving")
    assert not runtime.upstream_list and not serving.upstream_list  # side by side
    assert serving.deferrable and runtime.retries > 0
    assert runtime.application.endswith("runtime/entry/connect_runtime.py")
    assert "bootstrap.servers" in dag.params["worker_config"]


def test_daily_ingestion_shape(bag: DagBag) -> None:
    dag = bag.dags["daily_file_ingestion"]
    assert dag.get_task("delete").is_teardown and dag.get_task("ingest").is_setup
    assert dag.max_active_runs == 1


def test_file_to_table_shape(bag: DagBag) -> None:
    dag = bag.dags["file_to_table"]
    assert set(dag.get_task("source_healthy").upstream_task_ids) == {"source", "sink"}
    assert dag.get_task("file_read").upstream_task_ids == {"sink_healthy"}
    sink = dag.get_task("sink").config
    assert sink["pk.mode"] == "kafka" and sink["insert.mode"] == "upsert"
    assert all(dag.get_task(t).retries == 2 for t in ("source_healthy", "file_read"))


@pytest.mark.parametrize(
    ("dag_id", "connector_class", "source_params"),
    [
        (
            "postgres_replication",
            "io.debezium.connector.postgresql.PostgresConnector",
            {"hostname", "port", "user", "dbname"},
        ),
        (
            "mariadb_replication",
            "io.debezium.connector.mariadb.MariaDbConnector",
            {"hostname", "port", "user", "password", "server_id"},
        ),
    ],
)
def test_the_replication_dags_capture_replicate_then_backfill(
    bag: DagBag, dag_id: str, connector_class: str, source_params: set[str]
) -> None:
    """Both replication DAGs (their tasks in dags/cdc_replication.py): the capture and the
    replica created, waited for, the backfill asked of the capture, the replica caught up;
    each param titled; the capture's tables, signal table and topics from the params."""
    dag = bag.dags[dag_id]
    assert [t.task_id for t in dag.topological_sort()] == [
        "capture",
        "replica",
        "capture_healthy",
        "replica_healthy",
        "backfill",
        "caught_up",
    ]
    assert set(dag.get_task("capture_healthy").upstream_task_ids) == {"capture", "replica"}
    assert dag.get_task("backfill").upstream_task_ids == {"replica_healthy"}
    assert set(dag.params) == {
        "name",
        *source_params,
        "tables",
        "replica_url",
        "signal_table",
        "backfill_tables",
    }
    assert all(dag.params.get_param(p).schema.get("title") for p in dag.params)
    assert dag.params["backfill_tables"] == [dag.params["tables"]]
    capture = dag.get_task("capture").config
    assert capture["connector.class"] == connector_class
    assert capture["table.include.list"] == "{{ params.tables }},{{ params.signal_table }}"
    assert capture["signal.data.collection"] == "{{ params.signal_table }}"
    assert capture["topic.prefix"] == "{{ params.name }}"
    assert dag.get_task("backfill").connector_name == "{{ params.name }}-capture"
    replica = dag.get_task("replica").config
    assert replica["topics.regex"] == "{{ params.name }}\\..*"
    assert (replica["insert.mode"], replica["delete.enabled"]) == ("upsert", "true")
    assert all(dag.get_task(t).retries == 2 for t in ("capture_healthy", "caught_up"))


def test_mariadb_replication_reads_the_binlog_into_postgresql(bag: DagBag) -> None:
    dag = bag.dags["mariadb_replication"]
    assert dag.params["replica_url"].startswith("postgresql+psycopg://")
    assert dag.params["tables"] == "shop.orders"
    assert dag.params["signal_table"] == "shop.debezium_signal"
    capture = dag.get_task("capture").config
    assert capture["database.server.id"] == "{{ params.server_id }}"
    assert capture["database.password"] == "{{ params.password }}"
    assert dag.params["name"] != bag.dags["postgres_replication"].params["name"]


def test_readme_dag_example_builds_its_dag() -> None:
    readme = DAGS.parent / "docs" / "airflow.md"  # the DAG example moved from the README
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    (code,) = [b for b in blocks if "orders_to_file" in b]
    namespace: dict[str, Any] = {}
    exec(compile(code, str(readme), "exec"), namespace)
    dag = namespace["create"].dag
    assert dag.dag_id == "orders_to_file"
    assert [t.task_id for t in dag.topological_sort()] == [
        "create",
        "healthy",
        "caught_up",
        "delete",
    ]
    assert dag.get_task("delete").is_teardown and namespace["caught_up"].deferrable


def test_the_examples_assets_join_file_topic_table_and_lines_report(
    bag: DagBag, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connector tasks' assets are those of the params' defaults (their configs are
    templates): file → source → topic → sink → table, the asset lines_report is scheduled
    on, whose watcher reports the commits of file_to_table's sink, half a minute's at a
    time."""
    monkeypatch.setenv("AIRFLOW__CONNECT__KAFKA_BOOTSTRAP_SERVERS", "broker-1:9092")
    bag = DagBag(dag_folder=str(DAGS))  # parsed again, with the cluster configured
    file_to_table = bag.dags["file_to_table"]
    source, sink = file_to_table.get_task("source"), file_to_table.get_task("sink")
    topic = "kafka://broker-1:9092/lines"
    assert uris(source.inlets) == [f"file://{file_to_table.params['file']}"]
    assert uris(source.outlets) == uris(sink.inlets) == [topic]
    table = table_asset(file_to_table.params["connection_url"], file_to_table.params["table"])
    assert table is not None
    assert [(a.name, a.uri) for a in sink.outlets] == [(table.name, table.uri)]  # one asset

    dag = bag.dags["lines_report"]
    (asset,) = dag.timetable.asset_condition.objects  # type: ignore[attr-defined]
    assert sink.outlets == [asset]  # the watcher too: parsing either DAG keeps it
    (watcher,) = asset.watchers
    arguments = watcher.trigger.serialize()[1]
    assert arguments["connector_name"] == "lines-sink" and arguments["min_interval"] == 30

    ingest = bag.dags["daily_file_ingestion"].get_task("ingest")
    assert (ingest.inlets, uris(ingest.outlets)) == ([], ["kafka://broker-1:9092/daily-lines"])


def uris(assets: list[Any]) -> list[str]:
    return [a.uri for a in assets]
