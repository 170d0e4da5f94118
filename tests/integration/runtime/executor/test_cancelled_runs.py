"""A task run's Kafka clients do not outlive it in the executor's Python worker, on the test
session's Spark (``local[N]``, Python workers reused, forked from the runtime's daemon) and
broker: neither when the herder cancels its job (a run's own, or its slot host's), nor when
it ends and its worker is kept for the next Spark task.

What Spark does on a cancel (measured with Spark 4.2): it interrupts the task's JVM thread,
which stays blocked reading the Python worker's output, so the task does not complete; its
monitor (``PythonRunner``'s, every 2 s) then waits ``spark.python.task.killTimeout`` (2 s)
and has the daemon kill the worker ("Incomplete task interrupted: Attempting to kill Python
Worker"), and with it every client and thread of the run: its connections close about 4 s
after the cancel. These tests keep that true."""

from __future__ import annotations

import uuid
from concurrent.futures import Future
from typing import Any

import psutil
import pytest

from airflow_provider_connect.runtime.driver.spark_runner import SparkTaskRunner
from airflow_provider_connect.runtime.executor.task_spec import (
    TASK_CLASS_CONFIG,
    HostSpec,
    TaskSpec,
)
from airflow_provider_connect.store import HostStore, MetadataStore, TargetState
from tests.connectors import PLAIN, SequenceSourceTask
from tests_common.kafka import new_topic, read_values, wait_until

pytestmark = pytest.mark.integration

CLOSED_WITHIN_S = 15
"""Spark's monitor period (2 s) and kill timeout (2 s), with room for a loaded machine."""


def broker_clients(bootstrap: str) -> set[int]:
    """The processes under this one (the Spark JVM, its Python daemon and workers) that
    hold a connection to the broker."""
    port = int(bootstrap.rsplit(":", 1)[1])
    holding = set()
    for process in psutil.Process().children(recursive=True):
        try:
            connections = process.net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        if any(c.raddr and c.raddr.port == port for c in connections):
            holding.add(process.pid)
    return holding


def sequence_spec(
    store: MetadataStore, worker_props: dict[str, str], name: str, topic: str
) -> TaskSpec:
    """What the herder writes for a sequence source's task 0, which counts until stopped."""
    config = {**PLAIN, "topic": topic, "batch.size": "10", "poll.delay.ms": "20"}
    store.configs.create_connector(name, config)
    task_config = {
        **config,
        "assigned": "s0",
        TASK_CLASS_CONFIG: f"{SequenceSourceTask.__module__}.{SequenceSourceTask.__qualname__}",
    }
    generation = store.configs.write_task_configs(name, [task_config])
    run_id = store.statuses.assign_task(name, 0, generation, "test")
    return TaskSpec(name, 0, generation, run_id, config, task_config, worker_props)


def producing_worker(bootstrap: str, topic: str, before: set[int]) -> set[int]:
    """The Python worker that took a client since ``before``, once the run produces."""
    read_values(bootstrap, topic, 10, quiet_s=0)
    return wait_until(
        lambda: broker_clients(bootstrap) - before, 30, "the run's worker holds a client"
    )


def clients_closed(bootstrap: str, worker: set[int]) -> None:
    wait_until(
        lambda: not worker & broker_clients(bootstrap),
        CLOSED_WITHIN_S,
        "the run's clients closed",
        state=lambda: broker_clients(bootstrap),
    )


def cancelled(job: Future[Any]) -> None:
    with pytest.raises(Exception, match="cancelled"):
        job.result(timeout=30)


def test_a_cancelled_run_leaves_no_kafka_client_in_its_python_worker(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, spark: Any
) -> None:
    runner = SparkTaskRunner(spark)
    topic = new_topic(bootstrap)
    before = broker_clients(bootstrap)
    spec = sequence_spec(store, worker_props, "cancelled", topic)
    job = runner.submit(spec)
    worker = producing_worker(bootstrap, topic, before)
    runner.cancel(spec)
    cancelled(job)
    clients_closed(bootstrap, worker)
    assert not any(psutil.pid_exists(pid) for pid in worker)  # killed, not reused


def test_a_cancelled_slot_host_leaves_no_kafka_client_in_its_python_worker(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, spark: Any
) -> None:
    runner = SparkTaskRunner(spark)
    topic = new_topic(bootstrap)
    before = broker_clients(bootstrap)
    host = HostSpec(f"host-{uuid.uuid4().hex[:12]}", {**worker_props, "tasks.per.slot": "2"})
    spec = sequence_spec(store, host.worker_props, "hosted", topic)
    HostStore(store.db).assign(host.host_id, spec.run_id, spec.hosted())
    job = runner.submit_host(host)
    worker = producing_worker(bootstrap, topic, before)
    runner.cancel_host(host)
    cancelled(job)
    clients_closed(bootstrap, worker)


def test_a_run_that_ended_leaves_no_kafka_client_in_its_reused_worker(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, spark: Any
) -> None:
    runner = SparkTaskRunner(spark)
    topic = new_topic(bootstrap)
    before = broker_clients(bootstrap)
    spec = sequence_spec(store, worker_props, "ended", topic)
    job = runner.submit(spec)
    worker = producing_worker(bootstrap, topic, before)
    store.configs.set_target_state("ended", TargetState.STOPPED)
    assert job.result(timeout=60).failed is False
    clients_closed(bootstrap, worker)
    assert all(psutil.pid_exists(pid) for pid in worker)  # kept for the next Spark task
