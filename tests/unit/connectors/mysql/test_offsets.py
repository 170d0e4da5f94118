"""The binlog task's offsets: Debezium's keys, zero counts left out, positions ordered as
the log delivers events, so a replayed transaction's events are dropped up to the stored
one and no further."""

from __future__ import annotations

from airflow_provider_connect.connectors.mysql.offsets import BinlogOffsetContext, file_number


def test_keys_are_debeziums_with_zero_counts_left_out() -> None:
    offsets = BinlogOffsetContext("shop", None)
    assert offsets.partition == {"server": "shop"}
    assert offsets.position_keys(offsets.at("bin.000003", 1532, "0-1-41")) == {
        "file": "bin.000003",
        "pos": 1532,
        "gtids": "0-1-41",
    }
    offsets.server_id, offsets.ts_sec = 223344, 1_700_000_000
    assert offsets.position_keys(offsets.at("bin.000003", 1532, None, 2, 1)) == {
        "file": "bin.000003",
        "pos": 1532,
        "event": 2,
        "row": 1,
        "server_id": 223344,
        "ts_sec": 1_700_000_000,
    }


def test_a_stored_offset_loads_back_to_its_position() -> None:
    offsets = BinlogOffsetContext("shop", None)
    stored = {"file": "bin.000010", "pos": 4, "gtids": "0-1-9", "event": 3, "row": 2, "ts_sec": 5}
    offsets.load(stored)
    assert offsets.position == offsets.at("bin.000010", 4, "0-1-9", 3, 2)
    assert offsets.position_of({"file": "bin.000010", "pos": 4}) == offsets.at(
        "bin.000010", 4, None
    )


def test_a_replayed_transaction_is_dropped_up_to_the_stored_row() -> None:
    """Stored: two events of the transaction at bin.000002:900 handled, one row of the next
    rows event handed out. Replayed from the transaction's start, its rows up to that one
    are dropped; the next row, the next event and the next file are new."""
    offsets = BinlogOffsetContext("shop", None)
    offsets.load({"file": "bin.000002", "pos": 900, "event": 2, "row": 1})
    at = offsets.at
    assert not offsets.advance(at("bin.000002", 900, None, 1, 5))
    assert not offsets.advance(at("bin.000002", 900, None, 2, 1))
    assert offsets.advance(at("bin.000002", 900, None, 2, 2))
    assert offsets.advance(at("bin.000002", 900, None, 3, 1))
    assert offsets.advance(at("bin.000002", 1200, None, 0, 1))
    assert offsets.advance(at("bin.000010", 4, None, 0, 1))  # bin.000010 follows bin.000002


def test_file_numbers() -> None:
    assert file_number("mysql-bin.000042") == 42
    assert file_number("") == 0
