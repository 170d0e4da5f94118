"""Incremental snapshots of the change-capture core (connectors/change_capture/
incremental.py) over an in-memory table: chunks between window rows, streamed changes
superseding a chunk's rows, the progress the offsets carry, and signals."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots
from airflow_provider_connect.connectors.change_capture.signals import (
    EXECUTE_SNAPSHOT,
    WINDOW_CLOSE,
    WINDOW_OPEN,
    requested_collections,
    snapshot_request,
)


@dataclass(frozen=True)
class Column:
    name: str
    key: bool


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]


ITEMS = Table((Column("id", True), Column("name", False)))


class Rows:
    """A database of one table ``public.items`` (rows as text values) and a signal table."""

    def __init__(self, ids: list[int]) -> None:
        self.rows = {str(i): (str(i), f"n{i}") for i in ids}
        self.signals: list[tuple[str, str]] = []
        self.closed = False

    def table(self, name: str) -> Table | None:
        return ITEMS if name == "public.items" else None

    def max_key(self, table: Table, keys: list[int]) -> list[Any] | None:
        return [max(self.rows, key=int)] if self.rows else None

    def chunk(
        self,
        table: Table,
        keys: list[int],
        max_key: list[Any],
        last_key: list[Any] | None,
        size: int,
    ) -> list[tuple[Any, ...]]:
        low = int(last_key[0]) if last_key else -1
        ids = sorted(int(k) for k in self.rows if low < int(k) <= int(max_key[0]))
        return [self.rows[str(i)] for i in ids[:size]]

    def signal(self, signal_id: str, kind: str) -> None:
        self.signals.append((signal_id, kind))

    def close(self) -> None:
        self.closed = True


def request(*collections: str) -> str:
    return str(snapshot_request(list(collections), "s1")["data"])


def deliver_windows(snapshots: IncrementalSnapshots[Table], rows: Rows) -> list[Any]:
    """The stream reaching the window rows written so far: the chunk's rows emitted."""
    emitted = []
    for signal_id, kind in rows.signals:
        emitted += snapshots.on_signal_row(signal_id, kind, None, list)
    rows.signals.clear()
    return [row for _, row in emitted]


def test_a_signal_row_asks_for_an_incremental_snapshot() -> None:
    row = snapshot_request(["public.items"], "s1")
    assert row["id"] == "s1" and row["type"] == EXECUTE_SNAPSHOT
    assert json.loads(row["data"]) == {"data-collections": ["public.items"], "type": "incremental"}
    assert requested_collections(row["data"]) == ["public.items"]
    assert requested_collections("{not json") is None
    assert requested_collections('{"data-collections": ["a"], "type": "blocking"}') is None


def test_a_table_is_read_in_chunks_between_window_rows() -> None:
    rows = Rows(list(range(1, 6)))
    snapshots = IncrementalSnapshots(rows, 2, None)
    captured = ["public.items", "public.other"]
    assert (
        snapshots.on_signal_row("s1", EXECUTE_SNAPSHOT, request("public\\.it.*"), lambda: captured)
        == []
    )
    assert snapshots.state == {"tables": ["public.items"], "last_key": None, "max_key": None}
    chunks = []
    while snapshots.state is not None:
        snapshots.next_chunk()
        assert [kind for _, kind in rows.signals] == [WINDOW_OPEN, WINDOW_CLOSE]
        chunks.append(deliver_windows(snapshots, rows))
    assert chunks == [
        [("1", "n1"), ("2", "n2")],
        [("3", "n3"), ("4", "n4")],
        [("5", "n5")],
    ]


def test_a_streamed_change_in_the_window_supersedes_the_chunks_copy() -> None:
    rows = Rows([1, 2, 3])
    snapshots = IncrementalSnapshots(rows, 10, None)
    snapshots.on_signal(request("public.items"), ["public.items"])
    snapshots.next_chunk()
    (open_id, _), (close_id, _) = rows.signals
    snapshots.on_change("public.items", ("2",))  # before the window opens: kept
    assert snapshots.on_signal_row(open_id, WINDOW_OPEN, None, list) == []
    snapshots.on_change("public.items", ("2",))
    snapshots.on_change("public.other", ("3",))
    emitted = snapshots.on_signal_row(close_id, WINDOW_CLOSE, None, list)
    assert [row for _, row in emitted] == [("1", "n1"), ("3", "n3")]
    assert snapshots.state is None


def test_a_restart_resumes_after_the_last_chunk_stored() -> None:
    rows = Rows(list(range(1, 6)))
    stored = {"tables": ["public.items"], "last_key": ["2"], "max_key": ["4"]}
    snapshots = IncrementalSnapshots(rows, 10, stored)
    snapshots.on_signal_row("earlier-run-close", WINDOW_CLOSE, None, list)  # ignored
    assert snapshots.state == stored
    snapshots.next_chunk()
    assert deliver_windows(snapshots, rows) == [("3", "n3"), ("4", "n4")]  # not 5: later
    assert snapshots.state is None


def test_tables_without_a_key_or_rows_are_passed_over() -> None:
    keyless = Rows([1])
    keyless.table = lambda name: Table((Column("name", False),))  # type: ignore[method-assign]
    snapshots = IncrementalSnapshots(keyless, 10, {"tables": ["public.items"]})
    snapshots.next_chunk()
    assert snapshots.state is None and keyless.signals == []
    empty = Rows([])
    snapshots = IncrementalSnapshots(empty, 10, {"tables": ["public.items", "public.gone"]})
    snapshots.next_chunk()
    assert snapshots.state is None and empty.signals == []
