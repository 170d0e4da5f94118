"""The metadata store: the one API the runtime (driver and executors), the REST API and the
Airflow hook use to read and write connector state.

Every method is one short transaction; none is on the per-record path. Source offsets are
written in batches (one call per offset flush), heartbeats once every few seconds per task.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.store.engine import open_engine
from airflow_provider_connect.store.models import (
    ActiveTopicRow,
    ConnectorRow,
    ConnectorStatusRow,
    DeletionRow,
    HerderLeaseRow,
    RestartRequestRow,
    SinkProgressRow,
    SourceOffsetRow,
    TaskConfigRow,
    TaskCountRow,
    TaskStatusRow,
    utcnow,
)
from airflow_provider_connect.store.states import DeletionState, State, TargetState


@dataclass(frozen=True)
class Connector:
    name: str
    config: dict[str, str]
    target_state: TargetState
    deleted: bool
    config_version: int
    created_at: dt.datetime


@dataclass(frozen=True)
class Status:
    """The status of a connector (``task_id`` None) or of one of its tasks."""

    connector: str
    task_id: int | None
    state: State
    worker_id: str
    trace: str | None
    generation: int
    heartbeat_at: dt.datetime | None = None
    config_version: int = 0


@dataclass(frozen=True)
class TaskControl:
    """What a running task learns at each heartbeat: whether its run is still the current
    one, and what its connector should be doing."""

    current: bool
    target_state: TargetState
    deleted: bool


@dataclass(frozen=True)
class Deletion:
    connector: str
    state: DeletionState
    trace: str | None
    requested_at: dt.datetime
    finished_at: dt.datetime | None


@dataclass(frozen=True)
class SinkProgress:
    """A sink connector's committed offset and the end offset in one topic partition, as of
    ``updated_at`` (see ``SinkProgressRow``)."""

    topic: str
    partition: int
    committed_offset: int | None
    end_offset: int | None
    updated_at: dt.datetime


@dataclass(frozen=True)
class RestartRequest:
    connector: str
    task_id: int | None
    include_tasks: bool
    only_failed: bool


def partition_key(partition: dict[str, Any]) -> str:
    """The canonical text of a source partition (sorted keys), its identity in the store."""
    return orjson.dumps(partition, option=orjson.OPT_SORT_KEYS).decode()


def _aware(moment: dt.datetime | None) -> dt.datetime | None:
    """SQLite returns naive datetimes; every time in the store is UTC."""
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=dt.timezone.utc)
    return moment


class MetadataStore:
    """Connector configs, target states, task configs, status and offsets in a SQL database
    (a SQLAlchemy URL: ``sqlite:///path.db`` or ``postgresql+psycopg://…``)."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = url
        self.engine = open_engine(url, migrate=migrate)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _tx(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    def _insert(self, table: Any) -> Any:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(table)

    # -- connectors: desired state ---------------------------------------------------------
    def create_connector(
        self, name: str, config: dict[str, str], target_state: TargetState = TargetState.STARTED
    ) -> Connector:
        """Adds a connector; raises AlreadyExistsException if the name is taken (or is still
        being cleaned up after a delete)."""
        with self._tx() as s:
            existing = s.get(ConnectorRow, name)
            if existing is not None:
                raise _exists(existing)
            row = ConnectorRow(
                name=name,
                config=dict(config),
                target_state=target_state.value,
                deleted=False,
                config_version=1,
                generation=0,
            )
            s.add(row)
            s.flush()
            return _connector(row)

    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[Connector, bool]:
        """Creates the connector or replaces its config; returns it and whether it was created."""
        with self._tx() as s:
            row = s.get(ConnectorRow, name)
            if row is None:
                row = ConnectorRow(
                    name=name,
                    config=dict(config),
                    target_state=TargetState.STARTED.value,
                    deleted=False,
                    config_version=1,
                    generation=0,
                )
                s.add(row)
                s.flush()
                return _connector(row), True
            if row.deleted:
                raise _exists(row)
            row.config = dict(config)
            row.config_version += 1
            row.updated_at = utcnow()
            return _connector(row), False

    def connector(self, name: str) -> Connector:
        """The connector (not deleted); raises NotFoundException."""
        with self._tx() as s:
            row = s.get(ConnectorRow, name)
            if row is None or row.deleted:
                raise NotFoundException(f"Connector {name} not found")
            return _connector(row)

    def connectors(self, *, include_deleted: bool = False) -> list[Connector]:
        """All connectors by name; deleted ones awaiting cleanup only when asked."""
        with self._tx() as s:
            query = select(ConnectorRow).order_by(ConnectorRow.name)
            if not include_deleted:
                query = query.where(ConnectorRow.deleted.is_(False))
            return [_connector(r) for r in s.scalars(query)]

    def set_target_state(self, name: str, state: TargetState) -> None:
        with self._tx() as s:
            row = _live(s, name)
            row.target_state = state.value
            row.updated_at = utcnow()

    def delete_connector(self, name: str) -> None:
        """Marks the connector deleted and records a pending deletion; the runtime stops it
        with connectorDeleted=true and then records the cleanup's outcome."""
        with self._tx() as s:
            row = _live(s, name)
            row.deleted = True
            row.updated_at = utcnow()
            s.add(DeletionRow(connector=name, state=DeletionState.PENDING.value))

    def deletion(self, name: str) -> Deletion | None:
        """The latest deletion of a connector called ``name``, if any."""
        with self._tx() as s:
            row = s.scalars(
                select(DeletionRow)
                .where(DeletionRow.connector == name)
                .order_by(DeletionRow.id.desc())
                .limit(1)
            ).first()
            if row is None:
                return None
            return Deletion(
                row.connector,
                DeletionState(row.state),
                row.trace,
                _aware(row.requested_at),
                _aware(row.finished_at),
            )

    def finish_deletion(self, name: str, trace: str | None = None) -> None:
        """Records the cleanup's outcome (failed when ``trace`` is given) and removes the
        connector with its task configs, counts and status. Source offsets stay, as in
        Kafka Connect: a connector created again with the name resumes from them."""
        with self._tx() as s:
            s.execute(
                update(DeletionRow)
                .where(
                    DeletionRow.connector == name, DeletionRow.state == DeletionState.PENDING.value
                )
                .values(
                    state=(DeletionState.FAILED if trace else DeletionState.DONE).value,
                    trace=trace,
                    finished_at=utcnow(),
                )
            )
            for model in (
                TaskConfigRow,
                TaskCountRow,
                TaskStatusRow,
                ConnectorStatusRow,
                SinkProgressRow,
            ):
                s.execute(delete(model).where(model.connector == name))
            s.execute(delete(RestartRequestRow).where(RestartRequestRow.connector == name))
            s.execute(delete(ActiveTopicRow).where(ActiveTopicRow.connector == name))
            s.execute(delete(ConnectorRow).where(ConnectorRow.name == name))

    # -- task configs and task-count records ----------------------------------------------
    def write_task_configs(self, name: str, configs: list[dict[str, str]]) -> int:
        """Stores ``configs`` as the connector's next generation; returns its number."""
        with self._tx() as s:
            row = s.get(ConnectorRow, name)
            if row is None:
                raise NotFoundException(f"Connector {name} not found")
            row.generation += 1
            s.add_all(
                TaskConfigRow(connector=name, generation=row.generation, task_id=i, config=dict(c))
                for i, c in enumerate(configs)
            )
            return row.generation

    def task_configs(self, name: str) -> tuple[int, list[dict[str, str]]]:
        """The latest generation and its task configs, in task order; (0, []) when none."""
        with self._tx() as s:
            row = s.get(ConnectorRow, name)
            if row is None or row.generation == 0:
                return 0, []
            generation = row.generation
            rows = s.scalars(
                select(TaskConfigRow)
                .where(TaskConfigRow.connector == name, TaskConfigRow.generation == generation)
                .order_by(TaskConfigRow.task_id)
            )
            return generation, [r.config for r in rows]

    def write_task_count(self, name: str, generation: int, task_count: int) -> None:
        with self._tx() as s:
            s.merge(TaskCountRow(connector=name, generation=generation, task_count=task_count))

    def task_count(self, name: str) -> tuple[int, int] | None:
        """The latest task-count record as (generation, task count), or None."""
        with self._tx() as s:
            row = s.scalars(
                select(TaskCountRow)
                .where(TaskCountRow.connector == name)
                .order_by(TaskCountRow.generation.desc())
                .limit(1)
            ).first()
            return None if row is None else (row.generation, row.task_count)

    # -- status ----------------------------------------------------------------------------
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
        with self._tx() as s:
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

    def assign_task(self, name: str, task_id: int, generation: int, worker_id: str) -> str:
        """Starts a new run of a task: any earlier run is superseded from now on. Returns the
        new run's id, which the run presents with every status write and heartbeat."""
        run_id = uuid.uuid4().hex
        with self._tx() as s:
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
    ) -> bool:
        """Records a run's state; ignored (returns False) when the run was superseded."""
        now = utcnow()
        with self._tx() as s:
            result = s.execute(
                update(TaskStatusRow)
                .where(
                    TaskStatusRow.connector == name,
                    TaskStatusRow.task_id == task_id,
                    TaskStatusRow.run_id == run_id,
                )
                .values(
                    state=state.value,
                    worker_id=worker_id,
                    trace=trace,
                    heartbeat_at=now,
                    updated_at=now,
                )
            )
            return result.rowcount == 1

    def unassign_task(self, name: str, task_id: int, run_id: str) -> None:
        """Releases a run without a successor (runtime shutdown): the run stops, and the task
        is UNASSIGNED until a runtime starts it again."""
        with self._tx() as s:
            s.execute(
                update(TaskStatusRow)
                .where(
                    TaskStatusRow.connector == name,
                    TaskStatusRow.task_id == task_id,
                    TaskStatusRow.run_id == run_id,
                )
                .values(run_id="", state=State.UNASSIGNED.value, updated_at=utcnow())
            )

    def heartbeat(self, name: str, task_id: int, run_id: str) -> TaskControl:
        """Records that a run is alive and tells it what to do: stop when it is no longer the
        current run (``current`` false) or the connector was deleted or stopped."""
        with self._tx() as s:
            result = s.execute(
                update(TaskStatusRow)
                .where(
                    TaskStatusRow.connector == name,
                    TaskStatusRow.task_id == task_id,
                    TaskStatusRow.run_id == run_id,
                )
                .values(heartbeat_at=utcnow())
            )
            connector = s.get(ConnectorRow, name)
            if connector is None:
                return TaskControl(current=False, target_state=TargetState.STOPPED, deleted=True)
            return TaskControl(
                current=result.rowcount == 1,
                target_state=TargetState(connector.target_state),
                deleted=connector.deleted,
            )

    def connector_status(self, name: str) -> Status | None:
        with self._tx() as s:
            row = s.get(ConnectorStatusRow, name)
            return (
                None
                if row is None
                else Status(
                    name,
                    None,
                    State(row.state),
                    row.worker_id,
                    row.trace,
                    row.generation,
                    config_version=row.config_version,
                )
            )

    def task_statuses(self, name: str) -> list[Status]:
        with self._tx() as s:
            rows = s.scalars(
                select(TaskStatusRow)
                .where(TaskStatusRow.connector == name)
                .order_by(TaskStatusRow.task_id)
            )
            return [
                Status(
                    name,
                    r.task_id,
                    State(r.state),
                    r.worker_id,
                    r.trace,
                    r.generation,
                    _aware(r.heartbeat_at),
                )
                for r in rows
            ]

    def remove_task_statuses(self, name: str, from_task_id: int) -> None:
        """Forgets tasks numbered ``from_task_id`` and above (the connector has fewer now)."""
        with self._tx() as s:
            s.execute(
                delete(TaskStatusRow).where(
                    TaskStatusRow.connector == name, TaskStatusRow.task_id >= from_task_id
                )
            )

    # -- source offsets --------------------------------------------------------------------
    def commit_source_offsets(
        self, name: str, offsets: Iterable[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> None:
        """Stores the latest offset of each partition, all in one transaction."""
        now = utcnow()
        rows = [
            {
                "connector": name,
                "partition_key": partition_key(p),
                "partition": p,
                "offset": o,
                "updated_at": now,
            }
            for p, o in offsets
        ]
        if not rows:
            return
        insert = self._insert(SourceOffsetRow)
        statement = insert.on_conflict_do_update(
            index_elements=["connector", "partition_key"],
            set_={"offset": insert.excluded.offset, "updated_at": insert.excluded.updated_at},
        )
        with self._tx() as s:
            s.execute(statement, rows)

    def source_offset(self, name: str, partition: dict[str, Any]) -> dict[str, Any] | None:
        with self._tx() as s:
            row = s.get(SourceOffsetRow, (name, partition_key(partition)))
            return None if row is None else row.offset

    def source_offsets(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        with self._tx() as s:
            rows = s.scalars(
                select(SourceOffsetRow)
                .where(SourceOffsetRow.connector == name)
                .order_by(SourceOffsetRow.partition_key)
            )
            return [(r.partition, r.offset) for r in rows]

    def delete_source_offsets(self, name: str) -> None:
        with self._tx() as s:
            s.execute(delete(SourceOffsetRow).where(SourceOffsetRow.connector == name))

    # -- sink progress ---------------------------------------------------------------------
    def record_sink_progress(
        self, name: str, progress: Iterable[tuple[str, int, int | None, int | None]]
    ) -> None:
        """Upserts (topic, partition, committed offset, end offset) rows in one transaction;
        a None committed offset keeps the one stored."""
        now = utcnow()
        rows = [
            {
                "connector": name,
                "topic": topic,
                "partition": partition,
                "committed_offset": committed,
                "end_offset": end,
                "updated_at": now,
            }
            for topic, partition, committed, end in progress
        ]
        if not rows:
            return
        table = SinkProgressRow.__table__
        statement = self._insert(table)
        committed = func.coalesce(statement.excluded.committed_offset, table.c.committed_offset)
        with self._tx() as s:
            s.execute(
                statement.on_conflict_do_update(
                    index_elements=["connector", "topic", "partition"],
                    set_={
                        "committed_offset": committed,
                        "end_offset": statement.excluded.end_offset,
                        "updated_at": statement.excluded.updated_at,
                    },
                ),
                rows,
            )

    def sink_progress(self, name: str) -> list[SinkProgress]:
        """The connector's progress rows by topic and partition."""
        with self._tx() as s:
            rows = s.scalars(
                select(SinkProgressRow)
                .where(SinkProgressRow.connector == name)
                .order_by(SinkProgressRow.topic, SinkProgressRow.partition)
            )
            return [
                SinkProgress(
                    r.topic, r.partition, r.committed_offset, r.end_offset, _aware(r.updated_at)
                )
                for r in rows
            ]

    # -- the herder lease ------------------------------------------------------------------
    def acquire_lease(self, holder: str, ttl_s: float) -> bool:
        """Takes or renews the lease for ``ttl_s`` seconds; False while another holder's lease
        has not expired. Only the lease holder's herder may run the connectors."""
        now = utcnow()
        with self._tx() as s:
            row = s.get(HerderLeaseRow, 1, with_for_update=True)
            if row is None:
                s.add(
                    HerderLeaseRow(
                        id=1, holder=holder, expires_at=now + dt.timedelta(seconds=ttl_s)
                    )
                )
                try:
                    s.flush()
                except IntegrityError:  # another driver inserted it first
                    return False
                return True
            if row.holder != holder and _aware(row.expires_at) > now:
                return False
            row.holder = holder
            row.expires_at = now + dt.timedelta(seconds=ttl_s)
            return True

    def release_lease(self, holder: str) -> None:
        with self._tx() as s:
            s.execute(delete(HerderLeaseRow).where(HerderLeaseRow.holder == holder))

    # -- active topics ---------------------------------------------------------------------
    def record_active_topics(self, name: str, topics: Iterable[str]) -> None:
        """Adds topics the connector uses (already known ones are kept as they are)."""
        rows = [{"connector": name, "topic": t, "discovered_at": utcnow()} for t in topics]
        if rows:
            with self._tx() as s:
                s.execute(self._insert(ActiveTopicRow).on_conflict_do_nothing(), rows)

    def active_topics(self, name: str) -> list[str]:
        with self._tx() as s:
            return list(
                s.scalars(
                    select(ActiveTopicRow.topic)
                    .where(ActiveTopicRow.connector == name)
                    .order_by(ActiveTopicRow.topic)
                )
            )

    def reset_active_topics(self, name: str) -> None:
        with self._tx() as s:
            s.execute(delete(ActiveTopicRow).where(ActiveTopicRow.connector == name))

    # -- restart requests ------------------------------------------------------------------
    def request_restart(
        self,
        name: str,
        task_id: int | None = None,
        *,
        include_tasks: bool = False,
        only_failed: bool = False,
    ) -> None:
        with self._tx() as s:
            _live(s, name)
            s.add(
                RestartRequestRow(
                    connector=name,
                    task_id=task_id,
                    include_tasks=include_tasks,
                    only_failed=only_failed,
                )
            )

    def take_restart_requests(self) -> list[RestartRequest]:
        """The pending restart requests, oldest first; each is returned once."""
        with self._tx() as s:
            rows = list(s.scalars(select(RestartRequestRow).order_by(RestartRequestRow.id)))
            for row in rows:
                s.delete(row)
            return [
                RestartRequest(r.connector, r.task_id, r.include_tasks, r.only_failed) for r in rows
            ]


def _live(s: Session, name: str) -> ConnectorRow:
    row = s.get(ConnectorRow, name)
    if row is None or row.deleted:
        raise NotFoundException(f"Connector {name} not found")
    return row


def _exists(row: ConnectorRow) -> AlreadyExistsException:
    if row.deleted:
        return AlreadyExistsException(
            f"Connector {row.name} is being deleted; create it again once its cleanup has finished"
        )
    return AlreadyExistsException(f"Connector {row.name} already exists")


def _connector(row: ConnectorRow) -> Connector:
    return Connector(
        row.name,
        dict(row.config),
        TargetState(row.target_state),
        row.deleted,
        row.config_version,
        _aware(row.created_at),
    )
