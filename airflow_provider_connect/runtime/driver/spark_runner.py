"""Runs task runs as Spark jobs: one long-lived, single-partition job per run, or per slot
host (several runs sharing one Spark task slot, ``executor/slot_host.py``).

Each job runs in its own driver thread (a job blocks its submitting thread until the run
ends) under the job group ``connect:<connector>:<task>:<run id>`` (a host's:
``connect-host:<host id>``), so one run, or one host, can be cancelled alone. Speculation is off and a failed task attempt is never retried by Spark:
a second attempt would be a zombie of the first. The herder starts a new run instead.

A cancelled job's Python worker does not live on with the run's clients, although workers
are reused: the interrupted task's JVM thread stays blocked reading the worker's output, so
the task does not complete, and Spark's monitor has the daemon kill the worker (checked
every 2 s, then after ``spark.python.task.killTimeout``, 2 s by default): the run's Kafka
clients, threads and connections end about 4 s after the cancel
(``tests/integration/runtime/executor/test_cancelled_runs.py``).
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.runtime.executor.task_base import TaskOutcome
from airflow_provider_connect.runtime.executor.task_spec import HostSpec, TaskSpec

DEFAULT_SPARK_CONFIG = {
    "spark.master": "local[32]",
    "spark.app.name": "connect-runtime",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.python.worker.reuse": "true",
    # Forks task workers from a daemon that has the task runtime imported (shared pages).
    "spark.python.daemon.module": "airflow_provider_connect.runtime.executor.worker_daemon",
}
FORCED_SPARK_CONFIG = {
    "spark.speculation": "false",
    "spark.task.maxFailures": "1",
}


def spark_session(spark_config: dict[str, str]) -> Any:
    """A SparkSession for the runtime: our defaults where spark-submit (its ``--master``,
    ``--conf``, ``spark-defaults.conf``) set nothing, then ``spark_config``, then the keys
    the runtime's correctness depends on."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        # The first call into the JVM imports pyspark.testing (PySpark's py4j converter
        # does), which warns that PySpark does not fully support pandas 3; the runtime
        # uses no pandas API.
        warnings.filterwarnings(
            "ignore", "PySpark does not yet fully support pandas", FutureWarning
        )
        defaults = DEFAULT_SPARK_CONFIG
        if "PYSPARK_GATEWAY_PORT" in os.environ:  # spark-submit started us: its JVM is up
            SparkContext._ensure_initialized()
            submitted = SparkConf()  # what spark-submit set
            defaults = {k: v for k, v in defaults.items() if not submitted.contains(k)}
        builder = SparkSession.builder
        for key, value in {**defaults, **spark_config, **FORCED_SPARK_CONFIG}.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()


def _execute(specs: Iterator[TaskSpec]) -> Iterator[TaskOutcome]:
    """Runs on an executor: the one spec of the partition, logging to the executor's stderr
    in the worker's ``log.format``."""
    from airflow_provider_connect.runtime import logs
    from airflow_provider_connect.runtime.executor.task_runner import run_task
    from airflow_provider_connect.runtime.worker_config import LOG_FORMAT, WorkerConfig

    for spec in specs:
        logs.configure(WorkerConfig(spec.worker_props)[LOG_FORMAT])
        yield run_task(spec)


def _host(hosts: Iterator[HostSpec]) -> Iterator[None]:
    """Runs on an executor: the slot host of the partition, until its job is cancelled."""
    from airflow_provider_connect.runtime import logs
    from airflow_provider_connect.runtime.executor.slot_host import SlotHost
    from airflow_provider_connect.runtime.worker_config import LOG_FORMAT, WorkerConfig

    for host in hosts:
        logs.configure(WorkerConfig(host.worker_props)[LOG_FORMAT])
        SlotHost(host).run()
        yield None


def job_group(spec: TaskSpec) -> str:
    return f"connect:{spec.connector}:{spec.task_id}:{spec.run_id}"


def host_job_group(host: HostSpec) -> str:
    return f"connect-host:{host.host_id}"


@dataclass(frozen=True)
class RunProgress:
    """Where a run's Spark job is: ``started`` while an attempt of its one task runs on an
    executor (else it waits for a task slot); ``lost_attempts`` counts attempts that ended
    without ending the run (their executor was lost; Spark runs the task again)."""

    started: bool
    lost_attempts: int


class SparkTaskRunner:
    """Submits task runs to Spark; each :meth:`submit` returns a future of the run's
    outcome, which fails if the job does (executor lost, cancelled)."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.context = spark.sparkContext

    def submit(self, spec: TaskSpec) -> Future[TaskOutcome]:
        return self._job(
            job_group(spec), f"{spec.connector} task {spec.task_id}", spec, _execute, single=True
        )

    def submit_host(self, host: HostSpec) -> Future[None]:
        """Starts a slot host (``executor/slot_host.py``); its future ends when the host's
        job does: cancelled (:meth:`cancel_host`) or lost with its executor."""
        return self._job(host_job_group(host), f"slot host {host.host_id}", host, _host)

    def _job(
        self, group: str, description: str, item: Any, function: Any, single: bool = False
    ) -> Future[Any]:
        """Runs ``function`` over the one-partition job of ``item`` in a thread of its own;
        the future has the partition's one result when ``single``, else None."""
        future: Future[Any] = Future()

        def run() -> None:
            self.context.setJobGroup(group, description, interruptOnCancel=True)
            try:
                results = self.context.parallelize([item], 1).mapPartitions(function).collect()
            except BaseException as e:
                future.set_exception(e)
            else:
                future.set_result(results[0] if single else None)

        threading.Thread(target=run, name=group, daemon=True).start()
        return future

    def cancel(self, spec: TaskSpec) -> None:
        """Cancels the run's job now (the hard stop after the graceful timeout)."""
        self.context.cancelJobGroup(job_group(spec))

    def cancel_host(self, host: HostSpec) -> None:
        """Cancels a slot host's job now, and with it every run still in it."""
        self.context.cancelJobGroup(host_job_group(host))

    def progress(self, spec: TaskSpec) -> RunProgress | None:
        """The run's job as Spark's status tracker sees it; None before Spark has it."""
        return self.group_progress(job_group(spec))

    def group_progress(self, group: str) -> RunProgress | None:
        """The job of a job group as Spark's status tracker sees it; None before Spark has
        it."""
        tracker = self.context.statusTracker()
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    return RunProgress(stage.numActiveTasks > 0, stage.numFailedTasks)
        return None

    def slots(self) -> int:
        """The task slots Spark has now (the executors' cores; N for ``local[N]``)."""
        return int(self.context.defaultParallelism)
