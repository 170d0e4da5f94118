"""The heartbeat of a running task: records that the run is alive and learns from the
store whether to pause, resume or stop, and whether cluster-wide log levels changed."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from airflow_provider_connect.runtime.logs import LOG_LEVELS, in_task_context
from airflow_provider_connect.store import (
    LogLevelStore,
    RunReport,
    StatusStore,
    StoreUnavailable,
    TargetState,
    TaskControl,
)

log = logging.getLogger(__name__)


class Heartbeat:
    """Beats every ``interval_s`` on its own thread, so a task blocked in ``poll``/``put``
    still beats and can be told to stop.

    ``on_stop(deleted)`` is called at most once, from the heartbeat thread, when the run was
    superseded, or its connector was deleted or stopped, or no heartbeat has reached the store
    for ``grace_s`` (``task.store.unreachable.grace.ms``). Until then a run that cannot reach
    the store goes on as it was (running or paused): the database being away is logged by
    the database, once, not by every beat. ``paused`` mirrors the connector's target state.
    Each beat writes ``report()`` (the run's counters and what it waits on) when given.

    Cluster-wide log levels (KIP-976) written after ``log_levels_since`` (the run's
    ``TaskSpec.log_levels_since``) apply to the process: :meth:`apply_log_levels` when the
    run starts, then, from each beat that finds them changed (the beat's transaction reads
    their version), one read of what changed. Levels are best effort: failing to read or
    apply them never fails a beat.
    """

    def __init__(
        self,
        statuses: StatusStore,
        connector: str,
        task_id: int,
        run_id: str,
        interval_s: float,
        grace_s: float,
        on_stop: Callable[[bool], None],
        report: Callable[[], RunReport] | None = None,
        log_levels_since: int = 0,
    ) -> None:
        self.statuses = statuses
        self.key = (connector, task_id, run_id)
        self.interval_s = interval_s
        self.grace_s = grace_s
        self.on_stop = on_stop
        self.report = report
        self.log_levels = LogLevelStore(statuses.db)
        self.log_levels_since = log_levels_since
        self.stopping = threading.Event()
        self.paused = threading.Event()
        self.deleted = False
        self._closed = threading.Event()
        self._thread = threading.Thread(
            target=in_task_context(self._run), name=f"heartbeat-{connector}-{task_id}", daemon=True
        )

    def start(self) -> None:
        self.beat()
        self._thread.start()

    def apply_log_levels(self) -> None:
        """Applies the cluster-wide log levels this process has yet to apply; never raises."""
        LOG_LEVELS.sync(self.log_levels, since=self.log_levels_since)

    def beat(self) -> TaskControl:
        """One heartbeat; applies what the store says."""
        control = self.statuses.heartbeat(
            *self.key, self.report() if self.report is not None else None
        )
        if control.target_state is TargetState.PAUSED:
            self.paused.set()
        else:
            self.paused.clear()
        if not control.current or control.deleted or control.target_state is TargetState.STOPPED:
            self.request_stop(control.deleted)
        LOG_LEVELS.sync(self.log_levels, control.log_levels_version, self.log_levels_since)
        return control

    def request_stop(self, deleted: bool) -> None:
        if not self.stopping.is_set():
            self.deleted = deleted
            self.stopping.set()
            self.on_stop(deleted)

    def _run(self) -> None:
        last_success = time.monotonic()
        failed = False  # the last beat failed otherwise than for the database being away
        while not self._closed.wait(self.interval_s):
            try:
                self.beat()
                last_success, failed = time.monotonic(), False
                continue
            except StoreUnavailable:  # the database logged it; the next beat tries again
                pass
            except Exception:  # the next beat tries again; logged once in a row
                if not failed:
                    log.warning("heartbeat of %s/%s failed", *self.key[:2], exc_info=True)
                failed = True
            away = time.monotonic() - last_success
            if away > self.grace_s and not self.stopping.is_set():
                log.error(
                    "%s/%s has not reached the metadata database for %.0f s "
                    "(task.store.unreachable.grace.ms): stopping; the herder starts it again "
                    "once the database is back",
                    *self.key[:2],
                    away,
                )
                self.request_stop(False)

    def close(self) -> None:
        self._closed.set()
        if self._thread.is_alive():
            self._thread.join()
