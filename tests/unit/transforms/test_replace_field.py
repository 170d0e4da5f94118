"""ReplaceField, with the cases of Kafka's ReplaceFieldTest."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue

SCHEMA = (
    SchemaBuilder.struct()
    .field("dont", Schema.STRING_SCHEMA)
    .field("abc", Schema.INT32_SCHEMA)
    .field("foo", Schema.BOOLEAN_SCHEMA)
    .field("etc", Schema.STRING_SCHEMA)
    .build()
)


def value_xform(**props: str) -> TransformationHarness:
    return TransformationHarness(ReplaceFieldValue, props)


def test_tombstones() -> None:
    xform = value_xform(include="abc,foo", renames="abc:xyz,foo:bar")
    schemaless = xform.apply(SinkRecord("test", 0, None, None, None, None, 0))
    assert schemaless.value is None and schemaless.value_schema is None
    with_schema = xform.apply(SinkRecord("test", 0, None, None, SCHEMA, None, 0))
    assert with_schema.value is None and with_schema.value_schema == SCHEMA


def test_schemaless() -> None:
    xform = value_xform(exclude="dont", renames="abc:xyz,foo:bar")
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}
    out = xform.apply(SinkRecord("test", 0, None, None, None, value, 0))
    assert out.value == {"xyz": 42, "bar": True, "etc": "etc"}


def test_with_schema() -> None:
    xform = value_xform(include="abc,foo", renames="abc:xyz,foo:bar")
    value = Struct(SCHEMA).put("dont", "whatever").put("abc", 42).put("foo", True).put("etc", "etc")
    out = xform.apply(SinkRecord("test", 0, None, None, SCHEMA, value, 0))
    assert [f.name for f in out.value.schema.fields] == ["xyz", "bar"]
    assert (out.value.get("xyz"), out.value.get("bar")) == (42, True)
    out.value.validate()


def test_exclude_takes_precedence_and_schema_basics_are_kept() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("n")
        .version(3)
        .doc("d")
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.INT32_SCHEMA)
        .build()
    )
    xform = value_xform(include="a,b", exclude="b")
    out = xform.apply(
        SinkRecord("t", 0, None, None, schema, Struct(schema).put("a", 1).put("b", 2), 0)
    )
    assert [f.name for f in out.value_schema.fields] == ["a"]  # type: ignore[union-attr]  # a struct
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc) == ("n", 3, "d")  # type: ignore[union-attr]  # set


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
@pytest.mark.parametrize("key", [False, True])
def test_replace_null_with_default(replace: bool, expected: int | None, key: bool) -> None:
    xform = TransformationHarness(
        ReplaceFieldKey if key else ReplaceFieldValue,
        {
            "include": "abc",
            "renames": "abc:optional_with_default",
            "replace.null.with.default": str(replace).lower(),
        },
    )
    schema = (
        SchemaBuilder.struct()
        .field("abc", SchemaBuilder.int32().optional().default_value(42).build())
        .build()
    )
    part = Struct(schema).put("abc", None)
    record = (
        SinkRecord("test", 0, schema, part, None, None, 0)
        if key
        else SinkRecord("test", 0, None, None, schema, part, 0)
    )
    out = xform.apply(record)
    updated = out.key if key else out.value
    assert len(updated.schema.fields) == 1
    assert updated.get_without_default("optional_with_default") == expected


def test_bad_rename_and_schemaless_struct_errors() -> None:
    with pytest.raises(ConfigException, match="Invalid rename mapping: abc"):
        value_xform(renames="abc")
    with pytest.raises(
        DataException,
        match=r"Only Map objects supported in absence of schema for \[field replacement\], found: str",
    ):
        value_xform(exclude="x").apply(SinkRecord("t", 0, None, None, None, "text", 0))
