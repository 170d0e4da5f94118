"""Flatten, with the cases of Kafka's FlattenTest."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.flatten import FlattenKey, FlattenValue

SUPPORTED = (
    SchemaBuilder.struct()
    .field("int8", Schema.INT8_SCHEMA)
    .field("int16", Schema.INT16_SCHEMA)
    .field("int32", Schema.INT32_SCHEMA)
    .field("int64", Schema.INT64_SCHEMA)
    .field("float32", Schema.FLOAT32_SCHEMA)
    .field("float64", Schema.FLOAT64_SCHEMA)
    .field("boolean", Schema.BOOLEAN_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("bytes", Schema.BYTES_SCHEMA)
    .build()
)
VALUES: dict[str, Any] = {
    "int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": 64.0,
    "boolean": True, "string": "stringy", "bytes": b"bytes",
}  # fmt: skip


def value_xform(**props: str) -> TransformationHarness:
    return TransformationHarness(FlattenValue, props)


def record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, value_schema=schema, value=value)


def test_top_level_struct_and_map_required() -> None:
    with pytest.raises(DataException):
        value_xform().apply(record(Schema.INT32_SCHEMA, 42))
    with pytest.raises(DataException):
        value_xform().apply(record(None, 42))


def test_nested_struct() -> None:
    one = SchemaBuilder.struct().field("B", SUPPORTED).build()
    two = SchemaBuilder.struct().field("A", one).build()
    supported = Struct(SUPPORTED)
    for name, value in VALUES.items():
        supported.put(name, value)
    value = Struct(two).put("A", Struct(one).put("B", supported))
    out = value_xform().apply(record(two, value)).value
    assert len(out.schema.fields) == 9
    assert {f.name: out.get(f.name) for f in out.schema.fields} == {
        f"A.B.{k}": v for k, v in VALUES.items()
    }


def test_nested_map_with_delimiter() -> None:
    out = value_xform(delimiter="#").apply(record(None, {"A": {"B": VALUES}})).value
    assert out == {f"A#B#{k}": v for k, v in VALUES.items()}


def test_optional_fields_and_structs() -> None:
    inner = SchemaBuilder.struct().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("B", inner).build()
    out = value_xform().apply(
        record(outer, Struct(outer).put("B", Struct(inner).put("opt_int32", None)))
    )
    assert out.value.get("B.opt_int32") is None
    optional_inner = (
        SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    )
    nested = SchemaBuilder.struct().field("B", optional_inner).build()
    flat = value_xform().apply(record(nested, Struct(nested).put("B", None)))
    assert flat.value.get("B.opt_int32") is None
    optional_outer = (
        SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    )
    tombstone = value_xform().apply(record(optional_outer, None))
    assert tombstone.value is None and tombstone.value_schema.type.value == "struct"  # type: ignore[union-attr]  # kept
    assert value_xform().apply(record(None, {"B": {"opt_int32": None}})).value == {
        "B.opt_int32": None
    }


def test_key_and_arrays() -> None:
    key = TransformationHarness(FlattenKey, {})
    out = key.apply(SourceRecord(None, None, "topic", 0, None, {"A": {"B": 12}}, None, None))
    assert out.key_schema is None and out.key == {"A.B": 12}
    schemaless = {"foo": ["bar", {"baz": {"lfg": "lfg"}}]}
    assert value_xform().apply(record(None, schemaless)).value == schemaless
    nested = SchemaBuilder.struct().field("lfg", Schema.STRING_SCHEMA).build()
    inner = SchemaBuilder.struct().field("baz", nested).build()
    schema = (
        SchemaBuilder.struct().field("foo", SchemaBuilder.array(inner).doc("durk").build()).build()
    )
    value = Struct(schema).put("foo", [Struct(inner).put("baz", Struct(nested).put("lfg", "lfg"))])
    out = value_xform().apply(record(schema, value))
    assert out.value == value and out.value_schema == schema


def test_optional_and_default_values_nested() -> None:
    child = (
        SchemaBuilder.struct()
        .optional()
        .field("req_field", Schema.STRING_SCHEMA)
        .field(
            "opt_field", SchemaBuilder.string().optional().default_value("child_default").build()
        )
    )
    default = Struct(child.build()).put("req_field", "req_default")
    schema = child.default_value(default).build()
    out = value_xform().apply(record(schema, Struct(schema)))
    fields = out.value_schema.fields  # type: ignore[union-attr]  # a struct
    assert [f.schema for f in fields] == [  # type: ignore[union-attr]  # a struct
        SchemaBuilder.string().optional().default_value("req_default").build(),
        SchemaBuilder.string().optional().default_value("child_default").build(),
    ]


def test_unsupported_values() -> None:
    with pytest.raises(DataException, match="not supported by Connect's data API"):
        value_xform().apply(record(None, {"a": object()}))
    schema = (
        SchemaBuilder.struct()
        .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
        .build()
    )
    with pytest.raises(
        DataException, match=r"does not support map for record with schemas \(for field m\)"
    ):
        value_xform().apply(record(schema, Struct(schema).put("m", {})))
