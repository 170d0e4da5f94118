"""The desired state of connectors, as Kafka Connect's config backing store holds it:
connector configs and target states, task configs per generation, task-count records,
restart requests and deletions. Written by REST, Airflow and the herder; read by the herder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import (
    ActiveTopicRow,
    ChannelMessageRow,
    ConnectorRow,
    ConnectorStatusRow,
    DeletionRow,
    MetricsHistoryRow,
    RestartRequestRow,
    RunRecordsRow,
    SinkProgressRow,
    SourceOffsetRow,
    TaskConfigRow,
    TaskCountRow,
    TaskStatusRow,
    utcnow,
)
from airflow_provider_connect.store.records import (
    ConnectorRecord,
    Deletion,
    RestartRequest,
    aware,
    partition_key,
)
from airflow_provider_connect.store.states import DeletionState, TargetState


class ConfigStore:
    """Every method is one short transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- connectors ----------------------------------------------------------------------------
    def create_connector(
        self,
        name: str,
        config: dict[str, str],
        target_state: TargetState = TargetState.STARTED,
        *,
        source_offsets: list[tuple[dict[str, Any], dict[str, Any] | None]] | None = None,
        sink_offsets: list[tuple[str, int, int]] | None = None,
    ) -> ConnectorRecord:
        """Adds a connector; raises AlreadyExistsException if the name is taken (or is still
        being cleaned up after a delete). Initial offsets (KIP-995) replace whatever an
        earlier connector of that name left, in the same transaction: ``source_offsets``
        (a None offset is no offset) are stored as the connector's; ``sink_offsets``
        are kept on the connector for the herder to write to its consumer group."""
        with self.db.tx() as s:
            existing = s.get(ConnectorRow, name)
            if existing is not None:
                raise _exists(existing)
            row = _new_row(s, name, config, target_state)
            if source_offsets is not None:
                row.source_offsets_set = True
                s.execute(delete(SourceOffsetRow).where(SourceOffsetRow.connector == name))
                latest = {partition_key(p): (p, o) for p, o in source_offsets}  # the last wins
                s.add_all(
                    SourceOffsetRow(connector=name, partition_key=key, partition=p, offset=o)
                    for key, (p, o) in latest.items()
                    if o is not None
                )
            if sink_offsets is not None:
                s.execute(delete(SinkProgressRow).where(SinkProgressRow.connector == name))
                row.initial_offsets = [list(position) for position in sink_offsets]
            return _record(row)

    def mark_source_offsets(self, name: str, *, set_: bool) -> None:
        """Records whether the connector's source offsets were set outside its tasks since
        they last ran (``set_``), or were copied where its tasks read them (not ``set_``)."""
        with self.db.tx() as s:
            row = s.get(ConnectorRow, name)
            if row is not None:
                row.source_offsets_set = set_

    def stage_sink_offsets(self, name: str, positions: list[tuple[str, int, int]] | None) -> bool:
        """Keeps offsets for the herder to write to the (STOPPED) sink connector's consumer
        group before it next starts, as initial offsets are (the Airflow side reaches no
        Kafka). ``positions`` are KIP-875's alter: only the partitions they name change, over
        what was staged before; None is KIP-875's reset: the group goes, with whatever was
        staged, and its progress rows, which no longer say where it stands. One transaction,
        which stages nothing and answers False once the connector is no longer to be STOPPED
        (a resume came first); NotFoundException for an unknown connector."""
        with self.db.tx() as s:
            row = _live(s, name, lock=True)  # a resume waits, or came first
            if row.target_state != TargetState.STOPPED.value:
                return False
            if positions is None:
                row.initial_offsets, row.initial_offsets_alter = [], False
                s.execute(delete(SinkProgressRow).where(SinkProgressRow.connector == name))
                return True
            if row.initial_offsets is None:
                row.initial_offsets_alter = True  # over Kafka's: only the partitions named
            staged = {(str(t), int(p)): int(o) for t, p, o in row.initial_offsets or []}
            staged.update({(t, p): o for t, p, o in positions})
            row.initial_offsets = [[t, p, o] for (t, p), o in sorted(staged.items())]
            return True

    def drop_initial_offsets(self, name: str) -> None:
        """The connector's initial sink offsets are done with: the herder wrote them to
        Kafka, or offsets altered or reset since replace them."""
        with self.db.tx() as s:
            row = s.get(ConnectorRow, name)
            if row is not None:
                row.initial_offsets, row.initial_offsets_alter = None, False

    def put_connector_config(
        self, name: str, config: dict[str, str]
    ) -> tuple[ConnectorRecord, bool]:
        """Creates the connector or replaces its config; returns it and whether it was created."""
        with self.db.tx() as s:
            row = s.get(ConnectorRow, name)
            if row is None:
                return _record(_new_row(s, name, config, TargetState.STARTED)), True
            if row.deleted:
                raise _exists(row)
            row.config = dict(config)
            row.config_version += 1
            row.updated_at = utcnow()
            return _record(row), False

    def connector(self, name: str) -> ConnectorRecord:
        """The connector (not deleted); raises NotFoundException."""
        with self.db.tx(read_only=True) as s:
            return _record(_live(s, name))

    def connectors(self, *, include_deleted: bool = False) -> list[ConnectorRecord]:
        """All connectors by name; deleted ones awaiting cleanup only when asked. Read as
        plain rows, not ORM objects: the herder reads them all at every pass, and a
        thousand ORM objects five times a second took a quarter of a core."""
        with self.db.tx(read_only=True) as s:
            query = select(*RECORD_COLUMNS).order_by(ConnectorRow.name)
            if not include_deleted:
                query = query.where(ConnectorRow.deleted.is_(False))
            return [_record_of(r) for r in s.execute(query)]

    def set_target_state(self, name: str, state: TargetState) -> None:
        with self.db.tx() as s:
            row = _live(s, name)
            row.target_state = state.value
            row.updated_at = utcnow()

    # -- deletions -------------------------------------------------------------------------
    def delete_connector(self, name: str) -> None:
        """Marks the connector deleted and records a pending deletion; the runtime stops it
        with connectorDeleted=true and then records the cleanup's outcome."""
        with self.db.tx() as s:
            row = _live(s, name)
            row.deleted = True
            row.updated_at = utcnow()
            s.add(DeletionRow(connector=name, state=DeletionState.PENDING.value))

    def deletion(self, name: str) -> Deletion | None:
        """The latest deletion of a connector called ``name``, if any."""
        with self.db.tx(read_only=True) as s:
            row = s.scalars(
                select(DeletionRow)
                .where(DeletionRow.connector == name)
                .order_by(DeletionRow.id.desc())
                .limit(1)
            ).first()
            return None if row is None else _deletion(row)

    def latest_deletions(self) -> dict[str, Deletion]:
        """The latest deletion of every connector name ever deleted, in one query."""
        latest = select(func.max(DeletionRow.id)).group_by(DeletionRow.connector)
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(select(DeletionRow).where(DeletionRow.id.in_(latest)))
            return {r.connector: _deletion(r) for r in rows}

    def finish_deletion(self, name: str, trace: str | None = None) -> None:
        """Records the cleanup's outcome (failed when ``trace`` is given) and removes the
        connector with its task configs, counts, status, progress, records moved, history and
        channel messages. Source offsets stay, as in Kafka Connect: a connector created again
        with the name resumes from them."""
        with self.db.tx() as s:
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
                ChannelMessageRow,
                TaskConfigRow,
                TaskCountRow,
                TaskStatusRow,
                ConnectorStatusRow,
                SinkProgressRow,
                RestartRequestRow,
                ActiveTopicRow,
                MetricsHistoryRow,
                RunRecordsRow,
            ):
                s.execute(delete(model).where(model.connector == name))
            s.execute(delete(ConnectorRow).where(ConnectorRow.name == name))

    # -- task configs and task-count records ----------------------------------------------
    def write_task_configs(self, name: str, configs: list[dict[str, str]]) -> int:
        """Stores ``configs`` as the connector's next generation; returns its number."""
        with self.db.tx() as s:
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
        with self.db.tx(read_only=True) as s:
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
        with self.db.tx() as s:
            s.merge(TaskCountRow(connector=name, generation=generation, task_count=task_count))

    def task_count(self, name: str) -> tuple[int, int] | None:
        """The latest task-count record as (generation, task count), or None."""
        with self.db.tx(read_only=True) as s:
            row = s.scalars(
                select(TaskCountRow)
                .where(TaskCountRow.connector == name)
                .order_by(TaskCountRow.generation.desc())
                .limit(1)
            ).first()
            return None if row is None else (row.generation, row.task_count)

    # -- restart requests ------------------------------------------------------------------
    def request_restart(
        self,
        name: str,
        task_id: int | None = None,
        *,
        include_tasks: bool = False,
        only_failed: bool = False,
    ) -> None:
        with self.db.tx() as s:
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
        with self.db.tx() as s:
            rows = list(s.scalars(select(RestartRequestRow).order_by(RestartRequestRow.id)))
            for row in rows:
                s.delete(row)
            return [
                RestartRequest(r.connector, r.task_id, r.include_tasks, r.only_failed) for r in rows
            ]


