"""RowConverter: rows whose values are valid as they are and rows that need converting give
the same structs as converting and validating every value with ``Struct.put``; invalid
values raise the ``DataException`` that ``put`` raises."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    LargeBinary,
    MetaData,
    Numeric,
    SmallInteger,
    String,
    Table,
    Time,
)

from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.jdbc.types import RowConverter

TABLE = Table(
    "t",
    MetaData(),
    Column("id", BigInteger, nullable=False),
    Column("small", SmallInteger),
    Column("flag", Boolean),
    Column("ratio", Float),
    Column("amount", Numeric(12, 2), nullable=False),
    Column("loose", Numeric),
    Column("name", String(20)),
    Column("day", Date),
    Column("clock", Time),
    Column("at", DateTime),
    Column("blob", LargeBinary),
)
CONVERTER = RowConverter.for_columns("t", list(TABLE.columns))


def put_each(values: dict[str, Any]) -> Struct:
    """The struct that ``Struct.put`` of each (already converted) value builds."""
    struct = Struct(CONVERTER.schema)
    for name, value in values.items():
        struct.put(name, value)
    return struct


def exact(struct: Struct) -> list[Any]:
    """The values with what equality hides: types and decimal exponents."""
    return [
        (type(v), v.as_tuple() if isinstance(v, decimal.Decimal) else v)
        for v in struct.values_as_set()
    ]


READY = {
    "id": 7,
    "small": -3,
    "flag": True,
    "ratio": 0.5,
    "amount": decimal.Decimal("12.50"),
    "loose": "3.14159",
    "name": "x",
    "day": dt.date(2026, 1, 2),
    "clock": dt.time(1, 2, 3),
    "at": dt.datetime(2026, 1, 2, 3, 4, 5),
    "blob": b"\x00",
}


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        pytest.param(READY, READY, id="valid as they are"),
        pytest.param({**READY, "small": None, "name": None}, None, id="nulls where allowed"),
        pytest.param(
            {
                **READY,
                "amount": decimal.Decimal("12.5"),
                "loose": decimal.Decimal("3.14159"),
                "clock": dt.time(1, 2, 3, tzinfo=dt.timezone.utc),
                "at": "2026-01-02T03:04:05",
                "blob": memoryview(b"\x00"),
                "name": 5,
            },
            READY | {"name": "5"},
            id="converted",
        ),
    ],
)
def test_structs_as_put_builds_them(row: dict[str, Any], expected: dict[str, Any] | None) -> None:
    wanted = put_each(row if expected is None else expected)
    got = CONVERTER.structs([list(row.values())])[0]
    assert got == wanted and exact(got) == exact(wanted)
    assert exact(CONVERTER.struct(row)) == exact(wanted)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"small": 40_000}, 'Invalid value 40000 for field "small": out of range for INT16'),
        ({"amount": None}, 'null used for required field: "amount"'),
    ],
)
def test_invalid_values_raise_as_put(change: dict[str, Any], message: str) -> None:
    with pytest.raises(DataException, match=message):
        CONVERTER.structs([list({**READY, **change}.values())])


def test_query_rows_typed_by_position() -> None:
    converter = RowConverter.for_rows("q", ["a", "b"], [(None, "x"), (2, "y")])
    assert [f.schema.type.name for f in converter.schema.fields or ()] == ["INT64", "STRING"]
    assert converter.structs([(None, "x")])[0].values_as_set() == [None, "x"]
