"""ExtractField, HoistField, ValueToKey and KIP-821's field paths, with the cases of Kafka's
tests."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.extract_field import ExtractFieldKey, ExtractFieldValue
from airflow_provider_connect.transforms.field_path import SingleFieldPath
from airflow_provider_connect.transforms.hoist_field import HoistFieldKey
from airflow_provider_connect.transforms.value_to_key import ValueToKey


def extract_key(**props: str) -> TransformationHarness:
    return TransformationHarness(ExtractFieldKey, props)


def key_record(schema: Schema | None, key: object) -> SinkRecord:
    return SinkRecord("test", 0, schema, key, None, None, 0)


V2 = {"field.syntax.version": "V2"}
FOO = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
NESTED = SchemaBuilder.struct().field("magic", FOO).build()


def test_extract_schemaless() -> None:
    out = extract_key(field="magic").apply(key_record(None, {"magic": 42}))
    assert out.key_schema is None and out.key == 42
    nested = extract_key(field="magic.foo", **V2).apply(key_record(None, {"magic": {"foo": 42}}))
    assert nested.key == 42
    assert extract_key(field="magic").apply(key_record(None, None)).key is None
    assert extract_key(field="nonexistent").apply(key_record(None, {"magic": 42})).key is None
    missing = extract_key(field="magic.nonexistent", **V2).apply(
        key_record(None, {"magic": {"foo": 42}})
    )
    assert missing.key is None


def test_extract_with_schema() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    out = extract_key(field="magic").apply(key_record(schema, Struct(schema).put("magic", 42)))
    assert (out.key_schema, out.key) == (Schema.INT32_SCHEMA, 42)
    key = Struct(NESTED).put("magic", Struct(FOO).put("foo", 42))
    nested = extract_key(field="magic.foo", **V2).apply(key_record(NESTED, key))
    assert (nested.key_schema, nested.key) == (Schema.INT32_SCHEMA, 42)
    optional = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).optional().build()
    null = extract_key(field="magic").apply(key_record(optional, None))
    assert (null.key_schema, null.key) == (Schema.INT32_SCHEMA, None)


@pytest.mark.parametrize(("path", "version"), [("nonexistent", "V1"), ("magic.nonexistent", "V2")])
def test_extract_unknown_field_with_schema_fails(path: str, version: str) -> None:
    key = Struct(NESTED).put("magic", Struct(FOO).put("foo", 42))
    with pytest.raises(DataException, match=f"^Unknown field: {path}$"):
        extract_key(field=path, **{"field.syntax.version": version}).apply(key_record(NESTED, key))


@pytest.mark.parametrize(("replace", "expected"), [("false", None), ("true", 42)])
def test_extract_unset_optional_field(replace: str, expected: int | None) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("optional_with_default", SchemaBuilder.int32().optional().default_value(42).build())
        .build()
    )
    value = Struct(schema).put("optional_with_default", None)
    xform = TransformationHarness(
        ExtractFieldValue, {"field": "optional_with_default", "replace.null.with.default": replace}
    )
    assert xform.apply(SinkRecord("test", 0, None, None, schema, value, 0)).value == expected


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("..", ["", "", ""]),
        ("foo..", ["foo", "", ""]),
        (".bar.", ["", "bar", ""]),
        ("", []),
        ("foo.bar.baz", ["foo", "bar", "baz"]),
        ("foo`bar`baz", ["foo`bar`baz"]),
        ("`foo.bar.baz`", ["foo.bar.baz"]),
        ("`foo.bar`.baz", ["foo.bar", "baz"]),
        ("foo.``bar.baz`", ["foo", "`bar.baz"]),
        ("foo.`ba`r.baz`", ["foo", "ba`r.baz"]),
        ("foo.``bar``.baz", ["foo", "`bar`", "baz"]),
        ("foo.`bar\\`.baz`", ["foo", "bar`.baz"]),
        ("foo.`bar\\\\`.\\`baz`", ["foo", "bar\\`.\\`baz"]),
    ],
)
def test_field_paths_v2(path: str, steps: list[str]) -> None:
    assert SingleFieldPath(path, "V2").steps == steps
    assert SingleFieldPath(path, "V1").steps == [path]


@pytest.mark.parametrize(("path", "at"), [("`foo.bar.baz", 0), ("foo.bar.`baz\\`", 8)])
def test_incomplete_backticks(path: str, at: int) -> None:
    with pytest.raises(
        ConfigException, match=f"consider adding a backslash before backtick at position {at} "
    ):
        SingleFieldPath(path, "V2")


def test_hoist() -> None:
    xform = TransformationHarness(HoistFieldKey, {"field": "magic"})
    schemaless = xform.apply(key_record(None, 42))
    assert (schemaless.key_schema, schemaless.key) == (None, {"magic": 42})
    with_schema = xform.apply(key_record(Schema.INT32_SCHEMA, 42))
    assert (
        with_schema.key_schema == SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    )
    assert with_schema.key.get("magic") == 42
    optional = xform.apply(key_record(Schema.OPTIONAL_INT32_SCHEMA, None))
    assert optional.key.get("magic") is None


def test_value_to_key() -> None:
    xform = TransformationHarness(ValueToKey, {"fields": "a,b"})
    schemaless = xform.apply(SinkRecord("", 0, None, None, None, {"a": 1, "b": 2, "c": 3}, 0))
    assert (schemaless.key_schema, schemaless.key) == (None, {"a": 1, "b": 2})
    schema = (
        SchemaBuilder.struct()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.INT32_SCHEMA)
        .field("c", Schema.INT32_SCHEMA)
        .build()
    )
    value = Struct(schema).put("a", 1).put("b", 2).put("c", 3)
    out = xform.apply(SinkRecord("", 0, None, None, schema, value, 0))
    assert (
        out.key_schema
        == SchemaBuilder.struct()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.INT32_SCHEMA)
        .build()
    )
    assert (out.key.get("a"), out.key.get("b")) == (1, 2) and out.value is value
    wrong = TransformationHarness(ValueToKey, {"fields": "not_exist"})
    with pytest.raises(DataException, match="Field does not exist: not_exist"):
        wrong.apply(SinkRecord("", 0, None, None, schema, value, 0))
