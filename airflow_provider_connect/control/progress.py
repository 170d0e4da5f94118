"""When has a connector made the progress a DAG waits for, and why does a wait go on? Pure
logic over what the store holds (``ConnectHook`` reads it), shared by the sensors and their
triggers: whether the condition holds, the reason it does not yet as a person reads it,
whether that reason changed or the progress stalled, and when the metadata database went
away and came back (``WaitWatch``)."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from numbers import Real
from typing import Any, Protocol

from airflow_provider_connect.store import SinkProgress, State


class SinkCatchUp:
    """Tracks whether a sink connector's consumer group has caught up to the end offsets its
    topics had when the watch started.

    The target of each partition is the end offset in the first progress row written at or
    after ``started_at`` (the sink tasks write one at every offset commit), so it is never
    below the end offset at ``started_at``. A partition is caught up once its committed offset
    reaches its target, or, when nothing was ever committed, when its target is 0 (empty).
    """

    def __init__(self, started_at: dt.datetime) -> None:
        self.started_at = started_at
        self.targets: dict[tuple[str, int], int] = {}

    def caught_up(self, progress: Iterable[SinkProgress]) -> bool:
        """Whether every partition with progress has reached its target (False when there
        is no progress yet)."""
        rows = list(progress)
        for row in rows:
            key = (row.topic, row.partition)
            fresh = row.updated_at >= self.started_at
            if fresh and row.end_offset is not None and key not in self.targets:
                self.targets[key] = row.end_offset
        return bool(rows) and all(self._reached(row) for row in rows)

    def _reached(self, row: SinkProgress) -> bool:
        target = self.targets.get((row.topic, row.partition))
        if target is None:
            return False
        return (row.committed_offset or 0) >= target

    def lag(self, progress: Iterable[SinkProgress]) -> int | None:
        """Records still to commit to reach the targets known so far (None before any)."""
        lags = [
            max(self.targets[(r.topic, r.partition)] - (r.committed_offset or 0), 0)
            for r in progress
            if (r.topic, r.partition) in self.targets
        ]
        return sum(lags) if lags else None


def offset_reached(stored: dict[str, Any] | None, target: dict[str, Any]) -> bool:
    """Whether a source offset has reached ``target``: every key of the target is present,
    numbers at or past the target's, anything else equal."""
    if stored is None:
        return False
    for key, wanted in target.items():
        if key not in stored:
            return False
        value = stored[key]
        if _is_number(wanted) and _is_number(value):
            if value < wanted:
                return False
        elif value != wanted or type(value) is not type(wanted):
            return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


# -- why a wait goes on ------------------------------------------------------------------------
@dataclass(frozen=True)
class ConnectorView:
    """One connector as a wait sees it at one poll (``ConnectHook.connector_view`` reads it):
    its REST status with the tasks of its current generation only, whether the runtime has
    applied ``config_version`` (the config waited for), how many tasks that generation has,
    which runtime holds the herder lease (None: none runs the connectors), what its RUNNING
    or PAUSED tasks wait on (``task 0: topic orders does not exist``; last, the Kafka
    cluster when it does not answer the runtime), and its progress."""

    name: str
    status: dict[str, Any]
    config_version: int
    applied: bool
    task_count: int
    runtime: str | None
    waiting_on: tuple[str, ...] = ()
    sink_progress: tuple[SinkProgress, ...] = ()
    source_offsets: tuple[tuple[dict[str, Any], dict[str, Any] | None], ...] = ()


@dataclass(frozen=True)
class Waiting:
    """Why a condition does not hold yet: ``reason``, as a person reads it, and ``progress``,
    what moves when the connector does (its states, what its tasks wait on, its committed
    offsets), compared poll after poll to notice a stall."""

    reason: str
    progress: str


