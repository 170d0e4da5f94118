"""Incremental snapshots of the change-capture core (connectors/change_capture/
incremental.py) over an in-memory table: chunks between window rows, streamed changes
superseding a chunk's rows, the progress the offsets carry, the snapshot signals (request,
stop, pause, resume) and the notifications they send."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.signals import EXECUTE_SNAPSHOT, execute_snapshot
from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots
from airflow_provider_connect.connectors.change_capture.notifications import Notifier
from airflow_provider_connect.connectors.change_capture.signals import WINDOW_CLOSE, WINDOW_OPEN


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


def notifier() -> Notifier:
    return Notifier(frozenset({"sink"}), "notes", "srv")


def deliver_windows(snapshots: IncrementalSnapshots[Table], rows: Rows) -> list[Any]:
    """The stream reaching the window rows written so far: the chunk's rows emitted."""
    emitted = []
    for signal_id, kind in rows.signals:
        emitted += snapshots.on_window(signal_id, kind)
    rows.signals.clear()
    return [row for _, row in emitted]


def notes(snapshots: IncrementalSnapshots[Table]) -> list[tuple[str, str, dict[str, str]]]:
    """The notifications sent since the last call: (id, type, additional data)."""
    sent = snapshots.notifier.pending
    snapshots.notifier.pending = []
    return [(n.id, n.type, n.additional_data) for n in sent]


def test_a_signal_row_asks_for_an_incremental_snapshot() -> None:
    row = execute_snapshot("s1", ["public.items"]).row()
    assert row["id"] == "s1" and row["type"] == EXECUTE_SNAPSHOT
    assert json.loads(row["data"]) == {"data-collections": ["public.items"], "type": "incremental"}


def test_a_table_is_read_in_chunks_between_window_rows() -> None:
    rows = Rows(list(range(1, 6)))
    snapshots = IncrementalSnapshots(rows, 2, notifier())
    captured = ["public.items", "public.other"]
    snapshots.request(["public\\.it.*"], captured, "s1")
    assert snapshots.state == {
        "tables": ["public.items"],
        "last_key": None,
        "max_key": None,
        "id": "s1",
    }
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
    sent = notes(snapshots)
    assert {i for i, _, _ in sent} == {"s1"}
    assert [t for _, t, _ in sent] == [
        "STARTED",
        "IN_PROGRESS",
        "IN_PROGRESS",
        "IN_PROGRESS",
        "TABLE_SCAN_COMPLETED",
        "COMPLETED",
    ]
    assert sent[0][2] == {"data_collections": "public.items", "connector_name": "srv"}
    assert sent[1][2]["maximum_key"] == "5" and sent[1][2]["last_processed_key"] == "2"
    assert sent[4][2] == {
        "data_collections": "public.items",
        "scanned_collection": "public.items",
        "total_rows_scanned": "5",
        "status": "SUCCEEDED",
        "connector_name": "srv",
    }


def test_a_snapshot_pauses_resumes_and_stops() -> None:
    rows = Rows(list(range(1, 6)))
    snapshots = IncrementalSnapshots(rows, 2, notifier())
    snapshots.request(["public.items"], ["public.items"], "s1")
    snapshots.next_chunk()
    assert deliver_windows(snapshots, rows) == [("1", "n1"), ("2", "n2")]
    snapshots.pause()
    snapshots.next_chunk()
    assert rows.signals == [] and snapshots.state is not None and snapshots.state["paused"]
    # the pause is part of the progress a restart resumes from
    assert IncrementalSnapshots(rows, 2, notifier(), snapshots.state).progress.paused
    snapshots.resume()
    snapshots.next_chunk()
    assert deliver_windows(snapshots, rows) == [("3", "n3"), ("4", "n4")]
    snapshots.next_chunk()
    snapshots.stop([])  # the window waiting for the stream is dropped with it
    assert deliver_windows(snapshots, rows) == [] and snapshots.state is None
    assert [t for _, t, _ in notes(snapshots)] == [
        "STARTED",
        "IN_PROGRESS",
        "PAUSED",
        "RESUMED",
        "IN_PROGRESS",
        "ABORTED",
    ]


def test_a_streamed_change_in_the_window_supersedes_the_chunks_copy() -> None:
    rows = Rows([1, 2, 3])
    snapshots = IncrementalSnapshots(rows, 10, notifier())
    snapshots.request(["public.items"], ["public.items"], "s1")
    snapshots.next_chunk()
    (open_id, _), (close_id, _) = rows.signals
    snapshots.on_change("public.items", ("2",))  # before the window opens: kept
    assert snapshots.on_window(open_id, WINDOW_OPEN) == []
    snapshots.on_change("public.items", ("2",))
    snapshots.on_change("public.other", ("3",))
    emitted = snapshots.on_window(close_id, WINDOW_CLOSE)
    assert [row for _, row in emitted] == [("1", "n1"), ("3", "n3")]
    assert snapshots.state is None


def test_a_restart_resumes_after_the_last_chunk_stored() -> None:
    rows = Rows(list(range(1, 6)))
    stored = {"tables": ["public.items"], "last_key": ["2"], "max_key": ["4"]}
    snapshots = IncrementalSnapshots(rows, 10, notifier(), stored)
    snapshots.on_window("earlier-run-close", WINDOW_CLOSE)  # ignored
    assert snapshots.state == stored
    snapshots.next_chunk()
    assert deliver_windows(snapshots, rows) == [("3", "n3"), ("4", "n4")]  # not 5: later
    assert snapshots.state is None


def test_tables_without_a_key_or_rows_are_passed_over() -> None:
    keyless = Rows([1])
    keyless.table = lambda name: Table((Column("name", False),))  # type: ignore[method-assign]
    snapshots = IncrementalSnapshots(keyless, 10, notifier(), {"tables": ["public.items"]})
    snapshots.next_chunk()
    assert snapshots.state is None and keyless.signals == []
    assert [(t, d["status"]) for _, t, d in notes(snapshots) if "status" in d] == [
        ("TABLE_SCAN_COMPLETED", "NO_PRIMARY_KEY")
    ]
    empty = Rows([])
    snapshots = IncrementalSnapshots(
        empty, 10, notifier(), {"tables": ["public.items", "public.gone"]}
    )
    snapshots.next_chunk()
    assert snapshots.state is None and empty.signals == []
    assert [d.get("status") for _, _, d in notes(snapshots)] == ["EMPTY", "UNKNOWN_SCHEMA", None]


def test_a_second_request_while_one_runs_gives_its_id_to_the_rest_of_the_snapshot() -> None:
    """As Debezium's correlation id: the latest request's, so its sensor sees COMPLETED."""
    rows = Rows(list(range(1, 6)))
    snapshots = IncrementalSnapshots(rows, 2, notifier())
    snapshots.request(["public.items"], ["public.items"], "s1")
    snapshots.next_chunk()
    deliver_windows(snapshots, rows)
    snapshots.request(["public.items"], ["public.items"], "s2")  # already queued
    while snapshots.state is not None:
        snapshots.next_chunk()
        deliver_windows(snapshots, rows)
    sent = notes(snapshots)
    assert [(i, t) for i, t, _ in sent] == [
        ("s1", "STARTED"),
        ("s1", "IN_PROGRESS"),
        ("s2", "STARTED"),
        ("s2", "IN_PROGRESS"),
        ("s2", "IN_PROGRESS"),
        ("s2", "TABLE_SCAN_COMPLETED"),
        ("s2", "COMPLETED"),
    ]
