"""Prometheus metrics at ``/metrics`` (on the REST listeners, and on ``metrics.listeners``
when set): Kafka Connect's metric groups under Prometheus names, read at each scrape from
the metadata database with one query per table (``connectors_overview``) and from the
herder. Kafka's attribute ``connector-class`` of the group ``connector-metrics`` becomes the
label ``connector_class`` of ``kafka_connect_connector_info``; counts become gauges.

Groups so far: connector metrics (status, class, type), connector-task metrics (status),
worker metrics (connectors and tasks by state, Spark task slots used and free) and, for
sinks, the committed and end offsets and the lag of each partition."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from airflow_provider_connect.control.overview import connectors_overview
from airflow_provider_connect.store import MetadataStore, State

PREFIX = "kafka_connect_"
STATES = [s.value for s in State]

SlotUsage = Callable[[], tuple[int, int] | None]
"""Spark task slots (used, all) of the driver's herder; None while it has none."""


class ConnectCollector(Collector):
    """Collects at each scrape; never caches."""

    def __init__(self, store: MetadataStore, slot_usage: SlotUsage | None = None) -> None:
        self.store = store
        self.slot_usage = slot_usage

    def collect(self) -> Iterator[Metric]:
        overview = connectors_overview(self.store)
        connectors = [c for c in overview["connectors"] if not c["deleted"]]
        yield from self._connectors(connectors)
        yield from self._tasks(connectors)
        yield from self._worker(connectors)
        yield from self._sinks(connectors)

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


def metrics_router(store: MetadataStore, slot_usage: SlotUsage | None = None) -> APIRouter:
    """``GET /metrics`` in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConnectCollector(store, slot_usage))
    router = APIRouter()

    @router.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return router
