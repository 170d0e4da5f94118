"""A task run's metric counters, Kafka Connect's task metric groups: kept in the run's
process, counted per batch (a poll, a put, a commit; never per record), and written to the
metadata database with each heartbeat, where ``/metrics`` on the driver reads them.

Counters only grow during a run and start from zero with the next run of the task (a
restart, a new generation), as Kafka's do with a new task instance.

The run's plugins' own metrics (KIP-877: the task's, its converters', transformations' and
predicates') travel the same way: sampled with each snapshot, each under the key
``MetricName.encode()`` gives its name, beside the counters; at most
:data:`MAX_PLUGIN_METRICS` of them per run, so no plugin can bloat every heartbeat's write."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

from airflow_provider_connect.connect.metrics import PluginMetrics, SimplePluginMetrics

log = logging.getLogger(__name__)

MAX_PLUGIN_METRICS = 500
"""How many plugin metrics a run samples at most: its plugins' first ones, in the order the
plugins were made and their metrics registered; the rest are left out, with one warning."""
SOURCE_KEYS = (
    "source_record_active_count",
    "source_record_poll_total",
    "source_record_write_total",
    "poll_batch_time_ms_sum",
    "poll_batch_count",
    "poll_batch_time_ms_max",
)
SINK_KEYS = (
    "sink_record_read_total",
    "sink_record_send_total",
    "put_batch_time_ms_sum",
    "put_batch_count",
    "put_batch_time_ms_max",
    "partition_count",
    "offset_commit_completion_total",
)
TASK_KEYS = (
    "offset_commit_success_total",
    "offset_commit_failure_total",
    "offset_commit_time_ms_max",
    "running_ratio",
)
ERROR_KEYS = (
    "total_record_errors",
    "total_record_failures",
    "total_records_skipped",
    "deadletterqueue_produce_requests",
    "deadletterqueue_produce_failures",
    "last_error_timestamp",
)


class PluginMetricsFactory(Protocol):
    """Makes the :class:`PluginMetrics` of one plugin of a task run, tagged with the run's
    connector and task, then ``tags`` (``converter="key"``, ``transformation=<alias>``…)."""

    def __call__(self, **tags: str) -> PluginMetrics: ...


class TaskMetrics:
    """Called from the run's loop thread (and its error handler); ``snapshot`` from the
    heartbeat thread reads plain numbers, so no lock is needed (plugin metrics lock their
    own). ``run`` names the run in what it logs."""

    def __init__(self, sink: bool, run: str = "the task run") -> None:
        self.run = run
        keys = (*(SINK_KEYS if sink else SOURCE_KEYS), *TASK_KEYS, *ERROR_KEYS)
        self.values: dict[str, float] = dict.fromkeys(keys, 0)
        self.gauges: dict[str, Callable[[], float]] = {}
        """Values read when a snapshot is taken (e.g. records in the producer's queue)."""
        self.started = time.monotonic()
        self.paused_s = 0.0
        self._paused_at: float | None = None
        self.plugins: list[SimplePluginMetrics] = []
        self._final_plugin_values: dict[str, float] | None = None
        self._capped = False  # the cap's warning was logged

    def plugin_metrics(self, tags: dict[str, str]) -> SimplePluginMetrics:
        """New metrics for one plugin of the run, tagged ``tags``, sampled with every
        snapshot until :meth:`sample_plugins_last`. Made before the heartbeat starts (the
        run's setup), so the heartbeat thread never sees the list change."""
        metrics = SimplePluginMetrics(tags)
        self.plugins.append(metrics)
        return metrics

    def sample_plugins_last(self) -> None:
        """Samples the plugins' metrics a last time: the values every later snapshot (the
        run's final report) carries. Called once, when the run ends, before its plugins
        close."""
        self._final_plugin_values = self._plugin_values()

    def close_plugins(self) -> None:
        """Removes the plugins' metrics (KIP-877: a plugin's metrics end with it). Called
        once, when the run ends, after its plugins closed (as Kafka closes a plugin, then
        its metrics)."""
        for metrics in self.plugins:
            metrics.close()

    def _plugin_values(self) -> dict[str, float]:
        if self._final_plugin_values is not None:
            return self._final_plugin_values
        values: dict[str, float] = {}
        for metrics in self.plugins:
            for name, value in metrics.values().items():
                if len(values) == MAX_PLUGIN_METRICS:
                    if not self._capped:
                        self._capped = True
                        log.warning(
                            "%s: its plugins registered more than %d metrics; only the first "
                            "%d are sampled",
                            self.run,
                            MAX_PLUGIN_METRICS,
                            MAX_PLUGIN_METRICS,
                        )
                    return values
                values[name.encode()] = value
        return values

    def add(self, key: str, amount: float = 1) -> None:
        self.values[key] += amount

    def batch(self, kind: str, records: int, seconds: float) -> None:
        """One ``poll`` (kind ``poll``) or ``put`` (``put``) of ``records`` that took
        ``seconds``."""
        ms = seconds * 1000
        self.values[f"{kind}_batch_time_ms_sum"] += ms
        self.values[f"{kind}_batch_count"] += 1
        if ms > self.values[f"{kind}_batch_time_ms_max"]:
            self.values[f"{kind}_batch_time_ms_max"] = ms
        total = "source_record_poll_total" if kind == "poll" else "sink_record_send_total"
        self.values[total] += records

    def commit(self, succeeded: bool, seconds: float) -> None:
        self.values[
            "offset_commit_success_total" if succeeded else "offset_commit_failure_total"
        ] += 1
        ms = seconds * 1000
        if ms > self.values["offset_commit_time_ms_max"]:
            self.values["offset_commit_time_ms_max"] = ms

    def error(self, failed: bool) -> None:
        """A record failed in a stage (``failed``: beyond the tolerance, failing the task)."""
        self.values["total_record_errors"] += 1
        if failed:
            self.values["total_record_failures"] += 1
        self.values["last_error_timestamp"] = time.time() * 1000

    def pause(self) -> None:
        if self._paused_at is None:
            self._paused_at = time.monotonic()

    def resume(self) -> None:
        if self._paused_at is not None:
            self.paused_s += time.monotonic() - self._paused_at
            self._paused_at = None

    def snapshot(self) -> dict[str, float]:
        """The counters now, the share of the run's time it was not paused, and the plugins'
        metrics (as of :meth:`sample_plugins_last` once it was called)."""
        now = time.monotonic()
        paused = self.paused_s + (now - self._paused_at if self._paused_at is not None else 0)
        elapsed = now - self.started
        return {
            **self.values,
            **{key: read() for key, read in self.gauges.items()},
            "running_ratio": 1.0 if elapsed <= 0 else max(0.0, 1 - paused / elapsed),
            **self._plugin_values(),
        }
