"""What the herder tells about task runs between submit and end, from Spark's status
tracker: a run that waits for a Spark task slot (its status says so), and each step of a
recovery from a lost executor (the attempt lost, the task run again, and where), at INFO."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from airflow_provider_connect.runtime.driver.spark_runner import RunProgress
from airflow_provider_connect.runtime.executor.task_spec import TaskSpec
from airflow_provider_connect.store import State, StatusStore

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 1.0


class ProgressSource(Protocol):
    def progress(self, spec: TaskSpec) -> RunProgress | None: ...

    def slots(self) -> int: ...

    def slot_of(self, spec: TaskSpec) -> str:
        """The slot the run holds or waits for (runs sharing a slot share its name)."""


@dataclass
class _Seen:
    """What was last told about one run."""

    waiting: bool = False
    lost_attempts: int = 0
    lost_worker: str | None = None  # set from a lost attempt until the task runs again


class RunWatcher:
    """Watches live runs at most once a second (a few status-tracker calls per run)."""

    def __init__(self, runner: ProgressSource, statuses: StatusStore) -> None:
        self.runner = runner
        self.statuses = statuses
        self.seen: dict[str, _Seen] = {}  # by run id
        self.next_watch = 0.0

    def watch(self, specs: Iterable[TaskSpec]) -> None:
        """Looks at the runs of ``specs`` (submitted and not ended), once the interval has
        passed since the last look; forgets runs no longer given."""
        now = time.monotonic()
        if now < self.next_watch:
            return
        self.next_watch = now + WATCH_INTERVAL_S
        live = list(specs)
        self.seen = {s.run_id: self.seen.get(s.run_id, _Seen()) for s in live}
        progresses = [(spec, self.runner.progress(spec)) for spec in live]
        # A run not started while slots are free is being launched, not waiting.
        held = {self.runner.slot_of(spec) for spec, p in progresses if p and p.started}
        full = len(held) >= self.runner.slots()
        for spec, progress in progresses:
            if progress is not None:
                self._tell(spec, progress, self.seen[spec.run_id], full)

    def _tell(self, spec: TaskSpec, progress: RunProgress, seen: _Seen, full: bool) -> None:
        task = f"{spec.connector}-{spec.task_id}"
        if progress.lost_attempts > seen.lost_attempts:
            seen.lost_attempts = progress.lost_attempts
            seen.lost_worker = self._worker(spec) or "?"
            log.info(
                "task %s lost its executor (it ran in %s); Spark runs it again on a free slot",
                task,
                seen.lost_worker,
            )
        if not progress.started and full and not seen.waiting:
            seen.waiting = True
            reason = (
                f"Waiting for a Spark task slot: the application has {self.runner.slots()} "
                "now, each running task holds one, or shares one with up to tasks.per.slot "
                "tasks (more executors or cores, fewer tasks, or a higher tasks.per.slot)"
            )
            self.statuses.note_unassigned(spec.connector, spec.task_id, spec.run_id, reason)
            log.info("task %s: %s", task, reason)
        elif progress.started and seen.waiting:
            seen.waiting = False
            log.info("task %s got a Spark task slot", task)
        if progress.started and seen.lost_worker is not None:
            worker = self._worker(spec, State.RUNNING)
            if worker is not None and worker != seen.lost_worker:
                log.info("task %s runs again in %s", task, worker)
                seen.lost_worker = None

    def _worker(self, spec: TaskSpec, state: State | None = None) -> str | None:
        """The worker id the run's status names (in ``state``, when given)."""
        for status in self.statuses.task_statuses(spec.connector):
            if status.task_id == spec.task_id and state in (None, status.state):
                return status.worker_id
        return None
