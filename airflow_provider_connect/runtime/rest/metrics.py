"""Prometheus metrics at ``/metrics`` (on the REST listeners, and on ``metrics.listeners``
when set): Kafka Connect's metric groups under Prometheus names, read at each scrape from
the metadata database with one query per table (``connectors_overview``) and from the
herder. Kafka's attribute ``connector-class`` of the group ``connector-metrics`` becomes the
label ``connector_class`` of ``kafka_connect_connector_info``; counts become gauges.

Task runs count per batch and write their counters with each heartbeat
(``executor/task_metrics.py``); a scrape shows them as of each task's last heartbeat.

Plugins' own metrics (KIP-877, group ``plugins``) are gauges named
``kafka_connect_plugins_<name>`` (characters other than letters, digits and ``_`` become
``_``, in tag names too), labelled with their tags: ``connector`` (and ``task``,
``converter``, ``transformation`` or ``predicate``) and the plugin's own. A task run's come
with its counters, as of its last heartbeat, while the task is RUNNING or PAUSED (an ended
run's plugins are gone with it); a connector instance's are read from the driver's herder at
each scrape and are gone once the instance stopped. A deleted connector's are left out at
once.

The runtime's group ``app-info`` (``version``, ``commit-id``, ``start-time-ms``) is tagged
with ``client-id``, the driver's worker id, as Kafka 4.x tags a worker's (KIP-1120):
``kafka_connect_app_info{client_id, version, commit_id}`` and
``kafka_connect_app_info_start_time_ms{client_id}``."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.metrics import MetricName
from airflow_provider_connect.control.overview import LIVE, connectors_overview
from airflow_provider_connect.store import MetadataStore, State

PREFIX = "kafka_connect_"
STATES = [s.value for s in State]

SlotUsage = Callable[[], tuple[int, int] | None]
"""Spark task slots (used, all) of the driver's herder; None while it has none."""

ConnectorPluginMetrics = Callable[[], dict[MetricName, float]]
"""The plugin metrics of the connector instances on the driver's herder, now (KIP-877)."""


@dataclass(frozen=True)
class AppInfo:
    """What Kafka's group ``app-info`` says of a runtime: its ``client-id`` (the worker id
    its driver reports statuses under), version, commit (``unknown``, as Kafka's when not
    known) and when it started (ms since the epoch)."""

    client_id: str
    version: str = __version__
    commit_id: str = "unknown"
    start_time_ms: int = field(default_factory=lambda: int(time.time() * 1000))


