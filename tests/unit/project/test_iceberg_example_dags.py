"""The Iceberg example DAGs (dags/postgres_to_iceberg.py, dags/iceberg_replica_report.py,
their table in dags/iceberg_replica.py): a PostgreSQL table replicated into an Iceberg table
through Kafka, and a report scheduled on the table's commits."""

from __future__ import annotations

import subprocess
import sys

from airflow.dag_processing.dagbag import DagBag

from airflow_provider_connect.connect.datasets import iceberg_table
from tests.unit.project.test_example_dags import DAGS, bag
from tests.unit.project.test_s3_example_dags import kafka_servers

# The fixtures: the DAGs of dags/, parsed, with the operators' cluster 127.0.0.1:9092.
__all__ = ["bag", "kafka_servers"]


def test_the_capture_and_the_replica_are_created_then_waited_for(bag: DagBag) -> None:
    dag = bag.dags["postgres_to_iceberg"]
    assert set(dag.get_task("capture_healthy").upstream_task_ids) == {"capture", "replica"}
    assert dag.get_task("caught_up").upstream_task_ids == {"replica_healthy"}
    assert all(dag.get_task(t).retries == 2 for t in ("capture_healthy", "caught_up"))
    capture = dag.get_task("capture").config
    assert capture["connector.class"] == "io.debezium.connector.postgresql.PostgresConnector"
    assert capture["table.include.list"] == "{{ params.table }}"


def test_the_replica_upserts_by_id_columns_into_a_sql_catalog_on_sqlite(bag: DagBag) -> None:
    dag = bag.dags["postgres_to_iceberg"]
    replica = dag.get_task("replica").config
    assert replica["connector.class"] == "org.apache.iceberg.connect.IcebergSinkConnector"
    assert replica["topics"] == "{{ params.name }}.{{ params.table }}"  # the capture's topic
    assert replica["iceberg.tables.upsert-mode-enabled"] == "true"
    assert replica["iceberg.tables.default-id-columns"] == "{{ params.id_columns }}"
    assert replica["iceberg.catalog.type"] == "sql"
    assert dag.params["catalog_uri"].startswith("sqlite:///")
    assert dag.params["warehouse"].startswith("file:///")
    # Debezium's delete events reach the sink as rows with __op "d", which it deletes.
    assert replica["transforms.unwrap.add.fields"] == "op"
    assert replica["iceberg.tables.cdc-field"] == "__op"


def test_the_tasks_declare_the_table_the_topic_and_the_replica_of_the_params_defaults(
    bag: DagBag,
) -> None:
    dag = bag.dags["postgres_to_iceberg"]
    capture, replica = dag.get_task("capture"), dag.get_task("replica")
    topic = "kafka://127.0.0.1:9092/orders-lake.public.orders"
    assert [a.uri for a in capture.inlets] == ["postgres://127.0.0.1:5432/postgres/public/orders"]
    assert [a.uri for a in capture.outlets] == [a.uri for a in replica.inlets] == [topic]
    table = iceberg_table(
        {"type": "sql", "warehouse": dag.params["warehouse"]}, dag.params["replica_table"]
    )
    assert table is not None and table.uri.endswith("/connect-iceberg-warehouse/replica/orders")
    assert [a.uri for a in replica.outlets] == [table.uri]


def test_the_report_runs_on_the_replicas_commits(bag: DagBag) -> None:
    replicate, report = bag.dags["postgres_to_iceberg"], bag.dags["iceberg_replica_report"]
    (asset,) = report.timetable.asset_condition.objects  # type: ignore[attr-defined]
    (outlet,) = replicate.get_task("replica").outlets
    # The same asset, with its watcher, on both: Airflow keeps the watchers of the file
    # parsed last.
    assert asset.uri == outlet.uri and outlet.watchers == asset.watchers
    (watcher,) = asset.watchers
    arguments = watcher.trigger.serialize()[1]
    assert arguments["connector_name"] == f"{replicate.params['name']}-replica"
    assert arguments["min_interval"] == 30
    assert report.is_paused_upon_creation is False


def test_parsing_the_dags_imports_no_pyiceberg() -> None:
    """The report reads the table with pyiceberg, imported by its task alone: Airflow's DAG
    processor parses the files without it."""
    code = (
        "import sys\n"
        f"sys.path.append({str(DAGS)!r})  # as Airflow's DAG bundle does\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"bag = DagBag(dag_folder={str(DAGS)!r})\n"
        "assert not bag.import_errors, bag.import_errors\n"
        "assert {'postgres_to_iceberg', 'iceberg_replica_report'} <= set(bag.dag_ids)\n"
        "assert not [m for m in sys.modules if m.startswith('pyiceberg')], 'pyiceberg imported'\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
