"""The heartbeat of a running task: records that the run is alive and learns from the
store whether to pause, resume or stop."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from airflow_provider_connect.runtime.logs import in_task_context
from airflow_provider_connect.store import (
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
    ) -> None:
        self.statuses = statuses
        self.key = (connector, task_id, run_id)
        self.interval_s = interval_s
        self.grace_s = grace_s
        self.on_stop = on_stop
        self.report = report
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
