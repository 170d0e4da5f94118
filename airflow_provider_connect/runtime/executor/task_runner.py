"""Entry point of a task run on an executor (or in-process, in tests and standalone)."""

from __future__ import annotations

import os
import socket

from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.sink import SinkTask
from airflow_provider_connect.runtime.executor.exactly_once_source_task import (
    ExactlyOnceWorkerSourceTask,
)
from airflow_provider_connect.runtime.executor.host_resources import HostResources
from airflow_provider_connect.runtime.executor.sink_task import WorkerSinkTask
from airflow_provider_connect.runtime.executor.source_task import WorkerSourceTask
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome, TaskStores, WorkerTask
from airflow_provider_connect.runtime.executor.task_spec import TaskSpec
from airflow_provider_connect.runtime.logs import TaskContext, TaskLog
from airflow_provider_connect.runtime.worker_config import (
    LOG_DIR,
    LOG_FORMAT,
    METADATA_REQUEST_TIMEOUT_MS,
    METADATA_URL,
    WorkerConfig,
)
from airflow_provider_connect.store import Database


def worker_id() -> str:
    """Names the process running a task in status reports: host and process id."""
    return f"{socket.gethostname()}/{os.getpid()}"


def worker_task(
    spec: TaskSpec, stores: TaskStores, host: HostResources | None = None
) -> WorkerTask:
    """The loop for the spec's task class: a sink loop for SinkTask subclasses, else a
    source loop, transactional when the worker enables exactly-once source support; it
    shares ``host``'s heartbeats and producers when given (a slot host's)."""
    try:
        is_sink = issubclass(load_class(spec.task_class), SinkTask)
    except ImportError:
        is_sink = False  # the run reports the import error as the task's failure
    if is_sink:
        loop: type[WorkerTask] = WorkerSinkTask
    elif WorkerConfig(spec.worker_props).exactly_once_source:
        loop = ExactlyOnceWorkerSourceTask
    else:
        loop = WorkerSourceTask
    return loop(spec, stores, worker_id(), host)


def metadata_database(
    worker: WorkerConfig, pool_size: int | None = None, max_overflow: int | None = None
) -> Database:
    """A connection to the worker's metadata database, whose schema the driver has checked
    or migrated, its pool sized as :class:`Database` says (SQLAlchemy's defaults when None)."""
    return Database(
        worker[METADATA_URL],
        timeout_s=worker[METADATA_REQUEST_TIMEOUT_MS] / 1000,
        pool_size=pool_size,
        max_overflow=max_overflow,
    )


def run_task(
    spec: TaskSpec, db: Database | None = None, host: HostResources | None = None
) -> TaskOutcome:
    """Runs one task run to its end with the metadata database ``db`` (the run's own
    connection when None, closed with it) and, when given, a slot host's resources, its
    records logged with the run's context and to the run's own log file."""
    worker = WorkerConfig(spec.worker_props)
    own = db is None
    stores = TaskStores.of(metadata_database(worker) if db is None else db)
    context = TaskContext(spec.connector, spec.task_id, spec.generation, spec.run_id)
    try:
        with TaskLog(context, worker[LOG_DIR], worker[LOG_FORMAT]).recording() as task_log:
            task = worker_task(spec, stores, host)
            task.log = task_log
            return task.run()
    finally:
        if own:
            stores.statuses.db.close()
