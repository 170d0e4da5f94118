"""Iceberg schemas of Connect records, and their evolution, as Apache Iceberg's Kafka Connect
sink (``SchemaUtils``, ``SchemaUpdate`` and the detection half of ``RecordConverter``).

* :func:`iceberg_schema` maps a Connect struct schema (``toIcebergType``);
* :func:`infer_schema` infers one from a schemaless record, a ``dict`` (``inferIcebergType``);
* :func:`schema_updates` lists what a table's schema lacks to hold a record: missing columns
  (added optional), ``int -> long`` and ``float -> double`` widenings, required columns the
  record has optional;
* :func:`apply_updates` commits them, skipping those another writer already made, retried
  on a failed commit as Apache does (``SCHEMA_UPDATE_RETRIES``).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import itertools
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table import Table
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from airflow_provider_connect.connect.data import Date, Decimal, Schema, Time, Timestamp, Type
from airflow_provider_connect.connect.errors import DataException

log = logging.getLogger(__name__)

MAX_DECIMAL_PRECISION = 38
"""Iceberg's widest decimal: the precision of every Connect ``Decimal`` column."""
SCHEMA_UPDATE_RETRIES = 2
"""Retries of a schema commit that failed on a concurrent change: three attempts in all."""
_RETRY_BACKOFF_S = 0.1
"""The first pause between attempts, doubled at each retry (Apache's ``Tasks`` default)."""
_UUID_NAME = "uuid"
"""The name of a Connect string schema whose values are UUIDs."""


# -- Connect schema -> Iceberg schema ---------------------------------------------------------


def iceberg_schema(connect_schema: Schema, force_optional: bool) -> IcebergSchema:
    """The Iceberg schema of records of ``connect_schema`` (a struct schema).

    A column is required unless its Connect field is optional or ``force_optional`` is set;
    field ids run from 1 in the order Apache assigns them (a catalog reassigns them anyway).
    """
    if connect_schema.type is not Type.STRUCT:
        raise DataException(
            f"A table's schema is made from a struct schema, not {connect_schema!r}"
        )
    struct = iceberg_type(connect_schema, force_optional)
    assert isinstance(struct, StructType)
    return IcebergSchema(*struct.fields)


def iceberg_type(
    schema: Schema, force_optional: bool, ids: Iterator[int] | None = None
) -> IcebergType:
    """Apache's ``toIcebergType``: int8/int16/int32 are ``int``, ``Timestamp`` is
    ``timestamptz``, ``Decimal`` is ``decimal(38, scale)``, a string named ``uuid`` is
    ``uuid``; list elements, map values and struct fields are optional when their Connect
    schema is or ``force_optional`` is set. ``ids`` numbers nested fields (from 1 if None)."""
    ids = itertools.count(1) if ids is None else ids
    name = schema.name
    match schema.type:
        case Type.BOOLEAN:
            return BooleanType()
        case Type.BYTES if name == Decimal.LOGICAL_NAME:
            return DecimalType(MAX_DECIMAL_PRECISION, Decimal.scale(schema))
        case Type.BYTES:
            return BinaryType()
        case Type.INT8 | Type.INT16:
            return IntegerType()
        case Type.INT32 if name == Date.LOGICAL_NAME:
            return DateType()
        case Type.INT32 if name == Time.LOGICAL_NAME:
            return TimeType()
        case Type.INT32:
            return IntegerType()
        case Type.INT64 if name == Timestamp.LOGICAL_NAME:
            return TimestamptzType()
        case Type.INT64:
            return LongType()
        case Type.FLOAT32:
            return FloatType()
        case Type.FLOAT64:
            return DoubleType()
        case Type.ARRAY | Type.MAP | Type.STRUCT:
            return _nested_type(schema, force_optional, ids)
        case Type.STRING if name == _UUID_NAME:
            return UUIDType()
        case _:
            return StringType()


def _nested_type(schema: Schema, force_optional: bool, ids: Iterator[int]) -> IcebergType:
    """:func:`iceberg_type` of an array, map or struct schema."""
    match schema.type:
        case Type.ARRAY:
            assert schema.value_schema is not None
            element = iceberg_type(schema.value_schema, force_optional, ids)
            return ListType(
                next(ids),
                element,
                element_required=not (force_optional or schema.value_schema.optional),
            )
        case Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            key = iceberg_type(schema.key_schema, force_optional, ids)
            value = iceberg_type(schema.value_schema, force_optional, ids)
            return MapType(
                next(ids),
                key,
                next(ids),
                value,
                value_required=not (force_optional or schema.value_schema.optional),
            )
        case _:
            fields = []
            for field in schema.fields or ():
                field_id = next(ids)
                fields.append(
                    NestedField(
                        field_id,
                        field.name,
                        iceberg_type(field.schema, force_optional, ids),
                        required=not (force_optional or field.schema.optional),
                    )
                )
            return StructType(*fields)


# -- schemaless records -> Iceberg schema -----------------------------------------------------


