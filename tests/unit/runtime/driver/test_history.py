"""The throughput and lag history's pure logic: the samples appended from the records the
task runs reported (their sum is what the runs moved, across runs that ended, were
superseded or stopped), rates between samples, and the sinks' lag."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_provider_connect.control.history import rates
from airflow_provider_connect.runtime.driver.history import connector_lags
from airflow_provider_connect.store import RunReport, Sample, SinkProgress
from airflow_provider_connect.store.history import RunCount, new_samples

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_a_rate_is_the_records_a_sample_counts_over_the_time_since_the_one_before() -> None:
    samples = [Sample(at(0), 0, None), Sample(at(2), 100_000, None), Sample(at(12), 800, None)]
    assert rates(samples) == [(at(2), 50_000.0), (at(12), 80.0)]


def test_samples_of_nothing_moved_give_a_rate_of_zero() -> None:
    """A paused or stopped connector: its samples go on, counting nothing."""
    samples = [Sample(at(0), 500, None), Sample(at(10), 0, None), Sample(at(20), 0, None)]
    assert rates(samples) == [(at(10), 0.0), (at(20), 0.0)]


@pytest.mark.parametrize("samples", [[], [Sample(at(0), 100, 3)]])
def test_fewer_than_two_samples_give_no_rate(samples: list[Sample]) -> None:
    assert rates(samples) == []


def test_no_time_elapsed_gives_no_point() -> None:
    samples = [Sample(at(0), 100, None), Sample(at(0), 200, None), Sample(at(2), 300, None)]
    assert rates(samples) == [(at(2), 150.0)]


def test_a_report_counts_the_records_a_source_wrote_or_a_sink_put() -> None:
    assert (
        RunReport({"source_record_write_total": 40, "source_record_poll_total": 90}).records == 40
    )
    assert RunReport({"sink_record_send_total": 7, "sink_record_read_total": 9}).records == 7
    assert RunReport({}).records == 0


def run(connector: str, records: int, counted: int, started: float = 0) -> RunCount:
    return RunCount(connector, records, counted, at(started))


def test_a_sample_counts_what_each_run_moved_since_it_was_last_counted() -> None:
    """Runs of several tasks, and a run that ended or was superseded (its last records
    reported after the sample before), all count; a connector of no run counts nothing."""
    runs = [
        run("in", 1200, 1000),  # task 0, still running
        run("in", 300, 250),  # task 1's earlier run: its final report
        run("in", 40, 0, started=8),  # task 1's new run
        run("out", 9, 9),  # nothing since
        run("other", 5, 0),  # a connector not sampled
    ]
    samples = new_samples({"in": None, "out": 4, "idle": None}, runs, {"in", "out", "idle"}, at(10))
    assert samples == [
        ("in", Sample(at(10), 200 + 50 + 40, None)),
        ("out", Sample(at(10), 0, 4)),
        ("idle", Sample(at(10), 0, None)),
    ]


def test_a_connectors_first_sample_follows_one_of_nothing_when_its_first_run_started() -> None:
    """A backlog read at once, before the first sample, has the time it took: the rate
    between the two is the first point of the chart."""
    runs = [run("new", 100_000, 0, started=3), run("new", 10, 0, started=5)]
    samples = new_samples({"new": None, "waiting": None}, runs, set(), at(5))
    assert samples == [
        ("new", Sample(at(3), 0, None)),
        ("new", Sample(at(5), 100_010, None)),
        ("waiting", Sample(at(5), 0, None)),  # no run yet: nothing to start from
    ]
    assert rates([s for name, s in samples if name == "new"]) == [(at(5), 50_005.0)]


def test_samples_add_up_to_the_records_moved_across_pause_resume_and_stop() -> None:
    """A run reads a backlog, pauses, resumes, is stopped (its final report comes after the
    last sample that saw it), then a new run starts: what the samples count is every record
    each run moved, whatever the samples' times."""
    reports = {  # by sample time: the records each run has reported by then
        2: {"a": 100_000},
        4: {"a": 100_000},  # paused
        6: {"a": 104_000},  # resumed
        8: {"a": 108_600},  # stopped: its final report
        10: {"a": 108_600, "b": 0},  # a new run, from zero
        12: {"a": 108_600, "b": 700},
    }
    counted: dict[str, int] = {}
    sampled: set[str] = set()
    total = 0
    for seconds, runs in reports.items():
        counts = [RunCount("c", n, counted.get(r, 0), at(1)) for r, n in runs.items()]
        for name, sample in new_samples({"c": None}, counts, sampled, at(seconds)):
            total += sample.records
            sampled.add(name)
        counted.update(runs)
    assert total == 108_600 + 700


def progress(partition: int, committed: int | None, end: int | None) -> SinkProgress:
    return SinkProgress("topic", partition, committed, end, T0)


def test_a_sinks_lag_is_the_sum_of_its_known_lags() -> None:
    sink = {"out": [progress(0, 10, 15), progress(1, None, 4), progress(2, 8, 3)]}
    lags = connector_lags(["out", "in"], sink)
    assert lags == {"out": 5, "in": None}  # 5 + unknown + 0 (committed past the end seen)


def test_a_sink_without_a_known_lag_has_none() -> None:
    sink = {"out": [progress(0, None, 4)]}
    assert connector_lags(["out"], sink)["out"] is None
