"""Debezium's ExtractNewRecordState, with the cases of Debezium's ExtractNewRecordStateTest
(change events built by hand as Debezium's ``Envelope`` builds them), and the differences
the module documents."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest

from airflow_provider_connect.connect.connector import ConnectRecord
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.extract_new_record_state import (
    CONFIG_DEF,
    ExtractNewRecordState,
)

MODE = "delete.tombstone.handling.mode"
ROUTE_BY_FIELD = "route.by.field"
ADD_FIELDS = "add.fields"
ADD_HEADERS = "add.headers"
ADD_FIELDS_PREFIX = "add.fields.prefix"
ADD_HEADERS_PREFIX = "add.headers.prefix"
DROP_FIELDS_HEADER_NAME = "drop.fields.header.name"
DROP_FIELDS_FROM_KEY = "drop.fields.from.key"
DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE = "drop.fields.keep.schema.compatible"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"

OPT_INT64 = Schema.OPTIONAL_INT64_SCHEMA
OPT_STRING = Schema.OPTIONAL_STRING_SCHEMA
VALUE_NAME = "dummy.inventory.customers.Value"

# Debezium's test row: columns carrying their source metadata as parameters; optional, and
# named, as a connector's before/after schemas are.
RECORD_SCHEMA = (
    SchemaBuilder.struct()
    .name(VALUE_NAME)
    .version(3)
    .doc("a row of customers")
    .optional()
    .field(
        "id",
        SchemaBuilder.int8()
        .parameters({"__debezium.source.column.name": "id", "__debezium.source.column.type": "int"})
        .build(),
    )
    .field(
        "name",
        SchemaBuilder.string()
        .parameters(
            {
                "__debezium.source.column.name": "name",
                "__debezium.source.column.type": "varchar",
                "__debezium.source.column.length": "255",
            }
        )
        .build(),
    )
    .build()
)
# A row whose name is optional with a default (Debezium's "WithOptionalNull" events).
DEFAULTED_SCHEMA = (
    SchemaBuilder.struct()
    .name(VALUE_NAME)
    .optional()
    .field("id", Schema.INT8_SCHEMA)
    .field("name", SchemaBuilder.string().optional().default_value("default_str").build())
    .build()
)
SOURCE_SCHEMA = (
    SchemaBuilder.struct()
    .field("lsn", Schema.INT32_SCHEMA)
    .field("ts_ms", OPT_INT64)
    .field("ts_us", OPT_INT64)
    .field("ts_ns", OPT_INT64)
    .field("db", OPT_STRING)
    .field("table", OPT_STRING)
    .build()
)
DELETE_SOURCE_SCHEMA = (
    SchemaBuilder.struct()
    .field("lsn", Schema.INT32_SCHEMA)
    .field("version", Schema.STRING_SCHEMA)
    .field("db", OPT_STRING)
    .field("table", OPT_STRING)
    .build()
)
TRANSACTION_SCHEMA = (
    SchemaBuilder.struct()
    .optional()
    .name("event.block")
    .version(1)
    .field("id", Schema.STRING_SCHEMA)
    .field("total_order", Schema.INT64_SCHEMA)
    .field("data_collection_order", Schema.INT64_SCHEMA)
    .build()
)
KEY_SCHEMA = (
    SchemaBuilder.struct().name("dummy.inventory.customers.Key").field("id", Schema.INT8_SCHEMA)
)
KEY_SCHEMA_BUILT = KEY_SCHEMA.build()
SOURCE_TS_MS = 1588252618953
NOW = dt.datetime(2024, 3, 10, 1, 2, 3, 123456, tzinfo=dt.timezone.utc)


def envelope_schema(
    record_schema: Schema = RECORD_SCHEMA,
    source_schema: Schema = SOURCE_SCHEMA,
    extra: tuple[tuple[str, Schema], ...] = (),
) -> Schema:
    """As Debezium's ``Envelope.defineSchema()...build()``."""
    builder = (
        SchemaBuilder.struct()
        .name("dummy.Envelope")
        .version(2)
        .field("before", record_schema)
        .field("after", record_schema)
        .field("source", source_schema)
    )
    for name, schema in extra:
        builder.field(name, schema)
    return (
        builder.field("op", Schema.STRING_SCHEMA)
        .field("ts_ms", OPT_INT64)
        .field("ts_us", OPT_INT64)
        .field("ts_ns", OPT_INT64)
        .field("transaction", TRANSACTION_SCHEMA)
        .build()
    )


ENVELOPE = envelope_schema()


