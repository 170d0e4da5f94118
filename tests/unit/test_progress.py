"""The progress conditions of ConnectorOffsetSensor, as pure logic."""

from __future__ import annotations

import datetime as dt

from airflow_provider_connect.hooks.progress import (
    SinkCatchUp,
    offset_reached,
    source_offsets_reached,
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
    offsets = [({"file": "a"}, {"position": 10}), ({"file": "b"}, {"position": 3})]
    assert source_offsets_reached(offsets, {"position": 10}, {"file": "a"})
    assert not source_offsets_reached(offsets, {"position": 10})
    assert not source_offsets_reached(offsets, {"position": 1}, {"file": "c"})
    assert not source_offsets_reached([], {"position": 0})
