"""Cast, with the cases of Kafka's CastTest."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.cast import CastKey, CastValue


def value_cast(spec: str, **props: str) -> TransformationHarness:
    return TransformationHarness(CastValue, {"spec": spec, **props})


def value_record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, value_schema=schema, value=value)


@pytest.mark.parametrize(
    "spec",
    ["", "foo:faketype", "foo:array", "array", "foo:bytes", "foo:int8:extra", "foo:int8,int32"],
)
def test_bad_specs(spec: str) -> None:
    with pytest.raises(ConfigException):
        TransformationHarness(CastKey, {"spec": spec})


def test_null_keys_and_values_are_left_alone() -> None:
    schema = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    for record in (value_record(schema, None), value_record(None, None)):
        assert value_cast("foo:int64").apply(record) is record
    key = TransformationHarness(CastKey, {"spec": "foo:int64"})
    record = SourceRecord(None, None, "topic", 0, schema, None, schema, None)
    assert key.apply(record) is record


@pytest.mark.parametrize(
    ("spec", "schema", "value", "expected_type", "expected"),
    [
        ("int8", Schema.INT32_SCHEMA, 42, SchemaType.INT8, 42),
        ("int16", Schema.INT32_SCHEMA, 42, SchemaType.INT16, 42),
        ("int32", Schema.INT32_SCHEMA, 42, SchemaType.INT32, 42),
        ("int64", Schema.INT32_SCHEMA, 42, SchemaType.INT64, 42),
        ("float32", Schema.INT32_SCHEMA, 42, SchemaType.FLOAT32, 42.0),
        ("float64", Schema.INT32_SCHEMA, 42, SchemaType.FLOAT64, 42.0),
        ("boolean", Schema.INT32_SCHEMA, 42, SchemaType.BOOLEAN, True),
        ("boolean", Schema.INT32_SCHEMA, 0, SchemaType.BOOLEAN, False),
        ("string", Schema.INT32_SCHEMA, 42, SchemaType.STRING, "42"),
        ("string", Decimal.schema(0), decimal.Decimal(42), SchemaType.STRING, "42"),
        ("int8", Schema.INT32_SCHEMA, 300, SchemaType.INT8, 44),  # Java's narrowing
        ("int32", Schema.FLOAT64_SCHEMA, 42.9, SchemaType.INT32, 42),
        (
            "int64",
            Timestamp.SCHEMA,
            dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc),
            SchemaType.INT64,
            1000,
        ),
        ("int32", Date.SCHEMA, dt.date(1970, 1, 3), SchemaType.INT32, 2),
        ("string", Schema.BYTES_SCHEMA, b"hi", SchemaType.STRING, "aGk="),
        ("float64", Schema.STRING_SCHEMA, "1.5", SchemaType.FLOAT64, 1.5),
        ("boolean", Schema.STRING_SCHEMA, "TRUE", SchemaType.BOOLEAN, True),
        ("string", Schema.FLOAT64_SCHEMA, 1.0, SchemaType.STRING, "1.0"),
        ("string", Schema.BOOLEAN_SCHEMA, True, SchemaType.STRING, "true"),
    ],
)
def test_whole_value_with_schema(
    spec: str, schema: Schema, value: Any, expected_type: SchemaType, expected: Any
) -> None:
    out = value_cast(spec).apply(value_record(schema, value))
    assert out.value_schema.type is expected_type  # type: ignore[union-attr]  # cast
    assert out.value == expected and type(out.value) is type(expected)


def test_whole_value_dates_to_string_and_defaults() -> None:
    moment = dt.datetime(2017, 1, 3, 6, 30, 1, 864000, dt.timezone.utc)
    assert (
        value_cast("string").apply(value_record(Timestamp.SCHEMA, moment)).value
        == "2017-01-03T06:30:01.864Z"
    )
    schema = SchemaBuilder.float32().default_value(-42.125).build()
    out = value_cast("int32").apply(value_record(schema, 42.5))
    assert (out.value, out.value_schema.default_value) == (42, -42)  # type: ignore[union-attr]  # cast


@pytest.mark.parametrize(
    ("spec", "value", "expected"),
    [
        ("int8", 42, 42),
        ("int32", 42.7, 42),
        ("float32", "42", 42.0),
        ("boolean", "false", False),
        ("string", 42, "42"),
    ],
)
def test_whole_value_schemaless(spec: str, value: Any, expected: Any) -> None:
    out = value_cast(spec).apply(value_record(None, value))
    assert out.value_schema is None and out.value == expected


def test_out_of_range_and_unsupported() -> None:
    with pytest.raises(
        DataException, match=r"Value \(300\) was out of range for requested data type"
    ):
        value_cast("int8").apply(value_record(Schema.STRING_SCHEMA, "300"))
    with pytest.raises(DataException, match="does not support casting from ARRAY"):
        value_cast("int8").apply(value_record(SchemaBuilder.array(Schema.INT8_SCHEMA).build(), [1]))
    with pytest.raises(DataException, match="not supported by Connect's data API"):
        value_cast("int8").apply(value_record(None, decimal.Decimal(1)))


def test_fields_with_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("int8", Schema.INT8_SCHEMA)
        .field("int32", Schema.INT32_SCHEMA)
        .field("optional", Schema.OPTIONAL_FLOAT32_SCHEMA)
        .field("string", Schema.STRING_SCHEMA)
        .field("other", Schema.STRING_SCHEMA)
        .field("timestamp", Timestamp.SCHEMA)
        .build()
    )
    moment = dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc)
    value = (
        Struct(schema).put("int8", 8).put("int32", 32).put("optional", None)
        .put("string", "42").put("other", "x").put("timestamp", moment)
    )  # fmt: skip
    xform = value_cast("int8:int16,int32:string,optional:int64,string:int32,timestamp:int64")
    out = xform.apply(value_record(schema, value)).value
    assert [f.schema.type for f in out.schema.fields] == [
        SchemaType.INT16, SchemaType.STRING, SchemaType.INT64, SchemaType.INT32, SchemaType.STRING, SchemaType.INT64,
    ]  # fmt: skip
    assert out.schema.field("optional").schema.optional
    assert [out.get(f.name) for f in out.schema.fields] == [8, "32", None, 42, "x", 1000]


@pytest.mark.parametrize(("replace", "expected"), [("false", None), ("true", "42")])
def test_field_with_default_value(replace: str, expected: str | None) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("magic", SchemaBuilder.int32().optional().default_value(42).build())
        .build()
    )
    out = value_cast("magic:string", **{"replace.null.with.default": replace}).apply(
        value_record(schema, Struct(schema).put("magic", None))
    )
    assert out.value_schema.field("magic").schema.type is SchemaType.STRING  # type: ignore[union-attr]  # a struct
    assert out.value.get_without_default("magic") == expected


def test_fields_schemaless() -> None:
    out = value_cast("a:int8,b:string").apply(value_record(None, {"a": 300, "b": 1.5, "c": "kept"}))
    assert out.value == {"a": 44, "b": "1.5", "c": "kept"}