def event(
    schema: Schema,
    op: str,
    *,
    before: Struct | None = None,
    after: Struct | None = None,
    source: Struct | None = None,
    at: dt.datetime | None = NOW,
    **extra: Any,
) -> Struct:
    """As Debezium's ``Envelope.create/update/delete/truncate``."""
    struct = Struct(schema).put("op", op)
    if before is not None:
        struct.put("before", before)
    if after is not None:
        struct.put("after", after)
    if source is not None:
        struct.put("source", source)
    if at is not None:
        delta = at - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        micros = delta // dt.timedelta(microseconds=1)
        struct.put("ts_ms", micros // 1000)
        struct.put("ts_us", micros)
        struct.put("ts_ns", micros * 1000)
    for name, value in extra.items():
        struct.put(name, value)
    return struct


def row(schema: Schema = RECORD_SCHEMA, id: int = 1, name: str | None = "myRecord") -> Struct:
    return Struct(schema).put("id", id).put("name", name)


def source(schema: Schema = SOURCE_SCHEMA, **values: Any) -> Struct:
    struct = Struct(schema)
    if schema.field("ts_ms") is not None:
        struct.put("ts_ms", SOURCE_TS_MS)
        struct.put("ts_us", SOURCE_TS_MS * 1000)
        struct.put("ts_ns", SOURCE_TS_MS * 1000_000)
    for name, value in values.items():
        struct.put(name, value)
    return struct


def transaction() -> Struct:
    return (
        Struct(TRANSACTION_SCHEMA)
        .put("id", "571")
        .put("total_order", 42)
        .put("data_collection_order", 42)
    )


def record(
    schema: Schema | None,
    value: Any,
    key_schema: Schema | None = None,
    key: Any = None,
    topic: str = "dummy",
) -> SourceRecord:
    return SourceRecord({}, {}, topic, None, key_schema, key, schema, value)


def create_record() -> SourceRecord:
    after = row()
    src = source(lsn=1234, db="test_db", table="test_table")
    return record(ENVELOPE, event(ENVELOPE, "c", after=after, source=src))


def read_record() -> SourceRecord:
    return record(ENVELOPE, event(ENVELOPE, "r", after=row(), source=source(lsn=1234)))


def update_record() -> SourceRecord:
    value = event(
        ENVELOPE,
        "u",
        before=row(),
        after=row(name="updatedRecord"),
        source=source(lsn=1234, db="test_db", table="test_table"),
        transaction=transaction(),
    )
    return record(ENVELOPE, value)


DELETE_ENVELOPE = envelope_schema(source_schema=DELETE_SOURCE_SCHEMA)


def delete_record() -> SourceRecord:
    src = source(DELETE_SOURCE_SCHEMA, lsn=1234, version="version!", db="test_db")
    src.put("table", "test_table")
    return record(DELETE_ENVELOPE, event(DELETE_ENVELOPE, "d", before=row(), source=src))


def tombstone_record() -> SourceRecord:
    return record(None, None)


def truncate_record() -> SourceRecord:
    return record(ENVELOPE, event(ENVELOPE, "t", source=source(lsn=1234)))


DEFAULTED_ENVELOPE = envelope_schema(DEFAULTED_SCHEMA)


def create_record_with_optional_null(with_key: bool = False) -> SourceRecord:
    value = event(
        DEFAULTED_ENVELOPE, "c", after=row(DEFAULTED_SCHEMA, name=None), source=source(lsn=1234)
    )
    if with_key:
        return record(
            DEFAULTED_ENVELOPE, value, KEY_SCHEMA_BUILT, Struct(KEY_SCHEMA_BUILT).put("id", 1)
        )
    return record(DEFAULTED_ENVELOPE, value)


def update_record_with_optional_null(with_key: bool = False) -> SourceRecord:
    value = event(
        DEFAULTED_ENVELOPE,
        "u",
        before=row(DEFAULTED_SCHEMA, name=None),
        after=row(DEFAULTED_SCHEMA, name="updatedRecord"),
        source=source(lsn=1234),
        transaction=transaction(),
    )
    if with_key:
        return record(
            DEFAULTED_ENVELOPE, value, KEY_SCHEMA_BUILT, Struct(KEY_SCHEMA_BUILT).put("id", 1)
        )
    return record(DEFAULTED_ENVELOPE, value)


CHANGES_ENVELOPE = envelope_schema(
    extra=(("changes", SchemaBuilder.array(Schema.STRING_SCHEMA).build()),)
)


def update_record_with_changed_fields() -> SourceRecord:
    value = event(
        CHANGES_ENVELOPE,
        "u",
        before=row(),
        after=row(name="updatedRecord"),
        source=source(lsn=1234),
        transaction=transaction(),
        changes=["name"],
    )
    return record(CHANGES_ENVELOPE, value)


def unwrap(**props: str) -> TransformationHarness:
    """The transformation as the runtime runs it: each apply checks the input is unchanged."""
    return TransformationHarness(ExtractNewRecordState, props)


def value_schema(out: ConnectRecord) -> Schema:
    assert out.value_schema is not None
    return out.value_schema


def field_names(out: ConnectRecord) -> list[str]:
    return [f.name for f in value_schema(out).fields or ()]


def field_schema(out: ConnectRecord, name: str) -> Schema | None:
    field = value_schema(out).field(name)
    return None if field is None else field.schema


def header(out: ConnectRecord, key: str) -> Any:
    found = out.headers.all_with_name(key)
    assert len(found) == 1, found
    return found[0].value


ALL_MODES = ["drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"]


# -- tombstones, truncates, deletes ----------------------------------------------------------
def test_tombstone_dropped_by_default() -> None:
    assert unwrap().apply(tombstone_record()) is None


@pytest.mark.parametrize(
    ("mode", "kept"),
    [
        ("drop", False),
        ("tombstone", False),  # the delete becomes the tombstone: the real one goes
        ("rewrite", False),
        ("rewrite-with-tombstone", True),
        ("delete-to-tombstone", False),
    ],
)
def test_tombstone_per_mode(mode: str, kept: bool) -> None:
    tombstone = tombstone_record()
    out = unwrap(**{MODE: mode}).apply(tombstone)
    if kept:
        assert out is tombstone
    else:
        assert out is None


@pytest.mark.parametrize("mode", ALL_MODES)
def test_truncate_dropped(mode: str) -> None:
    assert unwrap(**{MODE: mode}).apply(truncate_record()) is None


def test_delete_dropped() -> None:
    assert unwrap(**{MODE: "drop"}).apply(delete_record()) is None


@pytest.mark.parametrize("props", [{}, {MODE: "tombstone"}])
def test_delete_kept_with_a_null_value(props: dict[str, str]) -> None:
    """``tombstone``, the default: the value null, its schema after's (as Debezium's JDBC
    sink expects a flattened delete)."""
    out = unwrap(**props).apply(delete_record())
    assert out is not None
    assert out.value is None
    assert out.value_schema == RECORD_SCHEMA
    assert out.topic == "dummy"


def test_delete_to_tombstone() -> None:
    xform = unwrap(**{MODE: "delete-to-tombstone"})
    deleted = xform.apply(delete_record())
    assert deleted is not None
    assert (deleted.value_schema, deleted.value) == (None, None)
    assert xform.apply(tombstone_record()) is None


@pytest.mark.parametrize("mode", ["rewrite", "rewrite-with-tombstone"])
def test_delete_rewrite(mode: str) -> None:
    out = unwrap(**{MODE: mode}).apply(delete_record())
    assert out is not None
    assert out.value.get("__deleted") == "true"
    assert (out.value.get("id"), out.value.get("name")) == (1, "myRecord")
    assert field_names(out) == ["id", "name", "__deleted"]
    assert field_schema(out, "__deleted") == OPT_STRING
    assert value_schema(out).name == VALUE_NAME
    out.value.validate()


def test_mode_is_read_in_any_case() -> None:
    out = unwrap(**{MODE: " REWRITE "}).apply(delete_record())
    assert out is not None and out.value.get("__deleted") == "true"


# -- creates, reads, updates -----------------------------------------------------------------
def test_unwrap_create() -> None:
    out = unwrap(**{MODE: "tombstone"}).apply(create_record())
    assert out is not None
    assert out.value.get("id") == 1
    assert out.value.get("name") == "myRecord"
    out.value.validate()


def test_unwrap_read_and_update() -> None:
    xform = unwrap()
    read = xform.apply(read_record())
    update = xform.apply(update_record())
    assert read is not None and update is not None
    assert read.value.get("name") == "myRecord"
    assert update.value.get("name") == "updatedRecord"


def test_output_schema_is_after_s_copy_required() -> None:
    """Debezium copies after's name, version, doc and parameters and fields, not its
    optionality: the value schema of a flattened event is required."""
    out = unwrap().apply(create_record())
    assert out is not None
    schema = out.value_schema
    assert schema is out.value.schema
    assert schema.name == VALUE_NAME
    assert (schema.version, schema.doc) == (3, "a row of customers")
    assert schema.fields == RECORD_SCHEMA.fields
    assert not schema.optional
    assert schema == RECORD_SCHEMA.replace(optional=False)


def test_output_schema_derived_once_per_input_schema() -> None:
    xform = unwrap(**{ADD_FIELDS: "op,source.ts_ms", MODE: "rewrite"})
    first, second = xform.apply(create_record()), xform.apply(update_record())
    deleted = xform.apply(delete_record())
    assert first is not None and second is not None and deleted is not None
    assert first.value_schema is second.value_schema
    # A delete's envelope differs (its source), its row schema does not: same fields out.
    assert deleted.value_schema == first.value_schema
    assert deleted.value_schema is not first.value_schema


def test_unwrap_create_with_optional_default_value() -> None:
    """Outside rewrite modes a row's null stays null (Debezium copies the values as set)."""
    out = unwrap(**{MODE: "tombstone"}).apply(create_record_with_optional_null())
    assert out is not None
    assert out.value.get("id") == 1
    assert out.value.get_without_default("name") is None


def test_rewrite_replaces_null_with_default() -> None:
    out = unwrap(**{MODE: "rewrite"}).apply(create_record_with_optional_null())
    assert out is not None
    assert out.value.get_without_default("name") == "default_str"
    assert out.value.get("__deleted") == "false"


def test_rewrite_keeps_null_without_replace_null_with_default() -> None:
    xform = unwrap(**{MODE: "rewrite", REPLACE_NULL_WITH_DEFAULT: "false"})
    out = xform.apply(create_record_with_optional_null())
    assert out is not None
    assert out.value.get_without_default("name") is None


def test_create_rewrite_with_op_header() -> None:
    out = unwrap(**{MODE: "rewrite", ADD_HEADERS: "op"}).apply(create_record())
    assert out is not None
    assert out.value.get("__deleted") == "false"
    assert len(out.headers) == 1
    assert header(out, "__op") == "c"


@pytest.mark.parametrize(
    "make",
    [
        lambda: record(
            SchemaBuilder.struct().name("unknown").field("id", Schema.INT8_SCHEMA).build(),
            Struct(
                SchemaBuilder.struct().name("unknown").field("id", Schema.INT8_SCHEMA).build()
            ).put("id", 1),
        ),
        lambda: record(
            SchemaBuilder.struct().field("id", Schema.INT8_SCHEMA).build(),
            Struct(SchemaBuilder.struct().field("id", Schema.INT8_SCHEMA).build()).put("id", 1),
        ),
        lambda: record(None, {"before": None, "after": {"id": 1}, "op": "c"}),  # schemaless
        lambda: record(Schema.STRING_SCHEMA, "text"),
    ],
    ids=["named", "unnamed", "schemaless", "primitive"],
)
@pytest.mark.parametrize("props", [{MODE: "tombstone"}, {ADD_HEADERS: "op"}])
def test_non_envelope_records_pass_unchanged(make: Any, props: dict[str, str]) -> None:
    given = make()
    assert unwrap(**props).apply(given) is given


def test_heartbeat_with_add_headers_passes_unchanged() -> None:
    value_schema = (
        SchemaBuilder.struct()
        .name("io.debezium.connector.common.Heartbeat")
        .field("ts_ms", Schema.INT64_SCHEMA)
        .build()
    )
    key_schema = (
        SchemaBuilder.struct()
        .name("op.with.heartbeat.Key")
        .field("id", Schema.STRING_SCHEMA)
        .build()
    )
    heartbeat = record(
        value_schema,
        Struct(value_schema).put("ts_ms", 1),
        key_schema,
        Struct(key_schema).put("id", "123"),
        topic="op.with.heartbeat",
    )
    assert unwrap(**{ADD_HEADERS: "op,source.lsn"}).apply(heartbeat) is heartbeat


def test_record_headers_propagate() -> None:
    given = create_record()
    given.headers.add("application/debezium-test-header", "shouldPropagatePreviousRecordHeaders")
    out = unwrap(**{MODE: "tombstone"}).apply(given)
    assert out is not None
    assert out.value.get("id") == 1
    assert len(out.headers) == 1
    assert header(out, "application/debezium-test-header") == "shouldPropagatePreviousRecordHeaders"


def test_sink_records_keep_their_kind_and_offset() -> None:
    given = create_record()
    sink = SinkRecord("dummy", 3, None, None, given.value_schema, given.value, 42, 1000)
    out = unwrap().apply(sink)
    assert isinstance(out, SinkRecord)
    assert (out.kafka_partition, out.kafka_offset, out.timestamp) == (3, 42, 1000)
    assert out.value.get("name") == "myRecord"


# -- add.fields ------------------------------------------------------------------------------
def test_add_field_and_schema_evolution() -> None:
    xform = unwrap(**{MODE: "tombstone", ADD_FIELDS: "op"})
    out = xform.apply(create_record())
    assert out is not None and out.value.get("__op") == "c"
    assert field_schema(out, "__op") == OPT_STRING

    for started_at in (1694587158123, 1694587158789):
        evolved = (
            SchemaBuilder.struct()
            .field("id", Schema.INT8_SCHEMA)
            .field("name", Schema.STRING_SCHEMA)
            .field("started_at", OPT_INT64)
            .build()
        )
        schema = envelope_schema(evolved)
        after = Struct(evolved).put("id", 1).put("name", "myRecord").put("started_at", started_at)
        out = xform.apply(record(schema, event(schema, "c", after=after, source=source(lsn=1234))))
        assert out is not None
        assert out.value.get("started_at") == started_at
        assert out.value.get("__op") == "c"


def test_add_timestamp() -> None:
    envelope_ts = unwrap(**{MODE: "tombstone", ADD_FIELDS: "ts_ms"}).apply(create_record())
    assert envelope_ts is not None and envelope_ts.value.get("__ts_ms") == 1710032523123
    source_ts = unwrap(**{ADD_FIELDS: "source.ts_ms"}).apply(create_record())
    assert source_ts is not None and source_ts.value.get("__source_ts_ms") == SOURCE_TS_MS


def test_reconfigure_starts_afresh() -> None:
    """Debezium's testAddTimestamp configures one instance twice."""
    xform = ExtractNewRecordState[SourceRecord]()
    xform.configure({MODE: "tombstone", ADD_FIELDS: "ts_ms"})
    assert xform.apply(create_record()).value.get("__ts_ms") is not None  # type: ignore[union-attr]
    xform.configure({ADD_FIELDS: "source.ts_ms"})
    out = xform.apply(create_record())
    assert out is not None
    assert field_schema(out, "__ts_ms") is None
    assert out.value.get("__source_ts_ms") == SOURCE_TS_MS


def test_add_fields_with_prefix() -> None:
    xform = unwrap(**{MODE: "tombstone", ADD_FIELDS: "op , lsn,id", ADD_FIELDS_PREFIX: "prefix."})
    out = xform.apply(update_record())
    assert out is not None
    assert out.value.get("prefix.op") == "u"
    assert out.value.get("prefix.lsn") == 1234
    assert out.value.get("prefix.id") == "571"
    assert field_names(out) == [
        "id",
        "name",
        "prefix.op",
        "prefix.lsn",
        "prefix.id",
    ]
    out.value.validate()


def test_new_field_and_header_mapping() -> None:
    xform = unwrap(
        **{
            MODE: "tombstone",
            ADD_FIELDS: "op:OP, lsn:LSN, id:ID, source.lsn:source_lsn, transaction.total_order:TOTAL_ORDER",
            ADD_FIELDS_PREFIX: "",
            ADD_HEADERS: "op, source.lsn:source_lsn, transaction.id:TXN_ID, transaction.total_order:TOTAL_ORDER",
            ADD_HEADERS_PREFIX: "prefix.",
        }
    )
    out = xform.apply(update_record())
    assert out is not None
    assert out.value.get("OP") == "u"
    assert out.value.get("LSN") == 1234
    assert out.value.get("ID") == "571"
    assert out.value.get("source_lsn") == 1234
    assert out.value.get("TOTAL_ORDER") == 42
    assert len(out.headers) == 4
    assert header(out, "prefix.op") == "u"
    assert header(out, "prefix.source_lsn") == 1234
    assert header(out, "prefix.TXN_ID") == "571"
    assert header(out, "prefix.TOTAL_ORDER") == 42


def test_add_fields_for_missing_optional_field() -> None:
    """``id`` is transaction's, null in a create without a transaction: added, null."""
    out = unwrap(**{MODE: "tombstone", ADD_FIELDS: "op,lsn,id"}).apply(create_record())
    assert out is not None
    assert out.value.get("__op") == "c"
    assert out.value.get("__lsn") == 1234
    assert out.value.get("__id") is None
    assert field_schema(out, "__id") == OPT_STRING
    out.value.validate()


def test_add_fields_specify_struct() -> None:
    xform = unwrap(
        **{MODE: "tombstone", ADD_FIELDS: "op,source.lsn,transaction.id,transaction.total_order"}
    )
    out = xform.apply(update_record())
    assert out is not None
    assert out.value.get("__op") == "u"
    assert out.value.get("__source_lsn") == 1234
    assert out.value.get("__transaction_id") == "571"
    assert out.value.get("__transaction_total_order") == 42
    # Required in source and in the transaction block, optional once added.
    assert field_schema(out, "__source_lsn") == Schema.OPTIONAL_INT32_SCHEMA
    assert field_schema(out, "__transaction_total_order") == OPT_INT64


def test_new_field_not_in_the_event_is_left_out() -> None:
    xform = unwrap(
        **{
            MODE: "tombstone",
            ADD_FIELDS: "notExisting,op:OP, lsn:LSN, id:ID, source.lsn:source_lsn, "
            "transaction.total_order:TOTAL_ORDER, changes:META_SRC_CHANGED",
            ADD_FIELDS_PREFIX: "",
        }
    )
    out = xform.apply(update_record_with_changed_fields())
    assert out is not None
    assert out.value.get("OP") == "u"
    assert out.value.get("LSN") == 1234
    assert out.value.get("ID") == "571"
    assert out.value.get("source_lsn") == 1234
    assert out.value.get("TOTAL_ORDER") == 42
    assert out.value.get("META_SRC_CHANGED") == ["name"]
    assert (
        field_schema(out, "META_SRC_CHANGED")
        == SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build()
    )
    assert field_schema(out, "notExisting") is None


def test_renamed_field_not_in_the_event_is_left_out() -> None:
    xform = unwrap(
        **{
            MODE: "tombstone",
            ADD_FIELDS: "op:OP, lsn:LSN, id:ID, source.lsn:source_lsn, "
            "transaction.total_order:TOTAL_ORDER, notExist:META_SRC_CHANGED",
            ADD_FIELDS_PREFIX: "",
        }
    )
    out = xform.apply(update_record_with_changed_fields())
    assert out is not None
    assert out.value.get("TOTAL_ORDER") == 42
    assert field_schema(out, "META_SRC_CHANGED") is None


def test_envelope_timestamp_fields() -> None:
    xform = unwrap(
        **{
            ADD_FIELDS: "source.table:META_SRC_TABLENAME,source.ts_ms:META_SRC_TS_MS,"
            "source.ts_us:META_SRC_TS_US,source.ts_ns:META_SRC_TS_NS,ts_ms:META_TS_MS,"
            "ts_us:META_TS_US,ts_ns:META_TS_NS,op:META_SRC_OP,source.scn:META_SRC_SCN,"
            "source.snapshot:META_SRC_SNAPSHOT,source.user_name:META_SRC_USER,changes:META_SRC_CHANGES",
            MODE: "rewrite",
        }
    )
    created = dt.datetime(2024, 3, 10, 1, 2, 3, 123, tzinfo=dt.timezone.utc)
    value = event(
        DEFAULTED_ENVELOPE,
        "c",
        after=row(DEFAULTED_SCHEMA, name=None),
        source=source(lsn=1234),
        at=created,
    )
    # Debezium's Instant has nanoseconds: 123456 ns past the second.
    value.put("ts_ns", value.get("ts_ns") + 456)
    out = xform.apply(
        record(DEFAULTED_ENVELOPE, value, KEY_SCHEMA_BUILT, Struct(KEY_SCHEMA_BUILT).put("id", 1))
    )
    assert out is not None
    assert out.value.get("__META_SRC_TS_MS") == 1588252618953
    assert out.value.get("__META_SRC_TS_US") == 1588252618953000
    assert out.value.get("__META_SRC_TS_NS") == 1588252618953000000
    assert out.value.get("__META_TS_MS") == 1710032523000
    assert out.value.get("__META_TS_US") == 1710032523000123
    assert out.value.get("__META_TS_NS") == 1710032523000123456
    assert out.value.get("__META_SRC_TABLENAME") is None
    for absent in (
        "__META_SRC_SCN",
        "__META_SRC_SNAPSHOT",
        "__META_SRC_USER",
        "__META_SRC_CHANGES",
    ):
        assert field_schema(out, absent) is None


def test_add_struct_fields_with_their_schema() -> None:
    """``source`` (a required struct) is added as an optional copy with its fields, where
    Debezium copies the name only and fails; ``transaction`` is optional already."""
    out = unwrap(**{ADD_FIELDS: "source,transaction"}).apply(update_record())
    assert out is not None
    added = field_schema(out, "__source")
    assert added is not None and added.optional and added.fields == SOURCE_SCHEMA.fields
    assert out.value.get("__source").get("lsn") == 1234
    assert field_schema(out, "__transaction") == TRANSACTION_SCHEMA
    assert out.value.get("__transaction") == transaction()
    out.value.validate()


def test_add_fields_of_a_struct_the_envelope_lacks() -> None:
    """Debezium fails with a NullPointerException; the field is looked up at the top."""
    schema = (
        SchemaBuilder.struct()
        .name("bare.Envelope")
        .field("before", RECORD_SCHEMA)
        .field("after", RECORD_SCHEMA)
        .field("op", Schema.STRING_SCHEMA)
        .build()
    )
    value = Struct(schema).put("after", row()).put("op", "c")
    out = unwrap(**{ADD_FIELDS: "op,lsn,id,updateDescription,source.ts_ms"}).apply(
        record(schema, value)
    )
    assert out is not None
    assert field_names(out) == ["id", "name", "__op"]


# -- add.headers -----------------------------------------------------------------------------
def test_add_header() -> None:
    out = unwrap(**{MODE: "tombstone", ADD_HEADERS: "op"}).apply(create_record())
    assert out is not None
    assert len(out.headers) == 1
    assert header(out, "__op") == "c"
    assert out.headers.all_with_name("__op")[0].schema == OPT_STRING


def test_add_headers() -> None:
    out = unwrap(**{MODE: "tombstone", ADD_HEADERS: "op , lsn,id"}).apply(update_record())
    assert out is not None
    assert len(out.headers) == 3
    assert header(out, "__op") == "u"
    assert header(out, "__lsn") == 1234
    assert header(out, "__id") == "571"
    assert out.headers.all_with_name("__lsn")[0].schema == Schema.OPTIONAL_INT32_SCHEMA


def test_add_headers_for_missing_optional_field() -> None:
    out = unwrap(**{MODE: "tombstone", ADD_HEADERS: "op,lsn,id"}).apply(create_record())
    assert out is not None
    assert len(out.headers) == 3
    assert header(out, "__op") == "c"
    assert header(out, "__lsn") == 1234
    assert header(out, "__id") is None


def test_add_headers_specify_struct() -> None:
    xform = unwrap(
        **{
            MODE: "tombstone",
            ADD_HEADERS: "op,source.lsn,transaction.id,transaction.total_order",
            ADD_HEADERS_PREFIX: "prefix.",
        }
    )
    out = xform.apply(update_record())
    assert out is not None
    assert len(out.headers) == 4
    assert header(out, "prefix.op") == "u"
    assert header(out, "prefix.source_lsn") == 1234
    assert header(out, "prefix.transaction_id") == "571"
    assert header(out, "prefix.transaction_total_order") == 42


def test_add_headers_go_after_the_record_s_own() -> None:
    given = update_record()
    given.headers.add("mine", "x")
    out = unwrap(**{ADD_HEADERS: "op"}).apply(given)
    assert out is not None
    assert [h.key for h in out.headers] == ["mine", "__op"]
    assert [h.key for h in given.headers] == ["mine"]


def test_add_headers_handle_delete_rewrite_and_tombstone() -> None:
    xform = unwrap(**{MODE: "rewrite-with-tombstone", ADD_HEADERS: "op,source.lsn"})
    out = xform.apply(delete_record())
    assert out is not None
    assert out.value.get("__deleted") == "true"
    assert header(out, "__op") == "d"
    assert header(out, "__source_lsn") == 1234

    given = tombstone_record()
    tombstone = xform.apply(given)
    assert tombstone is not None and tombstone is not given
    assert tombstone.value is None
    assert header(tombstone, "__op") == "d"
    assert tombstone.headers.all_with_name("__op")[0].schema == Schema.STRING_SCHEMA
    assert len(given.headers) == 0


def test_schema_change_event_with_operation_header() -> None:
    unknown_schema = SchemaBuilder.struct().name("unknown").field("id", Schema.INT8_SCHEMA).build()
    unknown = record(unknown_schema, Struct(unknown_schema).put("id", 1))
    assert unwrap(**{MODE: "tombstone", ADD_HEADERS: "op"}).apply(unknown) is unknown


# -- add.fields on deletes -------------------------------------------------------------------
def test_add_field_handle_delete_rewrite() -> None:
    out = unwrap(**{MODE: "rewrite", ADD_FIELDS: "op"}).apply(delete_record())
    assert out is not None
    assert out.value.get("__deleted") == "true"
    assert out.value.get("__op") == "d"


def test_add_fields_handle_delete_rewrite() -> None:
    out = unwrap(**{MODE: "rewrite", ADD_FIELDS: "op,lsn"}).apply(delete_record())
    assert out is not None
    assert out.value.get("__deleted") == "true"
    assert out.value.get("__op") == "d"
    assert out.value.get("__lsn") == 1234
    assert field_names(out) == ["id", "name", "__deleted", "__op", "__lsn"]


def test_add_fields_handle_delete_rewrite_and_tombstone() -> None:
    xform = unwrap(**{MODE: "rewrite-with-tombstone", ADD_FIELDS: "op,lsn"})
    out = xform.apply(delete_record())
    assert out is not None
    assert out.value.get("__deleted") == "true"
    assert out.value.get("__op") == "d"
    assert out.value.get("__lsn") == 1234
    tombstone = xform.apply(tombstone_record())
    assert tombstone is not None and tombstone.value is None


def test_add_fields_specify_struct_handle_delete_rewrite() -> None:
    out = unwrap(**{MODE: "rewrite", ADD_FIELDS: "op,source.lsn"}).apply(delete_record())
    assert out is not None
    assert out.value.get("__deleted") == "true"
    assert out.value.get("__op") == "d"
    assert out.value.get("__source_lsn") == 1234


def test_add_fields_not_added_to_a_null_valued_delete() -> None:
    out = unwrap(**{MODE: "tombstone", ADD_FIELDS: "op", ADD_HEADERS: "op"}).apply(delete_record())
    assert out is not None
    assert out.value is None and out.value_schema == RECORD_SCHEMA
    assert header(out, "__op") == "d"


# -- route.by.field --------------------------------------------------------------------------
def test_create_topic_routing_field() -> None:
    out = unwrap(**{MODE: "tombstone", ROUTE_BY_FIELD: "name"}).apply(create_record())
    assert out is not None and out.topic == "myRecord"


def test_update_topic_routing_field() -> None:
    out = unwrap(**{MODE: "tombstone", ROUTE_BY_FIELD: "name"}).apply(update_record())
    assert out is not None and out.topic == "updatedRecord"


@pytest.mark.parametrize("mode", ["tombstone", "rewrite", "delete-to-tombstone"])
def test_delete_topic_routing_field(mode: str) -> None:
    out = unwrap(**{MODE: mode, ROUTE_BY_FIELD: "name"}).apply(delete_record())
    assert out is not None and out.topic == "myRecord"


def test_routing_on_a_null_field_keeps_the_topic() -> None:
    out = unwrap(**{ROUTE_BY_FIELD: "name"}).apply(create_record_with_optional_null())
    assert out is not None and out.topic == "dummy"
    # In rewrite mode the row's null took its default first, as Debezium's InsertField does.
    rewritten = unwrap(**{ROUTE_BY_FIELD: "name", MODE: "rewrite"}).apply(
        create_record_with_optional_null()
    )
    assert rewritten is not None and rewritten.topic == "default_str"


@pytest.mark.parametrize(
    ("field", "message"),
    [("nope", "^nope is not a valid field name$"), ("id", "^Field 'id' is not of type STRING$")],
)
def test_routing_by_a_field_that_is_no_string_fails(field: str, message: str) -> None:
    xform = unwrap(**{ROUTE_BY_FIELD: field, ADD_FIELDS: "op"})
    with pytest.raises(DataException, match=message):
        xform.apply(create_record())
    with pytest.raises(DataException, match=message):
        xform.apply(delete_record())


def test_routing_cannot_use_an_added_field() -> None:
    """Debezium routes before it adds the fields."""
    with pytest.raises(DataException, match="^__op is not a valid field name$"):
        unwrap(**{ROUTE_BY_FIELD: "__op", ADD_FIELDS: "op"}).apply(create_record())


# -- drop.fields.header.name -----------------------------------------------------------------
DROP_HEADER = "drop-fields"
DROP_FIELDS = ["id", "name"]
DROP_HEADER_SCHEMA = SchemaBuilder.array(OPT_STRING).optional().name(DROP_HEADER).build()


def with_drop_header(given: SourceRecord) -> SourceRecord:
    given.headers.add(DROP_HEADER, list(DROP_FIELDS), DROP_HEADER_SCHEMA)
    return given


def test_drop_fields_from_value_with_schema_compatibility() -> None:
    xform = unwrap(**{MODE: "drop", DROP_FIELDS_HEADER_NAME: DROP_HEADER})
    for make in (create_record_with_optional_null, update_record_with_optional_null):
        out = xform.apply(with_drop_header(make()))
        assert out is not None
        assert out.key is None and out.key_schema is None
        assert field_schema(out, "name") is None  # optional: dropped
        assert out.value.get("id") == 1  # required: kept
        keyed = xform.apply(with_drop_header(make(with_key=True)))
        assert keyed is not None
        assert keyed.key_schema == KEY_SCHEMA_BUILT and keyed.key.get("id") == 1
        assert field_schema(keyed, "name") is None
        assert keyed.value.get("id") == 1
    assert xform.apply(with_drop_header(delete_record())) is None
    assert xform.apply(with_drop_header(tombstone_record())) is None


def test_drop_fields_from_value_without_schema_compatibility() -> None:
    xform = unwrap(
        **{
            MODE: "drop",
            DROP_FIELDS_HEADER_NAME: DROP_HEADER,
            DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE: "false",
        }
    )
    for make in (create_record_with_optional_null, update_record_with_optional_null):
        out = xform.apply(with_drop_header(make()))
        assert out is not None
        assert field_names(out) == []
        assert out.value == Struct(value_schema(out))
        keyed = xform.apply(with_drop_header(make(with_key=True)))
        assert keyed is not None
        assert keyed.key.get("id") == 1  # the key is left alone
        assert field_names(keyed) == []
    assert xform.apply(with_drop_header(delete_record())) is None
    assert xform.apply(with_drop_header(tombstone_record())) is None


def test_drop_fields_from_value_and_key_without_schema_compatibility() -> None:
    xform = unwrap(
        **{
            MODE: "drop",
            DROP_FIELDS_HEADER_NAME: DROP_HEADER,
            DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE: "false",
            DROP_FIELDS_FROM_KEY: "true",
        }
    )
    for make in (create_record_with_optional_null, update_record_with_optional_null):
        out = xform.apply(with_drop_header(make()))
        assert out is not None
        assert out.key is None and out.key_schema is None
        assert out.value == Struct(value_schema(out)) and field_names(out) == []
        keyed = xform.apply(with_drop_header(make(with_key=True)))
        assert keyed is not None
        assert keyed.key_schema is not None and keyed.key_schema.fields == []
        assert keyed.key == Struct(keyed.key_schema)
        assert field_names(keyed) == []


def test_drop_fields_without_the_header_or_with_an_empty_list() -> None:
    xform = unwrap(
        **{DROP_FIELDS_HEADER_NAME: DROP_HEADER, DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE: "false"}
    )
    plain = xform.apply(create_record())
    assert plain is not None and field_names(plain) == ["id", "name"]
    given = create_record()
    given.headers.add(DROP_HEADER, [], DROP_HEADER_SCHEMA)
    empty = xform.apply(given)
    assert empty is not None and field_names(empty) == ["id", "name"]
    bad = create_record()
    bad.headers.add(DROP_HEADER, "id")
    with pytest.raises(DataException, match="must hold a list of field names"):
        xform.apply(bad)


def test_drop_fields_on_deletes_before_adding_fields() -> None:
    """On deletes Debezium drops first, then adds: an added field of a dropped name stays;
    on creates and updates it adds first."""
    xform = unwrap(
        **{
            MODE: "rewrite",
            ADD_FIELDS: "op",
            DROP_FIELDS_HEADER_NAME: DROP_HEADER,
            DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE: "false",
        }
    )
    deleted = delete_record()
    deleted.headers.add(DROP_HEADER, ["name", "__op"], DROP_HEADER_SCHEMA)
    out = xform.apply(deleted)
    assert out is not None
    assert field_names(out) == ["id", "__deleted", "__op"]
    assert (out.value.get("id"), out.value.get("__op")) == (1, "d")
    assert value_schema(out).name == VALUE_NAME
    created = create_record()
    created.headers.add(DROP_HEADER, ["name", "__op"], DROP_HEADER_SCHEMA)
    out = xform.apply(created)
    assert out is not None
    assert field_names(out) == ["id", "__deleted"]


# -- deprecated keys -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("props", "delete", "tombstone_kept"),
    [
        ({"delete.handling.mode": "drop"}, "dropped", False),
        ({"delete.handling.mode": "none"}, "null", False),
        ({"delete.handling.mode": "rewrite"}, "rewritten", False),
        ({"drop.tombstones": "false"}, "dropped", True),
        ({"delete.handling.mode": "rewrite", "drop.tombstones": "false"}, "rewritten", True),
        ({"delete.handling.mode": "NONE", "drop.tombstones": "false"}, "null", True),
    ],
)
def test_deprecated_keys_apply_without_the_new_one(
    props: dict[str, str], delete: str, tombstone_kept: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        xform = unwrap(**props)
    assert "deprecated" in caplog.text
    out = xform.apply(delete_record())
    if delete == "dropped":
        assert out is None
    elif delete == "null":
        assert out is not None and out.value is None and out.value_schema == RECORD_SCHEMA
    else:
        assert out is not None and out.value.get("__deleted") == "true"
    created = xform.apply(create_record())
    assert created is not None
    assert (field_schema(created, "__deleted") is not None) == (delete == "rewritten")
    given = tombstone_record()
    assert (xform.apply(given) is given) == tombstone_kept


def test_new_key_wins_over_the_deprecated_ones(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        xform = unwrap(
            **{MODE: "drop", "delete.handling.mode": "rewrite", "drop.tombstones": "false"}
        )
    assert "ignored" in caplog.text
    assert xform.apply(delete_record()) is None
    assert xform.apply(tombstone_record()) is None


# -- configuration ---------------------------------------------------------------------------
def test_reject_invalid_delete_handling_mode() -> None:
    with pytest.raises(
        ConfigException,
        match="^Invalid value jbsdfkjsd for configuration delete.tombstone.handling.mode: Value "
        "must be one of drop, tombstone, rewrite, rewrite-with-tombstone, delete-to-tombstone$",
    ):
        unwrap(**{MODE: "jbsdfkjsd"})
    with pytest.raises(
        ConfigException,
        match="for configuration delete.handling.mode: Value must be one of drop, rewrite, none$",
    ):
        unwrap(**{"delete.handling.mode": "keep"})
    with pytest.raises(
        ConfigException, match="drop.tombstones: Expected value to be either true or false"
    ):
        unwrap(**{"drop.tombstones": "maybe"})


@pytest.mark.parametrize("mode", ALL_MODES)
def test_accept_valid_delete_handling_mode(mode: str) -> None:
    unwrap(**{MODE: mode})


@pytest.mark.parametrize("key", [ADD_FIELDS, ADD_HEADERS])
@pytest.mark.parametrize("spec", ["a:b:c", "source.lsn.x", ":NEW", "op:", ".lsn", "source."])
def test_reject_malformed_field_references(key: str, spec: str) -> None:
    with pytest.raises(
        ConfigException, match=f"^Invalid value {spec} for configuration {key}: Expected"
    ):
        unwrap(**{key: f"op,{spec}"})


def test_reject_two_fields_added_under_one_name() -> None:
    with pytest.raises(ConfigException, match="Two fields would be added as ts_ms"):
        unwrap(**{ADD_FIELDS: "ts_ms,source.ts_ms:ts_ms"})
    unwrap(**{ADD_HEADERS: "op,op"})  # headers may repeat


def test_empty_list_items_are_ignored() -> None:
    out = unwrap(**{ADD_FIELDS: "op,,lsn,"}).apply(create_record())
    assert out is not None
    assert field_names(out) == ["id", "name", "__op", "__lsn"]


def test_config_def_defaults() -> None:
    defaults = {k.name: k.default for k in CONFIG_DEF.config_keys.values()}
    assert defaults == {
        "delete.tombstone.handling.mode": "tombstone",
        "delete.handling.mode": "drop",
        "drop.tombstones": True,
        "route.by.field": "",
        "add.fields.prefix": "__",
        "add.fields": [],
        "add.headers.prefix": "__",
        "add.headers": [],
        "drop.fields.header.name": None,
        "drop.fields.from.key": False,
        "drop.fields.keep.schema.compatible": True,
        "replace.null.with.default": True,
    }
    assert ExtractNewRecordState().config() is CONFIG_DEF
    errors = {v.name: v.error_messages for v in CONFIG_DEF.validate({MODE: "x"})}
    assert errors[MODE] and not errors[ADD_FIELDS]


# -- errors ----------------------------------------------------------------------------------
def test_envelope_without_after_fails() -> None:
    schema = SchemaBuilder.struct().name("odd.Envelope").field("op", Schema.STRING_SCHEMA).build()
    with pytest.raises(DataException, match="^Unknown field: after$"):
        unwrap().apply(record(schema, Struct(schema).put("op", "c")))


def test_envelope_value_not_a_struct_fails() -> None:
    with pytest.raises(
        DataException,
        match=r"^Only Struct objects supported for \[field extraction\], found: dict$",
    ):
        unwrap().apply(record(ENVELOPE, {"op": "c"}))


def test_row_not_a_struct_fails() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("mongo.Envelope")
        .field("before", OPT_STRING)
        .field("after", OPT_STRING)
        .field("op", Schema.STRING_SCHEMA)
        .build()
    )
    created = record(schema, Struct(schema).put("after", '{"_id": 1}').put("op", "c"))
    with pytest.raises(
        DataException,
        match=r"^Only Struct objects supported for \[source field insertion\], found: str$",
    ):
        unwrap().apply(created)
    with pytest.raises(
        DataException, match=r"\[Read record to set topic routing for CREATE / UPDATE\]"
    ):
        unwrap(**{ROUTE_BY_FIELD: "x"}).apply(created)
    deleted = record(schema, Struct(schema).put("before", '{"_id": 1}').put("op", "d"))
    with pytest.raises(DataException, match=r"\[source field insertion\]"):
        unwrap(**{MODE: "rewrite"}).apply(deleted)
    null = unwrap().apply(deleted)
    assert null is not None and null.value is None


def test_added_name_clashing_with_a_column_fails() -> None:
    with pytest.raises(DataException, match="field name duplication id"):
        unwrap(**{ADD_FIELDS: "id", ADD_FIELDS_PREFIX: ""}).apply(update_record())


def test_headers_object_of_the_input_is_not_shared() -> None:
    given = create_record()
    given.headers.add("mine", "x")
    out = unwrap().apply(given)
    assert out is not None
    assert out.headers == Headers([("mine", "x")]) and out.headers is not given.headers
