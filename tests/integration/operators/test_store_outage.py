"""Airflow runs DAGs (``dag.test()``: Airflow's own task runner, its log, its trigger run in
line) while the metadata database is away: a task that cannot reach it fails with one
message naming the database and the cause, not the driver's tracebacks; a sensor pokes on
(or its trigger polls on) through a crash of the database and succeeds once it is back."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from airflow import settings
from airflow.dag_processing.dagbag import DagBag

from airflow_provider_connect.store import MetadataStore
from tests.integration.triggers.test_triggers import (
    BACK,
    CONFIG,
    LOST,
    Output,
    outage_connection,
    report_running,
)
from tests_common.broker import free_port
from tests_common.kafka import wait_until
from tests_common.postgres_cluster import PostgresCluster

pytestmark = pytest.mark.integration

DAG_FILE = """
import datetime as dt

from airflow.sdk import DAG

from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.sensors.connector import ConnectorHealthSensor

with DAG("store_outage_create", schedule=None, start_date=dt.datetime(2026, 1, 1)):
    CreateConnectorOperator(
        task_id="create",
        connector_name="c",
        config={"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"},
        connect_conn_id="outage",
        store_retry_timeout=0,
    )

for deferrable in (False, True):
    with DAG(f"store_outage_sensor_{deferrable}", schedule=None, start_date=dt.datetime(2026, 1, 1)):
        ConnectorHealthSensor(
            task_id="healthy",
            connector_name=f"away-{deferrable}",
            connect_conn_id="outage",
            poke_interval=0.2,
            timeout=120,
            deferrable=deferrable,
        )
"""


@pytest.fixture(scope="module")
def airflow_db() -> None:
    """Airflow's own database (in the test session's AIRFLOW_HOME), which dag.test() uses."""
    from airflow.utils import db

    db.initdb()


@pytest.fixture
def dags(airflow_db: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The DAGs above, in a DAGs folder of their own (dag.test() syncs it to Airflow's DB)."""
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "store_outage.py").write_text(DAG_FILE)
    monkeypatch.setattr(settings, "DAGS_FOLDER", str(folder))  # read once, at import
    bag = DagBag(dag_folder=str(folder))
    assert bag.import_errors == {}
    return dict(bag.dags)


def states(dag_run: Any) -> dict[str, str]:
    return {ti.task_id: str(ti.state) for ti in dag_run.get_task_instances()}


def test_a_task_that_cannot_reach_the_database_fails_with_one_clear_message(
    dags: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    outage_connection(monkeypatch, f"postgresql+psycopg://connect:s3cret@127.0.0.1:{port}/m", 0.5)
    output = Output(capsys)
    assert states(dags["store_outage_create"].test()) == {"create": "failed"}
    (failure,) = output.lines("airflow.sdk.exceptions.AirflowException: ")
    assert failure.endswith(
        f"AirflowException: The metadata database postgresql+psycopg://connect:***@127.0.0.1:"
        f"{port}/m is unreachable: connection failed: connection to server at "
        f'"127.0.0.1", port {port} failed: Connection refused; the task fails, and Airflow '
        "retries it as its retries allow"
    )
    assert output.lines("OperationalError") == [] and output.lines("s3cret") == []
    assert len(output.lines("Traceback")) == 1  # the task's own, not the driver's chain


@pytest.mark.parametrize("deferrable", [False, True], ids=["poke", "deferrable"])
def test_a_sensor_task_rides_out_a_crash_of_the_database(
    dags: dict[str, Any],
    pg_cluster: PostgresCluster,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    deferrable: bool,
) -> None:
    name = f"away-{deferrable}"
    store = MetadataStore(pg_cluster.url)
    store.configs.create_connector(name, CONFIG)
    outage_connection(monkeypatch, pg_cluster.url, 1)
    output = Output(capsys)
    failures: list[BaseException] = []

    def outage() -> None:
        """Crashes the database under the waiting sensor, and brings it back."""
        try:
            wait_until(lambda: output.lines("Still waiting: no runtime"), 60, "the sensor waits")
            with pg_cluster.crashed():
                wait_until(lambda: output.lines(LOST), 60, "the sensor sees it away")
            wait_until(lambda: output.lines(BACK), 60, "the sensor sees it back")
            report_running(store, name)
        except BaseException as e:
            failures.append(e)

    helper = threading.Thread(target=outage)
    helper.start()
    try:
        dag_run = dags[f"store_outage_sensor_{deferrable}"].test()
    finally:
        helper.join(120)
        store.configs.delete_connector(name)
        store.close()
    assert failures == []
    assert states(dag_run) == {"healthy": "success"}
    (lost,) = output.lines(LOST)  # once each way, however many pokes or polls failed
    assert "[warning" in lost and f"The metadata database {pg_cluster.url} is unreachable" in lost
    assert len(output.lines(BACK)) == 1
