"""The throughput and lag history's pure logic: rates between samples, and the herder's
samples built from task counters and sink progress."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_provider_connect.control.history import rates
from airflow_provider_connect.runtime.driver.history import connector_samples
from airflow_provider_connect.store import Sample, SinkProgress, State, Status

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_steady_growth_gives_records_per_second_from_the_second_sample() -> None:
    samples = [Sample(at(0), 100, None), Sample(at(10), 600, None), Sample(at(15), 1100, None)]
    assert rates(samples) == [(at(10), 50.0), (at(15), 100.0)]


def test_a_drop_gives_no_point_where_the_records_moved_are_unknown() -> None:
    """One task of several started again: the sum dropped, though the others moved records."""
    samples = [Sample(at(0), 5000, None), Sample(at(10), 4300, None), Sample(at(20), 4800, None)]
    assert rates(samples) == [(at(20), 50.0)]


@pytest.mark.parametrize("samples", [[], [Sample(at(0), 100, 3)]])
def test_fewer_than_two_samples_give_no_rate(samples: list[Sample]) -> None:
    assert rates(samples) == []


def test_no_time_elapsed_gives_no_point() -> None:
    samples = [Sample(at(0), 100, None), Sample(at(0), 200, None), Sample(at(2), 300, None)]
    assert rates(samples) == [(at(2), 50.0)]


def status(connector: str, task_id: int, metrics: dict[str, float] | None) -> Status:
    return Status(connector, task_id, State.RUNNING, "w", None, 1, metrics=metrics)


def progress(partition: int, committed: int | None, end: int | None) -> SinkProgress:
    return SinkProgress("topic", partition, committed, end, T0)


def test_samples_sum_each_connectors_tasks_and_known_lags() -> None:
    statuses = {
        "in": [
            status("in", 0, {"source_record_write_total": 40, "source_record_poll_total": 90}),
            status("in", 1, {"source_record_write_total": 2}),
        ],
        "out": [status("out", 0, {"sink_record_send_total": 7, "sink_record_read_total": 9})],
        "new": [status("new", 0, None)],  # no heartbeat yet
    }
    sink = {"out": [progress(0, 10, 15), progress(1, None, 4), progress(2, 8, 3)]}
    samples = connector_samples(["in", "out", "new", "idle"], statuses, sink, T0)
    assert samples == {
        "in": Sample(T0, 42, None),
        "out": Sample(T0, 7, 5),  # 5 + unknown + 0 (committed past the end seen)
        "new": Sample(T0, 0, None),
        "idle": Sample(T0, 0, None),
    }


def test_a_sink_without_a_known_lag_has_none() -> None:
    sink = {"out": [progress(0, None, 4)]}
    assert connector_samples(["out"], {}, sink, T0)["out"].lag is None
