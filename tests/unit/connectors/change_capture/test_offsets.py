"""The change-capture core's offset context (connectors/change_capture/offsets.py): what it
adds to a database's stream position, and what it reads back from stored offsets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connectors.change_capture.offsets import (
    OffsetContext,
    incremental_state,
    snapshot_completed,
)


class BinlogOffsets(OffsetContext[tuple[str, int]]):
    """A second database's positions (a binlog file and position), as a test subject."""

    def __init__(self) -> None:
        super().__init__({"server": "db"}, ("bin.000001", 4), None)

    def position_keys(self, position: tuple[str, int]) -> dict[str, Any]:
        return {"file": position[0], "pos": position[1]}

    def position_of(self, offset: Mapping[str, Any]) -> tuple[str, int]:
        return offset["file"], offset["pos"]


def test_offsets_start_with_the_databases_position_then_the_cores_keys() -> None:
    offsets = BinlogOffsets()
    assert list(offsets.snapshot_offset(offsets.position, True).items()) == [
        ("file", "bin.000001"),
        ("pos", 4),
        ("snapshot", True),
        ("last_snapshot_record", True),
    ]
    assert offsets.snapshot_offset(offsets.position, False) == {
        "file": "bin.000001",
        "pos": 4,
        "snapshot": True,
    }
    event = {**offsets.stream_position(), "row": 2}
    assert offsets.with_incremental(event) == {"file": "bin.000001", "pos": 4, "row": 2}
    assert offsets.position_offset() == {"file": "bin.000001", "pos": 4}


def test_each_offset_is_a_new_dict() -> None:
    offsets = BinlogOffsets()
    first = offsets.position_offset()
    assert offsets.advance(("bin.000001", 120))
    assert first == {"file": "bin.000001", "pos": 4}
    assert offsets.position_offset() == {"file": "bin.000001", "pos": 120}


def test_a_snapshot_is_complete_once_its_last_record_is_stored() -> None:
    assert not snapshot_completed(None)
    assert not snapshot_completed({"lsn_commit": 5, "event": -1, "snapshot": True})
    assert snapshot_completed(
        {"lsn_commit": 5, "event": -1, "snapshot": True, "last_snapshot_record": True}
    )
    assert snapshot_completed({"lsn_commit": 9, "event": 1})  # streaming since


def test_the_incremental_snapshots_progress_is_read_back() -> None:
    state = {"tables": ["public.a"], "last_key": None, "max_key": ["9"]}
    assert incremental_state(None) is None
    assert incremental_state({"lsn_commit": 9, "event": 1}) is None
    assert incremental_state({"lsn_commit": 9, "event": 1, "incremental": state}) == state