def not_running(view: ConnectorView) -> str | None:
    """Why the connector does not run ``view.config_version`` with every task RUNNING;
    None once it does. FAILED is the caller's to raise. The connector's own state comes
    first and is named as such (``connector c is RUNNING, tasks starting; task 0 is
    UNASSIGNED``), so that a task's state never reads as the connector's."""
    name, connector, tasks = view.name, view.status["connector"], view.status["tasks"]
    state = connector["state"]
    details = []
    if state in (State.PAUSED.value, State.STOPPED.value):
        return _with_runtime(
            view, f"connector {name} is {state} and makes no progress until resumed"
        )
    if not view.applied:
        details.append(f"the runtime has not started config version {view.config_version} yet")
    elif state != State.RUNNING.value:
        details.append(_state_of("the connector", connector))
    details += [_state_of(f"task {t['id']}", t) for t in tasks if t["state"] != State.RUNNING.value]
    started = {t["id"] for t in tasks}
    unstarted = [i for i in range(view.task_count) if i not in started]
    if unstarted:
        details.append(f"{_tasks(unstarted)} not started yet")
    elif view.applied and not tasks:
        details.append("it has no tasks yet")
    if not details:
        return None
    if view.applied and state == State.RUNNING.value:
        whole = f"connector {name} is RUNNING, tasks starting; "
    else:
        whole = f"connector {name} is not RUNNING yet; "
    return _with_runtime(view, whole + "; ".join(details))


def _state_of(what: str, entry: dict[str, Any]) -> str:
    """``task 0 is PAUSED``; for an UNASSIGNED one the runtime said why (no free Spark task
    slot): ``task 0: <why>``."""
    if entry["state"] == State.UNASSIGNED.value and entry.get("trace"):
        return f"{what}: {entry['trace']}"
    return f"{what} is {entry['state']}"


def _tasks(ids: list[int]) -> str:
    return f"task {ids[0]} has" if len(ids) == 1 else f"tasks {', '.join(map(str, ids))} have"


def _with_runtime(view: ConnectorView, reason: str) -> str:
    if view.runtime is None:
        return f"no runtime runs the connectors (no herder holds the lease); {reason}"
    return reason


def sink_behind(view: ConnectorView, catch_up: SinkCatchUp) -> str | None:
    """How far a sink is from the targets of ``catch_up``; None once it caught up."""
    rows = view.sink_progress
    if catch_up.caught_up(rows):
        return None
    name = view.name
    if not rows:
        return f"connector {name} has recorded no progress yet"
    lag = catch_up.lag(rows)
    if lag is None:
        return f"connector {name} has recorded no end offset since the wait began"
    unseen = sum((r.topic, r.partition) not in catch_up.targets for r in rows)
    if unseen:
        return (
            f"connector {name} is {lag} records behind, with {unseen} partition(s) whose "
            "end offset was not recorded since the wait began"
        )
    return f"connector {name} is {lag} records behind"


def source_behind(
    view: ConnectorView, target: dict[str, Any], partition: dict[str, Any] | None = None
) -> str | None:
    """How far a source's committed offsets are from ``target``; None once the committed
    offset of ``partition`` (or, when None, of every committed partition, at least one)
    reached it (see ``offset_reached``)."""
    stored = [(p, o) for p, o in view.source_offsets if partition is None or p == partition]
    behind = [(p, o) for p, o in stored if not offset_reached(o, target)]
    if stored and not behind:
        return None
    name = view.name
    if not stored:
        where = "" if partition is None else f" for partition {_json(partition)}"
        return f"connector {name} has committed no source offset{where} yet"
    (first, offset), more = behind[0], len(behind) - 1
    others = f" (and {more} more partition(s) short of it)" if more else ""
    return (
        f"connector {name} has committed {_json(offset)} for partition {_json(first)}, short "
        f"of {_json(target)}{others}"
    )


def waiting(view: ConnectorView, *behind: str | None) -> Waiting:
    """A wait's reason: why the connector does not run (``not_running``), what its tasks
    wait on, and how far it is behind (each ``behind`` given), in that order."""
    parts = [not_running(view), *dict.fromkeys(view.waiting_on), *behind]
    return Waiting("; ".join(p for p in parts if p), progress_of(view))


