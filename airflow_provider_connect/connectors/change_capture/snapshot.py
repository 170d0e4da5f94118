"""The initial snapshot and its handover to the stream, whatever the database (Debezium's
``Snapshotter`` and ``SnapshotChangeEventSource``).

No gap, no double: the database's connector reads the tables at one consistent point of
its log (PostgreSQL: the slot's exported snapshot) and streams from that point on, so a row
committed before it is read and a change committed after it is streamed, never both and
never neither. Every snapshot record's offset is that point with ``snapshot`` set, the last
one with ``last_snapshot_record`` (:meth:`.offsets.OffsetContext.snapshot_offset`): a
snapshot whose last record was not stored is taken again from the start at the next start
(:func:`.offsets.snapshot_completed`), as Debezium does, so its ``r`` events may then come
twice."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    SNAPSHOT_FIRST,
    SNAPSHOT_FIRST_IN_DATA_COLLECTION,
    SNAPSHOT_LAST,
    SNAPSHOT_LAST_IN_DATA_COLLECTION,
    SNAPSHOT_TRUE,
)

SNAPSHOT_MODES = ("initial", "always", "initial_only", "no_data", "never", "when_needed")
"""Debezium's snapshot modes without a custom implementation; ``never`` is its deprecated
name of ``no_data``."""

T = TypeVar("T")
R = TypeVar("R")


def snapshot_needed(mode: str, completed: bool, position_lost: Callable[[], bool]) -> bool:
    """Whether to take an initial snapshot at this start under ``snapshot.mode`` ``mode``:
    ``always``; ``initial``, ``initial_only`` and ``when_needed`` while no completed one is
    stored (``completed``, :func:`.offsets.snapshot_completed`); ``when_needed`` also when
    the log no longer holds the stored position (``position_lost()``, asked only then).
    ``mode`` is lower-case, as the connector's config holds it."""
    if mode == "always":
        return True
    if mode in ("initial", "initial_only", "when_needed") and not completed:
        return True
    return mode == "when_needed" and position_lost()


def snapshot_markers(
    tables: Iterable[tuple[T, Iterable[R]]],
) -> Iterator[tuple[T, R, str]]:
    """``(table, row, marker)`` of every row of ``tables`` (each table with its rows, read
    lazily), the marker as Debezium's ``source.snapshot`` says where the row is: ``first``,
    ``last``, ``first_in_data_collection``, ``last_in_data_collection``, else ``true``."""
    pending: tuple[T, R, str] | None = None
    first = True
    for table, table_rows in tables:
        rows = iter(table_rows)
        previous = next(rows, None)
        in_table = SNAPSHOT_FIRST_IN_DATA_COLLECTION
        while previous is not None:
            row = next(rows, None)
            marker = in_table if row is not None else SNAPSHOT_LAST_IN_DATA_COLLECTION
            if pending is not None:
                yield pending
            pending = (table, previous, SNAPSHOT_FIRST if first else marker)
            first, in_table, previous = False, SNAPSHOT_TRUE, row
    if pending is not None:
        yield (pending[0], pending[1], SNAPSHOT_LAST)


class SnapshotEvents(Generic[T, R]):
    """The rows of an initial snapshot, handed out in batches of records."""

    def __init__(self, tables: Iterable[tuple[T, Iterable[R]]]) -> None:
        self._events = snapshot_markers(tables)
        self.done = False
        """The batch holding the last row (or the first batch, when there is none) was
        handed out."""

    def next_batch(
        self, max_batch: int, record: Callable[[T, R, str, bool], SourceRecord]
    ) -> list[SourceRecord]:
        """The records of the next rows, up to ``max_batch``, each made by
        ``record(table, row, marker, last)``."""
        records = []
        last = True
        for table, row, marker in self._events:
            last = marker == SNAPSHOT_LAST
            records.append(record(table, row, marker, last))
            if last or len(records) >= max_batch:
                break
        self.done = last
        return records
