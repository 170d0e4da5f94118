"""Hypothesis strategies: Connect schemas of every type, and values that fit them.

Values are generated in the form a converter reads back (bytes rather than bytearray,
float32 values representable as float32, times at millisecond precision, decimals at
their schema's scale), so round-trips can compare with ``==``.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from hypothesis import strategies as st

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from airflow_provider_connect.connect.data.schema import INTEGER_RANGES

_UTC = dt.timezone.utc
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)


def _primitive_values(t: Type) -> st.SearchStrategy[Any]:
    if t in INTEGER_RANGES:
        low, high = INTEGER_RANGES[t]
        return st.integers(low, high)
    if t is Type.FLOAT32:
        return st.floats(width=32, allow_nan=False)
    if t is Type.FLOAT64:
        return st.floats(allow_nan=False)
    if t is Type.BOOLEAN:
        return st.booleans()
    if t is Type.STRING:
        return st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
    return st.binary(max_size=20)


def logical_schema_and_values() -> st.SearchStrategy[tuple[Schema, st.SearchStrategy[Any]]]:
    def decimal_case(scale: int) -> tuple[Schema, st.SearchStrategy[Any]]:
        values = st.integers(-(10**30), 10**30).map(lambda n: decimal.Decimal(f"{n}E{-scale}"))
        return Decimal.schema(scale), values

    ms_times = st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
    ms_instants = st.integers(-(10**13), 10**13).map(
        lambda ms: dt.datetime(1970, 1, 1, tzinfo=_UTC) + dt.timedelta(milliseconds=ms)
    )
    return st.one_of(
        st.integers(-5, 12).map(decimal_case),
        st.just((Date.SCHEMA, st.dates())),
        st.just((Time.SCHEMA, ms_times)),
        st.just((Timestamp.SCHEMA, ms_instants)),
    )


def _leaf() -> st.SearchStrategy[tuple[Schema, st.SearchStrategy[Any]]]:
    primitives = st.sampled_from([t for t in Type if t.is_primitive]).map(
        lambda t: (Schema(t), _primitive_values(t))
    )
    return st.one_of(primitives, logical_schema_and_values())


def _map_key() -> st.SearchStrategy[tuple[Schema, st.SearchStrategy[Any]]]:
    return st.sampled_from([Type.STRING, Type.INT32, Type.INT64, Type.BOOLEAN, Type.INT8]).map(
        lambda t: (Schema(t), _primitive_values(t))
    )


def _optional(
    pair: tuple[Schema, st.SearchStrategy[Any]], optional: bool
) -> tuple[Schema, st.SearchStrategy[Any]]:
    schema, values = pair
    if not optional:
        return schema, values
    optional_schema = schema.replace(optional=True)
    if schema.type is Type.STRUCT:
        values = values.map(lambda v: _restruct(v, optional_schema))
    return optional_schema, st.none() | values


def _restruct(value: Struct, schema: Schema) -> Struct:
    """``value``'s fields in a struct of ``schema`` (its optional twin)."""
    result = Struct(schema)
    for f in schema.fields:
        result.put(f.name, value.get_without_default(f.name))
    return result


@st.composite
def _struct(
    draw: Any, children: st.SearchStrategy[tuple[Schema, st.SearchStrategy[Any]]]
) -> tuple[Schema, st.SearchStrategy[Any]]:
    """A struct schema of one to five fields drawn from ``children``, and its values."""
    field_names = draw(st.lists(names, min_size=1, max_size=5, unique=True))
    builder = SchemaBuilder.struct().name(draw(names))
    field_values = []
    for name in field_names:
        schema, values = _optional(draw(children), draw(st.booleans()))
        builder.field(name, schema)
        field_values.append(values)
    schema = builder.build()

    @st.composite
    def struct_value(draw_value: Any) -> Struct:
        value = Struct(schema)
        for f, values in zip(schema.fields, field_values, strict=True):
            value.put(f.name, draw_value(values))
        return value

    return schema, struct_value()


def _extend(
    children: st.SearchStrategy[tuple[Schema, st.SearchStrategy[Any]]],
) -> st.SearchStrategy[tuple[Schema, st.SearchStrategy[Any]]]:
    def array(pair: tuple[Schema, st.SearchStrategy[Any]]) -> tuple[Schema, st.SearchStrategy[Any]]:
        element, values = pair
        return SchemaBuilder.array(element).build(), st.lists(values, max_size=4)

    def mapping(key_pair: tuple[Schema, Any], value_pair: tuple[Schema, Any]) -> tuple[Schema, Any]:
        return (
            SchemaBuilder.map(key_pair[0], value_pair[0]).build(),
            st.dictionaries(key_pair[1], value_pair[1], max_size=4),
        )

    return st.one_of(
        children.map(array),
        st.builds(mapping, _map_key(), children),
        _struct(children),
    )


schema_and_values = st.recursive(_leaf(), _extend, max_leaves=8)


@st.composite
def schema_and_value(draw: Any) -> tuple[Schema, Any]:
    """A schema of any type and a value of it."""
    schema, values = draw(schema_and_values)
    return schema, draw(values)


@st.composite
def struct_and_value(draw: Any) -> tuple[Schema, Struct]:
    """A struct schema (its fields of any type) and a struct of it."""
    schema, values = draw(_struct(schema_and_values))
    return schema, draw(values)
