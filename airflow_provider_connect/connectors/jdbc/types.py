"""Connect schemas from SQL column types, as the JDBC connectors map them.

| column type | Connect schema |
|---|---|
| BOOLEAN | BOOLEAN |
| SMALLINT / INTEGER / BIGINT | INT16 / INT32 / INT64 |
| REAL (float precision ≤ 24) / FLOAT, DOUBLE | FLOAT32 / FLOAT64 |
| NUMERIC(p, s), DECIMAL(p, s) | ``Decimal`` (scale s), exact |
| NUMERIC without a scale | STRING (the exact digits) |
| DATE / TIME / TIMESTAMP | ``Date`` / ``Time`` / ``Timestamp`` (naive values are UTC) |
| BINARY, BLOB, BYTEA | BYTES |
| anything else (text, JSON, UUID, …) | STRING |

A nullable column gives an optional field. A custom query's columns carry no types: they
are typed by their first non-null value (``value_schema``).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Column, types

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.logical import Date, Decimal, Time, Timestamp

Convert = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def _as_string(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode()
    return str(value)


def _as_bytes(value: Any) -> Any:
    return bytes(value)


def _as_date(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.date()
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))


def _as_time(value: Any) -> Any:
    if isinstance(value, dt.timedelta):  # MySQL returns TIME as a duration
        return (dt.datetime.min + value).time()
    if isinstance(value, dt.time):
        return value.replace(tzinfo=None)
    return dt.time.fromisoformat(str(value))


def _as_timestamp(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value
    return dt.datetime.fromisoformat(str(value))


def _as_int(value: Any) -> Any:
    return int(value)


def _as_float(value: Any) -> Any:
    return float(value)


def _decimal_of(scale: int) -> Convert:
    quantum = decimal.Decimal(1).scaleb(-scale)

    def convert(value: Any) -> Any:
        number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        return number.quantize(quantum)

    return convert


def field_schema(column_type: types.TypeEngine[Any]) -> tuple[SchemaBuilder, Convert]:
    """The Connect schema builder for a column type, and how to convert its values."""
    if isinstance(column_type, types.Boolean):
        return SchemaBuilder.bool(), bool
    if isinstance(column_type, types.SmallInteger):
        return SchemaBuilder.int16(), _as_int
    if isinstance(column_type, types.BigInteger):
        return SchemaBuilder.int64(), _as_int
    if isinstance(column_type, types.Integer):
        return SchemaBuilder.int32(), _as_int
    if isinstance(column_type, (types.Float, types.Numeric)):
        return _number_schema(column_type)
    if isinstance(column_type, types.DateTime):
        return Timestamp.builder(), _as_timestamp
    if isinstance(column_type, types.Date):
        return Date.builder(), _as_date
    if isinstance(column_type, types.Time):
        return Time.builder(), _as_time
    if isinstance(column_type, (types._Binary, types.LargeBinary)):
        return SchemaBuilder.bytes(), _as_bytes
    return SchemaBuilder.string(), _as_string


def _number_schema(
    column_type: types.Float[Any] | types.Numeric[Any],
) -> tuple[SchemaBuilder, Convert]:
    """FLOAT32 (precision up to 24) or FLOAT64 for a float column; for a numeric one, an exact
    ``Decimal`` of its scale, or STRING when it has none."""
    if isinstance(column_type, types.Float):
        precision = getattr(column_type, "precision", None)
        if precision is not None and precision <= 24:
            return SchemaBuilder.float32(), _as_float
        return SchemaBuilder.float64(), _as_float
    if column_type.scale is None:
        return SchemaBuilder.string(), _as_string
    builder = Decimal.builder(column_type.scale)
    if column_type.precision is not None:
        builder.parameter("connect.decimal.precision", str(column_type.precision))
    return builder, _decimal_of(column_type.scale)


def value_schema(value: Any) -> tuple[SchemaBuilder, Convert]:
    """A schema for a value of a custom query's column, from its Python type (the query
    gives no column types): numbers as INT64/FLOAT64, decimals as exact STRING."""
    if isinstance(value, bool):
        return SchemaBuilder.bool(), bool
    if isinstance(value, int):
        return SchemaBuilder.int64(), _as_int
    if isinstance(value, float):
        return SchemaBuilder.float64(), _as_float
    if isinstance(value, dt.datetime):
        return Timestamp.builder(), _as_timestamp
    if isinstance(value, dt.date):
        return Date.builder(), _as_date
    if isinstance(value, (dt.time, dt.timedelta)):
        return Time.builder(), _as_time
    if isinstance(value, (bytes, bytearray, memoryview)):
        return SchemaBuilder.bytes(), _as_bytes
    return SchemaBuilder.string(), _as_string


class RowConverter:
    """Turns rows (mappings by column name) into Structs of one schema, named ``name``."""

    def __init__(
        self,
        name: str,
        fields: Sequence[tuple[str, SchemaBuilder, Convert]],
        optional: bool = False,
    ) -> None:
        """``optional``: the struct itself may be null (a change event's missing image)."""
        builder = SchemaBuilder.struct().name(str(name))
        if optional:
            builder.optional()
        for column, field, _ in fields:
            builder.field(column, field.build())
        self.schema: Schema = builder.build()
        self.fields = [(column, convert) for column, _, convert in fields]

    @classmethod
    def for_columns(
        cls, name: str, columns: Sequence[Column[Any]], optional: bool = False
    ) -> RowConverter:
        """From a table's columns: their types, optional when nullable."""
        fields = []
        for column in columns:
            field, convert = field_schema(column.type)
            column_name = str(column.name)  # SQLAlchemy's quoted_name is a str subclass
            fields.append((column_name, field.optional() if column.nullable else field, convert))
        return cls(name, fields, optional)

    @classmethod
    def for_rows(cls, name: str, columns: Sequence[str], rows: Sequence[Any]) -> RowConverter:
        """From a custom query's rows: each column typed by its first non-null value (STRING
        when there is none), every field optional."""
        fields = []
        for column in columns:
            sample = next((r[column] for r in rows if r[column] is not None), "")
            field, convert = value_schema(sample)
            fields.append((column, field.optional(), convert))
        return cls(name, fields)

    def struct(self, row: Any) -> Struct:
        struct = Struct(self.schema)
        for name, convert in self.fields:
            value = row[name]
            struct.put(name, None if value is None else convert(value))
        return struct
