"""Packs task runs into Spark task slots: with ``tasks.per.slot`` above 1, runs share slot
hosts (``executor/slot_host.py``), up to that many a host, and a host holds one slot.

A run gets a slot of its own, as every run does with ``tasks.per.slot=1``, when its
connector sets ``tasks.dedicated.slot=true``, when it is a deleted connector's cleanup-only
run, or when its task was measured busy: a hosted run whose record counters (written by its
heartbeats) grew by more than ``tasks.dedicated.slot.record.rate`` a second over
``RATE_WINDOW_S`` is reported by :meth:`SlotPacker.sync`, and the herder starts its task
again, from then on in a slot of its own (for this driver's lifetime).

A new hosted run goes to the fullest host with room, else to a new host. A host that has
had no run for ``HOST_IDLE_S`` is cancelled, giving its slot back. A hosted run the herder
cancels (it did not stop within ``task.shutdown.graceful.timeout.ms``) is given as long
again; past that its host's job is cancelled, as a run's own job would have been at once,
since a thread cannot be killed and two runs of one task never move data at once. A host
whose job ends (cancelled so, or its executor lost) fails the futures of the runs it still
had, so the herder starts them again, as it does for a lost run of a slot of its own.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field

from airflow_provider_connect.connect.config import Type, parse_value
from airflow_provider_connect.connect.connector_config import TASKS_DEDICATED_SLOT_CONFIG
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.runtime.driver.spark_runner import (
    RunProgress,
    SparkTaskRunner,
    host_job_group,
)
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome
from airflow_provider_connect.runtime.executor.task_spec import HostSpec, TaskSpec
from airflow_provider_connect.runtime.worker_config import (
    TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS,
    TASKS_DEDICATED_SLOT_RECORD_RATE,
    TASKS_PER_SLOT,
    WorkerConfig,
)
from airflow_provider_connect.store import RECORD_COUNTERS, HostStore, StatusStore

log = logging.getLogger(__name__)

HOST_IDLE_S = 5.0
RATE_WINDOW_S = 10.0
PROGRESS_TTL_S = 0.5  # a host's progress, read once for all its runs


class SlotHostLost(Exception):
    """A hosted run's host ended before the run did (its executor was lost)."""


def asks_dedicated_slot(connector_config: Mapping[str, str]) -> bool:
    """Whether a connector's config sets ``tasks.dedicated.slot=true`` (a value that is no
    boolean, which validation refuses, asks for nothing)."""
    value = connector_config.get(TASKS_DEDICATED_SLOT_CONFIG, "false")
    try:
        return bool(parse_value(TASKS_DEDICATED_SLOT_CONFIG, value, Type.BOOLEAN))
    except ConfigException:
        return False


@dataclass
class _Host:
    spec: HostSpec
    job: Future[None]
    runs: dict[str, tuple[TaskSpec, Future[TaskOutcome]]] = field(default_factory=dict)
    empty_since: float | None = None


