"""Each connector's throughput and lag over a recent window, as the Connectors page charts
them, from the samples the herder keeps (``store/history.py``): one query whatever the
number of connectors."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from airflow_provider_connect.store import MetadataStore, Sample


def rates(samples: Sequence[Sample]) -> list[tuple[dt.datetime, float]]:
    """Records per second at each sample but the first (ordered by time): the records it
    counts (moved since the sample before it) over the time between them; no point where
    no time elapsed."""
    points = []
    for before, sample in pairwise(samples):
        seconds = (sample.sampled_at - before.sampled_at).total_seconds()
        if seconds > 0:
            points.append((sample.sampled_at, sample.records / seconds))
    return points


def connector_history(store: MetadataStore, since: dt.datetime) -> dict[str, dict[str, Any]]:
    """Every connector's samples taken after ``since``, by connector name (those without any
    are absent), each list oldest first: ``records``, ``[[iso_time, records], ...]``, the
    records moved since the sample before (their sum is what the connector moved since the
    sample before the first, which may lie before the window); ``records_per_s``,
    ``[[iso_time, rate], ...]`` (see :func:`rates`); and ``lag``,
    ``[[iso_time, lag_or_null], ...]`` (a sink's total lag; null for a source). One query."""
    return {
        name: {
            "records": [[s.sampled_at.isoformat(), s.records] for s in samples],
            "records_per_s": [[at.isoformat(), rate] for at, rate in rates(samples)],
            "lag": [[s.sampled_at.isoformat(), s.lag] for s in samples],
        }
        for name, samples in store.history.since(since).items()
    }
