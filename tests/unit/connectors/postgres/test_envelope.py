"""Debezium's PostgreSQL record shapes (connectors/postgres/envelope.py) against Debezium's code
and tests: every schema's name, version, field order, optionality, Enum parameters and
defaults, and the values each function builds.

The expected schemas are written out here field by field from the Java sources (paths in
the debezium/debezium repository), not derived from the module under test.
"""

from __future__ import annotations

import json

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct, Type
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connectors.change_capture import envelope as core
from airflow_provider_connect.connectors.change_capture import heartbeat, topics, transactions
from airflow_provider_connect.connectors.postgres import envelope as env

# One instant: 2024-01-02T03:04:05.123456Z.
TS_US = 1_704_164_645_123_456
TS_MS = TS_US // 1000
TS_NS = TS_US * 1000


def fields(schema: Schema) -> list[tuple[str, Type, bool]]:
    assert schema.fields is not None
    return [(f.name, f.schema.type, f.schema.optional) for f in schema.fields]


def source(**overrides: object) -> Struct:
    args: dict[str, object] = {
        "version": "0.1.0",
        "name": "server1",
        "ts_ms": TS_MS,
        "snapshot": "false",
        "db": "postgres",
        "schema": "public",
        "table": "orders",
        "tx_id": 767,
        "lsn": 22910504,
        "sequence": env.source_sequence(22910216, 22910504),
        "xmin": None,
        "ts_us": TS_US,
        "ts_ns": TS_NS,
    }
    args.update(overrides)
    return env.source_struct(**args)  # type: ignore[arg-type]