def infer_schema(value: Mapping[Any, Any]) -> IcebergSchema:
    """The Iceberg schema inferred from a schemaless record, every column optional.

    Raises :class:`DataException` when no column's type can be inferred (every value null,
    an empty list, ...)."""
    struct = infer_type(value)
    if not isinstance(struct, StructType):
        raise DataException("Cannot infer a table schema from a record without typed values")
    return IcebergSchema(*struct.fields)


def infer_type(value: Any, ids: Iterator[int] | None = None) -> IcebergType | None:
    """Apache's ``inferIcebergType``, or None when no type can be inferred.

    ``str`` is string, ``bool`` boolean, ``int`` long, ``float`` double, ``decimal.Decimal``
    the narrowest decimal that holds it (None past 38 digits), ``date``/``time`` date/time,
    an aware ``datetime`` timestamptz and a naive one timestamp; a list has the optional
    element type of its first element, a ``dict`` is a struct of optional fields, its null
    and uninferable values left out (None when nothing is left)."""
    ids = itertools.count(1) if ids is None else ids
    if value is None:
        return None
    if isinstance(value, str):
        return StringType()
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int):
        return LongType()
    if isinstance(value, float):
        return DoubleType()
    if isinstance(value, _decimal.Decimal):
        return _infer_decimal(value)
    if isinstance(value, _dt.datetime):
        return TimestampType() if value.tzinfo is None else TimestamptzType()
    if isinstance(value, _dt.date):
        return DateType()
    if isinstance(value, _dt.time):
        return TimeType()
    if isinstance(value, (list, tuple)):
        element = infer_type(value[0], ids) if value else None
        return None if element is None else ListType(next(ids), element, element_required=False)
    if isinstance(value, Mapping):
        fields = []
        for key, item in value.items():
            if key is None or item is None:
                continue
            field_id = next(ids)
            item_type = infer_type(item, ids)
            if item_type is not None:
                fields.append(NestedField(field_id, str(key), item_type, required=False))
        return StructType(*fields) if fields else None
    return None


def _infer_decimal(value: _decimal.Decimal) -> DecimalType | None:
    """Normalized as Apache (and Spark) do: precision at least the scale, a negative scale
    moved into the precision; None past 38 digits or for NaN/infinity."""
    if not value.is_finite():
        return None
    sign_digits_exponent = value.as_tuple()
    precision = len(sign_digits_exponent.digits)
    scale = -int(sign_digits_exponent.exponent)
    if scale < 0:
        precision -= scale
        scale = 0
    precision = max(precision, scale)
    return None if precision > MAX_DECIMAL_PRECISION else DecimalType(precision, scale)


# -- evolution --------------------------------------------------------------------------------


@dataclass(frozen=True)
class AddColumn:
    """Add ``name`` (optional) of ``type`` under ``parent`` (() for the top level; a list's
    ``element`` or a map's ``value`` names its struct)."""

    parent: tuple[str, ...]
    name: str
    type: IcebergType

    @property
    def path(self) -> tuple[str, ...]:
        return (*self.parent, self.name)


@dataclass(frozen=True)
class UpdateType:
    """Widen the column at ``path`` to ``type`` (``long`` or ``double``)."""

    path: tuple[str, ...]
    type: PrimitiveType


@dataclass(frozen=True)
class MakeOptional:
    """Make the required column at ``path`` optional."""

    path: tuple[str, ...]


SchemaUpdate = AddColumn | UpdateType | MakeOptional


def widened_type(table_type: IcebergType, schema: Schema) -> PrimitiveType | None:
    """Apache's ``needsDataTypeUpdate``: ``double`` for a ``float`` column of float64 values,
    ``long`` for an ``int`` column of int64 values, else None."""
    if isinstance(table_type, FloatType) and schema.type is Type.FLOAT64:
        return DoubleType()
    if isinstance(table_type, IntegerType) and schema.type is Type.INT64:
        return LongType()
    return None


def schema_updates(
    table_schema: IcebergSchema,
    record_schema: Schema | IcebergSchema,
    case_insensitive: bool,
    force_optional: bool = False,
) -> list[SchemaUpdate]:
    """What ``table_schema`` lacks to hold records of ``record_schema``, each change once.

    For a Connect schema (records with schemas): every level, as Apache's
    ``evolveSchemaFromConnectSchema`` walks it, gets its missing fields added (typed by
    :func:`iceberg_type` with ``force_optional``), its widenings and its required columns
    the record has optional; map keys are not walked. For an Iceberg schema inferred by
    :func:`infer_schema` (schemaless records), only missing fields are added, as Apache
    does for maps. Fields are matched by name, ignoring case when ``case_insensitive``.
    """
    found: dict[tuple[str, tuple[str, ...]], SchemaUpdate] = {}
    table = table_schema.as_struct()
    if isinstance(record_schema, Schema):
        _connect_updates(record_schema, table, (), case_insensitive, force_optional, found)
    else:
        _inferred_updates(record_schema.as_struct(), table, (), case_insensitive, found)
    return list(found.values())


