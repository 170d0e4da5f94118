"""The PostgreSQL task's offset context (connectors/postgres/offsets.py): every offset its
records carry, key for key and in order, as stored by earlier releases, and resuming from
them (and from Debezium's own offsets)."""

from __future__ import annotations

import json
from typing import Any

from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots
from airflow_provider_connect.connectors.change_capture.notifications import Notifier
from airflow_provider_connect.connectors.postgres.offsets import Position, PostgresOffsetContext


class _NoChunks:
    """A chunk reader that is never asked anything: only the progress is read here."""

    def table(self, name: str) -> Any:
        raise AssertionError(name)

    def max_key(self, table: Any, keys: list[int]) -> Any:
        raise AssertionError(table)

    def chunk(self, *args: Any) -> Any:
        raise AssertionError(args)

    def signal(self, signal_id: str, kind: str) -> None:
        raise AssertionError(signal_id)

    def close(self) -> None:
        pass


def stored(offset: dict[str, Any]) -> dict[str, Any]:
    """``offset`` as the runtime stores and reads it back (JSON)."""
    return json.loads(json.dumps(offset))


def test_the_partition_is_the_server_name() -> None:
    assert PostgresOffsetContext("srv", None).partition == {"server": "srv"}


def test_snapshot_offsets_are_at_the_consistent_point() -> None:
    offsets = PostgresOffsetContext("srv", None)
    consistent = Position(0x16B3748, -1)
    assert list(offsets.snapshot_offset(consistent, False).items()) == [
        ("lsn_commit", 0x16B3748),
        ("event", -1),
        ("snapshot", True),
    ]
    assert list(offsets.snapshot_offset(consistent, True).items()) == [
        ("lsn_commit", 0x16B3748),
        ("event", -1),
        ("snapshot", True),
        ("last_snapshot_record", True),
    ]


def test_a_change_offset_places_the_event_in_its_transaction() -> None:
    offsets = PostgresOffsetContext("srv", None)
    assert offsets.advance(Position(500, 1))
    assert list(offsets.change_offset(480, 767, 1_704_164_645_123_456).items()) == [
        ("lsn_commit", 500),
        ("event", 1),
        ("lsn_proc", 480),
        ("txId", 767),
        ("ts_usec", 1_704_164_645_123_456),
    ]
    assert offsets.position_offset() == {"lsn_commit": 500, "event": 1}
    assert offsets.commit_time_us(offsets.change_offset(480, 767, 9)) == 9
    assert offsets.commit_time_us(offsets.position_offset()) is None


def test_a_running_incremental_snapshot_travels_in_every_streamed_offset() -> None:
    state = {"tables": ["public.a"], "last_key": ["7"], "max_key": ["90"]}
    offsets = PostgresOffsetContext(
        "srv", IncrementalSnapshots(_NoChunks(), 10, Notifier(frozenset(), None, "srv"), state)
    )
    offsets.advance(Position(500, 2))
    change = offsets.change_offset(480, 767, 9)
    assert list(change) == ["lsn_commit", "event", "lsn_proc", "txId", "ts_usec", "incremental"]
    assert change["incremental"] == state
    assert offsets.position_offset() == {"lsn_commit": 500, "event": 2, "incremental": state}
    assert "incremental" not in offsets.snapshot_offset(
        offsets.position, True
    )  # an initial snapshot's records
    offsets.incremental.progress.tables.clear()  # the snapshot is done: the key goes
    assert offsets.position_offset() == {"lsn_commit": 500, "event": 2}


def test_positions_only_move_forward() -> None:
    offsets = PostgresOffsetContext("srv", None)
    assert (
        offsets.advance(Position(500, 1))
        and offsets.advance(Position(500, 2))
        and offsets.advance(Position(600, 1))
    )
    assert not offsets.advance(Position(600, 1))  # a replay after a restart: delivered already
    assert not offsets.advance(Position(500, 3))
    offsets.catch_up(Position(550, -1))
    assert offsets.position == Position(600, 1)
    offsets.catch_up(Position(700, -1))
    assert offsets.position == Position(700, -1)
    offsets.restart_at(Position(100, -1))  # a new snapshot's consistent point
    assert offsets.position == Position(100, -1)


def test_a_stored_offset_round_trips() -> None:
    first = PostgresOffsetContext("srv", None)
    first.advance(Position(500, 3))
    offset = first.change_offset(480, 767, 9)
    first.record(offset)
    assert first.recorded == Position(500, 3)
    second = PostgresOffsetContext("srv", None)
    second.load(stored(offset))
    assert second.position == second.recorded == Position(500, 3)
    assert second.change_offset(480, 767, 9) == offset
    assert not second.advance(Position(500, 3)) and second.advance(Position(500, 4))


def test_resuming_from_nothing_and_from_debeziums_offsets() -> None:
    offsets = PostgresOffsetContext("srv", None)
    offsets.load(None)
    assert offsets.position == Position(0, -1) and offsets.recorded is None
    offsets.load({"lsn": 24023128, "txId": 555, "ts_usec": 1})  # Debezium names it lsn
    assert offsets.position == offsets.recorded == Position(24023128, -1)
