"""The herder lease: which driver runs the connectors of a metadata database."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import HerderLeaseRow, utcnow
from airflow_provider_connect.store.records import LeaseHolder, aware


class HerderLease:
    """One row: its holder and when the lease expires unless renewed."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def acquire(
        self,
        holder: str,
        ttl_s: float,
        rest_url: str | None = None,
        *,
        take_expired: bool = True,
    ) -> bool:
        """Takes or renews the lease for ``ttl_s`` seconds, recording where the holder
        serves REST; False while another holder's lease has not expired, or has but
        ``take_expired`` is false. Only the lease holder's herder may run the connectors.

        Race-free: of drivers that find no lease and insert it at once (PostgreSQL locks
        no row that does not exist yet), the first to commit holds it and every other one
        gets False, its transaction intact."""
        now = utcnow()
        expires_at = now + dt.timedelta(seconds=ttl_s)
        with self.db.tx() as s:
            row = s.get(HerderLeaseRow, 1, with_for_update=True)
            if row is None:
                try:
                    with s.begin_nested():  # a savepoint: a lost race rolls back only the insert
                        s.add(
                            HerderLeaseRow(
                                id=1, holder=holder, expires_at=expires_at, rest_url=rest_url
                            )
                        )
                except IntegrityError:  # another driver inserted it first: it leads
                    return False
                return True
            if row.holder != holder and (aware(row.expires_at) > now or not take_expired):
                return False
            row.holder = holder
            row.expires_at = expires_at
            row.rest_url = rest_url
            return True

    def current(self) -> LeaseHolder | None:
        """The holder of an unexpired lease; None when no driver runs the connectors (none
        started, the last one stopped, or it stopped renewing)."""
        with self.db.tx(read_only=True) as s:
            row = s.get(HerderLeaseRow, 1)
            if row is None or aware(row.expires_at) <= utcnow():
                return None
            return LeaseHolder(row.holder, aware(row.expires_at), row.rest_url)

    def release(self, holder: str) -> None:
        with self.db.tx() as s:
            s.execute(delete(HerderLeaseRow).where(HerderLeaseRow.holder == holder))