def progress_of(view: ConnectorView) -> str:
    """What moves when the connector does: whether its config applied, its and its tasks'
    states, what they wait on, and its committed offsets (not end offsets, not times)."""
    return _json(
        [
            view.applied,
            view.status["connector"]["state"],
            [(t["id"], t["state"]) for t in view.status["tasks"]],
            view.waiting_on,
            [(r.topic, r.partition, r.committed_offset) for r in view.sink_progress],
            view.source_offsets,
        ]
    )


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class Observation:
    """One poll's verdict: whether the reason changed since the previous poll, and the
    message to fail with when the progress stood still too long (None: not stalled)."""

    changed: bool
    stalled: str | None


class InfoLog(Protocol):
    """Where ``WaitWatch`` logs: a ``logging.Logger`` or Airflow's task and trigger
    loggers."""

    def info(self, event: Any, *args: Any) -> Any: ...

    def warning(self, event: Any, *args: Any) -> Any: ...


class WaitWatch:
    """Follows what a sensor or trigger waits on, poll after poll: says when the reason
    changed (log it then, not at every poll) and when the progress has not moved for
    ``stall_timeout_s`` seconds (None: never gives up for that), and what it last waited on
    for a timeout message. Its clock starts at the first poll.

    A poll that could not reach the metadata database (:meth:`unreachable`) is no verdict:
    the wait goes on, the loss is logged once (WARNING) and the database's return once
    (INFO, :meth:`reachable`), and the time it was away does not count towards a stall."""

    def __init__(
        self,
        stall_timeout_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stall_timeout_s = stall_timeout_s
        self.clock = clock
        self.reason: str | None = None
        self._progress: str | None = None
        self._since = 0.0
        self._away_since: float | None = None

    @property
    def database_away(self) -> bool:
        """Whether the last poll could not reach the metadata database."""
        return self._away_since is not None

    def unreachable(self, error: Exception, log: InfoLog) -> None:
        """A poll could not reach the metadata database (``error``, a ``StoreUnavailable``,
        names it and the cause): logged once per outage, and what the wait waits on until
        a poll reaches it again."""
        self.reason = str(error)
        if self._away_since is not None:
            return
        self._away_since = self.clock()
        log.warning("Still waiting: %s", error)

    def reachable(self, log: InfoLog) -> None:
        """A poll reached the metadata database: after an outage, logs its return and
        moves the stall clock past the time it was away."""
        if self._away_since is None:
            return
        away = self.clock() - self._away_since
        self._away_since = None
        self._since += away
        log.info("The metadata database is reachable again (after %.1f s)", away)

    def observe(self, wait: Waiting) -> Observation:
        now = self.clock()
        changed = wait.reason != self.reason
        self.reason = wait.reason
        if wait.progress != self._progress:
            self._progress, self._since = wait.progress, now
        stalled = None
        limit = self.stall_timeout_s
        if limit is not None and now - self._since >= limit:
            stalled = f"no progress for {_number(limit)} s: {wait.reason}"
        return Observation(changed, stalled)

    def follow(self, wait: Waiting, log: InfoLog) -> str | None:
        """``observe``, logging the reason when it changed; returns the stall message."""
        seen = self.observe(wait)
        if seen.changed:
            log.info("Still waiting: %s", wait.reason)
        return seen.stalled

    def last_waited_on(self, message: str) -> str:
        """``message`` (a timeout's) with what the wait last waited on."""
        return message if self.reason is None else f"{message}; last waited on: {self.reason}"


def _number(seconds: float) -> str:
    return f"{seconds:g}"


def stall_timeout_s(value: float | str | None) -> float | None:
    """A ``stall_timeout`` as given or rendered from a template: seconds (a number, or text
    of one), or None, "" and "None" for off."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "None")):
        return None
    seconds = float(value)
    if not seconds > 0:
        raise ValueError(f"stall_timeout must be a positive number of seconds, not {value!r}")
    return seconds
