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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Column, types

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.logical import (
    EXACT_DECIMALS,
    Date,
    Decimal,
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.data.schema import INTEGER_RANGES

Convert = Callable[[Any], Any]


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


class _DecimalOf:
    """Converts numbers to decimals of one scale (``quantum`` is 1 at that scale)."""

    def __init__(self, scale: int) -> None:
        self.quantum = decimal.Decimal(1).scaleb(-scale)

    def __call__(self, value: Any) -> Any:
        number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        return number.quantize(self.quantum, context=EXACT_DECIMALS)  # any precision


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
    return builder, _DecimalOf(column_type.scale)


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


# How generated code tells that a value is already what a converter returns, unchanged
# (``{v}`` is the value): such a value is valid for the converter's schema as it is.
_READY: dict[Convert, str] = {
    bool: "type({v}) is bool",
    _as_int: "type({v}) is int",
    _as_float: "type({v}) is float",
    _as_string: "type({v}) is str",
    _as_bytes: "type({v}) is bytes",
    _as_date: "type({v}) is date",
    _as_time: "(type({v}) is time and {v}.tzinfo is None)",
    _as_timestamp: "type({v}) is datetime",
}


def _ready_check(index: int, schema: Schema, convert: Convert) -> tuple[str, dict[str, Any]]:
    """The expression of generated code that is true when ``v{index}`` is valid for
    ``schema`` and left unchanged by ``convert`` (False when no cheap test says so), with the
    names it uses."""
    value = f"v{index}"
    names: dict[str, Any] = {}
    if isinstance(convert, _DecimalOf):
        quantum = f"q{index}"
        names[quantum] = convert.quantum
        check = f"(type({value}) is Decimal and {value}.same_quantum({quantum}))"
    elif convert in _READY:
        check = _READY[convert].format(v=value)
        if convert is _as_int and schema.type in INTEGER_RANGES:
            low, high = INTEGER_RANGES[schema.type]
            check = f"({check} and {low} <= {value} <= {high})"
    else:
        check = "False"
    if schema.optional or schema.default_value is not None:
        check = f"({value} is None or {check})"
    return check, names


_ReadyValues = Callable[[Sequence[Any]], list[Any] | None]


def _ready_values(schemas: Sequence[Schema], converts: Sequence[Convert]) -> _ReadyValues:
    """A function generated for the fields: a row's values (by position) in a new list when
    every one is valid for its field's schema as it is and its converter would leave it
    unchanged (one expression, no loop), else None. The code holds positions, numeric
    bounds and type names, nothing taken from the column names."""
    checks = []
    names: dict[str, Any] = {
        "Decimal": decimal.Decimal,
        "date": dt.date,
        "datetime": dt.datetime,
        "time": dt.time,
    }
    for index, (schema, convert) in enumerate(zip(schemas, converts, strict=True)):
        check, used = _ready_check(index, schema, convert)
        checks.append(check)
        names.update(used)
    values = ", ".join(f"v{i}" for i in range(len(checks)))
    lines = [
        "def ready(row):",
        f"    {values}{',' if len(checks) == 1 else ''} = row" if checks else "    pass",
        f"    if {' and '.join(checks) or 'True'}:",
        f"        return [{values}]",
        "    return None",
    ]
    exec("\n".join(lines), names)
    ready: _ReadyValues = names["ready"]
    return ready


class RowConverter:
    """Turns rows into Structs of one schema, named ``name``.

    A row's values are converted (see the module's table) and validated as
    :meth:`Struct.put` validates them, raising the same :class:`DataException` for an
    invalid one. Rows whose values are all valid as they are (the usual case: a driver
    gives each column's Python type) skip both: their values become the struct's own
    list, with no copy per field."""

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
        schemas = [f.schema for f in self.schema.fields or ()]
        self._ready = _ready_values(schemas, [convert for _, _, convert in fields])

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
    def for_rows(
        cls, name: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> RowConverter:
        """From a custom query's rows (values by position, in ``columns``' order): each
        column typed by its first non-null value (STRING when there is none), every field
        optional."""
        fields = []
        for index, column in enumerate(columns):
            sample = next((r[index] for r in rows if r[index] is not None), "")
            field, convert = value_schema(sample)
            fields.append((column, field.optional(), convert))
        return cls(name, fields)

    def struct(self, row: Mapping[str, Any]) -> Struct:
        """The struct of a row given as a mapping by column name."""
        return self.structs([[row[name] for name, _ in self.fields]])[0]

    def structs(self, rows: Iterable[Sequence[Any]]) -> list[Struct]:
        """The structs of rows given as sequences of values in the fields' order."""
        ready, trusted, schema = self._ready, Struct._trusted, self.schema
        return [
            self._converted(row) if (values := ready(row)) is None else trusted(schema, values)
            for row in rows
        ]

    def _converted(self, row: Sequence[Any]) -> Struct:
        """A row's struct, each value converted, then validated by :meth:`Struct.put`."""
        struct = Struct(self.schema)
        for (name, convert), value in zip(self.fields, row, strict=True):
            struct.put(name, None if value is None else convert(value))
        return struct
