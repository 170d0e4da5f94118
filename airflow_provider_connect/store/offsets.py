"""Progress, as Kafka Connect's offset backing store holds it for sources, plus the sink
progress Airflow's sensors watch. Written by task runs in batches (one call per offset
flush, never per record); read by the runs at start, REST and Airflow."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Table, delete, func, select

from airflow_provider_connect.store.database import Database
from airflow_provider_connect.store.models import (
    SinkProgressRow,
    SourceOffsetRow,
    TaskStatusRow,
    utcnow,
)
from airflow_provider_connect.store.records import SinkProgress, aware, partition_key
from airflow_provider_connect.store.states import State


class OffsetStore:
    """Every method is one short transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- source offsets --------------------------------------------------------------------
    def commit_source_offsets(
        self,
        name: str,
        offsets: Iterable[tuple[dict[str, Any], dict[str, Any] | None]],
        run: tuple[int, str] | None = None,
    ) -> bool:
        """Stores the latest offset of each partition, all in one transaction; with ``run``
        (task id, run id), unless a newer run of the task has started (a run superseded while
        it could not reach the database must not move back the offsets its successor moved
        on; a superseded run's last commit before its successor starts stands, as the
        herder starts the successor once it has ended). Returns whether they were stored."""
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
            return True
        insert = self.db.insert(SourceOffsetRow)
        statement = insert.on_conflict_do_update(
            index_elements=["connector", "partition_key"],
            set_={"offset": insert.excluded.offset, "updated_at": insert.excluded.updated_at},
        )
        with self.db.tx() as s:
            if run is not None:
                current = s.execute(
                    select(TaskStatusRow.run_id, TaskStatusRow.state)
                    .where(TaskStatusRow.connector == name, TaskStatusRow.task_id == run[0])
                    .with_for_update()
                ).first()
                if (
                    current is not None
                    and current.run_id not in (run[1], "")
                    and current.state != State.UNASSIGNED.value
                ):
                    return False
            s.execute(statement, rows)
        return True

    def source_offset(self, name: str, partition: dict[str, Any]) -> dict[str, Any] | None:
        with self.db.tx(read_only=True) as s:
            row = s.get(SourceOffsetRow, (name, partition_key(partition)))
            return None if row is None else row.offset

    def source_offsets(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(SourceOffsetRow)
                .where(SourceOffsetRow.connector == name)
                .order_by(SourceOffsetRow.partition_key)
            )
            return [(r.partition, r.offset) for r in rows]

    def all_source_offsets(self) -> dict[str, list[tuple[dict[str, Any], dict[str, Any] | None]]]:
        """Every connector's committed source offsets by connector name, in one query (a
        deleted connector's offsets stay, as in Kafka Connect)."""
        found: dict[str, list[tuple[dict[str, Any], dict[str, Any] | None]]] = {}
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(SourceOffsetRow).order_by(
                    SourceOffsetRow.connector, SourceOffsetRow.partition_key
                )
            )
            for r in rows:
                found.setdefault(r.connector, []).append((r.partition, r.offset))
        return found

    def delete_source_offsets(self, name: str) -> None:
        with self.db.tx() as s:
            s.execute(delete(SourceOffsetRow).where(SourceOffsetRow.connector == name))

    # -- sink progress ---------------------------------------------------------------------
    def record_sink_progress(
        self, name: str, progress: Iterable[tuple[str, int, int | None, int | None, int]]
    ) -> None:
        """Upserts (topic, partition, committed offset, end offset, records committed since
        the last row) rows in one transaction: a None committed offset keeps the one stored,
        the records add to the stored count."""
        now = utcnow()
        rows = [
            {
                "connector": name,
                "topic": topic,
                "partition": partition,
                "committed_offset": committed,
                "end_offset": end,
                "records": records,
                "updated_at": now,
            }
            for topic, partition, committed, end, records in progress
        ]
        if not rows:
            return
        table = SinkProgressRow.__table__
        assert isinstance(table, Table)  # typed FromClause; a class with __tablename__ maps a Table
        statement = self.db.insert(table)
        committed = func.coalesce(statement.excluded.committed_offset, table.c.committed_offset)
        with self.db.tx() as s:
            s.execute(
                statement.on_conflict_do_update(
                    index_elements=["connector", "topic", "partition"],
                    set_={
                        "committed_offset": committed,
                        "end_offset": statement.excluded.end_offset,
                        "records": table.c.records + statement.excluded.records,
                        "updated_at": statement.excluded.updated_at,
                    },
                ),
                rows,
            )

    def sink_progress(self, name: str) -> list[SinkProgress]:
        """The connector's progress rows by topic and partition."""
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(SinkProgressRow)
                .where(SinkProgressRow.connector == name)
                .order_by(SinkProgressRow.topic, SinkProgressRow.partition)
            )
            return [_sink_progress(r) for r in rows]

    def all_sink_progress(self) -> dict[str, list[SinkProgress]]:
        """Every sink connector's progress rows by connector name, in one query."""
        found: dict[str, list[SinkProgress]] = {}
        with self.db.tx(read_only=True) as s:
            rows = s.scalars(
                select(SinkProgressRow).order_by(
                    SinkProgressRow.connector, SinkProgressRow.topic, SinkProgressRow.partition
                )
            )
            for r in rows:
                found.setdefault(r.connector, []).append(_sink_progress(r))
        return found


def _sink_progress(row: SinkProgressRow) -> SinkProgress:
    return SinkProgress(
        row.topic,
        row.partition,
        row.committed_offset,
        row.end_offset,
        aware(row.updated_at),
        row.records,
    )
