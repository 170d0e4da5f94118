"""Sink connectors' coordination channels (``connect/channel.py``): messages their task runs
send, read and remove, fenced by the task runs of :class:`StatusStore` and the generations
of :class:`ConfigStore`. A connector's messages go with the rest of its state when its
deletion finishes (``ConfigStore.finish_deletion``)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import ColumnElement, DateTime, LargeBinary, and_, delete, insert, literal, select

from airflow_provider_connect.connect.channel import ChannelMessage, FencedException
from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import (
    ChannelMessageRow,
    ConnectorRow,
    TaskStatusRow,
    utcnow,
)


@dataclass(frozen=True)
class ChannelRun:
    """The task run a channel write comes from."""

    connector: str
    task_id: int
    generation: int
    run_id: str


class ChannelStore:
    """Every method is one short transaction. The fenced writes (:meth:`send`,
    :meth:`remove`) check that the run is current and write in one transaction that holds the
    task's status row and the connector's row (PostgreSQL's ``FOR SHARE``; SQLite's write
    transactions are serialized already) until it ends, so a new run of the task
    (``StatusStore.assign_task``) or a new generation (``ConfigStore.write_task_configs``)
    is either seen by the check or waits for the write to commit."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def send(self, run: ChannelRun, kind: str, payload: bytes) -> int:
        """Appends a message in one INSERT ... SELECT ... WHERE (the run is current);
        returns its id. FencedException, having appended nothing, when the run is not
        current."""
        values = select(
            literal(run.connector),
            literal(run.task_id),
            literal(run.generation),
            literal(kind),
            literal(payload, LargeBinary()),
            literal(utcnow(), DateTime(timezone=True)),
        ).where(_current(run, lock=True))
        statement = (
            insert(ChannelMessageRow)
            .from_select(
                ["connector", "task_id", "generation", "kind", "payload", "sent_at"], values
            )
            .returning(ChannelMessageRow.id)
        )
        with self.db.tx() as s:
            sent = s.execute(statement).scalar()
        if sent is None:
            raise _fenced(run)
        return sent

    def messages(
        self, connector: str, kinds: Collection[str] | None = None
    ) -> list[ChannelMessage]:
        """The connector's messages of ``kinds`` (all when None), in id order."""
        query = select(ChannelMessageRow).where(ChannelMessageRow.connector == connector)
        if kinds is not None:
            query = query.where(ChannelMessageRow.kind.in_(kinds))
        with self.db.tx(read_only=True) as s:
            return [
                ChannelMessage(r.id, r.task_id, r.generation, r.kind, r.payload)
                for r in s.scalars(query.order_by(ChannelMessageRow.id))
            ]

    def remove(self, run: ChannelRun, ids: Collection[int]) -> None:
        """Removes the connector's messages of these ids; FencedException, having removed
        nothing, when the run is not current."""
        with self.db.tx() as s:
            if not s.execute(select(_current(run, lock=True))).scalar():
                raise _fenced(run)
            if ids:
                s.execute(
                    delete(ChannelMessageRow).where(
                        ChannelMessageRow.connector == run.connector,
                        ChannelMessageRow.id.in_(ids),
                    )
                )

    def check_current(self, run: ChannelRun) -> None:
        """FencedException unless the run is its task's current run of the connector's
        latest generation."""
        with self.db.tx(read_only=True) as s:
            if not s.execute(select(_current(run, lock=False))).scalar():
                raise _fenced(run)


def _current(run: ChannelRun, *, lock: bool) -> ColumnElement[bool]:
    """True while ``run`` is its task's current run and its generation the connector's
    latest; with ``lock``, the rows that say so are held until the transaction ends."""
    task = select(TaskStatusRow.task_id).where(
        TaskStatusRow.connector == run.connector,
        TaskStatusRow.task_id == run.task_id,
        TaskStatusRow.run_id == run.run_id,
    )
    connector = select(ConnectorRow.name).where(
        ConnectorRow.name == run.connector, ConnectorRow.generation == run.generation
    )
    if lock:
        task, connector = task.with_for_update(read=True), connector.with_for_update(read=True)
    return and_(task.exists(), connector.exists())


def _fenced(run: ChannelRun) -> FencedException:
    return FencedException(
        f"Run {run.run_id} of task {run.task_id} (generation {run.generation}) of connector "
        f"{run.connector} is no longer the task's current run"
    )
