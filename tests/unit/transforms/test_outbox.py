"""Debezium's outbox EventRouter, with cases of Debezium's EventRouterTest (outbox change
events built by hand as Debezium's ``Envelope`` builds them), JSON expansion, and
DecodeLogicalDecodingMessageContent on message records built as the PostgreSQL connector
builds them, and the connector's ``message.prefix.*.list`` filter."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException, ConnectException, DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.connectors.change_capture.envelope import (
    envelope_schema,
    envelope_value,
)
from airflow_provider_connect.connectors.postgres import config as pg_config
from airflow_provider_connect.connectors.postgres.envelope import (
    MESSAGE_KEY_SCHEMA,
    SOURCE_SCHEMA,
    message_value_schema,
    source_struct,
)
from airflow_provider_connect.connectors.postgres.message_content import (
    DecodeLogicalDecodingMessageContent,
)
from airflow_provider_connect.transforms.outbox import EventRouter

STRING = Schema.STRING_SCHEMA
SOURCE = source_struct(
    version="1", name="db", ts_ms=1, snapshot="false", db="d", schema="public", table="outbox",
    tx_id=7, lsn=10,
)  # fmt: skip
TS_MS = 1_556_890_294_484


def outbox_event(
    op: str = "c",
    payload: Any = "{}",
    aggregatetype: str = "User",
    payload_schema: Schema = STRING,
    **extra: tuple[Schema, Any],
) -> SourceRecord:
    """A change event of the outbox table ``db.public.outbox`` (Debezium's test row)."""
    builder = (
        SchemaBuilder.struct()
        .field("id", STRING)
        .field("aggregatetype", STRING)
        .field("aggregateid", STRING)
        .field("type", STRING)
        .field("payload", payload_schema)
    )
    for name, (schema, _) in extra.items():
        builder.field(name, schema)
    envelope = envelope_schema("db.public.outbox", builder.build(), SOURCE_SCHEMA, True)
    row_schema = field_schema(envelope, "after")
    row = Struct.of(
        row_schema,
        {
            "id": "da8d6de6-3b77-45ff-8f44-57db55a7a06c",
            "aggregatetype": aggregatetype,
            "aggregateid": "10711fa5",
            "type": "UserCreated",
            "payload": payload,
            **{name: value for name, (_, value) in extra.items()},
        },
    )
    before, after = (row, None) if op == "d" else (None if op == "c" else row, row)
    value = envelope_value(envelope, op=op, source=SOURCE, ts_ms=TS_MS, before=before, after=after)
    return SourceRecord(
        {}, {}, "db.public.outbox", value_schema=envelope, value=value,
        headers=Headers([("trace", "t1")]),
    )  # fmt: skip


def router(**config: str) -> TransformationHarness:
    return TransformationHarness(EventRouter, {k.replace("_", "."): v for k, v in config.items()})


def passed(stage: TransformationHarness, record: SourceRecord) -> SourceRecord:
    """What ``stage`` passes on for ``record`` (not dropped)."""
    out = stage.apply(record)
    assert out is not None
    return out


def header(record: SourceRecord, name: str) -> Any:
    found = record.headers.last_with_name(name)
    assert found is not None
    return found.value


def field_schema(schema: Schema | None, name: str) -> Schema:
    assert schema is not None
    field = schema.field(name)
    assert field is not None
    return field.schema


def test_a_create_is_routed_to_its_aggregates_topic_with_key_payload_id_and_timestamp() -> None:
    routed = passed(router(), outbox_event())
    assert routed.topic == "outbox.event.User"
    assert (routed.key_schema, routed.key) == (STRING, "10711fa5")
    assert (routed.value_schema, routed.value) == (STRING, "{}")
    assert routed.timestamp == TS_MS
    assert [(h.key, h.value, h.schema) for h in routed.headers] == [
        ("trace", "t1", None),
        ("id", "da8d6de6-3b77-45ff-8f44-57db55a7a06c", STRING),
    ]


def test_tombstones_deletes_and_updates_are_dropped_other_records_pass(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stage = router()
    heartbeat = SourceRecord({}, {}, "hb", value_schema=STRING, value="x")
    assert stage.apply(heartbeat) is heartbeat
    assert stage.apply(SourceRecord({}, {}, "t", key="k")) is None
    assert stage.apply(outbox_event("d")) is None
    with caplog.at_level(logging.WARNING):
        assert stage.apply(outbox_event("u")) is None
    assert "Unexpected update message received" in caplog.text
    with pytest.raises(ConnectException, match="Unexpected update message received"):
        router(table_op_invalid_behavior="fatal").apply(outbox_event("u"))


def test_every_table_field_and_the_route_can_be_configured() -> None:
    stage = TransformationHarness(
        EventRouter,
        {
            "table.field.event.id": "type",
            "table.field.event.key": "id",
            "table.field.event.payload": "aggregateid",
            "route.by.field": "type",
            "route.topic.regex": "(?<routedByValue>User)(.*)",
            "route.topic.replacement": "events.${routedByValue}.$2",
        },
    )
    routed = passed(stage, outbox_event())
    assert routed.topic == "events.User.Created"
    assert routed.key == "da8d6de6-3b77-45ff-8f44-57db55a7a06c"
    assert routed.value == "10711fa5"
    assert header(routed, "id") == "UserCreated"


def test_additional_fields_go_to_headers_the_envelope_and_the_partition() -> None:
    stage = router(
        table_fields_additional_placement="type:header:eventType,type:envelope:eventType,"
        "aggregateid:envelope,p:partition",
        table_field_event_schema_version="v",
    )
    event = outbox_event(p=(Schema.INT32_SCHEMA, 3), v=(Schema.INT32_SCHEMA, 2))
    routed = passed(stage, event)
    assert routed.kafka_partition == 3
    assert header(routed, "eventType") == "UserCreated"
    schema = routed.value_schema
    assert schema is not None
    assert (schema.name, schema.version) == ("db.public.outbox.User.Value", 2)
    assert [f.name for f in schema.fields or ()] == ["payload", "eventType", "aggregateid"]
    assert routed.value == Struct.of(
        schema, {"payload": "{}", "eventType": "UserCreated", "aggregateid": "10711fa5"}
    )
    other = stage.apply(
        outbox_event(aggregatetype="Order", p=(Schema.INT32_SCHEMA, 1), v=(Schema.INT32_SCHEMA, 2))
    )
    assert other is not None and other.value_schema is not None
    assert other.value_schema.name == "db.public.outbox.Order.Value"


def test_a_missing_additional_field_fails_or_is_ignored() -> None:
    with pytest.raises(ConnectException, match="Unable to find field nope in event"):
        router(table_fields_additional_placement="nope:envelope:alias").apply(outbox_event())
    stage = TransformationHarness(
        EventRouter,
        {
            "table.fields.additional.placement": "nope:envelope:alias,nope:header",
            "table.field.additional.missing": "ignore",
        },
    )
    routed = passed(stage, outbox_event())
    assert routed.value_schema is not None
    assert routed.value_schema.field("alias") is None
    assert routed.headers.last_with_name("nope") is None
    with pytest.raises(ConnectException, match="Unable to find payload field body in event"):
        router(table_field_event_payload="body").apply(outbox_event())


def test_an_empty_payload_makes_a_tombstone_when_asked() -> None:
    null = outbox_event(payload=None, payload_schema=Schema.OPTIONAL_STRING_SCHEMA)
    assert passed(router(), null).value is None
    routed = passed(router(route_tombstone_on_empty_payload="true"), outbox_event(payload="  "))
    assert (routed.value_schema, routed.value, routed.key) == (None, None, "10711fa5")


def test_the_timestamp_column_sets_the_records_timestamp() -> None:
    micro = SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").build()
    stage = router(table_field_event_timestamp="at")
    assert passed(stage, outbox_event(at=(micro, 1_000_000_123))).timestamp == 1_000_000
    with pytest.raises(ConnectException, match="Unsupported field type int64"):
        stage.apply(outbox_event(at=(Schema.INT64_SCHEMA, 5)))


def test_a_json_payload_is_expanded_into_a_struct() -> None:
    payload = (
        '{"fullName": "John Doe", "rating": 4.9, "age": 42, "big": 3000000000, "gone": null, '
        '"numbers": [null, 2, 3], "none": [], '
        '"pets": [{"type": "dog", "colors": []}, {"type": "cat", "colors": [{"name": "white"}]}]}'
    )
    routed = passed(router(table_expand_json_payload="true"), outbox_event(payload=payload))
    value, schema = routed.value, routed.value_schema
    assert schema is not None and schema.name == "payload"
    types = {f.name: f.schema.type.value for f in schema.fields or ()}
    assert types == {
        "fullName": "string", "rating": "float64", "age": "int32", "big": "int64",
        "numbers": "array", "pets": "array",
    }  # fmt: skip
    pet = field_schema(schema, "pets").value_schema
    assert pet is not None and pet.fields is not None
    assert pet.name == "payload.pets" and not pet.optional  # two objects merged: required
    assert [f.name for f in pet.fields] == ["type", "colors"]
    assert value.get("numbers") == [None, 2, 3]
    assert value.get("pets")[1].get("colors")[0].get("name") == "white"
    assert value.get("pets")[0].get("colors") == []  # the merged field, as Jackson reads it


def test_json_expansion_options_and_what_does_not_expand(caplog: pytest.LogCaptureFixture) -> None:
    stage = router(
        table_expand_json_payload="true",
        table_json_payload_null_behavior="optional_bytes",
        table_json_payload_empty_array_behavior="optional_string",
    )
    value = passed(stage, outbox_event(payload='{"a": null, "b": []}')).value
    assert [(f.name, f.schema) for f in value.schema.fields] == [
        ("a", Schema.OPTIONAL_BYTES_SCHEMA),
        ("b", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build()),
    ]
    with caplog.at_level(logging.WARNING):
        for bad in ("not json", "[1, 2.5]", '{"a": [1, "x"]}'):
            assert passed(stage, outbox_event(payload=bad)).value == bad
    assert caplog.text.count("JSON expansion failed") == 3
    assert "different number types" in caplog.text


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("route.topic.regex", "(?<routedByValue>.*"),
        ("table.fields.additional.placement", "type"),
        ("table.fields.additional.placement", ""),
        ("table.fields.additional.placement", "type:body"),
        ("table.op.invalid.behavior", "invalidOption"),
    ],
)
def test_invalid_configs_are_refused_naming_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigException, match=key.replace(".", r"\.")):
        EventRouter().configure({key: value})


