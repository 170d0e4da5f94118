"""The task runs that share Spark task slots: the herder gives a run to a slot host by
writing it here, and takes its outcome back from here once the host wrote it. A host reads
its runs in one query per look; the herder takes every ended run's outcome in one."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update

from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import HostedRunRow


@dataclass(frozen=True)
class HostedRun:
    """A run given to a host and not ended: its ``spec`` (``TaskSpec`` fields but the worker
    config)."""

    run_id: str
    spec: dict[str, Any]


class HostStore:
    """The hosted runs of one metadata database; every method is one short transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def assign(self, host_id: str, run_id: str, spec: dict[str, Any]) -> None:
        """Gives the run to the host, which starts it at its next look."""
        with self.db.tx() as s:
            s.add(HostedRunRow(run_id=run_id, host_id=host_id, spec=spec))

    def runs(self, host_id: str, known: Collection[str] = ()) -> list[HostedRun]:
        """The host's runs that have not ended (in the order they were given), but those
        whose ids are ``known``: a host that looks five times a second reads the specs of
        its new runs only (a hundred specs decoded at each look were a sixth of its CPU)."""
        with self.db.tx(read_only=True) as s:
            ids = s.scalars(
                select(HostedRunRow.run_id)
                .where(HostedRunRow.host_id == host_id, HostedRunRow.outcome.is_(None))
                .order_by(HostedRunRow.assigned_at)
            ).all()
            new = [run_id for run_id in ids if run_id not in known]
            if not new:
                return []
            rows = s.execute(
                select(HostedRunRow.run_id, HostedRunRow.spec).where(HostedRunRow.run_id.in_(new))
            )
            specs: dict[str, dict[str, Any]] = {run_id: spec for run_id, spec in rows}
            return [HostedRun(run_id, specs[run_id]) for run_id in new if run_id in specs]

    def end(self, run_id: str, outcome: dict[str, Any]) -> None:
        """Records how the run ended (the host, once per run)."""
        with self.db.tx() as s:
            s.execute(
                update(HostedRunRow).where(HostedRunRow.run_id == run_id).values(outcome=outcome)
            )

    def take_outcomes(self, host_ids: Collection[str]) -> dict[str, dict[str, Any]]:
        """The outcomes of the ended runs of these hosts, by run id; forgotten with their
        runs. One transaction."""
        with self.db.tx() as s:
            rows = s.execute(
                select(HostedRunRow.run_id, HostedRunRow.outcome).where(
                    HostedRunRow.host_id.in_(list(host_ids)), HostedRunRow.outcome.is_not(None)
                )
            )
            ended: dict[str, dict[str, Any]] = {run_id: outcome for run_id, outcome in rows}
            if ended:
                s.execute(delete(HostedRunRow).where(HostedRunRow.run_id.in_(list(ended))))
        return ended

    def forget(self, host_ids: Collection[str], *, others: bool = False) -> None:
        """Forgets the runs of these hosts (they ended), or, with ``others``, of every other
        host (a herder that takes the lease: the runs of another's hosts are superseded)."""
        with self.db.tx() as s:
            hosts = HostedRunRow.host_id.in_(list(host_ids))
            s.execute(delete(HostedRunRow).where(~hosts if others else hosts))
