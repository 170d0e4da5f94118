"""A captured MySQL / MariaDB table (connectors/mysql/tables.py): its topic, key, row and
envelope schemas as Debezium names and shapes them, and its rows from a snapshot (PyMySQL's
tuples) and from the binlog (pymysqlreplication's dicts) equal for the same stored row."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, validate_value
from airflow_provider_connect.connectors.change_capture.config import Filters
from airflow_provider_connect.connectors.change_capture.envelope import source_schema_builder
from airflow_provider_connect.connectors.mysql.tables import CapturedTable
from airflow_provider_connect.connectors.mysql.types import Column, TypeModes, UnsupportedType

SOURCE = source_schema_builder("io.debezium.connector.mariadb.Source").build()


def filters(column_exclude: str | None = None) -> Filters:
    return Filters(
        None,
        None,
        None,
        None,
        None,
        [re.compile(column_exclude)] if column_exclude else None,
        None,
        lambda db: False,
    )


def col(name: str, data_type: str, column_type: str, nullable: bool = True, **more: Any) -> Column:
    return Column(
        name=name, data_type=data_type, column_type=column_type, optional=nullable, **more
    )


COLUMNS = [
    col("id", "int", "int(11)", False),
    col("s", "set", "set('a','b')", False, enum_values=("a", "b")),
    col("d", "date", "date", False),
    col("n", "varchar", "varchar(5)"),
    col("ip", "inet6", "inet6"),
    col("secret", "varchar", "varchar(5)"),
]


def table(**overrides: Any) -> CapturedTable:
    arguments: dict[str, Any] = {
        "db": "shop",
        "table": "orders",
        "columns": COLUMNS,
        "key_columns": ["id"],
        "topic_prefix": "srv",
        "filters": filters(r"shop\.orders\.secret"),
        "modes": TypeModes(),
        "transaction": True,
        "source_schema": SOURCE,
    }
    arguments.update(overrides)
    return CapturedTable(**arguments)


def test_schemas() -> None:
    captured = table()
    assert captured.topic == "srv.shop.orders"
    assert captured.key_schema is not None
    assert captured.key_schema.name == "srv.shop.orders.Key"
    assert [f.name for f in captured.key_schema.fields or ()] == ["id"]
    assert captured.key_schema.field("id").schema == Schema.INT32_SCHEMA  # type: ignore[union-attr]
    # ip (INET6, no mapping) and secret (excluded) are left out
    assert [f.name for f in captured.row_schema.fields or ()] == ["id", "s", "d", "n"]
    assert captured.row_schema.name == "srv.shop.orders.Value"
    assert captured.row_schema.optional
    envelope = captured.envelope
    assert envelope.name == "srv.shop.orders.Envelope"
    assert envelope.version == 2
    assert [f.name for f in envelope.fields or ()] == [
        "before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns",
    ]  # fmt: skip
    assert envelope.field("source").schema is SOURCE  # type: ignore[union-attr]
    without = table(transaction=False).envelope
    assert "transaction" not in [f.name for f in without.fields or ()]


def test_snapshot_and_binlog_rows_are_equal() -> None:
    captured = table()
    # recorded: (1, '', '0000-00-00', NULL, '::1', 'x') by PyMySQL and by pymysqlreplication
    snapshot = captured.snapshot_row((1, "", "0000-00-00", None, "::1", "x"))
    binlog = captured.binlog_row(
        {"id": 1, "s": None, "d": None, "n": None, "ip": b"\x00" * 15 + b"\x01", "secret": "x"},
        {"s": "empty set", "d": "out of date range", "n": "null"},
    )
    assert snapshot == binlog
    # the empty SET is "", the NOT NULL zero date the epoch, the NULL varchar null
    assert [snapshot.get(name) for name in ("id", "s", "d", "n")] == [1, "", 0, None]
    validate_value(captured.row_schema, snapshot, "row")
    assert captured.snapshot_key((1, "", None, None, None, None)) == captured.binlog_key({"id": 1})


def test_row_values() -> None:
    captured = table()
    row = captured.binlog_row({"id": 7, "s": {"b", "a"}, "d": dt.date(2020, 1, 2), "n": "é"})
    assert [row.get(name) for name in ("id", "s", "d", "n")] == [7, "a,b", 18263, "é"]
    validate_value(captured.row_schema, row, "row")


def test_same_key() -> None:
    captured = table()
    assert captured.same_key({"id": 1, "n": "a"}, {"id": 1, "n": "b"})
    assert not captured.same_key({"id": 1}, {"id": 2})


def test_no_key() -> None:
    captured = table(key_columns=[])
    assert captured.key_schema is None
    assert captured.snapshot_key((1, "", None, None, None, None)) is None
    assert captured.binlog_key({"id": 1}) is None


def test_key_of_an_unmapped_type_raises() -> None:
    with pytest.raises(UnsupportedType):
        table(key_columns=["ip"])
