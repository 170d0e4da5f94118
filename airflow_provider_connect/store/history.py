"""A bounded history of each connector's throughput and lag, what the Connectors page charts:
the herder that holds the lease appends one sample per connector at a time and prunes what
is past the retention in the same transaction, so while a runtime runs the connectors the
table holds no more than the retention's worth of samples (and a connector's go with it);
readers take every connector's samples in one query."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from sqlalchemy import delete, select

from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import MetricsHistoryRow
from airflow_provider_connect.store.records import Sample, aware


class HistoryStore:
    """The throughput and lag samples of one metadata database; every method is one short
    transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def append(self, samples: Mapping[str, Sample], *, prune_before: dt.datetime) -> None:
        """Adds one sample per connector (by name) and deletes every sample taken before
        ``prune_before``, in one transaction: both happen, or neither. A sample whose
        connector already has one at the same time is left out (the one stored stays).
        Naive times are taken as UTC."""
        rows = [
            {
                "connector": name,
                "sampled_at": _utc(sample.sampled_at),
                "records": sample.records,
                "lag": sample.lag,
            }
            for name, sample in samples.items()
        ]
        with self.db.tx() as s:
            s.execute(
                delete(MetricsHistoryRow).where(MetricsHistoryRow.sampled_at < _utc(prune_before))
            )
            if rows:
                s.execute(self.db.insert(MetricsHistoryRow).on_conflict_do_nothing(), rows)

    def since(self, cutoff: dt.datetime) -> dict[str, list[Sample]]:
        """Every connector's samples taken after ``cutoff``, by connector name, oldest first,
        in one query; connectors without any are absent. Times are UTC (a naive
        ``cutoff`` is taken as UTC)."""
        found: dict[str, list[Sample]] = {}
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(MetricsHistoryRow)
                .where(MetricsHistoryRow.sampled_at > _utc(cutoff))
                .order_by(MetricsHistoryRow.connector, MetricsHistoryRow.sampled_at)
            )
            for r in rows:
                found.setdefault(r.connector, []).append(
                    Sample(_utc(r.sampled_at), r.records, r.lag)
                )
        return found


def _utc(moment: dt.datetime) -> dt.datetime:
    """``moment`` in UTC, as every time in the store is (SQLite compares times as text)."""
    return aware(moment).astimezone(dt.timezone.utc)
