"""The runtime deployed from Airflow as a user deploys it: ``ConnectRuntimeSubmitOperator``
runs spark-submit against a Spark standalone cluster (a master and a worker started from
pyspark's jars, on loopback), the metadata database on PostgreSQL; ``ConnectRuntimeSensor``
and its trigger wait for it; a connector runs on the cluster's executor; ``on_kill`` stops
the driver gracefully."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.runtime import ConnectRuntimeSubmitOperator
from airflow_provider_connect.sensors.runtime import ConnectRuntimeSensor
from airflow_provider_connect.store import State
from airflow_provider_connect.triggers.runtime import ConnectRuntimeTrigger
from tests.databases import database
from tests_common.broker import free_port
from tests_common.kafka import new_topic, read_values
from tests_common.spark_cluster import SparkCluster

pytestmark = pytest.mark.integration

LINES = 2_000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    with SparkCluster(tmp_path_factory.mktemp("spark"), workers=1, cores=2) as cluster:
        yield cluster


@pytest.fixture
def connections(
    cluster: SparkCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """``connect_default`` on a fresh PostgreSQL database, ``spark_default`` on the cluster's
    master, and spark-submit on the PATH (it comes with pyspark, beside this interpreter)."""
    with database("postgresql", tmp_path) as url:
        extra = {"metadata_url": url}
        monkeypatch.setenv(
            "AIRFLOW_CONN_CONNECT_DEFAULT", json.dumps({"conn_type": "connect", "extra": extra})
        )
        spark = {"conn_type": "spark", "host": "spark://127.0.0.1", "port": cluster.port}
        monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(spark))
        monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        yield url


class Submitted:
    """The operator's ``execute`` on a thread, as the Airflow task runs it."""

    def __init__(self, operator: ConnectRuntimeSubmitOperator) -> None:
        self.operator = operator
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="submit", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.operator.execute(context={})
        except BaseException as e:
            self.error = e


def trigger_event(trigger: ConnectRuntimeTrigger) -> dict[str, Any]:
    async def first() -> dict[str, Any]:
        event = await trigger.run().__anext__()
        payload: dict[str, Any] = event.payload
        return payload

    return asyncio.run(first())


def test_deployed_runtime_serves_runs_tasks_on_the_cluster_and_stops_gracefully(
    cluster: SparkCluster, connections: str, bootstrap: str, tmp_path: Path
) -> None:
    rest_port = free_port()
    operator = ConnectRuntimeSubmitOperator(
        task_id="runtime",
        worker_config={
            "bootstrap.servers": bootstrap,
            "listeners": f"http://127.0.0.1:{rest_port}",
            "offset.flush.interval.ms": 200,
            "task.heartbeat.interval.ms": 100,
            "spark.master": "local[1]",  # ignored: the Spark connection names the master
        },
        conf={"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"},
        env_vars={"SPARK_LOCAL_IP": "127.0.0.1"},
        stop_timeout=60,
    )
    submitted = Submitted(operator)
    hook = ConnectHook()
    try:
        sensor = ConnectRuntimeSensor(
            task_id="serving", poke_interval=0.5, timeout=180, deferrable=False
        )
        served = sensor.execute(context={})
        assert served["rest_url"] == f"http://127.0.0.1:{rest_port}"
        assert served["version"]
        event = trigger_event(ConnectRuntimeTrigger(poll_interval=0.2, timeout=30))
        assert event["status"] == "success" and event["rest_url"] == served["rest_url"]

        source = tmp_path / "in.txt"
        source.write_text("".join(f"line {i}\n" for i in range(LINES)))
        topic = new_topic(bootstrap)
        config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}
        hook.create_connector("lines", {**config, "value.converter": "StringConverter"})
        status = hook.wait_for_running("lines", timeout_s=120, poll_interval_s=0.2)
        values = read_values(bootstrap, topic, LINES)
        assert sorted(values) == sorted(f"line {i}".encode() for i in range(LINES))

        # The task runs in a Python worker of the cluster's executor, not in the driver.
        (task,) = status["tasks"]
        task_pid = int(task["worker_id"].rsplit("/", 1)[1])
        worker = cluster.workers[0]
        assert worker is not None
        under_worker = {p.pid for p in psutil.Process(worker.pid).children(recursive=True)}
        assert task_pid in under_worker, [
            p.cmdline()[:4] for p in psutil.Process(task_pid).parents()
        ]
    finally:
        operator.on_kill()
        submitted.thread.join(120)
    assert not submitted.thread.is_alive(), "spark-submit did not end after on_kill"
    assert submitted.error is None  # the driver exited cleanly: the Airflow task succeeds
    # Graceful: the driver stopped its task and released the lease for a standby.
    assert hook.active_runtime() is None
    tasks = hook.store.statuses.task_statuses("lines")
    assert [t.state for t in tasks] == [State.UNASSIGNED]
    (offset,) = hook.get_source_offsets("lines")  # committed at the stop: every line
    assert offset["offset"]["position"] == source.stat().st_size
    hook.close()
