"""A slot host: several task runs sharing one Spark task slot, as threads of one Python
worker, as a Kafka Connect worker runs its tasks as threads of one JVM.

The host looks at the metadata database's hosted runs (one query) every
``HOST_LOOK_INTERVAL_S``: each run the herder gave it starts in a thread of its own, and
each run that ended has its outcome written back for the herder to take. Every run is what
it would be in a slot of its own (``run_task``): its own run id, generation, heartbeat,
status, offsets, fencing, log context and file, metrics; stopping, failing or deleting one
never stops its neighbours. What the runs share is the process, its connection pool to the
metadata database (sized for ``tasks.per.slot`` runs: ``pool_for``), the transaction their
heartbeats are written in (one per ``task.heartbeat.interval.ms`` for the whole host,
``HeartbeatGroup``), and the Kafka producer of at-least-once source tasks of one producer
config (``shared_producer.py``).

The host runs until the herder cancels its Spark job: once it has had no runs for a while, or
when one of its runs did not stop in time (then its other runs start again elsewhere, as
they do when its executor is lost).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

from airflow_provider_connect.runtime.executor.host_resources import HostResources
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome, trace_of
from airflow_provider_connect.runtime.executor.task_control import HeartbeatGroup
from airflow_provider_connect.runtime.executor.task_runner import metadata_database, run_task
from airflow_provider_connect.runtime.executor.task_spec import HostSpec, TaskSpec
from airflow_provider_connect.runtime.worker_config import (
    TASK_HEARTBEAT_INTERVAL_MS,
    TASKS_PER_SLOT,
    WorkerConfig,
)
from airflow_provider_connect.store import HostedRun, HostStore, StatusStore, StoreUnavailable

log = logging.getLogger(__name__)

HOST_LOOK_INTERVAL_S = 0.2
HOST_CONNECTIONS = 2
"""Metadata database connections the host itself may hold at once: its look at its runs and
its heartbeat group's beat."""
RUN_CONNECTIONS = 3
"""The most connections one hosted run holds at once, each thread one at a time: its loop
(status, offsets, fencing), its store writer, and its stop or a thread of its task's own
reading offsets."""


def pool_for(runs: int) -> tuple[int, int]:
    """The pool size and overflow of the metadata database of a host of up to ``runs`` runs
    (``tasks.per.slot``): one connection kept per run (its store writer's, which writes
    every few seconds) and the host's own, and room for every thread of every run to hold
    one at once, so that no transaction waits for a connection while the database answers
    (SQLAlchemy's default of 5 + 10 made the 16th wait, then fail)."""
    kept = runs + HOST_CONNECTIONS
    return kept, runs * RUN_CONNECTIONS + HOST_CONNECTIONS - kept


class SlotHost:
    """Runs the task runs of one host until the process ends; see the module docstring."""

    def __init__(self, host: HostSpec) -> None:
        self.host = host
        worker = WorkerConfig(host.worker_props)
        self.db = metadata_database(worker, *pool_for(worker[TASKS_PER_SLOT]))
        self.store = HostStore(self.db)
        self.resources = HostResources(
            HeartbeatGroup(StatusStore(self.db), worker[TASK_HEARTBEAT_INTERVAL_MS] / 1000)
        )
        self.started: set[str] = set()  # run ids started here
        self.ended: dict[str, TaskOutcome] = {}  # outcomes not yet written
        self._lock = threading.Lock()

    def run(self) -> None:
        """Looks at its runs until the process ends (its job cancelled, its executor lost)."""
        while True:
            time.sleep(HOST_LOOK_INTERVAL_S)
            try:
                self.look()
            except StoreUnavailable:  # logged by the database; the runs go on
                pass
            except Exception:
                log.exception("slot host %s: a look at its runs failed", self.host.host_id)

    def look(self) -> None:
        """Starts the runs given since the last look and writes the outcomes of those that
        ended (a run that cannot start ends failed)."""
        for run in self.store.runs(self.host.host_id, known=self.started):
            self._start(run)
        with self._lock:
            ended = list(self.ended.items())
        for run_id, outcome in ended:  # a failing write is tried again at the next look
            self.store.end(run_id, dataclasses.asdict(outcome))
            with self._lock:
                del self.ended[run_id]

    def _start(self, run: HostedRun) -> None:
        self.started.add(run.run_id)
        try:
            spec = TaskSpec.of_hosted(run.spec, self.host.worker_props)
            thread = threading.Thread(
                target=self._run, args=(spec,), name=f"task-{spec.connector}-{spec.task_id}"
            )
            thread.daemon = True  # the host's process ends with its job, whatever runs
            thread.start()
        except Exception as e:
            log.exception("slot host %s could not start run %s", self.host.host_id, run.run_id)
            fields = run.spec
            with self._lock:
                self.ended[run.run_id] = TaskOutcome(
                    fields.get("connector", "?"),
                    fields.get("task_id", -1),
                    run.run_id,
                    failed=True,
                    trace=trace_of(e),
                )

    def _run(self, spec: TaskSpec) -> None:
        try:
            outcome = run_task(spec, self.db, self.resources)
        except BaseException as e:  # run() never raises; its setup can
            log.exception("%s-%s failed to run", spec.connector, spec.task_id)
            outcome = TaskOutcome(
                spec.connector, spec.task_id, spec.run_id, failed=True, trace=trace_of(e)
            )
        with self._lock:
            self.ended[spec.run_id] = outcome
