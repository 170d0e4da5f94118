"""KIP-1040's ``replace.null.with.default`` on the transformations whose own tests do not
cover it (HeaderFrom, SetSchemaMetadata, ValueToKey), with the cases of Kafka's tests: a
null field whose schema has a default reads as the default (true, the default) or stays
null (false)."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.headers import HeaderFromValue
from airflow_provider_connect.transforms.set_schema_metadata import SetSchemaMetadataValue
from airflow_provider_connect.transforms.value_to_key import ValueToKey

WITH_DEFAULT = SchemaBuilder.string().optional().default_value("default").build()
SCHEMA = SchemaBuilder.struct().field("f1", WITH_DEFAULT).field("f2", Schema.INT32_SCHEMA).build()
CASES = pytest.mark.parametrize(
    ("config", "expected"), [({}, "default"), ({"replace.null.with.default": "false"}, None)]
)


def apply(transformation: type[Any], config: dict[str, str]) -> SinkRecord:
    value = Struct(SCHEMA).put("f1", None).put("f2", 1)
    record = SinkRecord("t", 0, None, None, SCHEMA, value, 0)
    out = TransformationHarness(transformation, config).apply(record)
    assert out is not None
    return out


@CASES
def test_set_schema_metadata(config: dict[str, str], expected: str | None) -> None:
    out = apply(SetSchemaMetadataValue, {"schema.name": "foo", "schema.version": "42", **config})
    assert out.value_schema is not None and out.value_schema.name == "foo"
    assert out.value.get_without_default("f1") == expected


@CASES
def test_value_to_key(config: dict[str, str], expected: str | None) -> None:
    out = apply(ValueToKey, {"fields": "f1", **config})
    assert out.key.get_without_default("f1") == expected


@CASES
def test_header_from_copies_the_field(config: dict[str, str], expected: str | None) -> None:
    out = apply(HeaderFromValue, {"fields": "f1", "headers": "h1", "operation": "copy", **config})
    h1 = out.headers.last_with_name("h1")
    assert h1 is not None and (h1.value, h1.schema) == (expected, WITH_DEFAULT)


@CASES
def test_header_from_moves_a_field_and_keeps_the_others(
    config: dict[str, str], expected: str | None
) -> None:
    out = apply(HeaderFromValue, {"fields": "f2", "headers": "h2", "operation": "move", **config})
    assert [f.name for f in out.value_schema.fields] == ["f1"]
    assert out.value.get_without_default("f1") == expected
