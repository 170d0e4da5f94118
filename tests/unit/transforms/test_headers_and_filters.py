"""DropHeaders, InsertHeader, HeaderFrom, SetSchemaMetadata, Filter and the predicates, with
the cases of Kafka's tests."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import PredicateHarness, TransformationHarness
from airflow_provider_connect.transforms.filters import (
    Filter,
    HasHeaderKey,
    RecordIsTombstone,
    TopicNameMatches,
)
from airflow_provider_connect.transforms.headers import (
    DropHeaders,
    HeaderFromKey,
    HeaderFromValue,
    InsertHeader,
)
from airflow_provider_connect.transforms.set_schema_metadata import SetSchemaMetadataValue


def source_record(
    headers: Headers | None = None, key: Any = "key", value: Any = "value", **parts: Any
) -> SourceRecord:
    return SourceRecord(
        {"p": 1}, {"o": 2}, "topic", 0, parts.get("key_schema", Schema.STRING_SCHEMA), key,
        parts.get("value_schema", Schema.STRING_SCHEMA), value, 0, headers,
    )  # fmt: skip


def same_but_headers(original: SourceRecord, out: SourceRecord) -> None:
    assert (out.source_partition, out.source_offset, out.topic, out.kafka_partition) == (
        original.source_partition, original.source_offset, original.topic, original.kafka_partition,
    )  # fmt: skip
    assert (out.key, out.value, out.timestamp) == (original.key, original.value, original.timestamp)


def test_drop_headers() -> None:
    xform = TransformationHarness(DropHeaders, {"headers": "to-drop"})
    original = source_record(Headers().add("to-drop", "a").add("kept", "b").add("to-drop", "c"))
    out = xform.apply(original)
    same_but_headers(original, out)
    assert out.headers == Headers().add("kept", "b")
    assert len(original.headers) == 3  # the given record's headers are left alone
    untouched = xform.apply(source_record(Headers().add("other", "x")))
    assert untouched.headers == Headers().add("other", "x")
    with pytest.raises(ConfigException, match="Configuration 'headers' must not be empty"):
        TransformationHarness(DropHeaders, {"headers": ""})


@pytest.mark.parametrize(
    ("literal", "schema", "value"),
    [("inserted-value", Schema.STRING_SCHEMA, "inserted-value"), ("1", Schema.INT8_SCHEMA, 1)],
)
def test_insert_header(literal: str, schema: Schema, value: Any) -> None:
    xform = TransformationHarness(InsertHeader, {"header": "inserted", "value.literal": literal})
    original = source_record(Headers().add("existing", "existing-value"))
    out = xform.apply(original)
    same_but_headers(original, out)
    assert out.headers == Headers().add("existing", "existing-value").add("inserted", value, schema)
    assert len(original.headers) == 1


def test_insert_header_refuses_nulls() -> None:
    with pytest.raises(ConfigException, match='Missing required configuration "header"'):
        TransformationHarness(InsertHeader, {"value.literal": "1"})
    with pytest.raises(ConfigException, match='Missing required configuration "value.literal"'):
        TransformationHarness(InsertHeader, {"header": "h"})


STRUCT = (
    SchemaBuilder.struct()
    .field("foo", Schema.STRING_SCHEMA)
    .field("bar", Schema.INT32_SCHEMA)
    .build()
)


@pytest.mark.parametrize("operation", ["move", "copy"])
def test_header_from_with_schema(operation: str) -> None:
    xform = TransformationHarness(
        HeaderFromValue, {"fields": "foo", "headers": "foo-header", "operation": operation}
    )
    value = Struct(STRUCT).put("foo", "foo-value").put("bar", 1)
    out = xform.apply(source_record(Headers().add("h", "x"), value=value, value_schema=STRUCT))
    assert out.headers == Headers().add("h", "x").add(
        "foo-header", "foo-value", Schema.STRING_SCHEMA
    )
    if operation == "move":
        assert [f.name for f in out.value_schema.fields] == ["bar"]  # type: ignore[union-attr]  # a struct
        assert out.value.get("bar") == 1
    else:
        assert out.value is value and out.value_schema is STRUCT


@pytest.mark.parametrize("operation", ["move", "copy"])
def test_header_from_schemaless_key(operation: str) -> None:
    xform = TransformationHarness(
        HeaderFromKey, {"fields": "foo,missing", "headers": "h1,h2", "operation": operation}
    )
    out = xform.apply(source_record(None, key={"foo": "v", "bar": 2}, key_schema=None))
    assert out.headers == Headers().add("h1", "v").add("h2", None)
    assert out.key == ({"bar": 2} if operation == "move" else {"foo": "v", "bar": 2})


@pytest.mark.parametrize(
    "props",
    [
        {"fields": "a", "headers": "h1,h2", "operation": "copy"},
        {"fields": "a,b", "headers": "h1", "operation": "copy"},
        {"fields": "", "headers": "", "operation": "copy"},
        {"fields": "a", "headers": "h1", "operation": "rename"},
    ],
)
def test_header_from_bad_configs(props: dict[str, str]) -> None:
    with pytest.raises(ConfigException):
        TransformationHarness(HeaderFromValue, props)


def test_set_schema_metadata() -> None:
    xform = TransformationHarness(
        SetSchemaMetadataValue, {"schema.name": "foo", "schema.version": "42"}
    )
    value = Struct(STRUCT).put("foo", "x").put("bar", 1)
    out = xform.apply(source_record(value=value, value_schema=STRUCT))
    assert (out.value_schema.name, out.value_schema.version) == ("foo", 42)  # type: ignore[union-attr]  # set
    assert out.value.schema is out.value_schema and out.value.get("bar") == 1
    only_name = TransformationHarness(SetSchemaMetadataValue, {"schema.name": "n"})
    assert only_name.apply(source_record(value=None, value_schema=None)).value_schema is None
    with pytest.raises(DataException, match=r"Schema required for \[updating schema metadata\]"):
        only_name.apply(source_record(value={"a": 1}, value_schema=None))
    with pytest.raises(ConfigException, match="Neither schema name nor version configured"):
        TransformationHarness(SetSchemaMetadataValue, {})


def test_filter_and_predicates() -> None:
    assert TransformationHarness(Filter).apply(source_record()) is None
    assert PredicateHarness(TopicNameMatches, {"pattern": "to.*"}).test(source_record())
    top = PredicateHarness(TopicNameMatches, {"pattern": "top"})
    assert not top.test(source_record())  # the whole name must match
    with pytest.raises(ConfigException, match="entry must be a Java-compatible regular expression"):
        PredicateHarness(TopicNameMatches, {"pattern": "["})
    with pytest.raises(ConfigException, match="String must be non-empty"):
        PredicateHarness(TopicNameMatches, {"pattern": ""})
    has = PredicateHarness(HasHeaderKey, {"name": "h"})
    assert has.test(source_record(Headers().add("h", None)))
    assert not has.test(source_record(Headers().add("other", 1))) and not has.test(source_record())
    tombstone = PredicateHarness(RecordIsTombstone)
    assert tombstone.test(source_record(value=None)) and not tombstone.test(source_record())
