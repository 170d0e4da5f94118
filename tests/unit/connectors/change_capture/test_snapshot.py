"""The snapshot handover of the change-capture core (connectors/change_capture/snapshot.py):
when a snapshot is taken, the ``source.snapshot`` marker of each row, and its batches."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.snapshot import (
    SnapshotEvents,
    snapshot_markers,
    snapshot_needed,
)


def never_asked() -> bool:
    raise AssertionError("the log's position is asked for only under when_needed")


@pytest.mark.parametrize(
    ("mode", "completed", "expected"),
    [
        ("always", True, True),
        ("initial", False, True),
        ("initial", True, False),
        ("initial_only", False, True),
        ("initial_only", True, False),
        ("no_data", False, False),
        ("never", False, False),
        ("when_needed", False, True),
    ],
)
def test_when_a_snapshot_is_taken(mode: str, completed: bool, expected: bool) -> None:
    assert snapshot_needed(mode, completed, never_asked) is expected


def test_when_needed_snapshots_again_once_the_log_lost_the_position() -> None:
    assert snapshot_needed("when_needed", True, lambda: True)
    assert not snapshot_needed("when_needed", True, lambda: False)


def test_the_markers_say_where_each_row_is() -> None:
    tables = [("a", [1, 2, 3]), ("empty", []), ("b", [4]), ("c", [5, 6])]
    assert list(snapshot_markers(tables)) == [
        ("a", 1, "first"),
        ("a", 2, "true"),
        ("a", 3, "last_in_data_collection"),
        ("b", 4, "last_in_data_collection"),
        ("c", 5, "first_in_data_collection"),
        ("c", 6, "last"),
    ]
    assert list(snapshot_markers([("a", [1])])) == [("a", 1, "last")]
    assert list(snapshot_markers([("a", [])])) == []


def test_tables_are_read_only_when_their_rows_are_reached() -> None:
    read: list[str] = []

    def rows(name: str, values: list[int]) -> Iterator[int]:
        read.append(name)
        yield from values

    markers = snapshot_markers((n, rows(n, v)) for n, v in (("a", [1, 2]), ("b", [3])))
    assert next(markers) == ("a", 1, "first") and read == ["a"]


def record(table: str, row: int, marker: str, last: bool) -> SourceRecord:
    return SourceRecord({}, {"last": last}, table, value=(row, marker))


def test_batches_end_with_the_last_row() -> None:
    events = SnapshotEvents([("a", [1, 2, 3]), ("b", [4, 5])])
    first = events.next_batch(2, record)
    assert [r.value for r in first] == [(1, "first"), (2, "true")] and not events.done
    assert [r.value for r in events.next_batch(2, record)] == [
        (3, "last_in_data_collection"),
        (4, "first_in_data_collection"),
    ]
    last = events.next_batch(2, record)
    assert [(r.value, r.source_offset) for r in last] == [((5, "last"), {"last": True})]
    assert events.done


def test_a_snapshot_without_rows_ends_with_its_first_batch() -> None:
    events = SnapshotEvents([("a", [])])
    assert events.next_batch(10, record) == [] and events.done
