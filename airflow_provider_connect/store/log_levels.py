"""Cluster-wide log levels (KIP-976's ``PUT /admin/loggers/{logger}?scope=cluster``): one row
per logger namespace, the latest level written for it, which every driver whose herder started
before the write applies to its own process, as do the task runs that driver starts.

Every write takes the next ``version`` of the table, so versions grow in the order writes
commit and a reader that remembers the latest version it applied reads only what changed
since (nothing, most of the time, through the unique index on ``version``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import LogLevelRow, utcnow
from airflow_provider_connect.store.records import aware


@dataclass(frozen=True)
class LogLevel:
    """The level last written for a logger namespace (``root`` for the root logger): a Kafka
    level name, when it was written (``last_modified``, ms since the epoch), and the
    table's version it was written at."""

    logger: str
    level: str
    last_modified: int
    version: int


def log_levels_version(session: Session) -> int:
    """The latest version of the log levels (0 before the first write), read within
    ``session``'s transaction: what a task's heartbeat compares with the version it applied."""
    return session.scalar(select(func.coalesce(func.max(LogLevelRow.version), 0))) or 0


class LogLevelStore:
    """The cluster-wide log levels of one metadata database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def set(self, logger: str, level: str) -> LogLevel:
        """Writes ``level`` for ``logger``, replacing what was written for it before, at the
        next version. Writers take turns (PostgreSQL: a table lock that readers do not wait
        on; SQLite: its write lock), so no two writes share a version and a version is never
        committed after a higher one."""
        with self.db.tx() as s:
            if self.db.engine.dialect.name == "postgresql":
                s.execute(text(f"LOCK TABLE {LogLevelRow.__tablename__} IN EXCLUSIVE MODE"))
            now = utcnow()
            version = log_levels_version(s) + 1
            row = s.get(LogLevelRow, logger)
            if row is None:
                row = LogLevelRow(logger=logger)
                s.add(row)
            row.level, row.version, row.updated_at = level, version, now
        return LogLevel(logger, level, _ms(now), version)

    def version(self) -> int:
        """The latest version written (0 before the first write): the baseline a herder
        takes when it starts, so that its runtime applies only the levels written since."""
        with self.db.tx(read_only=True) as s:
            return log_levels_version(s)

    def changed_since(self, version: int = 0) -> list[LogLevel]:
        """The levels written after ``version``, in the order they were written (all of them
        from 0); one row per logger, its latest level."""
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(LogLevelRow)
                .where(LogLevelRow.version > version)
                .order_by(LogLevelRow.version)
            )
            return [LogLevel(r.logger, r.level, _ms(r.updated_at), r.version) for r in rows]


def _ms(moment: dt.datetime) -> int:
    """Milliseconds since the epoch of a stored time."""
    return int(aware(moment).timestamp() * 1000)
