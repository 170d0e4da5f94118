"""A bounded history of each connector's throughput and lag, what the Connectors page charts:
the herder that holds the lease appends one sample per connector at a time and prunes what
is past the retention in the same transaction, so while a runtime runs the connectors the
table holds no more than the retention's worth of samples (and a connector's go with it);
readers take every connector's samples in one query.

A sample's records are those its connector's task runs moved since its previous sample, as
their reports say (``RunRecordsRow``: every run counted to its last report, the runs that
ended, were superseded or stopped with their connector included), so a connector's samples
add up to the records it moved; its first sample comes after one of 0 records at the time
its first run started, so that what it moved before its first sample (a backlog read at
once) has the time it took."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, bindparam, delete, insert, select, update

from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import MetricsHistoryRow, RunRecordsRow
from airflow_provider_connect.store.records import Sample, aware


@dataclass(frozen=True)
class RunCount:
    """What the store holds of one task run's records moved: ``records`` as of its last
    report, of which the history has counted ``counted``, since ``started_at``."""

    connector: str
    records: int
    counted: int
    started_at: dt.datetime


def new_samples(
    lags: Mapping[str, int | None],
    runs: Iterable[RunCount],
    sampled: set[str],
    at: dt.datetime,
) -> list[tuple[str, Sample]]:
    """The samples to append at ``at`` for the connectors of ``lags`` (by name, with their
    lag), given their ``runs``: each connector's records its runs moved and the history has
    not counted yet. A connector not among those ``sampled`` already whose runs started
    before ``at`` gets first a sample of 0 records when the earliest of them started."""
    moved = dict.fromkeys(lags, 0)
    started: dict[str, dt.datetime] = {}
    for run in runs:
        if run.connector in moved:
            moved[run.connector] += run.records - run.counted
            started[run.connector] = min(run.started_at, started.get(run.connector, at))
    samples = []
    for name, lag in lags.items():
        if name not in sampled and started.get(name, at) < at:
            samples.append((name, Sample(started[name], 0, None)))
        samples.append((name, Sample(at, moved[name], lag)))
    return samples


class HistoryStore:
    """The throughput and lag samples of one metadata database; every method is one short
    transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def append(
        self, lags: Mapping[str, int | None], at: dt.datetime, *, prune_before: dt.datetime
    ) -> list[tuple[str, Sample]]:
        """Adds a sample at ``at`` for each connector of ``lags`` (by name, with its lag; see
        :func:`new_samples`), marks what it counted of their runs' records, forgets the
        runs that ended once counted, and deletes every sample and run report older than
        ``prune_before``, in one transaction: all of it happens, or none (as when its
        connector already has a sample at ``at``: IntegrityError). Naive times are taken as
        UTC. Returns the samples it added (with those already older than ``prune_before``,
        which it leaves out)."""
        at, prune_before = _utc(at), _utc(prune_before)
        runs = cast(Table, RunRecordsRow.__table__)
        with self.db.tx() as s:
            s.execute(delete(MetricsHistoryRow).where(MetricsHistoryRow.sampled_at < prune_before))
            s.execute(delete(RunRecordsRow).where(RunRecordsRow.updated_at < prune_before))
            reported = s.execute(
                select(
                    RunRecordsRow.run_id,
                    RunRecordsRow.ended,
                    RunRecordsRow.connector,
                    RunRecordsRow.records,
                    RunRecordsRow.counted,
                    RunRecordsRow.started_at,
                )
                .where(RunRecordsRow.connector.in_(list(lags)))
                .with_for_update()  # a report meanwhile waits: none is counted twice or lost
            ).all()
            sampled = set(
                s.scalars(
                    select(MetricsHistoryRow.connector)
                    .where(MetricsHistoryRow.connector.in_(list(lags)))
                    .distinct()
                )
            )
            counts = [
                RunCount(name, n, done, _utc(since)) for _, _, name, n, done, since in reported
            ]
            samples = new_samples(lags, counts, sampled, at)
            rows = [
                {
                    "connector": name,
                    "sampled_at": sample.sampled_at,
                    "records": sample.records,
                    "lag": sample.lag,
                }
                for name, sample in samples
                if sample.sampled_at >= prune_before
            ]
            if rows:
                s.execute(insert(MetricsHistoryRow), rows)
            ended = [run_id for run_id, ended, *_ in reported if ended]
            if ended:
                s.execute(delete(RunRecordsRow).where(RunRecordsRow.run_id.in_(ended)))
            going_on = [
                {"run": r, "n": n}
                for r, ended, _, n, done, _ in reported
                if not ended and n != done
            ]
            if going_on:
                s.connection().execute(
                    update(runs)
                    .where(runs.c.run_id == bindparam("run"))
                    .values(counted=bindparam("n")),
                    going_on,
                )
        return samples

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
