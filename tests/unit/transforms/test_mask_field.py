"""MaskField, with the cases of Kafka's MaskFieldTest."""

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
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.mask_field import MaskFieldValue

SCHEMA = (
    SchemaBuilder.struct()
    .field("magic", Schema.INT32_SCHEMA)
    .field("bool", Schema.BOOLEAN_SCHEMA)
    .field("byte", Schema.INT8_SCHEMA)
    .field("short", Schema.INT16_SCHEMA)
    .field("int", Schema.INT32_SCHEMA)
    .field("long", Schema.INT64_SCHEMA)
    .field("float", Schema.FLOAT32_SCHEMA)
    .field("double", Schema.FLOAT64_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("date", Date.SCHEMA)
    .field("time", Time.SCHEMA)
    .field("timestamp", Timestamp.SCHEMA)
    .field("decimal", Decimal.schema(0))
    .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA))
    .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA))
    .field("withDefault", SchemaBuilder.string().optional().default_value("default").build())
    .build()
)
NOW = dt.datetime.now(dt.timezone.utc)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
VALUES: dict[str, Any] = {
    "magic": 42,
    "bool": True,
    "int": 42,
    "float": 42.0,
    "string": "55.121.20.20",
    "date": NOW,
    "bigdec": decimal.Decimal("42.0"),
    "list": [42],
    "map": {"key": "value"},
}


def with_schema() -> Struct:
    return (
        Struct(SCHEMA)
        .put("magic", 42)
        .put("bool", True)
        .put("byte", 42)
        .put("short", 42)
        .put("int", 42)
        .put("long", 42)
        .put("float", 42.0)
        .put("double", 42.0)
        .put("string", "hmm")
        .put("date", NOW.date())
        .put("time", dt.time(1, 2, 3))
        .put("timestamp", NOW)
        .put("decimal", decimal.Decimal(42))
        .put("array", [1, 2, 3])
        .put("map", {"what": "what"})
        .put("withDefault", None)
    )


def transform(fields: list[str], replacement: str | None = None) -> TransformationHarness:
    props = {"fields": ",".join(fields), "replace.null.with.default": "false"}
    if replacement is not None:
        props["replacement"] = replacement
    return TransformationHarness(MaskFieldValue, props)


def record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("", 0, None, None, schema, value, 0)


def test_schemaless() -> None:
    masked = [k for k in VALUES if k != "magic"]
    updated = transform(masked).apply(record(None, VALUES)).value
    assert updated == {
        "magic": 42,
        "bool": False,
        "int": 0,
        "float": 0.0,
        "string": "",
        "date": EPOCH,
        "bigdec": decimal.Decimal(0),
        "list": [],
        "map": {},
    }
    assert VALUES["int"] == 42  # the given value is left alone


def test_with_schema() -> None:
    masked = [f.name for f in SCHEMA.fields or () if f.name != "magic"]
    updated = transform(masked).apply(record(SCHEMA, with_schema())).value
    assert [updated.get(f.name) for f in SCHEMA.fields or ()][:-1] == [
        42, False, 0, 0, 0, 0, 0.0, 0.0, "", EPOCH.date(), dt.time(0), EPOCH, decimal.Decimal(0), [], {},
    ]  # fmt: skip
    assert updated.get_without_default("withDefault") is None
    updated.validate()


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("int", "123", 123),
        ("float", "123.0", 123.0),
        ("string", "123", "123"),
        ("bigdec", "123.0", decimal.Decimal("123.0")),
    ],
)
def test_schemaless_with_replacement(field: str, replacement: str, expected: Any) -> None:
    assert transform([field], replacement).apply(record(None, VALUES)).value[field] == expected


@pytest.mark.parametrize("field", ["date", "bool", "list", "map"])
def test_schemaless_unsupported_replacement_type(field: str) -> None:
    with pytest.raises(DataException, match="Cannot mask value of type"):
        transform([field], "123").apply(record(None, VALUES))


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("short", "123", 123),
        ("byte", "123", 123),
        ("int", "123", 123),
        ("long", "123", 123),
        ("float", "123.0", 123.0),
        ("double", "123.0", 123.0),
        ("string", "123", "123"),
        ("decimal", "123", decimal.Decimal(123)),
    ],
)
def test_with_schema_and_replacement(field: str, replacement: str, expected: Any) -> None:
    updated = transform([field], replacement).apply(record(SCHEMA, with_schema())).value
    assert updated.get(field) == expected


@pytest.mark.parametrize("field", ["time", "timestamp", "array"])
def test_with_schema_unsupported_replacement_type(field: str) -> None:
    with pytest.raises(DataException, match="Cannot mask value of type"):
        transform([field], "123").apply(record(SCHEMA, with_schema()))


@pytest.mark.parametrize("field", ["int", "float", "bigdec"])
def test_replacement_type_mismatch(field: str) -> None:
    with pytest.raises(DataException, match="Unable to convert foo"):
        transform([field], "foo").apply(record(None, VALUES))


def test_empty_replacement_and_fields_are_refused() -> None:
    with pytest.raises(ConfigException, match="String must be non-empty"):
        transform(["int"], "")
    with pytest.raises(ConfigException, match="Configuration 'fields' must not be empty"):
        transform([])


def test_null_list_and_map_replacements_are_fresh_and_mutable() -> None:
    xform = transform(["array", "map"])
    first = xform.apply(record(SCHEMA, with_schema())).value
    first.get("array").append(0)
    second = xform.apply(record(SCHEMA, with_schema())).value
    assert second.get("array") == [] and second.get("map") == {}