class SlotPacker:
    """The herder's task runner (``submit``, ``cancel``, ``progress``, ``slots``) over Spark,
    packing runs into slot hosts; see the module docstring. Called from the herder's thread
    only, but ``slot_of`` (read by status and metrics from other threads)."""

    def __init__(
        self,
        spark: SparkTaskRunner,
        hosts: HostStore,
        statuses: StatusStore,
        worker: WorkerConfig,
    ) -> None:
        self.spark = spark
        self.store = hosts
        self.statuses = statuses
        self.worker_props = dict(worker.originals)
        self.capacity: int = worker[TASKS_PER_SLOT]
        self.busy_rate: float = worker[TASKS_DEDICATED_SLOT_RECORD_RATE]
        self.graceful_s = worker[TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS] / 1000
        self.overdue: dict[str, float] = {}  # cancelled hosted run id → its host's deadline
        self.hosts: dict[str, _Host] = {}
        self.host_of: dict[str, str] = {}  # run id → host id, for hosted runs not ended
        self.dedicated: set[tuple[str, int]] = set()  # tasks measured busy
        self._counted: dict[str, tuple[float, float]] = {}  # run id → (when, records)
        self._measure_at = time.monotonic() + RATE_WINDOW_S
        self._progress: dict[str, tuple[float, RunProgress | None]] = {}

    # -- the herder's runner -----------------------------------------------------------------
    def submit(self, spec: TaskSpec) -> Future[TaskOutcome]:
        if not self._shares(spec):
            return self.spark.submit(spec)
        host = self._host_with_room()
        self.store.assign(host.spec.host_id, spec.run_id, spec.hosted())
        future: Future[TaskOutcome] = Future()
        host.runs[spec.run_id] = (spec, future)
        host.empty_since = None
        self.host_of[spec.run_id] = host.spec.host_id
        return future

    def cancel(self, spec: TaskSpec) -> None:
        """Cancels a run of its own slot's job; a hosted run's host is cancelled if the run
        has not ended within another graceful timeout (:meth:`sync`)."""
        host_id = self.host_of.get(spec.run_id)
        if host_id is None:
            self.spark.cancel(spec)
        elif spec.run_id not in self.overdue:
            log.warning(
                "task run %s did not stop in time; its slot host %s is cancelled, and its "
                "other tasks start again, unless it stops within %.0f s",
                spec.run_id,
                host_id,
                self.graceful_s,
            )
            self.overdue[spec.run_id] = time.monotonic() + self.graceful_s

    def progress(self, spec: TaskSpec) -> RunProgress | None:
        host_id = self.host_of.get(spec.run_id)
        if host_id is None:
            return self.spark.progress(spec)
        now = time.monotonic()
        read = self._progress.get(host_id)
        if read is None or now - read[0] > PROGRESS_TTL_S:
            group = host_job_group(self.hosts[host_id].spec)
            read = self._progress[host_id] = (now, self.spark.group_progress(group))
        return read[1]

    def slots(self) -> int:
        return self.spark.slots()

    def close(self) -> None:
        """Cancels every host's job (the herder stopped: its runs ended or were given up),
        and forgets their runs while the database is reachable."""
        hosts, self.hosts = list(self.hosts.values()), {}
        for host in hosts:
            self.spark.cancel_host(host.spec)
            self._fail(host, SlotHostLost("the runtime stopped"))
        if hosts and self.store.db.reachable:
            try:
                self.store.forget([h.spec.host_id for h in hosts])
            except Exception:  # rows a herder forgets when it takes the lease
                log.warning("the runs of the slot hosts were not forgotten", exc_info=True)

    def slot_of(self, spec: TaskSpec) -> str:
        """The slot the run holds or waits for: its host's id, or its own run id."""
        return self.host_of.get(spec.run_id, spec.run_id)

    def lead(self) -> None:
        """This driver's herder took the lease: the runs other drivers gave their hosts are
        superseded, and forgotten (those of this driver's own hosts stay)."""
        self.store.forget(list(self.hosts), others=True)

    # -- each pass of the herder -------------------------------------------------------------
    def sync(self, live: Iterable[TaskSpec]) -> list[tuple[str, int]]:
        """Takes the outcomes hosts wrote, fails the runs of hosts that ended, gives back
        the slots of hosts idle for ``HOST_IDLE_S``; returns the tasks, among the ``live``
        runs, to start again in a slot of their own (measured busy)."""
        if not self.hosts:
            return []
        ended = [h for h in self.hosts.values() if h.job.done()]  # before their last outcomes
        for run_id, fields in self.store.take_outcomes(list(self.hosts)).items():
            self._end(run_id, TaskOutcome(**fields))
        now = time.monotonic()
        for host in ended:
            self._drop(host, SlotHostLost(f"its slot host ended: {host.job.exception()}"))
        for run_id, deadline in list(self.overdue.items()):
            host_id = self.host_of.get(run_id)
            if host_id is None:
                del self.overdue[run_id]
            elif now >= deadline:
                host = self.hosts[host_id]
                log.warning(
                    "cancelling slot host %s: task run %s did not stop; its %d other task(s) "
                    "start again",
                    host_id,
                    run_id,
                    len(host.runs) - 1,
                )
                self.spark.cancel_host(host.spec)
                self._drop(host, SlotHostLost(f"its slot host was cancelled for run {run_id}"))
        for host in list(self.hosts.values()):
            if host.runs:
                host.empty_since = None
            elif host.empty_since is None:
                host.empty_since = now
            elif now - host.empty_since >= HOST_IDLE_S:
                self.spark.cancel_host(host.spec)
                self._drop(host)
        return self._busy(live, now)

    def _drop(self, host: _Host, error: BaseException | None = None) -> None:
        """Forgets a host whose job ended or was cancelled, failing its runs with ``error``."""
        del self.hosts[host.spec.host_id]
        self._fail(host, error or SlotHostLost("its slot host ended"))
        self.store.forget([host.spec.host_id])

    def _fail(self, host: _Host, error: BaseException) -> None:
        for run_id, (_, future) in host.runs.items():
            self.host_of.pop(run_id, None)
            future.set_exception(error)
        host.runs.clear()

    def _end(self, run_id: str, outcome: TaskOutcome) -> None:
        host_id = self.host_of.pop(run_id, None)
        host = self.hosts.get(host_id) if host_id is not None else None
        if host is not None and run_id in host.runs:
            _, future = host.runs.pop(run_id)
            future.set_result(outcome)

    def _shares(self, spec: TaskSpec) -> bool:
        return (
            self.capacity > 1
            and not spec.cleanup_only
            and not asks_dedicated_slot(spec.connector_config)
            and (spec.connector, spec.task_id) not in self.dedicated
        )

    def _host_with_room(self) -> _Host:
        """The fullest live host with room, else a new one."""
        with_room = [
            h for h in self.hosts.values() if len(h.runs) < self.capacity and not h.job.done()
        ]
        if with_room:
            return max(with_room, key=lambda h: len(h.runs))
        spec = HostSpec(f"host-{uuid.uuid4().hex[:12]}", self.worker_props)
        host = self.hosts[spec.host_id] = _Host(spec, self.spark.submit_host(spec))
        log.info("starting slot host %s (up to %d tasks)", spec.host_id, self.capacity)
        return host

    def _busy(self, live: Iterable[TaskSpec], now: float) -> list[tuple[str, int]]:
        """Every ``RATE_WINDOW_S``: the hosted tasks whose counters grew faster than
        ``tasks.dedicated.slot.record.rate`` since the last measure (one query)."""
        if self.busy_rate <= 0 or now < self._measure_at:
            return []
        self._measure_at = now + RATE_WINDOW_S
        hosted = [spec for spec in live if spec.run_id in self.host_of]
        statuses = self.statuses.all_task_statuses()
        counted, busy = {}, []
        for spec in hosted:
            status = next(
                (s for s in statuses.get(spec.connector, []) if s.task_id == spec.task_id), None
            )
            metrics = (status.metrics if status is not None else None) or {}
            records = sum(metrics.get(counter, 0.0) for counter in RECORD_COUNTERS)
            counted[spec.run_id] = (now, records)
            before = self._counted.get(spec.run_id)
            if before is None:
                continue
            rate = (records - before[1]) / (now - before[0])
            if rate > self.busy_rate:
                log.info(
                    "task %s-%s moves %.0f records/s (tasks.dedicated.slot.record.rate: %.0f): "
                    "starting it again in a Spark task slot of its own",
                    spec.connector,
                    spec.task_id,
                    rate,
                    self.busy_rate,
                )
                self.dedicated.add((spec.connector, spec.task_id))
                busy.append((spec.connector, spec.task_id))
        self._counted = counted
        return busy
