"""Records' values to Arrow tables of an Iceberg schema, as Apache Iceberg's Kafka Connect
``RecordConverter`` converts them to Iceberg records.

A value is a Connect :class:`Struct` or a ``dict`` (schemaless); its fields are matched to
the table's columns by name (ignoring case when asked), fields the table lacks are left
out, columns the value lacks are null. Values are coerced as Apache does: numbers from
numeric strings, booleans from ``"true"``, decimals rounded half up to the column's scale,
dates, times and timestamps from ISO strings, epoch days or milliseconds, binary from
base64, strings from numbers, booleans and (as JSON) lists, dicts and structs.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

import pyarrow as pa
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from airflow_provider_connect.connect.data import Date, Schema, Struct, Timestamp, Type
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.json import JsonConverter

Converter = Callable[[Any], Any]
"""Turns a non-null value into what ``pyarrow`` takes for a column's type."""

_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_EPOCH_NAIVE = _dt.datetime(1970, 1, 1)
_EPOCH_DATE = _dt.date(1970, 1, 1)
_EXACT = _decimal.Context(prec=_decimal.MAX_PREC)
_CONVERSION_ERRORS = (ValueError, TypeError, ArithmeticError)

# Connect types whose Python values pyarrow takes as they are for these Iceberg types.
_AS_IS: dict[Type, tuple[type[IcebergType], ...]] = {
    Type.INT8: (IntegerType, LongType),
    Type.INT16: (IntegerType, LongType),
    Type.INT32: (IntegerType, LongType),
    Type.INT64: (LongType,),
    Type.FLOAT32: (FloatType, DoubleType),
    Type.FLOAT64: (DoubleType,),
    Type.BOOLEAN: (BooleanType,),
    Type.STRING: (StringType,),
    Type.BYTES: (BinaryType,),
}
_LOGICAL_AS_IS: dict[str, type[IcebergType]] = {
    Date.LOGICAL_NAME: DateType,
    Timestamp.LOGICAL_NAME: TimestamptzType,
}


def _cannot(kind: str, value: Any) -> TypeError:
    return TypeError(f"Cannot convert to {kind}: {type(value).__name__}")


def _to_int(value: Any) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        raise _cannot("int", value)
    if isinstance(value, (int, float, _decimal.Decimal, str)):
        return int(value)
    raise _cannot("int", value)


def _to_float(value: Any) -> float:
    if type(value) is float:
        return value
    if isinstance(value, bool):
        raise _cannot("float", value)
    if isinstance(value, (int, float, _decimal.Decimal, str)):
        return float(value)
    raise _cannot("float", value)


def _to_decimal(scale: int) -> Converter:
    quantum = _decimal.Decimal(1).scaleb(-scale)

    def convert(value: Any) -> _decimal.Decimal:
        if isinstance(value, _decimal.Decimal):
            number = value
        elif isinstance(value, bool):
            raise _cannot("decimal", value)
        elif isinstance(value, float):
            # Java's BigDecimal.valueOf(double): the shortest repr, whole numbers exactly
            number = _decimal.Decimal(int(value) if value.is_integer() else repr(value))
        elif isinstance(value, (int, str)):
            number = _decimal.Decimal(value)
        else:
            raise _cannot("decimal", value)
        return number.quantize(quantum, rounding=_decimal.ROUND_HALF_UP, context=_EXACT)

    return convert


def _to_bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    if isinstance(value, str):
        return value.lower() == "true"  # Java's Boolean.parseBoolean
    raise _cannot("boolean", value)


_STRUCT_JSON = JsonConverter()
_STRUCT_JSON.configure({"schemas.enable": False}, False)


def _to_str(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, _decimal.Decimal, str)):
        return str(value)
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, separators=(",", ":"), default=str)
    if isinstance(value, Struct):
        data = _STRUCT_JSON.from_connect_data("", value.schema, value)
        assert data is not None  # a struct is never null JSON
        return data.decode()
    raise _cannot("string", value)


def _to_uuid(value: Any) -> bytes:
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, str):
        return uuid.UUID(value).bytes
    raise _cannot("uuid", value)


def _to_binary(value: Any) -> bytes:
    if type(value) is bytes:
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return base64.b64decode(value, validate=True)
    raise _cannot("binary", value)


