"""Observed state, as Kafka Connect's status backing store holds it: connector and task
status, the task runs that own each task (with their heartbeats), the topics connectors use
(KIP-558), and the worker settings readers of the status need. Written by the herder and the
task runs; read by REST and Airflow."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, cast

from sqlalchemy import CursorResult, Result, Table, Update, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.log_levels import log_levels_version
from airflow_provider_connect.store.models import (
    ActiveTopicRow,
    ConnectorRow,
    ConnectorStatusRow,
    RunRecordsRow,
    TaskStatusRow,
    WorkerSettingRow,
    utcnow,
)
from airflow_provider_connect.store.records import RunReport, Status, TaskControl, aware
from airflow_provider_connect.store.states import State, TargetState

TASK_HEARTBEAT_TIMEOUT_MS = "task.heartbeat.timeout.ms"
DEFAULT_TASK_HEARTBEAT_TIMEOUT_MS = 15_000
KAFKA_CLUSTER_OUTAGE = "kafka.cluster.outage"
"""The worker setting under which the leading herder records that the Kafka cluster does
not answer it (since when, why); empty while it answers."""


class StatusStore:
    """Every method is one short transaction; heartbeats come once every few seconds per task."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- connectors ----------------------------------------------------------------------------
    def put_connector_status(
        self,
        name: str,
        state: State,
        worker_id: str,
        trace: str | None = None,
        generation: int = 0,
        config_version: int = 0,
    ) -> None:
        """Records the connector's state as of ``config_version`` of its config."""
        with self.db.tx() as s:
            s.merge(
                ConnectorStatusRow(
                    connector=name,
                    state=state.value,
                    worker_id=worker_id,
                    trace=trace,
                    generation=generation,
                    config_version=config_version,
                    updated_at=utcnow(),
                )
            )

    def connector_status(self, name: str) -> Status | None:
        with self.db.tx(read_only=True) as s:
            row = s.get(ConnectorStatusRow, name)
            return None if row is None else _connector_status(row)

    def connector_statuses(self) -> dict[str, Status]:
        """Every connector's status by name, in one query."""
        with self.db.tx(read_only=True) as s:
            return {
                r.connector: _connector_status(r) for r in s.scalars(select(ConnectorStatusRow))
            }

    # -- task runs -------------------------------------------------------------------------
    def assign_task(self, name: str, task_id: int, generation: int, worker_id: str) -> str:
        """Starts a new run of a task: any earlier run is superseded from now on. Returns the
        new run's id, which the run presents with every status write and heartbeat."""
        run_id = uuid.uuid4().hex
        with self.db.tx() as s:
            s.merge(
                TaskStatusRow(
                    connector=name,
                    task_id=task_id,
                    state=State.UNASSIGNED.value,
                    worker_id=worker_id,
                    trace=None,
                    generation=generation,
                    run_id=run_id,
                    heartbeat_at=utcnow(),
                    updated_at=utcnow(),
                    metrics=None,  # a new run counts from zero
                    waiting_on=None,  # and has waited on nothing yet
                )
            )
        return run_id

    def put_task_status(
        self,
        name: str,
        task_id: int,
        run_id: str,
        state: State,
        worker_id: str,
        trace: str | None = None,
        *,
        unless: State | None = None,
    ) -> bool:
        """Records a run's state; ignored (returns False) when the run was superseded, or
        is in state ``unless`` already."""
        now = utcnow()
        update = _update_run(name, task_id, run_id)
        if unless is not None:
            update = update.where(TaskStatusRow.state != unless.value)
        with self.db.tx() as s:
            result = s.execute(
                update.values(
                    state=state.value,
                    worker_id=worker_id,
                    trace=trace,
                    heartbeat_at=now,
                    updated_at=now,
                )
            )
            return _rowcount(result) == 1

    def note_unassigned(self, name: str, task_id: int, run_id: str, reason: str) -> None:
        """Says why a run that has not started yet is UNASSIGNED (its status's trace);
        nothing once the run has written a state of its own."""
        with self.db.tx() as s:
            s.execute(
                _update_run(name, task_id, run_id)
                .where(TaskStatusRow.state == State.UNASSIGNED.value)
                .values(trace=reason, updated_at=utcnow())
            )

    def unassign_task(self, name: str, task_id: int, run_id: str) -> None:
        """Releases a run without a successor (runtime shutdown): the run stops, and the task
        is UNASSIGNED until a runtime starts it again."""
        with self.db.tx() as s:
            s.execute(
                _update_run(name, task_id, run_id).values(
                    run_id="", state=State.UNASSIGNED.value, updated_at=utcnow()
                )
            )

    def heartbeat(
        self, name: str, task_id: int, run_id: str, report: RunReport | None = None
    ) -> TaskControl:
        """Records that a run is alive, with its ``report`` when given (counters and what it
        waits on, both replaced; its records moved are kept for the history even once the
        run is superseded, see ``RunRecordsRow``), and tells it what to do: stop when it is no longer the
        current run (``current`` false) or the connector was deleted or stopped; and, in the
        same transaction, the latest version of the cluster-wide log levels."""
        (control,) = self.heartbeats([((name, task_id, run_id), report)])
        return control

    def heartbeats(
        self, beats: list[tuple[tuple[str, int, str], RunReport | None]]
    ) -> list[TaskControl]:
        """:meth:`heartbeat` for several runs (``(name, task_id, run_id)`` and report each)
        in one transaction of a few statements whatever their number: the runs sharing a
        slot host. Controls in the order of ``beats``."""
        now = utcnow()
        keys = [key for key, _ in beats]
        with self.db.tx() as s:
            version = log_levels_version(s)
            connectors = {
                name: (TargetState(state), deleted)
                for name, state, deleted in s.execute(
                    select(
                        ConnectorRow.name, ConnectorRow.target_state, ConnectorRow.deleted
                    ).where(ConnectorRow.name.in_({name for name, _, _ in keys}))
                )
            }
            current = {
                tuple(row)
                for row in s.execute(
                    select(TaskStatusRow.connector, TaskStatusRow.task_id, TaskStatusRow.run_id)
                    .where(TaskStatusRow.run_id.in_({run_id for _, _, run_id in keys}))
                    .with_for_update()  # an assign meanwhile waits (SQLite locks the whole tx)
                )
            }
            reported = [
                {"c": n, "t": t, "r": r, "m": report.metrics, "w": report.waiting_on}
                for (n, t, r), report in beats
                if report is not None and (n, t, r) in current
            ]
            if reported:
                s.connection().execute(
                    _update_beat().values(
                        heartbeat_at=now, metrics=bindparam("m"), waiting_on=bindparam("w")
                    ),
                    reported,
                )
            alive = [
                {"c": n, "t": t, "r": r}
                for (n, t, r), report in beats
                if report is None and (n, t, r) in current
            ]
            if alive:
                s.connection().execute(_update_beat().values(heartbeat_at=now), alive)
            counts = [
                {
                    "run_id": r,
                    "connector": n,
                    "records": report.records,
                    "counted": 0,
                    "ended": report.final,
                    "started_at": now,
                    "updated_at": now,
                }
                for (n, _, r), report in beats
                if report is not None
            ]
            if counts:
                s.connection().execute(self._count_records(), counts)
        controls = []
        for key in keys:
            state = connectors.get(key[0])
            if state is None:
                controls.append(
                    TaskControl(current=False, target_state=TargetState.STOPPED, deleted=True)
                )
            else:
                controls.append(TaskControl(key in current, state[0], state[1], version))
        return controls

    def _count_records(self) -> postgresql.Insert | sqlite.Insert:
        """An upsert of a run's records moved (``RunRecordsRow``), for executemany with a
        row's every column: a run's later report replaces its count, whether or not it is
        still the task's current run (what it moved before it noticed, its final count)."""
        insert = self.db.insert(cast(Table, RunRecordsRow.__table__))
        return insert.on_conflict_do_update(
            index_elements=[RunRecordsRow.run_id],
            set_={
                "records": insert.excluded.records,
                "ended": insert.excluded.ended,
                "updated_at": insert.excluded.updated_at,
            },
        )

    def task_statuses(self, name: str) -> list[Status]:
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(TaskStatusRow)
                .where(TaskStatusRow.connector == name)
                .order_by(TaskStatusRow.task_id)
            )
            return [_task_status(r) for r in rows]

    def all_task_statuses(self) -> dict[str, list[Status]]:
        """Every connector's task statuses by connector name (by task id), in one query."""
        found: dict[str, list[Status]] = {}
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(TaskStatusRow).order_by(TaskStatusRow.connector, TaskStatusRow.task_id)
            )
            for r in rows:
                found.setdefault(r.connector, []).append(_task_status(r))
        return found

    def remove_task_statuses(self, name: str, from_task_id: int) -> None:
        """Forgets tasks numbered ``from_task_id`` and above (the connector has fewer now)."""
        with self.db.tx() as s:
            s.execute(
                delete(TaskStatusRow).where(
                    TaskStatusRow.connector == name, TaskStatusRow.task_id >= from_task_id
                )
            )

    # -- active topics ---------------------------------------------------------------------
    def record_active_topics(self, name: str, topics: Iterable[str]) -> None:
        """Adds topics the connector uses (already known ones are kept as they are)."""
        rows = [{"connector": name, "topic": t, "discovered_at": utcnow()} for t in topics]
        if rows:
            with self.db.tx() as s:
                s.execute(self.db.insert(ActiveTopicRow).on_conflict_do_nothing(), rows)

    def active_topics(self, name: str) -> list[str]:
        with self.db.tx(read_only=True) as s:
            return list(
                s.scalars(
                    select(ActiveTopicRow.topic)
                    .where(ActiveTopicRow.connector == name)
                    .order_by(ActiveTopicRow.topic)
                )
            )

    def reset_active_topics(self, name: str) -> None:
        with self.db.tx() as s:
            s.execute(delete(ActiveTopicRow).where(ActiveTopicRow.connector == name))

    # -- worker settings -------------------------------------------------------------------
    def record_worker_settings(self, settings: Mapping[str, str]) -> None:
        """Records the runtime's settings that readers outside it apply too:
        ``task.heartbeat.timeout.ms`` (past it, a RUNNING task without a heartbeat reads as
        UNASSIGNED) and the client override policy (validation of connector configs)."""
        with self.db.tx() as s:
            for name, value in settings.items():
                s.merge(WorkerSettingRow(name=name, value=value, updated_at=utcnow()))

    def worker_settings(self) -> dict[str, str]:
        """What the runtime recorded; empty before any runtime ran."""
        with self.db.tx(read_only=True) as s:
            return {row.name: row.value for row in s.scalars(select(WorkerSettingRow))}

    def kafka_cluster_outage(self) -> str | None:
        """What the leading herder last recorded of the Kafka cluster not answering it
        (``the Kafka cluster at ... has not answered the runtime since ...``); None while it
        answers, or before any runtime ran."""
        with self.db.tx(read_only=True) as s:
            row = s.get(WorkerSettingRow, KAFKA_CLUSTER_OUTAGE)
            return row.value if row is not None and row.value else None

    def heartbeat_timeout_ms(self) -> int:
        """The timeout the runtime recorded; Kafka-style default before any runtime ran."""
        with self.db.tx(read_only=True) as s:
            row = s.get(WorkerSettingRow, TASK_HEARTBEAT_TIMEOUT_MS)
            return DEFAULT_TASK_HEARTBEAT_TIMEOUT_MS if row is None else int(row.value)