# -- DecodeLogicalDecodingMessageContent -------------------------------------------------------
def message(content: bytes, transactional: bool = True) -> SourceRecord:
    schema = message_value_schema(Schema.OPTIONAL_BYTES_SCHEMA)
    source = source_struct(
        version="1", name="db", ts_ms=1, snapshot="false", db="d", schema="", table="",
        tx_id=7 if transactional else None, lsn=10,
    )  # fmt: skip
    block = Struct.of(field_schema(schema, "message"), {"prefix": "outbox", "content": content})
    value = Struct.of(schema, {"op": "m", "ts_ms": TS_MS, "source": source, "message": block})
    key = Struct.of(MESSAGE_KEY_SCHEMA, {"prefix": "outbox"})
    return SourceRecord({}, {}, "db.message", None, MESSAGE_KEY_SCHEMA, key, schema, value, 5)


def test_a_message_becomes_a_create_event_of_its_json_content() -> None:
    decode = TransformationHarness(DecodeLogicalDecodingMessageContent)
    decoded = passed(decode, message(b'{"bar": "baz", "qux": 9703, "quux": null}'))
    assert (decoded.key_schema, decoded.key, decoded.topic, decoded.timestamp) == (
        None, None, "db.message", 5,
    )  # fmt: skip
    schema = decoded.value_schema
    assert schema is not None
    assert schema.name == "io.debezium.connector.postgresql.MessageValue.Envelope"
    assert [f.name for f in schema.fields or ()] == [
        "op",
        "ts_ms",
        "source",
        "transaction",
        "after",
    ]
    value = decoded.value
    assert value.get("op") == "c" and value.get("source").get("txId") == 7
    assert value.get("after").items() == [("bar", "baz"), ("qux", 9703)]
    with_nulls = passed(
        TransformationHarness(DecodeLogicalDecodingMessageContent, {"fields.null.include": "true"}),
        message(b'{"bar": "baz", "quux": null}', transactional=False),
    )
    assert with_nulls.value.get("after").items() == [("bar", "baz"), ("quux", None)]
    with pytest.raises(
        DataException, match="Unable to parse logical decoding message content JSON string ''"
    ):
        decode.apply(message(b""))
    other = SourceRecord({}, {}, "t", value_schema=STRING, value="x")
    assert decode.apply(other) is other