def _add(found: dict[tuple[str, tuple[str, ...]], SchemaUpdate], update: SchemaUpdate) -> None:
    found[(type(update).__name__, update.path)] = update


def _connect_updates(
    schema: Schema,
    table_type: IcebergType,
    path: tuple[str, ...],
    case_insensitive: bool,
    force_optional: bool,
    found: dict[tuple[str, tuple[str, ...]], SchemaUpdate],
) -> None:
    if schema.type is Type.STRUCT and isinstance(table_type, StructType):
        for field in schema.fields or ():
            column = table_type.field_by_name(field.name, case_sensitive=not case_insensitive)
            if column is None:
                _add(found, AddColumn(path, field.name, iceberg_type(field.schema, force_optional)))
                continue
            column_path = (*path, column.name)
            widened = widened_type(column.field_type, field.schema)
            if widened is not None:
                _add(found, UpdateType(column_path, widened))
            if column.required and field.schema.optional:
                _add(found, MakeOptional(column_path))
            _connect_updates(
                field.schema,
                column.field_type,
                column_path,
                case_insensitive,
                force_optional,
                found,
            )
    elif schema.type is Type.ARRAY and isinstance(table_type, ListType):
        assert schema.value_schema is not None
        _connect_updates(
            schema.value_schema,
            table_type.element_type,
            (*path, "element"),
            case_insensitive,
            force_optional,
            found,
        )
    elif schema.type is Type.MAP and isinstance(table_type, MapType):
        assert schema.value_schema is not None
        _connect_updates(
            schema.value_schema,
            table_type.value_type,
            (*path, "value"),
            case_insensitive,
            force_optional,
            found,
        )
    elif schema.type in (Type.STRUCT, Type.ARRAY, Type.MAP):
        log.warning(
            "Record schema of type %s does not match table of type %s", schema.type, table_type
        )


def _inferred_updates(
    record_type: IcebergType,
    table_type: IcebergType,
    path: tuple[str, ...],
    case_insensitive: bool,
    found: dict[tuple[str, tuple[str, ...]], SchemaUpdate],
) -> None:
    if isinstance(record_type, StructType) and isinstance(table_type, StructType):
        for field in record_type.fields:
            column = table_type.field_by_name(field.name, case_sensitive=not case_insensitive)
            if column is None:
                _add(found, AddColumn(path, field.name, field.field_type))
            else:
                column_path = (*path, column.name)
                _inferred_updates(
                    field.field_type, column.field_type, column_path, case_insensitive, found
                )
    elif isinstance(record_type, ListType) and isinstance(table_type, ListType):
        _inferred_updates(
            record_type.element_type,
            table_type.element_type,
            (*path, "element"),
            case_insensitive,
            found,
        )
    elif isinstance(record_type, StructType) and isinstance(table_type, MapType):
        # a dict held in a map column: each of its values is one of the map's values
        for field in record_type.fields:
            _inferred_updates(
                field.field_type, table_type.value_type, (*path, "value"), case_insensitive, found
            )


def apply_updates(table: Table, updates: list[SchemaUpdate]) -> bool:
    """Commits ``updates`` to ``table``'s schema in one schema change; returns whether one
    was committed.

    Each attempt reloads the table and drops the updates its schema already has (a column
    that exists, a type already widened, a column already optional), so writers racing on
    the same change commit it once. A commit refused by the catalog
    (:class:`CommitFailedException`) is tried again up to ``SCHEMA_UPDATE_RETRIES`` times.
    """
    if not updates:
        return False
    attempt = 0
    while True:
        table.refresh()
        pending = [u for u in updates if not _already_applied(table.schema(), u)]
        if not pending:
            log.info("Schema for table %s already up-to-date", table.name())
            return False
        try:
            with table.update_schema() as update:
                for change in pending:
                    if isinstance(change, AddColumn):
                        update.add_column(change.path, change.type)
                    elif isinstance(change, UpdateType):
                        update.update_column(change.path, change.type)
                    else:
                        update.make_column_optional(change.path)
        except CommitFailedException:
            if attempt == SCHEMA_UPDATE_RETRIES:
                raise
            log.info("Schema update of table %s lost a race; retrying", table.name())
            time.sleep(_RETRY_BACKOFF_S * 2**attempt)
            attempt += 1
            continue
        log.info("Schema for table %s updated: %s", table.name(), pending)
        return True


def _already_applied(schema: IcebergSchema, update: SchemaUpdate) -> bool:
    name = ".".join(update.path)
    try:
        field = schema.find_field(name)
    except ValueError:
        if isinstance(update, AddColumn):
            return False
        raise DataException(f"Invalid column: {name}") from None
    if isinstance(update, AddColumn):
        return True
    if isinstance(update, UpdateType):
        return type(field.field_type) is type(update.type)
    return field.optional