class ConnectCollector(Collector):
    """Collects at each scrape; never caches."""

    def __init__(
        self,
        store: MetadataStore,
        slot_usage: SlotUsage | None = None,
        connector_metrics: ConnectorPluginMetrics | None = None,
        app_info: AppInfo | None = None,
    ) -> None:
        self.store = store
        self.slot_usage = slot_usage
        self.connector_metrics = connector_metrics
        self.app_info = app_info

    def collect(self) -> Iterator[Metric]:
        yield from self._app_info()
        overview = connectors_overview(self.store)
        connectors = [c for c in overview["connectors"] if not c["deleted"]]
        yield from self._connectors(connectors)
        yield from self._tasks(connectors)
        yield from self._worker(connectors)
        yield from self._sinks(connectors)
        yield from self._task_counters(connectors)
        yield from self._plugins(connectors)

    def _app_info(self) -> Iterator[Metric]:
        """Group ``app-info``, tagged with ``client-id`` (KIP-1120); none without it."""
        app = self.app_info
        if app is None:
            return
        info = InfoMetricFamily(
            f"{PREFIX}app", "Metric indicating version and commit-id", labels=["client_id"]
        )
        info.add_metric([app.client_id], {"version": app.version, "commit_id": app.commit_id})
        yield info
        start = GaugeMetricFamily(
            f"{PREFIX}app_info_start_time_ms",
            "Metric indicating start-time-ms",
            labels=["client_id"],
        )
        start.add_metric([app.client_id], app.start_time_ms)
        yield start

    def _task_counters(self, connectors: list[dict[str, Any]]) -> Iterator[Metric]:
        families: dict[str, CounterMetricFamily | GaugeMetricFamily] = {}
        for c in connectors:
            for task in c["tasks"]:
                values = task.get("metrics") or {}
                for name, kind, help_text, read in TASK_METRICS:
                    value = read(values)
                    if value is None:
                        continue
                    if name not in families:
                        labels = ["connector", "task"]
                        families[name] = (
                            CounterMetricFamily(PREFIX + name, help_text, labels=labels)
                            if kind == "counter"
                            else GaugeMetricFamily(PREFIX + name, help_text, labels=labels)
                        )
                    families[name].add_metric([c["name"], str(task["id"])], value)
        yield from families.values()

    def _plugins(self, connectors: list[dict[str, Any]]) -> Iterator[Metric]:
        """Group ``plugins``: the connector instances' metrics and the task runs' of tasks
        in a live state (see the module docstring), of the connectors listed only."""
        live = {c["name"] for c in connectors}
        found = self.connector_metrics() if self.connector_metrics is not None else {}
        samples = [(name, v) for name, v in found.items() if name.tags.get("connector") in live]
        for c in connectors:
            for task in [t for t in c["tasks"] if t["state"] in LIVE]:
                for key, value in (task.get("metrics") or {}).items():
                    name = MetricName.decode(key)
                    if name is not None:
                        samples.append((name, value))
        yield from plugin_families(samples)

    def _connectors(self, connectors: list[dict[str, Any]]) -> Iterator[Metric]:
        info = InfoMetricFamily(
            f"{PREFIX}connector", "Connector metrics: class, type and status of a connector."
        )
        for c in connectors:
            info.add_metric(
                [],
                {
                    "connector": c["name"],
                    "connector_class": c["class"],
                    "connector_type": c["type"],
                    "status": c["connector"]["state"].lower(),
                },
            )
        yield info

    def _tasks(self, connectors: list[dict[str, Any]]) -> Iterator[Metric]:
        info = InfoMetricFamily(
            f"{PREFIX}connector_task", "Connector-task metrics: the status of a task."
        )
        for c in connectors:
            for task in c["tasks"]:
                info.add_metric(
                    [],
                    {
                        "connector": c["name"],
                        "task": str(task["id"]),
                        "status": task["state"].lower(),
                        "worker_id": task["worker_id"],
                    },
                )
        yield info

    def _worker(self, connectors: list[dict[str, Any]]) -> Iterator[Metric]:
        by_state = Counter(c["connector"]["state"] for c in connectors)
        tasks = Counter(t["state"] for c in connectors for t in c["tasks"])
        yield GaugeMetricFamily(
            f"{PREFIX}worker_connector_count", "Connectors of this runtime.", len(connectors)
        )
        yield GaugeMetricFamily(
            f"{PREFIX}worker_task_count", "Tasks of this runtime.", sum(tasks.values())
        )
        for kind, counts in (("connector", by_state), ("task", tasks)):
            for state in STATES:
                yield GaugeMetricFamily(
                    f"{PREFIX}worker_{kind}_{state.lower()}_count",
                    f"{kind.capitalize()}s {state}.",
                    counts.get(state, 0),
                )
        usage = self.slot_usage() if self.slot_usage else None
        slots = GaugeMetricFamily(
            f"{PREFIX}worker_spark_task_slots",
            "Spark task slots of the application: used by task runs, and free.",
            labels=["state"],
        )
        if usage is not None:
            used, total = usage
            slots.add_metric(["used"], used)
            slots.add_metric(["free"], max(total - used, 0))
        yield slots

    def _sinks(self, connectors: list[dict[str, Any]]) -> Iterator[Metric]:
        labels = ["connector", "topic", "partition"]
        families = {
            key: GaugeMetricFamily(f"{PREFIX}sink_task_partition_{key}", text, labels=labels)
            for key, text in (
                ("committed_offset", "The offset the sink's consumer group committed."),
                ("end_offset", "The partition's end offset when the sink last looked."),
                ("lag", "Records of the partition the sink has not committed yet."),
            )
        }
        for c in connectors:
            for progress in c["sink_progress"]:
                where = [c["name"], progress["topic"], str(progress["partition"])]
                for key, family in families.items():
                    if progress[key] is not None:
                        family.add_metric(where, progress[key])
        yield from families.values()


def plugin_families(samples: Iterable[tuple[MetricName, float]]) -> list[GaugeMetricFamily]:
    """One gauge family per plugin metric name, a sample per tag set (the first of two that
    come out the same once made Prometheus names); help from the first description."""
    families: dict[str, GaugeMetricFamily] = {}
    seen: set[tuple[str, frozenset[tuple[str, str]]]] = set()
    for name, value in samples:
        metric = f"{PREFIX}{_prometheus_name(name.group)}_{_prometheus_name(name.name)}"
        labels = {_prometheus_name(tag): str(v) for tag, v in name.tags.items()}
        series = (metric, frozenset(labels.items()))
        if series in seen:
            continue
        seen.add(series)
        family = families.get(metric)
        if family is None:
            help_text = name.description or f"The plugin metric {name.name}."
            family = families[metric] = GaugeMetricFamily(metric, help_text)
        family.add_sample(metric, labels, value)
    return list(families.values())


