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
    """Beats every ``interval_s`` on its own thread (or, in a slot host, with its
    :class:`HeartbeatGroup`'s beats), so a task blocked in ``poll``/``put`` still beats and
    can be told to stop.

    ``on_stop(deleted)`` is called at most once, from the heartbeat's (or its group's)
    thread, when the run was superseded, or its connector was deleted or stopped, or no
    heartbeat has reached the store for ``grace_s`` (``task.store.unreachable.grace.ms``). Until then a run that cannot reach
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
        group: HeartbeatGroup | None = None,
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
        self.group = group
        self.last_success = time.monotonic()
        self._failed = False  # the last beat failed otherwise than for the database being away
        self._closed = threading.Event()
        self._thread = threading.Thread(
            target=in_task_context(self._run), name=f"heartbeat-{connector}-{task_id}", daemon=True
        )
        self._stop_thread: threading.Thread | None = None
        self.in_context: Callable[..., None] = in_task_context(lambda call, *args: call(*args))
        """Calls ``call(*args)`` in the run's log context (for its group's thread)."""

    def start(self) -> None:
        """Beats once, then on its own thread, or with its group's beats."""
        self.beat()
        self.last_success = time.monotonic()
        if self.group is not None:
            self.group.add(self)
        else:
            self._thread.start()

    def apply_log_levels(self) -> None:
        """Applies the cluster-wide log levels this process has yet to apply; never raises."""
        LOG_LEVELS.sync(self.log_levels, since=self.log_levels_since)

    def beat(self) -> TaskControl:
        """One heartbeat; applies what the store says."""
        control = self.statuses.heartbeat(*self.key, self.reported())
        self.apply(control)
        return control

    def reported(self) -> RunReport | None:
        return self.report() if self.report is not None else None

    def apply(self, control: TaskControl) -> None:
        """Applies what a heartbeat learnt from the store."""
        if control.target_state is TargetState.PAUSED:
            self.paused.set()
        else:
            self.paused.clear()
        if not control.current or control.deleted or control.target_state is TargetState.STOPPED:
            self.request_stop(control.deleted)
        LOG_LEVELS.sync(self.log_levels, control.log_levels_version, self.log_levels_since)

    def request_stop(self, deleted: bool) -> None:
        """Sets ``stopping`` and calls ``on_stop``, once: on this thread, or, for a run of a
        group, on a thread of its own (a slow ``stop`` holds up no neighbour's beat)."""
        if self.stopping.is_set():
            return
        self.deleted = deleted
        self.stopping.set()
        if self.group is None:
            self.on_stop(deleted)
            return
        self._stop_thread = threading.Thread(
            target=in_task_context(self.on_stop),
            args=(deleted,),
            name=f"stop-{self.key[0]}-{self.key[1]}",
            daemon=True,
        )
        self._stop_thread.start()

    def _run(self) -> None:
        while not self._closed.wait(self.interval_s):
            try:
                self.beat()
            except Exception as e:
                self.missed(e)
            else:
                self.succeeded()

    def succeeded(self) -> None:
        self.last_success, self._failed = time.monotonic(), False

    def missed(self, error: Exception) -> None:
        """A beat failed: the next one tries again; past ``grace_s`` without one reaching
        the store, the run stops."""
        if not isinstance(error, StoreUnavailable):  # the database logs its absence, once
            if not self._failed:
                log.warning("heartbeat of %s/%s failed", *self.key[:2], exc_info=error)
            self._failed = True
        away = time.monotonic() - self.last_success
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
        """Ends the beats: once it returns, no beat applies anything to the run, and no stop
        call comes from another thread."""
        self._closed.set()
        if self.group is not None:
            self.group.remove(self)
        if self._thread.is_alive():
            self._thread.join()
        if self._stop_thread is not None:
            self._stop_thread.join()


class HeartbeatGroup:
    """The heartbeats of the runs sharing a slot host: every ``interval_s``, one transaction
    writes all their beats (``StatusStore.heartbeats``), and each run applies what it
    learnt, as its own beat would have; a failed write is each run's missed beat. A whole
    beat (reports, write, applies) holds the group's lock, so a run's
    :meth:`Heartbeat.close` waits for the beat under way, as it joins its own thread."""

    def __init__(self, statuses: StatusStore, interval_s: float) -> None:
        self.statuses = statuses
        self.interval_s = interval_s
        self._members: dict[int, Heartbeat] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="heartbeats", daemon=True)
        self._thread.start()

    def add(self, member: Heartbeat) -> None:
        with self._lock:
            self._members[id(member)] = member

    def remove(self, member: Heartbeat) -> None:
        """Once it returns, no beat of the group reads or applies anything of ``member``."""
        with self._lock:
            self._members.pop(id(member), None)

    def _run(self) -> None:
        while True:
            time.sleep(self.interval_s)  # the host's process lives as long as the group
            try:
                self.beat()
            except Exception:  # each member's missed beat is its own; this is the group's
                log.exception("the heartbeats of a slot host failed; trying again")

    def beat(self) -> None:
        with self._lock:
            members = list(self._members.values())
            beats = []
            for member in members:
                try:
                    beats.append((member, member.reported()))
                except Exception as e:
                    member.in_context(member.missed, e)
            if not beats:
                return
            try:
                controls = self.statuses.heartbeats([(m.key, report) for m, report in beats])
            except Exception as e:
                for member, _ in beats:
                    member.in_context(member.missed, e)
                return
            for (member, _), control in zip(beats, controls, strict=True):
                member.in_context(member.apply, control)
                member.succeeded()