def _update_run(name: str, task_id: int, run_id: str) -> Update:
    """An UPDATE of the task's status row, while ``run_id`` is the task's current run."""
    return update(TaskStatusRow).where(
        TaskStatusRow.connector == name,
        TaskStatusRow.task_id == task_id,
        TaskStatusRow.run_id == run_id,
    )


def _update_beat() -> Update:
    """An UPDATE of a task's status row while its run is current, for executemany: the
    task by the parameters ``c``, ``t`` and ``r``."""
    return update(cast(Table, TaskStatusRow.__table__)).where(
        TaskStatusRow.connector == bindparam("c"),
        TaskStatusRow.task_id == bindparam("t"),
        TaskStatusRow.run_id == bindparam("r"),
    )


def _rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE changed (the result of one is a CursorResult)."""
    return cast(CursorResult[Any], result).rowcount


def _connector_status(row: ConnectorStatusRow) -> Status:
    return Status(
        row.connector,
        None,
        State(row.state),
        row.worker_id,
        row.trace,
        row.generation,
        config_version=row.config_version,
    )


def _task_status(row: TaskStatusRow) -> Status:
    return Status(
        row.connector,
        row.task_id,
        State(row.state),
        row.worker_id,
        row.trace,
        row.generation,
        aware(row.heartbeat_at),
        metrics=row.metrics,
        waiting_on=row.waiting_on,
    )
