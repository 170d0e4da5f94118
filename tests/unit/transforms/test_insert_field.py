"""InsertField, with the cases of Kafka's InsertFieldTest."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct, Timestamp
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.insert_field import InsertFieldKey, InsertFieldValue

ALL = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}
SIMPLE = (
    SchemaBuilder.struct()
    .name("name")
    .version(1)
    .doc("doc")
    .field("magic", Schema.OPTIONAL_INT64_SCHEMA)
    .build()
)


def value_xform(**props: Any) -> TransformationHarness:
    return TransformationHarness(InsertFieldValue, props)


def test_top_level_struct_required() -> None:
    xform = value_xform(**{"topic.field": "topic_field"})
    with pytest.raises(
        DataException, match=r"Only Struct objects supported for \[field insertion\]"
    ):
        xform.apply(SourceRecord(None, None, "", 0, value_schema=Schema.INT32_SCHEMA, value=42))


def test_copy_schema_and_insert_configured_fields() -> None:
    xform = value_xform(**ALL)
    record = SourceRecord(
        None, None, "test", 0, None, None, SIMPLE, Struct(SIMPLE).put("magic", 42), 789
    )
    out = xform.apply(record)
    schema, value = out.value_schema, out.value
    assert schema is not None and isinstance(value, Struct)
    assert (schema.name, schema.version, schema.doc) == ("name", 1, "doc")
    assert schema.field("magic").schema == Schema.OPTIONAL_INT64_SCHEMA  # type: ignore[union-attr]  # defined
    assert value.get("magic") == 42
    assert schema.field("topic_field").schema == Schema.STRING_SCHEMA  # type: ignore[union-attr]  # defined
    assert value.get("topic_field") == "test"
    assert schema.field("partition_field").schema == Schema.OPTIONAL_INT32_SCHEMA  # type: ignore[union-attr]  # defined
    assert value.get("partition_field") == 0
    assert schema.field("timestamp_field").schema == Timestamp.builder().optional().build()  # type: ignore[union-attr]  # defined
    assert value.get("timestamp_field") == dt.datetime(1970, 1, 1, 0, 0, 0, 789000, dt.timezone.utc)
    assert schema.field("instance_id").schema == Schema.OPTIONAL_STRING_SCHEMA  # type: ignore[union-attr]  # defined
    assert value.get("instance_id") == "my-instance-id"
    again = xform.apply(SourceRecord(None, None, "test", 1, None, None, SIMPLE, Struct(SIMPLE)))
    assert again.value_schema is schema  # derived once, from the cache


def test_schemaless_insert_configured_fields() -> None:
    xform = value_xform(**ALL)
    record = SourceRecord(None, None, "test", 0, None, None, None, {"magic": 42}, 123)
    assert xform.apply(record).value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": 123,
        "instance_id": "my-instance-id",
    }
    assert record.value == {"magic": 42}  # the given record is left alone


def test_tombstones_are_left_unchanged() -> None:
    xform = value_xform(**ALL)
    schemaless = xform.apply(SourceRecord(None, None, "test", 0, None, None))
    assert schemaless.value is None and schemaless.value_schema is None
    with_schema = xform.apply(SourceRecord(None, None, "test", 0, value_schema=SIMPLE))
    assert with_schema.value is None and with_schema.value_schema == SIMPLE


def test_key_fields_into_a_tombstone() -> None:
    xform = TransformationHarness(InsertFieldKey, ALL)
    out = xform.apply(SourceRecord(None, None, "test", 0, None, {"magic": 42}, None, None))
    assert out.key == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "instance_id": "my-instance-id",
    }
    assert out.value is None


def test_insert_into_a_null_key_leaves_the_record() -> None:
    xform = TransformationHarness(InsertFieldKey, ALL)
    record = SourceRecord(None, None, "test", 0, None, None, None, {"magic": 42})
    assert xform.apply(record) is record


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_unset_optional_field(replace: bool, expected: int | None) -> None:
    xform = value_xform(**ALL, **{"replace.null.with.default": str(replace).lower()})
    magic = SchemaBuilder.int64().optional().default_value(42).build()
    schema = (
        SchemaBuilder.struct()
        .name("name")
        .version(1)
        .doc("doc")
        .field("magic_with_default", magic)
        .build()
    )
    record = SourceRecord(
        None,
        None,
        "test",
        0,
        None,
        None,
        schema,
        Struct(schema).put("magic_with_default", None),
        789,
    )
    out = xform.apply(record)
    assert out.value_schema.field("magic_with_default").schema == magic  # type: ignore[union-attr]  # defined
    assert out.value.get_without_default("magic_with_default") == expected


def test_bad_configs() -> None:
    with pytest.raises(ConfigException, match="No field insertion configured"):
        value_xform()
    with pytest.raises(ConfigException, match="No value specified for static field"):
        value_xform(**{"static.field": "x"})
