"""A task run's metric counters, Kafka Connect's task metric groups: kept in the run's
process, counted per batch (a poll, a put, a commit; never per record), and written to the
metadata database with each heartbeat, where ``/metrics`` on the driver reads them.

Counters only grow during a run and start from zero with the next run of the task (a
restart, a new generation), as Kafka's do with a new task instance."""

from __future__ import annotations

import time
from collections.abc import Callable

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


class TaskMetrics:
    """Called from the run's loop thread (and its error handler); ``snapshot`` from the
    heartbeat thread reads plain numbers, so no lock is needed."""

    def __init__(self, sink: bool) -> None:
        keys = (*(SINK_KEYS if sink else SOURCE_KEYS), *TASK_KEYS, *ERROR_KEYS)
        self.values: dict[str, float] = dict.fromkeys(keys, 0)
        self.gauges: dict[str, Callable[[], float]] = {}
        """Values read when a snapshot is taken (e.g. records in the producer's queue)."""
        self.started = time.monotonic()
        self.paused_s = 0.0
        self._paused_at: float | None = None

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
        """The counters now, and the share of the run's time it was not paused."""
        now = time.monotonic()
        paused = self.paused_s + (now - self._paused_at if self._paused_at is not None else 0)
        elapsed = now - self.started
        return {
            **self.values,
            **{key: read() for key, read in self.gauges.items()},
            "running_ratio": 1.0 if elapsed <= 0 else max(0.0, 1 - paused / elapsed),
        }
