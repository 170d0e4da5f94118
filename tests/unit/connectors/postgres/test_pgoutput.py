"""The pgoutput decoder's per-relation tuple reader (``pgoutput.tuple_reader``) and the
captured table's reader over it: the same values as decoding the message, then converting
its texts (``CapturedTable.row_and_key``)."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.database import ColumnInfo, TableInfo
from airflow_provider_connect.connectors.postgres.events import ChangeEvents
from airflow_provider_connect.connectors.postgres.offsets import PostgresOffsetContext
from airflow_provider_connect.connectors.postgres.pgoutput import (
    NEW_TUPLE_AT,
    UNCHANGED_TOAST,
    DecodeError,
    Insert,
    Update,
    decode,
    new_row_relation,
    tuple_reader,
)
from airflow_provider_connect.connectors.postgres.types import PgType


def tuple_data(*values: Any) -> bytes:
    """TupleData of ``values``: text, None (null) or UNCHANGED_TOAST."""
    out = struct.pack("!H", len(values))
    for value in values:
        if value is None:
            out += b"n"
        elif value is UNCHANGED_TOAST:
            out += b"u"
        else:
            encoded = value.encode()
            out += b"t" + struct.pack("!I", len(encoded)) + encoded
    return out


def insert(oid: int, *values: Any) -> bytes:
    return b"I" + struct.pack("!I", oid) + b"N" + tuple_data(*values)


def update(oid: int, *values: Any, old: tuple[Any, ...] | None = None) -> bytes:
    head = b"U" + struct.pack("!I", oid)
    if old is not None:
        head += b"O" + tuple_data(*old)
    return head + b"N" + tuple_data(*values)


def test_reader_converts_as_decode_then_parse() -> None:
    data = insert(7, "1", None, "héllo😀", UNCHANGED_TOAST)
    message = decode(data)
    assert isinstance(message, Insert)
    columns = [(int, "null", "toast"), None, (str.upper, "", ""), (str, "null", "toast")]
    read = tuple_reader(columns, [2, 0])
    assert new_row_relation(data) == 7
    row, key = read(data, NEW_TUPLE_AT)
    expected = [int(message.new[0]), message.new[2].upper(), "toast"]
    assert row == expected == [1, "HÉLLO😀", "toast"]
    assert key == ["HÉLLO😀", 1] and key[0] is row[1]


def test_reader_skips_columns_without_conversion_whatever_their_kind() -> None:
    read = tuple_reader([None, (str, "null", "toast"), None], [1])
    for skipped in ("x" * 300, None, UNCHANGED_TOAST):
        data = insert(7, skipped, "a", skipped)
        assert read(data, NEW_TUPLE_AT) == (["a"], ["a"])


def test_reader_needs_a_conversion_of_each_key_column() -> None:
    with pytest.raises(ValueError):
        tuple_reader([None, (str, None, None)], [0])


def test_new_row_relation_of_messages() -> None:
    assert new_row_relation(insert(1, "a")) == 1
    assert new_row_relation(update(2, "a")) == 2
    with_old = update(1, "b", old=("a",))
    assert new_row_relation(with_old) is None  # decoded as any message
    message = decode(with_old)
    assert isinstance(message, Update) and message.old == ("a",)
    assert new_row_relation(b"B" + bytes(20)) is None


@pytest.mark.parametrize(
    "data",
    [
        insert(1, "a", "b"),  # wider than the relation
        insert(1, "a")[:-1],  # truncated
        insert(1),  # narrower
        b"I" + struct.pack("!I", 1) + b"N" + b"\x00",  # no column count
        b"I" + struct.pack("!I", 1) + b"N" + struct.pack("!H", 1) + b"b",  # binary
    ],
)
def test_reader_refuses_what_is_not_a_tuple_of_the_relation(data: bytes) -> None:
    with pytest.raises(DecodeError):
        tuple_reader([(str, None, None)])(data, NEW_TUPLE_AT)


def captured(columns: tuple[ColumnInfo, ...], **props: str) -> Any:
    config = PostgresConnectorConfig.of(
        {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": "127.0.0.1",
            "database.user": "u",
            "database.dbname": "db",
            "topic.prefix": "srv",
            **props,
        }
    )
    events = ChangeEvents(config, PostgresOffsetContext("srv", None))
    return events.captured(TableInfo(16384, "public", "t", columns))


COLUMNS = (
    ColumnInfo("id", PgType("int8"), False, True),
    ColumnInfo("name", PgType("text"), True, False),
    ColumnInfo("amount", PgType("numeric", ((12 << 16) | 2) + 4), True, False),
    ColumnInfo("at", PgType("timestamptz"), False, False),
)


@pytest.mark.parametrize(
    "values",
    [
        ("42", "x", "9.99", "2024-01-02 03:04:05.123456+00"),
        ("43", None, None, "2024-01-02 03:04:05+00"),
        ("44", UNCHANGED_TOAST, "1.00", "2024-01-02 03:04:05+00"),
    ],
)
def test_table_reader_makes_the_row_and_key_of_the_texts(values: tuple[Any, ...]) -> None:
    table = captured(COLUMNS)
    assert table.reader is not None
    assert table.reader(insert(1, *values), NEW_TUPLE_AT) == table.row_and_key(values)
    assert table.row_and_key(values) == (table.row(values), table.key(values))


def test_table_without_its_key_in_the_row_has_no_reader() -> None:
    table = captured(COLUMNS, **{"column.exclude.list": "public.t.id"})
    assert table.reader is None
    values = ("42", "x", "9.99", "2024-01-02 03:04:05+00")
    assert table.row_and_key(values) == (table.row(values), table.key(values))


def test_streamed_records_are_those_change_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    config = PostgresConnectorConfig.of(
        {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": "127.0.0.1",
            "database.user": "u",
            "database.dbname": "db",
            "topic.prefix": "srv",
        }
    )
    events = ChangeEvents(config, PostgresOffsetContext("srv", None))
    table = events.captured(TableInfo(16384, "public", "t", COLUMNS))
    monkeypatch.setattr("time.time", lambda: 1_700_000_000.5)
    row, key = table.row_and_key(("42", "x", "9.99", "2024-01-02 03:04:05+00"))
    source = table.source.block(1_700_000_000_000_000, 7, 100, None)
    offset = {"lsn_commit": 100, "event": 1}
    for op, before, after in (("c", None, row), ("u", row, row), ("d", row, None)):
        made = events.streamed(
            table, offset, key, op, source, before, after, None, 1_700_000_000_500
        )
        expected = events.change(table, offset, key, op, source, before=before, after=after)
        assert (made.topic, made.key_schema, made.key, made.value_schema, made.value) == (
            expected.topic,
            expected.key_schema,
            expected.key,
            expected.value_schema,
            expected.value,
        )
        assert made.source_offset is expected.source_offset
        assert made.source_partition == expected.source_partition