def _new_row(
    s: Session, name: str, config: dict[str, str], target_state: TargetState
) -> ConnectorRow:
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
    return row


def _live(s: Session, name: str, *, lock: bool = False) -> ConnectorRow:
    """The connector's row (NotFoundException when there is none or it is deleted); with
    ``lock``, held until the transaction ends (PostgreSQL's ``FOR UPDATE``; SQLite's
    transactions are serialized already)."""
    row = s.get(ConnectorRow, name, with_for_update=lock)
    if row is None or row.deleted:
        raise NotFoundException(f"Connector {name} not found")
    return row


def _exists(row: ConnectorRow) -> AlreadyExistsException:
    if row.deleted:
        return AlreadyExistsException(
            f"Connector {row.name} is being deleted; create it again once its cleanup has finished"
        )
    return AlreadyExistsException(f"Connector {row.name} already exists")


RECORD_COLUMNS = (
    ConnectorRow.name,
    ConnectorRow.config,
    ConnectorRow.target_state,
    ConnectorRow.deleted,
    ConnectorRow.config_version,
    ConnectorRow.created_at,
    ConnectorRow.initial_offsets,
    ConnectorRow.source_offsets_set,
    ConnectorRow.initial_offsets_alter,
)
"""What a :class:`ConnectorRecord` is made of."""


def _record(row: ConnectorRow) -> ConnectorRecord:
    return _record_of(tuple(getattr(row, column.key) for column in RECORD_COLUMNS))


def _record_of(values: Sequence[Any]) -> ConnectorRecord:
    """A record of the values of :data:`RECORD_COLUMNS`, in their order."""
    name, config, target_state, deleted, version, created_at, initial, offsets_set, alter = values
    return ConnectorRecord(
        name,
        dict(config),
        TARGET_STATES[target_state],
        deleted,
        version,
        aware(created_at),
        None if initial is None else tuple((str(t), int(p), int(o)) for t, p, o in initial),
        bool(offsets_set),
        bool(alter),
    )


TARGET_STATES = {state.value: state for state in TargetState}


def _deletion(row: DeletionRow) -> Deletion:
    return Deletion(
        row.connector,
        DeletionState(row.state),
        row.trace,
        aware(row.requested_at),
        None if row.finished_at is None else aware(row.finished_at),
    )
