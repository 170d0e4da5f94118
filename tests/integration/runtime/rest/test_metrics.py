"""``/metrics`` scraped from a running runtime, on its REST listener and on its own
``metrics.listeners`` address, while a file source feeds a file sink: the record counters
equal the records moved. And the throughput and lag history the herder samples from the
same counters while a source keeps counting into a file sink."""

from __future__ import annotations

import datetime as dt
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from airflow_provider_connect.control.history import connector_history
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import Sample
from tests.connectors import SEQUENCE_SOURCE
from tests_common.broker import free_port
from tests_common.kafka import new_topic
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

LINES = 500


def scrape(url: str) -> dict[str, list[Any]]:
    """Metric name → its samples."""
    response = requests.get(f"{url}/metrics", timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    found: dict[str, list[Any]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(sample)
    return found


def test_a_scrape_during_a_run(
    worker_props: dict[str, str], spark: object, bootstrap: str, tmp_path: Path
) -> None:
    rest_port, metrics_port = free_port(), free_port()
    connect = Connect(
        "metrics",
        {
            **worker_props,
            "listeners": f"http://127.0.0.1:{rest_port}",
            "metrics.listeners": f"http://127.0.0.1:{metrics_port}",
        },
    )
    connect.start(rest=True)
    try:
        topic = new_topic(bootstrap)
        source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
        source_file.write_text("".join(f"line {i}\n" for i in range(LINES)))
        connect.add_connector(
            "lines-in",
            {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic},
        )
        connect.add_connector(
            "lines-out",
            {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic},
        )
        rest, metrics = f"http://127.0.0.1:{rest_port}", f"http://127.0.0.1:{metrics_port}"

        counters = (
            "kafka_connect_sink_task_partition_committed_offset",
            "kafka_connect_source_task_source_record_poll_total",
            "kafka_connect_source_task_source_record_write_total",
            "kafka_connect_sink_task_sink_record_read_total",
            "kafka_connect_sink_task_sink_record_send_total",
        )

        def moved() -> dict[str, list[Any]] | None:
            found = scrape(metrics)
            values = [[s.value for s in found.get(name, [])] for name in counters]
            return found if values == [[LINES]] * len(counters) else None

        found = wait_until(
            moved,
            90,
            "every counter reaches the lines moved",
            state=lambda: {
                name: [s.value for s in scrape(metrics).get(name, [])] for name in counters
            },
        )
        assert len(sink_file.read_text().splitlines()) == LINES
        assert scrape(rest).keys() == found.keys()  # the REST listener serves the same
    finally:
        connect.stop()

    info = {s.labels["connector"]: s.labels for s in found["kafka_connect_connector_info"]}
    assert info["lines-in"] == {
        "connector": "lines-in",
        "connector_class": "FileStreamSource",
        "connector_type": "source",
        "status": "running",
    }
    assert info["lines-out"]["connector_type"] == "sink"
    tasks = {
        (s.labels["connector"], s.labels["task"]): s.labels["status"]
        for s in found["kafka_connect_connector_task_info"]
    }
    assert tasks == {("lines-in", "0"): "running", ("lines-out", "0"): "running"}
    gauge = {name: samples[0].value for name, samples in found.items() if len(samples) == 1}
    assert gauge["kafka_connect_worker_connector_count"] == 2
    assert gauge["kafka_connect_worker_connector_running_count"] == 2
    assert gauge["kafka_connect_worker_task_running_count"] == 2
    assert gauge["kafka_connect_worker_task_failed_count"] == 0
    slots = {s.labels["state"]: s.value for s in found["kafka_connect_worker_spark_task_slots"]}
    assert slots["used"] == 2 and slots["used"] + slots["free"] == 16  # local[16]
    task = {name: samples[0] for name, samples in found.items()}
    assert task["kafka_connect_connector_task_offset_commit_success_total"].value >= 1
    assert task["kafka_connect_sink_task_partition_count"].value == 1
    assert task["kafka_connect_source_task_source_record_active_count"].value == 0  # all acked
    assert task["kafka_connect_sink_task_put_batch_avg_time_ms"].value >= 0
    assert task["kafka_connect_task_error_total_record_errors_total"].value == 0
    assert 0 < task["kafka_connect_connector_task_running_ratio"].value <= 1
    (lag,) = found["kafka_connect_sink_task_partition_lag"]
    assert lag.labels == {"connector": "lines-out", "topic": topic, "partition": "0"}
    assert lag.value >= 0


def grown(samples: list[Sample]) -> bool:
    """Whether the last two samples both count records moved since the one before."""
    return len(samples) >= 2 and samples[-2].records > 0 and samples[-1].records > 0


def test_the_herder_samples_throughput_and_lag_into_the_history(
    worker_props: dict[str, str], spark: object, bootstrap: str, tmp_path: Path
) -> None:
    connect = Connect("history", {**worker_props, "metrics.history.interval.ms": "1000"})
    started = dt.datetime.now(dt.timezone.utc)
    connect.start()
    try:
        topic = new_topic(bootstrap)
        connect.add_connector(  # 10 records every 100 ms, never ending
            "counting",
            {
                "connector.class": SEQUENCE_SOURCE,
                "topic": topic,
                "batch.size": "10",
                "poll.delay.ms": "100",
            },
        )
        connect.add_connector(
            "copying",
            {"connector.class": "FileStreamSink", "file": str(tmp_path / "out"), "topics": topic},
        )

        def both_grown() -> dict[str, list[Sample]] | None:
            samples = connect.store.history.since(started)
            ready = grown(samples.get("counting", [])) and grown(samples.get("copying", []))
            return samples if ready and samples["copying"][-1].lag is not None else None

        samples = wait_until(
            both_grown,
            60,
            "two samples of each connector with growing records",
            state=lambda: connect.store.history.since(started),
        )
        history = connector_history(connect.store, started)
    finally:
        connect.stop()

    assert all(s.lag is None for s in samples["counting"])  # a source has no lag
    for name in ("counting", "copying"):
        first, *taken = samples[name]
        assert first.records == 0  # when its first run started, at any distance from the next
        times = [s.sampled_at for s in taken]
        assert all(b - a > dt.timedelta(seconds=0.9) for a, b in pairwise(times))  # 1 s apart
        rates, lags = history[name]["records_per_s"], history[name]["lag"]
        assert len(rates) == len(lags) - 1 and len(lags) >= len(times)
        assert rates[-1][1] > 0