def _prometheus_name(text: str) -> str:
    """``text`` with every character Prometheus names do not take made ``_``; a name that
    would start with a digit starts with ``_``."""
    name = _NOT_IN_NAMES.sub("_", text)
    return f"_{name}" if name[:1].isdigit() else name


_NOT_IN_NAMES = re.compile(r"[^a-zA-Z0-9_]")


def _key(key: str) -> Callable[[dict[str, float]], float | None]:
    return lambda values: values.get(key)


def _average(kind: str) -> Callable[[dict[str, float]], float | None]:
    def read(values: dict[str, float]) -> float | None:
        count = values.get(f"{kind}_batch_count")
        if count is None:
            return None
        return values[f"{kind}_batch_time_ms_sum"] / count if count else 0.0

    return read


TASK_METRICS: list[tuple[str, str, str, Callable[[dict[str, float]], float | None]]] = [
    # source-task-metrics
    (
        "source_task_source_record_poll",
        "counter",
        "Records polled from the task.",
        _key("source_record_poll_total"),
    ),
    (
        "source_task_source_record_write",
        "counter",
        "Records written to Kafka (acknowledged) after transformations.",
        _key("source_record_write_total"),
    ),
    (
        "source_task_source_record_active_count",
        "gauge",
        "Records produced but not yet acknowledged by Kafka.",
        _key("source_record_active_count"),
    ),
    (
        "source_task_poll_batch_avg_time_ms",
        "gauge",
        "Average time of a poll, in ms.",
        _average("poll"),
    ),
    (
        "source_task_poll_batch_max_time_ms",
        "gauge",
        "Longest poll, in ms.",
        _key("poll_batch_time_ms_max"),
    ),
    # sink-task-metrics
    (
        "sink_task_sink_record_read",
        "counter",
        "Records read from Kafka.",
        _key("sink_record_read_total"),
    ),
    (
        "sink_task_sink_record_send",
        "counter",
        "Records put to the task after transformations.",
        _key("sink_record_send_total"),
    ),
    ("sink_task_put_batch_avg_time_ms", "gauge", "Average time of a put, in ms.", _average("put")),
    (
        "sink_task_put_batch_max_time_ms",
        "gauge",
        "Longest put, in ms.",
        _key("put_batch_time_ms_max"),
    ),
    (
        "sink_task_partition_count",
        "gauge",
        "Topic partitions assigned to the task.",
        _key("partition_count"),
    ),
    (
        "sink_task_offset_commit_completion",
        "counter",
        "Offset commits that completed.",
        _key("offset_commit_completion_total"),
    ),
    # connector-task-metrics
    (
        "connector_task_offset_commit_success",
        "counter",
        "Successful offset commits.",
        _key("offset_commit_success_total"),
    ),
    (
        "connector_task_offset_commit_failure",
        "counter",
        "Failed offset commits.",
        _key("offset_commit_failure_total"),
    ),
    (
        "connector_task_offset_commit_max_time_ms",
        "gauge",
        "Longest offset commit, in ms.",
        _key("offset_commit_time_ms_max"),
    ),
    (
        "connector_task_running_ratio",
        "gauge",
        "Share of the run's time it was not paused.",
        _key("running_ratio"),
    ),
    # task-error-metrics
    (
        "task_error_total_record_errors",
        "counter",
        "Record errors in any stage.",
        _key("total_record_errors"),
    ),
    (
        "task_error_total_record_failures",
        "counter",
        "Record errors beyond the tolerance.",
        _key("total_record_failures"),
    ),
    (
        "task_error_total_records_skipped",
        "counter",
        "Records skipped under errors.tolerance=all.",
        _key("total_records_skipped"),
    ),
    (
        "task_error_deadletterqueue_produce_requests",
        "counter",
        "Records written to the dead-letter queue.",
        _key("deadletterqueue_produce_requests"),
    ),
    (
        "task_error_last_error_timestamp",
        "gauge",
        "When the last record error happened (ms).",
        _key("last_error_timestamp"),
    ),
]
"""Metric name (after ``kafka_connect_``; counters get ``_total``), type, help, and how to
read it from a task's counters."""


def metrics_router(
    store: MetadataStore,
    slot_usage: SlotUsage | None = None,
    connector_metrics: ConnectorPluginMetrics | None = None,
    app_info: AppInfo | None = None,
) -> APIRouter:
    """``GET /metrics`` in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConnectCollector(store, slot_usage, connector_metrics, app_info))
    router = APIRouter()

    @router.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return router
