"""Snapshots of several tables at once (connectors/change_capture/snapshot.py): the rows of
tables read on threads come table after table with Debezium's markers, in bounded memory;
a reader's failure fails the snapshot; closing stops the readers; the progress a snapshot
tells, in table order, each table's scan with its last row."""

from __future__ import annotations

import threading
from collections.abc import Generator

import pytest

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.snapshot import (
    ParallelRows,
    SnapshotEvents,
    snapshot_markers,
)
from tests_common.processes import wait_until


class Progress:
    def __init__(self) -> None:
        self.told: list[tuple[str, ...]] = []

    def snapshot_started(self) -> None:
        self.told.append(("started",))

    def table_started(self, table: str) -> None:
        self.told.append(("table", table))

    def table_scanned(self, table: str, rows: int) -> None:
        self.told.append(("scanned", table, str(rows)))

    def snapshot_completed(self) -> None:
        self.told.append(("completed",))


def batches(rows: list[int], size: int = 2) -> Generator[list[int], None, None]:
    yield from (rows[i : i + size] for i in range(0, len(rows), size))


def test_tables_read_at_once_come_table_after_table_with_their_markers() -> None:
    tables = {"a": list(range(0, 7)), "empty": [], "b": [10], "c": list(range(20, 25))}
    parallel: ParallelRows[str, int] = ParallelRows(
        list(tables), lambda _, t: batches(tables[t]), 3, "t", lambda: None
    )
    try:
        got = list(snapshot_markers(parallel.tables()))
    finally:
        parallel.close()
    assert got == list(snapshot_markers((t, rows) for t, rows in tables.items()))


def test_memory_is_bounded_by_the_tables_read_at_once() -> None:
    reading: list[str] = []
    lock = threading.Lock()

    def read(_: int, table: str) -> Generator[list[int], None, None]:
        with lock:
            reading.append(table)
        yield from batches(list(range(100)))

    names = [f"t{i}" for i in range(6)]
    parallel: ParallelRows[str, int] = ParallelRows(names, read, 2, "t", lambda: None, buffered=3)
    try:
        rows = parallel.tables()
        first, first_rows = next(rows)
        assert (first, next(first_rows)) == ("t0", 0)
        wait_until(lambda: reading == ["t0", "t1"], 10, "two tables being read")
        # t2 waits until t0 is handed out, whatever the threads could read
        assert reading == ["t0", "t1"]
        assert sum(1 for _ in first_rows) == 99
        next(rows)
        wait_until(lambda: "t2" in reading, 10, "the third table read once the first is done")
    finally:
        parallel.close()


def test_a_readers_failure_fails_the_snapshot_with_its_cause() -> None:
    def read(_: int, table: str) -> Generator[list[int], None, None]:
        if table == "bad":
            raise OSError("connection lost")
        yield from batches(list(range(1000)))

    parallel: ParallelRows[str, int] = ParallelRows(
        ["good", "bad"], read, 2, "t", lambda: None, buffered=1
    )
    try:
        with pytest.raises(OSError, match="connection lost"):
            list(snapshot_markers(parallel.tables()))
    finally:
        parallel.close()


def test_closing_stops_the_readers_and_cancels_what_they_wait_for() -> None:
    cancelled = threading.Event()

    def read(_: int, table: str) -> Generator[list[int], None, None]:
        while True:  # a table without end, its queue soon full
            if cancelled.is_set():
                raise OSError("canceling statement due to user request")
            yield [1]

    parallel: ParallelRows[str, int] = ParallelRows(
        ["a", "b"], read, 2, "t", cancelled.set, buffered=1
    )
    next(parallel.tables())
    parallel.close(timeout_s=10)
    assert cancelled.is_set()
    assert not any(t.is_alive() for t in threading.enumerate() if t.name.startswith("t-"))


def record(table: str, row: int, marker: str, last: bool) -> SourceRecord:
    return SourceRecord({}, {}, table, value=(row, marker))


def test_progress_is_told_in_table_order_each_scan_with_its_last_row() -> None:
    progress = Progress()
    events = SnapshotEvents([("a", [1, 2, 3]), ("e", []), ("b", [4])], progress)
    assert [r.value for r in events.next_batch(2, record)] == [(1, "first"), (2, "true")]
    assert progress.told == [("started",), ("table", "a")]
    assert [r.value for r in events.next_batch(2, record)] == [
        (3, "last_in_data_collection"),
        (4, "last"),
    ]
    assert progress.told[2:] == [
        ("scanned", "a", "3"),
        ("table", "e"),
        ("scanned", "e", "0"),
        ("table", "b"),
        ("scanned", "b", "1"),
        ("completed",),
    ]
    assert events.done


def test_a_snapshot_of_empty_tables_tells_them_all_in_its_only_batch() -> None:
    progress = Progress()
    events: SnapshotEvents[str, int] = SnapshotEvents([("e", [])], progress)
    assert events.next_batch(10, record) == [] and events.done
    assert progress.told == [
        ("started",),
        ("table", "e"),
        ("scanned", "e", "0"),
        ("completed",),
    ]