def test_decoded_messages_are_routed_by_the_outbox_router() -> None:
    content = b'{"id": "e1", "aggregatetype": "Order", "aggregateid": "o-1", "payload": "{}"}'
    decoded = passed(TransformationHarness(DecodeLogicalDecodingMessageContent), message(content))
    routed = passed(router(), decoded)
    assert (routed.topic, routed.key, routed.value) == ("outbox.event.Order", "o-1", "{}")
    assert header(routed, "id") == "e1"


# -- the connector's message.prefix.include.list / exclude.list --------------------------------
def test_message_prefix_lists_select_messages_and_exclude_each_other() -> None:
    required = {
        "database.hostname": "h", "database.user": "u", "database.dbname": "d", "topic.prefix": "p",
    }  # fmt: skip
    prefixes = ["included_prefix", "excluded_prefix", "prefix:excluded", "PREFIX:Included"]

    def emitted(**lists: str) -> list[str]:
        parsed = pg_config.CONFIG_DEF.parse({**required, **lists})
        return [p for p in prefixes if pg_config.MessageFilter.of(parsed)(p)]

    assert emitted() == prefixes
    excluded = {"message.prefix.exclude.list": "excluded_prefix, prefix:excluded"}
    assert emitted(**excluded) == ["included_prefix", "PREFIX:Included"]
    included = {"message.prefix.include.list": "included_prefix, prefix:incl.*"}
    assert emitted(**included) == ["included_prefix", "PREFIX:Included"]
    both = pg_config.CONFIG_DEF.parse({**required, **excluded, **included})
    assert pg_config.pattern_errors(both) == {
        "message.prefix.exclude.list": "The 'message.prefix.exclude.list' value is invalid: "
        '"message.prefix.include.list" is already specified'
    }
    with pytest.raises(ConfigException, match="is already specified"):
        pg_config.MessageFilter.of(both)
    bad = pg_config.CONFIG_DEF.parse({**required, "message.prefix.include.list": "(a"})
    assert "message.prefix.include.list" in pg_config.pattern_errors(bad)