def _to_date(value: Any) -> _dt.date:
    if type(value) is _dt.date:
        return value
    if isinstance(value, _dt.datetime):
        return _utc_naive(value).date()
    if isinstance(value, str):
        return _dt.date.fromisoformat(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _EPOCH_DATE + _dt.timedelta(days=int(value))
    raise _cannot("date", value)


def _to_time(value: Any) -> _dt.time:
    if isinstance(value, _dt.time):
        if value.tzinfo is None:
            return value
        moment = _dt.datetime.combine(_EPOCH_DATE, value)
        return moment.astimezone(_UTC).time().replace(tzinfo=None)
    if isinstance(value, _dt.datetime):
        return _utc_naive(value).time()
    if isinstance(value, str):
        return _dt.time.fromisoformat(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (_EPOCH_NAIVE + _dt.timedelta(milliseconds=int(value))).time()
    raise _cannot("time", value)


def _utc_naive(value: _dt.datetime) -> _dt.datetime:
    """The UTC wall time of ``value``; a naive one is already read as UTC."""
    return value if value.tzinfo is None else value.astimezone(_UTC).replace(tzinfo=None)


def _to_timestamptz(value: Any) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        return value  # a naive one is UTC, to pyarrow as to Connect
    if isinstance(value, str):
        # ISO, apart by T or a space, offset Z, +HH, +HHmm or +HH:mm: as Apache parses it
        parsed = _dt.datetime.fromisoformat(value)
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=_UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _EPOCH + _dt.timedelta(milliseconds=int(value))
    raise _cannot("timestamptz", value)


def _to_timestamp(value: Any) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        return _utc_naive(value)
    if isinstance(value, str):
        return _dt.datetime.fromisoformat(value).replace(tzinfo=None)  # the offset is ignored
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _EPOCH_NAIVE + _dt.timedelta(milliseconds=int(value))
    raise _cannot("timestamp", value)


def _unsupported(iceberg_type: IcebergType) -> Converter:
    def convert(value: Any) -> Any:
        raise TypeError(f"Unsupported Iceberg type: {iceberg_type}")

    return convert


def _list_converter(list_type: ListType, path: str, case_insensitive: bool) -> Converter:
    element = converter_of(list_type.element_type, f"{path}.element", case_insensitive)
    required = list_type.element_required

    def convert(value: Any) -> list[Any]:
        if not isinstance(value, (list, tuple)):
            raise _cannot("list", value)
        items = [None if item is None else element(item) for item in value]
        if required and None in items:
            raise DataException(f"Required column '{path}.element' is null")
        return items

    return convert


def _map_converter(map_type: MapType, path: str, case_insensitive: bool) -> Converter:
    key = converter_of(map_type.key_type, f"{path}.key", case_insensitive)
    item = converter_of(map_type.value_type, f"{path}.value", case_insensitive)
    required = map_type.value_required

    def convert(value: Any) -> list[tuple[Any, Any]]:
        if not isinstance(value, Mapping):
            raise _cannot("map", value)
        pairs = [(key(k), None if v is None else item(v)) for k, v in value.items()]
        if required and any(v is None for _, v in pairs):
            raise DataException(f"Required column '{path}.value' is null")
        return pairs

    return convert


_SCALARS: dict[type[IcebergType], Converter] = {
    IntegerType: _to_int,
    LongType: _to_int,
    FloatType: _to_float,
    DoubleType: _to_float,
    BooleanType: _to_bool,
    StringType: _to_str,
    UUIDType: _to_uuid,
    BinaryType: _to_binary,
    FixedType: _to_binary,
    DateType: _to_date,
    TimeType: _to_time,
    TimestamptzType: _to_timestamptz,
    TimestamptzNanoType: _to_timestamptz,
    TimestampType: _to_timestamp,
    TimestampNanoType: _to_timestamp,
}


def converter_of(iceberg_type: IcebergType, path: str, case_insensitive: bool) -> Converter:
    """The conversion of a non-null value to a value of ``iceberg_type`` for pyarrow;
    ``path`` names the column in errors."""
    if isinstance(iceberg_type, StructType):
        return _StructConverter(iceberg_type, path, case_insensitive).as_dict
    if isinstance(iceberg_type, ListType):
        return _list_converter(iceberg_type, path, case_insensitive)
    if isinstance(iceberg_type, MapType):
        return _map_converter(iceberg_type, path, case_insensitive)
    if isinstance(iceberg_type, DecimalType):
        return _to_decimal(iceberg_type.scale)
    return _SCALARS.get(type(iceberg_type)) or _unsupported(iceberg_type)


class _StructConverter:
    """The values of one Iceberg struct (or the table's columns) from structs and dicts."""

    def __init__(self, struct: StructType, path: str, case_insensitive: bool) -> None:
        prefix = f"{path}." if path else ""
        self.fields = struct.fields
        self.paths = [prefix + field.name for field in self.fields]
        self.names = [field.name for field in self.fields]
        self.case_insensitive = case_insensitive
        self.keys = [name.lower() if case_insensitive else name for name in self.names]
        self.index = {key: i for i, key in enumerate(self.keys)}
        self.converters = [
            converter_of(field.field_type, self.paths[i], case_insensitive)
            for i, field in enumerate(self.fields)
        ]
        self.required = [i for i, field in enumerate(self.fields) if field.required]
        self.plans: dict[Schema, list[tuple[int | None, Converter | None]]] = {}
        self.directs: dict[Schema, list[int | None] | None] = {}

    def plan(self, schema: Schema) -> list[tuple[int | None, Converter | None]]:
        """For each field of a Connect struct schema, the column it fills (None: none) and
        its conversion (None: pyarrow takes the value as it is); made once per schema."""
        plan = self.plans.get(schema)
        if plan is None:
            plan = []
            for field in schema.fields or ():
                key = field.name.lower() if self.case_insensitive else field.name
                index = self.index.get(key)
                if index is None:
                    plan.append((None, None))
                    continue
                as_is = _takes_as_is(field.schema, self.fields[index].field_type)
                plan.append((index, None if as_is else self.converters[index]))
            self.plans[schema] = plan
        return plan

    def direct(self, schema: Schema) -> list[int | None] | None:
        """For structs of ``schema`` whose values go to the columns as they are (no
        conversion, no defaults to apply): each column's field position in the struct (None:
        the column stays null); None when the structs need :meth:`row`. Made once per
        schema."""
        if schema in self.directs:
            return self.directs[schema]
        found: list[int | None] | None = None
        plan = self.plan(schema)
        if all(convert is None for _, convert in plan) and not any(
            f.schema.default_value is not None for f in schema.fields or ()
        ):
            found = [None] * len(self.fields)
            for position, (index, _) in enumerate(plan):
                if index is not None:
                    found[index] = position
        self.directs[schema] = found
        return found

    def row(self, value: Any) -> list[Any]:
        """The struct's values in column order, null where ``value`` has none."""
        if isinstance(value, Struct):
            return self.row_of(value.schema, value.values_as_set())
        row: list[Any] = [None] * len(self.fields)
        index: int | None = None
        try:
            if not isinstance(value, Mapping):
                raise TypeError(f"Cannot convert to struct: {type(value).__name__}")
            if self.case_insensitive:
                value = {str(k).lower(): v for k, v in value.items()}
            converters = self.converters
            for index, key in enumerate(self.keys):
                item = value.get(key)
                if item is not None:
                    row[index] = converters[index](item)
        except _CONVERSION_ERRORS as e:
            raise self._failed(index, e) from e
        return self._checked(row)

    def row_of(self, schema: Schema, values: Sequence[Any]) -> list[Any]:
        """The values of a struct of ``schema``, as set (None where unset: the field's
        default then applies, as ``Struct.get`` reads it), in column order."""
        row: list[Any] = [None] * len(self.fields)
        index: int | None = None
        try:
            for (index, convert), field, item in zip(
                self.plan(schema), schema.fields or (), values, strict=True
            ):
                if item is None:
                    item = field.schema.default_value
                if index is not None and item is not None:
                    row[index] = item if convert is None else convert(item)
        except _CONVERSION_ERRORS as e:
            raise self._failed(index, e) from e
        return self._checked(row)

    def _failed(self, index: int | None, error: Exception) -> DataException:
        where = f"column '{self.paths[index]}'" if index is not None else "a record"
        return DataException(f"Cannot convert {where}: {error}")

    def _checked(self, row: list[Any]) -> list[Any]:
        for index in self.required:
            if row[index] is None:
                raise DataException(f"Required column '{self.paths[index]}' is null")
        return row

    def as_dict(self, value: Any) -> dict[str, Any]:
        """The struct as pyarrow takes a struct value."""
        return dict(zip(self.names, self.row(value), strict=True))


class HeldRows:
    """Records' values (structs, or maps) held for a later :meth:`RowConverter.to_arrow`, in
    a form the garbage collector need not walk: a struct as the tuple of its values as set
    (a tuple of strings and numbers is untracked once a collection has seen it, where a
    ``Struct`` and its list stay tracked), with its schema once per run of one schema.
    Appended to from one thread; read once appending ended."""

    __slots__ = ("count", "runs")

    def __init__(self) -> None:
        self.runs: list[tuple[Schema | None, list[Any]]] = []
        """Consecutive values: of one struct schema (each value a tuple), or maps (None)."""
        self.count = 0

    @classmethod
    def of(cls, values: Iterable[Any]) -> HeldRows:
        held = cls()
        for value in values:
            held.append(value)
        return held

    def append(self, value: Any) -> None:
        schema = value.schema if isinstance(value, Struct) else None
        runs = self.runs
        if not runs or runs[-1][0] is not schema:
            runs.append((schema, []))
        runs[-1][1].append(value if schema is None else tuple(value.values_as_set()))
        self.count += 1

    def __len__(self) -> int:
        return self.count


def _takes_as_is(schema: Schema, iceberg_type: IcebergType) -> bool:
    if schema.name is not None:
        return _LOGICAL_AS_IS.get(schema.name) is type(iceberg_type)
    return type(iceberg_type) in _AS_IS.get(schema.type, ())


def _storage_type(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with its extension types (``uuid``) replaced by their storage: pyarrow
    builds those from Python values at the top level only, so nested ones are built as
    storage and cast."""
    if isinstance(arrow_type, pa.BaseExtensionType):
        return arrow_type.storage_type
    if pa.types.is_struct(arrow_type):
        return pa.struct([f.with_type(_storage_type(f.type)) for f in arrow_type])
    if pa.types.is_large_list(arrow_type):  # pyiceberg's lists
        field = arrow_type.value_field
        return pa.large_list(field.with_type(_storage_type(field.type)))
    if pa.types.is_map(arrow_type):
        key, item = arrow_type.key_field, arrow_type.item_field
        return pa.map_(
            key.with_type(_storage_type(key.type)), item.with_type(_storage_type(item.type))
        )
    return arrow_type


class RowConverter:
    """Converts batches of records' values to Arrow tables of one Iceberg schema.

    Made once per table schema; per Connect schema it plans once which column each field
    fills and whether its values need converting, so a batch costs one pass over the
    values and one ``pyarrow.array`` per column.
    """

    def __init__(self, schema: IcebergSchema, case_insensitive: bool = False) -> None:
        self.schema = schema
        self.arrow_schema = schema_to_pyarrow(schema)
        self._root = _StructConverter(schema.as_struct(), "", case_insensitive)
        self._built_types = [_storage_type(field.type) for field in self.arrow_schema]

    def to_arrow(self, values: HeldRows | list[Any]) -> pa.Table:
        """The Arrow table of ``values`` (held, or a list of structs and dicts), one row each,
        in order.

        Raises :class:`DataException` naming the record's position in the batch and the
        column when a value cannot be converted or a required column is null.
        """
        root = self._root
        columns: list[list[Any]] = [[] for _ in root.fields]
        done = 0  # values converted so far
        held = values if isinstance(values, HeldRows) else HeldRows.of(values)
        for schema, run in held.runs:
            direct = root.direct(schema) if schema is not None else None
            if direct is not None:  # the structs' own values, a column at a time
                for column, position in zip(columns, direct, strict=True):
                    column.extend(
                        [None] * len(run) if position is None else map(itemgetter(position), run)
                    )
            else:
                rows = []
                try:
                    for item in run:
                        rows.append(root.row(item) if schema is None else root.row_of(schema, item))
                except DataException as e:
                    raise DataException(f"Record {done + len(rows)} of the batch: {e}") from e
                for column, converted in zip(columns, zip(*rows, strict=True), strict=True):
                    column.extend(converted)
            done += len(run)
        for index in root.required:
            if None in columns[index]:
                raise DataException(
                    f"Record {columns[index].index(None)} of the batch: "
                    f"Required column '{root.paths[index]}' is null"
                )
        arrays = []
        for field, built, column, path in zip(
            self.arrow_schema, self._built_types, columns, self._root.paths, strict=True
        ):
            try:
                array = pa.array(column, type=built)
                arrays.append(array if built == field.type else array.cast(field.type))
            except (pa.ArrowException, *_CONVERSION_ERRORS) as e:
                raise DataException(f"Cannot convert column '{path}': {e}") from e
        return pa.Table.from_arrays(arrays, schema=self.arrow_schema)
