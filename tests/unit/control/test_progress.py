"""The conditions the sensors wait for and the reasons they give while they wait, as pure
logic: no store, no Airflow (``ConnectorView`` is what the hook reads from the store)."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import replace
from typing import Any

import pytest

from airflow_provider_connect.control.progress import (
    ConnectorView,
    SinkCatchUp,
    Waiting,
    WaitWatch,
    not_running,
    offset_reached,
    sink_behind,
    source_behind,
    stall_timeout_s,
    waiting,
)
from airflow_provider_connect.store import SinkProgress

START = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.timezone.utc)
BEFORE = START - dt.timedelta(seconds=5)
AFTER = START + dt.timedelta(seconds=5)


def row(partition: int, committed: int | None, end: int | None, at: dt.datetime) -> SinkProgress:
    return SinkProgress("t", partition, committed, end, at)


def test_sink_targets_are_the_first_end_offsets_seen_after_the_start() -> None:
    watch = SinkCatchUp(START)
    assert not watch.caught_up([])
    assert not watch.caught_up([row(0, 100, 100, BEFORE)])  # no target before the start
    assert not watch.caught_up([row(0, 100, 150, AFTER)])
    assert watch.lag([row(0, 100, 150, AFTER)]) == 50
    # new records keep arriving: the target stays 150, so the sink catches up
    assert watch.caught_up([row(0, 150, 400, AFTER + dt.timedelta(seconds=5))])


def test_every_partition_must_reach_its_target() -> None:
    watch = SinkCatchUp(START)
    rows = [row(0, 10, 10, AFTER), row(1, 3, 7, AFTER), row(2, None, 0, AFTER)]
    assert not watch.caught_up(rows)
    rows[1] = row(1, 7, 7, AFTER)
    assert watch.caught_up(rows)  # partition 2 is empty: nothing to commit
    assert not SinkCatchUp(START).caught_up([row(0, None, 5, AFTER)])
    assert not SinkCatchUp(START).caught_up([row(0, 5, None, AFTER)])  # end not seen yet


def test_source_offsets() -> None:
    assert offset_reached({"position": 12, "file": "a"}, {"position": 10, "file": "a"})
    assert not offset_reached({"position": 9}, {"position": 10})
    assert not offset_reached({"position": 12, "file": "b"}, {"file": "a"})
    assert not offset_reached({"other": 1}, {"position": 1})
    assert not offset_reached(None, {"position": 0})
    assert not offset_reached({"done": 1}, {"done": True})  # a bool is not a number here
    source = view(
        source_offsets=(({"file": "a"}, {"position": 10}), ({"file": "b"}, {"position": 3}))
    )
    assert source_behind(source, {"position": 10}, {"file": "a"}) is None
    assert source_behind(source, {"position": 10}) == (
        'connector c has committed {"position": 3} for partition {"file": "b"}, short of '
        '{"position": 10}'
    )
    assert source_behind(source, {"position": 1}, {"file": "c"}) == (
        'connector c has committed no source offset for partition {"file": "c"} yet'
    )
    assert source_behind(view(), {"position": 0}) == (
        "connector c has committed no source offset yet"
    )
    both_behind = source_behind(source, {"position": 11})
    assert both_behind is not None and both_behind.endswith("(and 1 more partition(s) short of it)")


def entry(state: str, trace: str | None = None, **more: Any) -> dict[str, Any]:
    return {"state": state, "worker_id": "w", **({"trace": trace} if trace else {}), **more}


def view(
    connector: str = "RUNNING",
    tasks: tuple[str, ...] = ("RUNNING",),
    **changes: Any,
) -> ConnectorView:
    """A connector c with one task config, applied, on a runtime, in these states."""
    status = {
        "name": "c",
        "connector": entry(connector),
        "tasks": [entry(state, id=i) for i, state in enumerate(tasks)],
        "type": "sink",
    }
    return replace(ConnectorView("c", status, 1, True, len(tasks), "driver-1"), **changes)


PAUSED = "connector c is PAUSED and makes no progress until resumed"


def test_why_a_connector_does_not_run() -> None:
    assert not_running(view()) is None
    assert not_running(view("PAUSED", ("PAUSED",))) == PAUSED
    assert not_running(view("STOPPED", ())) == (
        "connector c is STOPPED and makes no progress until resumed"
    )
    slot = view()
    slot.status["tasks"][0] = entry("UNASSIGNED", "Waiting for a Spark task slot", id=0)
    assert not_running(slot) == (
        "connector c is RUNNING, tasks starting; task 0: Waiting for a Spark task slot"
    )
    assert not_running(view(tasks=("RUNNING", "UNASSIGNED"))) == (
        "connector c is RUNNING, tasks starting; task 1 is UNASSIGNED"
    )
    assert not_running(view(applied=False, config_version=3)) == (
        "connector c is not RUNNING yet; the runtime has not started config version 3 yet"
    )
    assert not_running(view(task_count=3)) == (
        "connector c is RUNNING, tasks starting; tasks 1, 2 have not started yet"
    )
    assert not_running(view(tasks=(), task_count=0)) == (
        "connector c is RUNNING, tasks starting; it has no tasks yet"
    )
    assert not_running(view("UNASSIGNED", ("UNASSIGNED",), runtime=None)) == (
        "no runtime runs the connectors (no herder holds the lease); connector c is not "
        "RUNNING yet; the connector is UNASSIGNED; task 0 is UNASSIGNED"
    )
    assert not_running(view(runtime=None)) is None  # running all the same, as far as we know


def test_how_far_a_sink_is_behind() -> None:
    watch = SinkCatchUp(START)
    assert sink_behind(view(), watch) == "connector c has recorded no progress yet"
    unknown = "connector c has recorded no end offset since the wait began"
    assert sink_behind(view(sink_progress=(row(0, 100, 100, BEFORE),)), watch) == unknown
    assert sink_behind(view(sink_progress=(row(0, None, None, AFTER),)), watch) == unknown
    fresh = (row(0, 0, 1000, AFTER), row(1, 5, 5, BEFORE))
    assert sink_behind(view(sink_progress=fresh), watch) == (
        "connector c is 1000 records behind, with 1 partition(s) whose end offset was not "
        "recorded since the wait began"
    )
    fresh = (row(0, 400, 1200, AFTER), row(1, 5, 5, AFTER))
    assert sink_behind(view(sink_progress=fresh), watch) == "connector c is 600 records behind"
    done = (row(0, 1000, 1200, AFTER), row(1, 5, 5, AFTER))
    assert sink_behind(view(sink_progress=done), watch) is None


def test_the_reason_names_the_state_the_topics_and_the_lag() -> None:
    behind = "connector c is 1000 records behind"
    paused = view("PAUSED", ("PAUSED",))
    assert waiting(paused, behind).reason == f"{PAUSED}; {behind}"
    missing = view(waiting_on=("topic orders does not exist",))
    assert waiting(missing, "connector c has recorded no progress yet").reason == (
        "topic orders does not exist; connector c has recorded no progress yet"
    )
    assert waiting(view(), None, behind).reason == behind
    # what moves: states and committed offsets, not end offsets or times
    moved = view(sink_progress=(row(0, 10, 99, AFTER),))
    assert (
        waiting(moved).progress == waiting(view(sink_progress=(row(0, 10, 500, START),))).progress
    )
    assert waiting(moved).progress != waiting(view(sink_progress=(row(0, 11, 99, AFTER),))).progress
    assert waiting(paused).progress != waiting(view()).progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_watch_tells_changes_and_stalls() -> None:
    clock = Clock()
    watch = WaitWatch(300, clock)
    paused = Waiting(PAUSED, "p1")
    first = watch.observe(paused)
    assert first.changed and first.stalled is None
    clock.now += 299
    assert watch.observe(paused).changed is False and watch.observe(paused).stalled is None
    clock.now += 1
    assert watch.observe(paused).stalled == f"no progress for 300 s: {PAUSED}"
    # progress that moves restarts the clock, whatever the reason says
    clock.now += 1000
    assert watch.observe(Waiting("connector c is 10 records behind", "p2")).stalled is None
    assert watch.observe(Waiting("connector c is 10 records behind", "p2")).changed is False
    clock.now += 150
    assert watch.observe(Waiting("connector c is 5 records behind", "p3")).changed is True
    assert watch.last_waited_on("Gave up after 60s") == (
        "Gave up after 60s; last waited on: connector c is 5 records behind"
    )
    assert WaitWatch().last_waited_on("Gave up after 60s") == "Gave up after 60s"
    never = WaitWatch(None, clock)
    never.observe(paused)
    clock.now += 10**9
    assert never.observe(paused).stalled is None


def test_follow_logs_once_per_change(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("test.wait")
    caplog.set_level(logging.INFO, "test.wait")
    watch = WaitWatch(0.5, Clock())
    for reason in [PAUSED, PAUSED, PAUSED, "connector c is 3 records behind", PAUSED]:
        watch.follow(Waiting(reason, "p"), log)
    assert caplog.messages == [
        f"Still waiting: {PAUSED}",
        "Still waiting: connector c is 3 records behind",
        f"Still waiting: {PAUSED}",
    ]


def test_stall_timeouts_as_given_or_rendered() -> None:
    assert stall_timeout_s(None) is None
    assert stall_timeout_s("None") is None and stall_timeout_s(" ") is None
    assert stall_timeout_s(300) == 300.0 and stall_timeout_s("2.5") == 2.5
    with pytest.raises(ValueError, match="positive number of seconds"):
        stall_timeout_s(0)
    with pytest.raises(ValueError):
        stall_timeout_s("soon")