def row_schema(name: str = "server1.public.orders") -> Schema:
    return (
        SchemaBuilder.struct()
        .name(f"{name}.Value")
        .optional()
        .field("id", Schema.INT32_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )


# -- op codes: io/debezium/data/Envelope.java, enum Operation ---------------------------------
def test_op_codes_are_debeziums() -> None:
    assert (
        core.OP_READ,
        core.OP_CREATE,
        core.OP_UPDATE,
        core.OP_DELETE,
        core.OP_TRUNCATE,
        core.OP_MESSAGE,
    ) == ("r", "c", "u", "d", "t", "m")


# -- source schema -----------------------------------------------------------------------------
def test_snapshot_enum_is_snapshot_record_schema() -> None:
    # debezium-connector-common/.../schema/SchemaFactory.java snapshotRecordSchema(): Enum of the
    # SnapshotRecord names lowercased, in declaration order (connector/SnapshotRecord.java),
    # version 1, default "false", optional. io/debezium/data/Enum.java: name
    # io.debezium.data.Enum, parameter "allowed", comma-joined (EnumeratedValues).
    snapshot = env.SOURCE_SCHEMA.field("snapshot")
    assert snapshot is not None
    schema = snapshot.schema
    assert schema.type is Type.STRING
    assert schema.name == "io.debezium.data.Enum"
    assert schema.version == 1
    assert schema.parameters == {
        "allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
    }
    assert schema.default_value == "false"
    assert schema.optional
    assert schema == core.SNAPSHOT_SCHEMA
    assert core.SNAPSHOT_VALUES == (
        "true",
        "first",
        "first_in_data_collection",
        "last_in_data_collection",
        "last",
        "false",
        "incremental",
    )


def test_source_schema_is_debeziums() -> None:
    # debezium-connector-postgres/src/test/.../postgresql/SourceInfoTest.java schemaIsCorrect():
    # the common fields of SchemaFactory.sourceInfoSchemaBuilder() then those of
    # PostgresSourceInfoStructMaker.init().
    expected = (
        SchemaBuilder.struct()
        .name("io.debezium.connector.postgresql.Source")
        .version(1)  # SchemaFactory.SOURCE_INFO_DEFAULT_SCHEMA_VERSION
        .field("version", Schema.STRING_SCHEMA)
        .field("connector", Schema.STRING_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("ts_ms", Schema.INT64_SCHEMA)
        .field(
            "snapshot",
            SchemaBuilder.string()
            .name("io.debezium.data.Enum")
            .version(1)
            .parameter(
                "allowed",
                "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental",
            )
            .default_value("false")
            .optional(),
        )
        .field("db", Schema.STRING_SCHEMA)
        .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
        .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
        .field("schema", Schema.STRING_SCHEMA)
        .field("table", Schema.STRING_SCHEMA)
        .field("txId", Schema.OPTIONAL_INT64_SCHEMA)
        .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
        .field("xmin", Schema.OPTIONAL_INT64_SCHEMA)
        .field("origin", Schema.OPTIONAL_STRING_SCHEMA)
        .field("origin_lsn", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )
    assert expected == env.SOURCE_SCHEMA
    assert not env.SOURCE_SCHEMA.optional
    assert fields(env.SOURCE_SCHEMA) == [
        ("version", Type.STRING, False),
        ("connector", Type.STRING, False),
        ("name", Type.STRING, False),
        ("ts_ms", Type.INT64, False),
        ("snapshot", Type.STRING, True),
        ("db", Type.STRING, False),
        ("sequence", Type.STRING, True),
        ("ts_us", Type.INT64, True),
        ("ts_ns", Type.INT64, True),
        ("schema", Type.STRING, False),
        ("table", Type.STRING, False),
        ("txId", Type.INT64, True),
        ("lsn", Type.INT64, True),
        ("xmin", Type.INT64, True),
        ("origin", Type.STRING, True),
        ("origin_lsn", Type.INT64, True),
    ]


# -- source values -----------------------------------------------------------------------------
def test_source_struct_streaming() -> None:
    s = source(xmin=1234)
    assert s.schema is env.SOURCE_SCHEMA
    assert s.items() == [
        ("version", "0.1.0"),
        ("connector", "postgresql"),
        ("name", "server1"),
        ("ts_ms", TS_MS),
        ("snapshot", "false"),
        ("db", "postgres"),
        ("sequence", '["22910216","22910504"]'),
        ("ts_us", TS_US),
        ("ts_ns", TS_NS),
        ("schema", "public"),
        ("table", "orders"),
        ("txId", 767),
        ("lsn", 22910504),
        ("xmin", 1234),
        ("origin", None),
        ("origin_lsn", None),
    ]
    # SnapshotRecord.toSource leaves FALSE unset: the default is read back.
    assert s.get_without_default("snapshot") is None
    s.validate()


@pytest.mark.parametrize("last_commit_lsn", [22910216, None])
def test_streamed_source_blocks_are_source_structs(last_commit_lsn: int | None) -> None:
    blocks = env.StreamedSource(
        version="0.1.0", name="server1", db="postgres", schema="public", table="orders"
    )
    block = blocks.block(TS_US, 767, 22910504, last_commit_lsn)
    expected = source(sequence=env.source_sequence(last_commit_lsn, 22910504))
    assert block == expected
    assert block.get_without_default("snapshot") is None
    block.validate()
    # Each block is a struct of its own: the next one leaves it as it was.
    blocks.block(TS_US + 1, 768, 22910600, 22910504)
    assert block == expected


def test_source_struct_snapshot_values_are_set() -> None:
    for value in ("true", "first", "first_in_data_collection", "last_in_data_collection", "last"):
        s = source(snapshot=value)
        assert s.get_without_default("snapshot") == value


def test_source_struct_incremental_drops_tx_id_lsn_and_xmin() -> None:
    # PostgresSourceInfoStructMaker.struct(): txId, lsn, xmin only when snapshot != INCREMENTAL.
    s = source(snapshot="incremental", xmin=9)
    assert s.get("snapshot") == "incremental"
    assert (s.get("txId"), s.get("lsn"), s.get("xmin")) == (None, None, None)


def test_source_struct_origin() -> None:
    s = source(origin="dc1_postgres", origin_lsn=26523000)
    assert (s.get("origin"), s.get("origin_lsn")) == ("dc1_postgres", 26523000)


def test_source_struct_derives_ts_us_and_ts_ns() -> None:
    # AbstractSourceInfoStructMaker.commonStruct(): ts_us and ts_ns always set from one Instant.
    s = source(ts_us=None, ts_ns=None)
    assert (s.get("ts_ms"), s.get("ts_us"), s.get("ts_ns")) == (
        TS_MS,
        TS_MS * 1000,
        TS_MS * 1_000_000,
    )
    s = source(ts_us=TS_US, ts_ns=None)
    assert s.get("ts_ns") == TS_NS
    s = source(ts_us=None, ts_ns=TS_NS + 789)
    assert (s.get("ts_us"), s.get("ts_ns")) == (TS_US, TS_NS + 789)
    # Before the epoch: floor, as Instant's epochSecond/nano arithmetic.
    s = source(ts_ms=-1, ts_us=None, ts_ns=-1)
    assert s.get("ts_us") == -1


def test_source_struct_without_optional_parts() -> None:
    s = env.source_struct(
        version="0.1.0",
        name="server1",
        ts_ms=TS_MS,
        snapshot="last",
        db="postgres",
        schema="public",
        table="orders",
        tx_id=None,
        lsn=None,
    )
    assert s.get("sequence") is None
    assert (s.get("txId"), s.get("lsn"), s.get("xmin")) == (None, None, None)
    s.validate()


@pytest.mark.parametrize(
    "overrides",
    [
        {"snapshot": "False"},
        {"snapshot": "maybe"},
        {"tx_id": "767"},
        {"lsn": True},
        {"lsn": 2**64},
        {"schema": None},
        {"ts_ms": 1.5},
    ],
)
def test_source_struct_rejects_invalid_values(overrides: dict[str, object]) -> None:
    with pytest.raises(DataException):
        source(**overrides)


def test_source_sequence_is_jacksons_list_of_two_strings() -> None:
    # postgresql/SourceInfo.java sequence(): [lastCommitLsn, lsn] as strings, null if unknown.
    assert env.source_sequence(22910216, 22910504) == '["22910216","22910504"]'
    assert env.source_sequence(None, 22910504) == '[null,"22910504"]'
    assert env.source_sequence(None, None) == "[null,null]"
    # PostgresConnectorIT.getSequence reads it as Long[].
    assert [int(x) for x in json.loads(env.source_sequence(1, 2))] == [1, 2]


def test_source_snapshot_default_written_by_json_converter() -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"})
    written = json.loads(converter.from_connect_data("t", env.SOURCE_SCHEMA, source()) or b"")
    assert written["snapshot"] == "false"
    assert written["connector"] == "postgresql"


# -- envelope ----------------------------------------------------------------------------------
def test_envelope_schema_is_debeziums() -> None:
    # relational/TableSchemaBuilder.create(): withRecord (before, after), withSource,
    # withTransaction; SchemaFactory.datatypeEnvelopeSchema().build() then adds op (required,
    # Envelope.OPERATION_REQUIRED), ts_ms, ts_us, ts_ns; version Envelope.SCHEMA_VERSION = 2,
    # name Envelope.schemaName(topic) = topic + ".Envelope".
    name = "server1.public.orders"
    row = row_schema(name)
    schema = env.envelope_schema(name, row, transaction=True)
    expected = (
        SchemaBuilder.struct()
        .name("server1.public.orders.Envelope")
        .version(2)
        .field("before", row)
        .field("after", row)
        .field("source", env.SOURCE_SCHEMA)
        .field(
            "transaction",
            SchemaBuilder.struct()
            .optional()
            .name("event.block")
            .version(1)
            .field("id", Schema.STRING_SCHEMA)
            .field("total_order", Schema.INT64_SCHEMA)
            .field("data_collection_order", Schema.INT64_SCHEMA),
        )
        .field("op", Schema.STRING_SCHEMA)
        .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )
    assert schema == expected
    assert not schema.optional
    assert fields(schema) == [
        ("before", Type.STRUCT, True),
        ("after", Type.STRUCT, True),
        ("source", Type.STRUCT, False),
        ("transaction", Type.STRUCT, True),
        ("op", Type.STRING, False),
        ("ts_ms", Type.INT64, True),
        ("ts_us", Type.INT64, True),
        ("ts_ns", Type.INT64, True),
    ]
    after = schema.field("after")
    assert after is not None and after.schema is row  # used as is when already right


def test_envelope_schema_without_transaction() -> None:
    schema = env.envelope_schema("server1.public.orders", row_schema(), transaction=False)
    assert [name for name, _, _ in fields(schema)] == [
        "before",
        "after",
        "source",
        "op",
        "ts_ms",
        "ts_us",
        "ts_ns",
    ]
    assert schema.name == "server1.public.orders.Envelope"
    assert schema.version == 2


def test_envelope_schema_names_and_makes_the_row_schema_optional() -> None:
    bare = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()
    schema = env.envelope_schema("p.s.t", bare, transaction=True)
    before, after = schema.field("before"), schema.field("after")
    assert before is not None and after is not None
    assert before.schema == after.schema
    assert after.schema.name == "p.s.t.Value"
    assert after.schema.optional
    assert fields(after.schema) == [("id", Type.INT32, False)]


def test_envelope_schema_needs_a_struct() -> None:
    with pytest.raises(DataException):
        env.envelope_schema("p.s.t", Schema.INT32_SCHEMA, transaction=True)


def test_envelope_values_per_op() -> None:
    name = "server1.public.orders"
    row = row_schema(name)
    schema = env.envelope_schema(name, row, transaction=True)
    old = Struct.of(row, {"id": 1, "note": "a"})
    new = Struct.of(row, {"id": 1, "note": "b"})
    src = source()
    processed_us = TS_US + 5_000

    read = core.envelope_value(
        schema, op=core.OP_READ, source=src, ts_ms=processed_us // 1000, after=new
    )
    assert read.items() == [
        ("before", None),
        ("after", new),
        ("source", src),
        ("transaction", None),
        ("op", "r"),
        ("ts_ms", processed_us // 1000),
        ("ts_us", processed_us // 1000 * 1000),
        ("ts_ns", processed_us // 1000 * 1_000_000),
    ]
    update = core.envelope_value(
        schema,
        op=core.OP_UPDATE,
        source=src,
        ts_ms=processed_us // 1000,
        ts_us=processed_us,
        before=old,
        after=new,
        transaction=transactions.transaction_block("767:22910504", 2, 1),
    )
    assert (update.get("before"), update.get("after")) == (old, new)
    assert update.get("ts_ns") == processed_us * 1000
    assert update.get("transaction").get("total_order") == 2
    delete = core.envelope_value(schema, op=core.OP_DELETE, source=src, ts_ms=1, before=old)
    assert (delete.get("before"), delete.get("after"), delete.get("op")) == (old, None, "d")
    truncate = core.envelope_value(schema, op=core.OP_TRUNCATE, source=src, ts_ms=1)
    assert (truncate.get("before"), truncate.get("after"), truncate.get("op")) == (None, None, "t")
    for value in (read, update, delete, truncate):
        value.validate()


def test_envelope_value_rejects_misfits() -> None:
    name = "server1.public.orders"
    row = row_schema(name)
    other_row = row_schema("server1.public.other")
    with_tx = env.envelope_schema(name, row, transaction=True)
    without_tx = env.envelope_schema(name, row, transaction=False)
    src = source()
    with pytest.raises(DataException, match="op"):
        core.envelope_value(with_tx, op="x", source=src, ts_ms=1)
    with pytest.raises(DataException, match="after"):
        core.envelope_value(
            with_tx, op="c", source=src, ts_ms=1, after=Struct.of(other_row, {"id": 1})
        )
    with pytest.raises(DataException, match="transaction"):
        core.envelope_value(
            without_tx,
            op="c",
            source=src,
            ts_ms=1,
            transaction=transactions.transaction_block("1:2", 1, 1),
        )
    # Without a transaction block the envelope without the field takes the value.
    core.envelope_value(without_tx, op="c", source=src, ts_ms=1, after=Struct.of(row, {"id": 1}))


# -- transaction metadata ----------------------------------------------------------------------
def test_transaction_schemas_are_debeziums() -> None:
    # SchemaFactory.transactionBlockSchema(), transactionEventCountPerDataCollectionSchema(),
    # transactionKeySchema(), transactionValueSchema(); field names from
    # pipeline/txmetadata/TransactionStructMaker.java.
    block = transactions.TRANSACTION_BLOCK_SCHEMA
    assert (block.name, block.version, block.optional) == ("event.block", 1, True)
    assert fields(block) == [
        ("id", Type.STRING, False),
        ("total_order", Type.INT64, False),
        ("data_collection_order", Type.INT64, False),
    ]
    collection = transactions.TRANSACTION_EVENT_COUNT_SCHEMA
    assert (collection.name, collection.version, collection.optional) == (
        "event.collection",
        1,
        True,
    )
    assert fields(collection) == [
        ("data_collection", Type.STRING, False),
        ("event_count", Type.INT64, False),
    ]
    key = transactions.TRANSACTION_KEY_SCHEMA
    assert (key.name, key.version, key.optional) == (
        "io.debezium.connector.common.TransactionMetadataKey",
        1,
        False,
    )
    assert fields(key) == [("id", Type.STRING, False)]
    value = transactions.TRANSACTION_VALUE_SCHEMA
    assert (value.name, value.version, value.optional) == (
        "io.debezium.connector.common.TransactionMetadataValue",
        1,
        False,
    )
    assert fields(value) == [
        ("status", Type.STRING, False),
        ("id", Type.STRING, False),
        ("event_count", Type.INT64, True),
        ("data_collections", Type.ARRAY, True),
        ("ts_ms", Type.INT64, False),
    ]
    data_collections = value.field("data_collections")
    assert data_collections is not None
    assert data_collections.schema.value_schema == collection


def test_transaction_id_is_xid_colon_lsn() -> None:
    # postgresql/pipeline/txmetadata/PostgresTransactionMonitor.adjustTxId(): "%s:%s".
    assert env.transaction_id(767, 22910504) == "767:22910504"


def test_transaction_block() -> None:
    block = transactions.transaction_block("767:22910504", 2, 1)
    assert block.schema is transactions.TRANSACTION_BLOCK_SCHEMA
    assert block.items() == [
        ("id", "767:22910504"),
        ("total_order", 2),
        ("data_collection_order", 1),
    ]


def test_transaction_begin() -> None:
    # AbstractTransactionStructMaker.buildBeginTransactionValue(); AbstractConnectorTest
    # .assertBeginTransaction(): status BEGIN, event_count null, key id = value id.
    key, value = transactions.transaction_begin("767:22910504", TS_MS)
    assert key.schema is transactions.TRANSACTION_KEY_SCHEMA
    assert key.items() == [("id", "767:22910504")]
    assert value.schema is transactions.TRANSACTION_VALUE_SCHEMA
    assert value.items() == [
        ("status", "BEGIN"),
        ("id", "767:22910504"),
        ("event_count", None),
        ("data_collections", None),
        ("ts_ms", TS_MS),
    ]


def test_transaction_end() -> None:
    # AbstractTransactionStructMaker.buildEndTransactionValue(); TransactionMetadataIT:
    # data_collections {"s1.a": 1, "s2.a": 1}, event_count 2.
    key, value = transactions.transaction_end("767:22910504", TS_MS, 2, {"s1.a": 1, "s2.a": 1})
    assert key.items() == [("id", "767:22910504")]
    assert value.get("status") == "END"
    assert value.get("id") == "767:22910504"
    assert value.get("event_count") == 2
    assert value.get("ts_ms") == TS_MS
    collections = value.get("data_collections")
    assert [c.schema for c in collections] == [transactions.TRANSACTION_EVENT_COUNT_SCHEMA] * 2
    assert [c.items() for c in collections] == [
        [("data_collection", "s1.a"), ("event_count", 1)],
        [("data_collection", "s2.a"), ("event_count", 1)],
    ]
    value.validate()
    _, empty = transactions.transaction_end("1:2", TS_MS, 0, {})
    assert empty.get("data_collections") == []


def test_transaction_topic() -> None:
    # schema/AbstractTopicNamingStrategy.transactionTopic(): prefix + delimiter + topic.transaction.
    assert topics.transaction_topic("server1", {}) == "server1.transaction"
    assert topics.transaction_topic("server1", {"topic.transaction": "tx"}) == "server1.tx"
    assert (
        topics.transaction_topic("server1", {"topic.delimiter": "_", "topic.transaction": "tx"})
        == "server1_tx"
    )


# -- heartbeats --------------------------------------------------------------------------------
def test_heartbeat_schemas_are_debeziums() -> None:
    # SchemaFactory.heartbeatKeySchema()/heartbeatValueSchema(); HeartbeatImpl.SERVER_NAME_KEY.
    key, value = heartbeat.HEARTBEAT_KEY_SCHEMA, heartbeat.HEARTBEAT_VALUE_SCHEMA
    assert (key.name, key.version, key.optional) == (
        "io.debezium.connector.common.ServerNameKey",
        1,
        False,
    )
    assert fields(key) == [("serverName", Type.STRING, False)]
    assert (value.name, value.version, value.optional) == (
        "io.debezium.connector.common.Heartbeat",
        1,
        False,
    )
    assert fields(value) == [("ts_ms", Type.INT64, False)]


def test_heartbeat_records() -> None:
    # RecordsStreamProducerIT.assertHeartBeatRecord(): topic __debezium-heartbeat.<server>,
    # key serverName = the server (topic.prefix), value ts_ms.
    assert topics.heartbeat_topic("test_server") == "__debezium-heartbeat.test_server"
    assert topics.heartbeat_topic("test_server", "hb") == "hb.test_server"
    assert topics.heartbeat_topic("s", delimiter="_") == "__debezium-heartbeat_s"
    assert (
        topics.heartbeat_topic("s", heartbeat_topic_name="shared-heartbeats") == "shared-heartbeats"
    )
    key, value = heartbeat.heartbeat("test_server", TS_MS)
    assert key.schema is heartbeat.HEARTBEAT_KEY_SCHEMA
    assert value.schema is heartbeat.HEARTBEAT_VALUE_SCHEMA
    assert key.items() == [("serverName", "test_server")]
    assert value.items() == [("ts_ms", TS_MS)]


# -- data topics -------------------------------------------------------------------------------
def test_data_topic() -> None:
    # schema/SchemaTopicNamingStrategy.dataChangeTopic(): prefix + TableId.schemaParts(), blank
    # parts dropped, AbstractTopicNamingStrategy.sanitizedTopicName().
    assert topics.data_topic("server1", "public", "orders") == "server1.public.orders"
    assert topics.data_topic("server1", "", "orders") == "server1.orders"
    assert topics.data_topic("server1", "my schema", "ördérs$") == "server1.my_schema._rd_rs_"
    assert topics.data_topic("p", "s", "t", delimiter="-") == "p-s-t"
    assert len(topics.data_topic("p", "s", "t" * 300)) == 249


def test_data_topic_replaces_each_utf16_unit_of_an_astral_character() -> None:
    # sanitizedTopicName walks the name's Java chars: a character outside the Basic
    # Multilingual Plane is a surrogate pair, two chars, each replaced by "_"; the 249-char
    # cut counts the sanitized name, so such a character takes two of them.
    assert topics.data_topic("p", "s", "t😀") == "p.s.t__"
    assert topics.data_topic("p", "s", "😀é") == "p.s.___"
    assert topics.data_topic("p", "s", "😀" * 200) == "p.s." + "_" * 245
