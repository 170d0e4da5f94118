"""The herder's samples of each connector's throughput and lag, what the Connectors page
charts: the records its task runs moved since its previous sample (as the runs reported them,
``store/history.py``) and its sinks' lag, at most once per ``metrics.history.interval.ms``,
and kept for ``metrics.history.retention.ms``."""

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
    SinkProgress,
    StoreUnavailable,
)
from airflow_provider_connect.store.models import utcnow

log = logging.getLogger(__name__)


def connector_lags(
    names: Iterable[str], progress: Mapping[str, list[SinkProgress]]
) -> dict[str, int | None]:
    """Each connector of ``names``'s lag: the sum of its partitions' lag where known (None
    when none is known, as for every source)."""
    lags: dict[str, int | None] = {}
    for name in names:
        known = [p.lag for p in progress.get(name, []) if p.lag is not None]
        lags[name] = sum(known) if known else None
    return lags


class HistorySampler:
    """Appends the samples of the connectors it is given to the history of ``db``, pruning
    what is past the retention in the same transaction, at most once per interval."""

    def __init__(self, worker: WorkerConfig, db: Database) -> None:
        self.offsets = OffsetStore(db)
        self.history = HistoryStore(db)
        self.interval_s = worker[METRICS_HISTORY_INTERVAL_MS] / 1000
        self.retention = dt.timedelta(milliseconds=worker[METRICS_HISTORY_RETENTION_MS])
        self._due = 0.0  # monotonic: when the next sample may be taken

    def sample(self, names: Iterable[str]) -> None:
        """Samples ``names`` (the connectors that are not deleted) unless the last sample
        is less than an interval old: two short transactions (sink progress, then the
        counting, the append and the prune together). Never raises: a sample the database
        could not take is tried again by the next call, and counts what this one would
        have."""
        now = time.monotonic()
        if now < self._due:
            return
        try:
            at = utcnow()
            lags = connector_lags(names, self.offsets.all_sink_progress())
            self.history.append(lags, at, prune_before=at - self.retention)
        except StoreUnavailable:  # logged by the database, once
            return
        except Exception:
            log.warning("Sampling the connectors' throughput and lag failed", exc_info=True)
        self._due = now + self.interval_s
