"""The herder's samples of each connector's throughput and lag, what the Connectors page
charts: built from what the store already has (the counters the task runs' heartbeats
wrote, the sinks' progress), at most once per ``metrics.history.interval.ms``, and kept for
``metrics.history.retention.ms`` (``store/history.py``)."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Iterable, Mapping

from airflow_provider_connect.runtime.worker_config import (
    METRICS_HISTORY_INTERVAL_MS,
    METRICS_HISTORY_RETENTION_MS,
    WorkerConfig,
)
from airflow_provider_connect.store import (
    Database,
    HistoryStore,
    OffsetStore,
    Sample,
    SinkProgress,
    Status,
    StatusStore,
    StoreUnavailable,
)
from airflow_provider_connect.store.models import utcnow

log = logging.getLogger(__name__)

RECORD_COUNTERS = ("source_record_write_total", "sink_record_send_total")
"""The counters (``runtime/executor/task_metrics.py``) of the records a task run moved: a
source's written to Kafka, a sink's put into the external system; a task has one of them."""


def connector_samples(
    names: Iterable[str],
    statuses: Mapping[str, list[Status]],
    progress: Mapping[str, list[SinkProgress]],
    at: dt.datetime,
) -> dict[str, Sample]:
    """One sample per connector of ``names`` at ``at``: the records its tasks' current runs
    moved as of their last heartbeats (0 without any), and the sum of its partitions' lag
    where known (None when none is known, as for every source)."""
    samples = {}
    for name in names:
        records = sum(
            (status.metrics or {}).get(counter, 0)
            for status in statuses.get(name, [])
            for counter in RECORD_COUNTERS
        )
        lags = [p.lag for p in progress.get(name, []) if p.lag is not None]
        samples[name] = Sample(at, int(records), sum(lags) if lags else None)
    return samples


class HistorySampler:
    """Appends the samples of the connectors it is given to the history of ``db``, pruning
    what is past the retention in the same transaction, at most once per interval."""

    def __init__(self, worker: WorkerConfig, db: Database) -> None:
        self.statuses = StatusStore(db)
        self.offsets = OffsetStore(db)
        self.history = HistoryStore(db)
        self.interval_s = worker[METRICS_HISTORY_INTERVAL_MS] / 1000
        self.retention = dt.timedelta(milliseconds=worker[METRICS_HISTORY_RETENTION_MS])
        self._due = 0.0  # monotonic: when the next sample may be taken

    def sample(self, names: Iterable[str]) -> None:
        """Samples ``names`` (the connectors that are not deleted) unless the last sample
        is less than an interval old: three short transactions (task statuses, sink
        progress, then the append and the prune together). Never raises: a sample the
        database could not take is tried again by the next call."""
        now = time.monotonic()
        if now < self._due:
            return
        try:
            at = utcnow()
            samples = connector_samples(
                names, self.statuses.all_task_statuses(), self.offsets.all_sink_progress(), at
            )
            self.history.append(samples, prune_before=at - self.retention)
        except StoreUnavailable:  # logged by the database, once
            return
        except Exception:
            log.warning("Sampling the connectors' throughput and lag failed", exc_info=True)
        self._due = now + self.interval_s
