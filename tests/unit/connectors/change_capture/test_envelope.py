"""The envelope vocabulary of the change-capture core (connectors/change_capture/
envelope.py), shared by every database's connector and by ``ExtractNewRecordState``: an
event of a second database's ``source`` block, built from the core alone, is read by the
transform under the same names."""

from __future__ import annotations

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.connectors.change_capture import envelope as env
from airflow_provider_connect.connectors.change_capture.transactions import transaction_block
from airflow_provider_connect.transforms.extract_new_record_state import ExtractNewRecordState

# A MySQL-like source block: the core's fields, then the database's own.
SOURCE = (
    env.source_schema_builder("io.debezium.connector.mysql.Source")
    .field("table", Schema.OPTIONAL_STRING_SCHEMA)
    .field("file", Schema.STRING_SCHEMA)
    .field("pos", Schema.INT64_SCHEMA)
    .build()
)
ROW = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("name", Schema.STRING_SCHEMA)


def source(snapshot: str = env.SNAPSHOT_FALSE) -> Struct:
    ts_us, ts_ns = env.instants(1_704_164_645_123, None, None)
    return Struct.of(
        SOURCE,
        {
            "version": "1",
            "connector": "mysql",
            "name": "srv",
            "ts_ms": 1_704_164_645_123,
            "snapshot": env.check_snapshot(snapshot),
            "db": "shop",
            "ts_us": ts_us,
            "ts_ns": ts_ns,
            "table": "orders",
            "file": "bin.000003",
            "pos": 154,
        },
    )


def test_the_source_block_starts_with_the_cores_fields() -> None:
    assert [f.name for f in SOURCE.fields or ()] == [
        "version",
        "connector",
        "name",
        "ts_ms",
        "snapshot",
        "db",
        "sequence",
        "ts_us",
        "ts_ns",
        "table",
        "file",
        "pos",
    ]
    assert SOURCE.field("snapshot").schema is env.SNAPSHOT_SCHEMA  # type: ignore[union-attr]
    assert source().get("snapshot") == env.SNAPSHOT_FALSE  # unset: the Enum's default
    assert source(env.SNAPSHOT_LAST).get("ts_ns") == 1_704_164_645_123_000_000


def test_an_envelope_of_another_databases_block() -> None:
    envelope = env.envelope_schema("srv.shop.orders", ROW.build(), SOURCE, transaction=True)
    assert envelope.name == "srv.shop.orders" + env.ENVELOPE_SUFFIX
    assert [f.name for f in envelope.fields or ()] == [
        env.BEFORE,
        env.AFTER,
        env.SOURCE,
        env.TRANSACTION,
        env.OPERATION,
        *env.TIMESTAMPS,
    ]
    after = envelope.field(env.AFTER).schema  # type: ignore[union-attr]
    assert after.name == "srv.shop.orders" + env.VALUE_SUFFIX and after.optional


def test_extract_new_record_state_reads_the_cores_events() -> None:
    envelope = env.envelope_schema("srv.shop.orders", ROW.build(), SOURCE, transaction=True)
    row_schema = envelope.field(env.AFTER).schema  # type: ignore[union-attr]
    event = env.envelope_value(
        envelope,
        op=env.OP_CREATE,
        source=source(),
        ts_ms=1_704_164_645_200,
        after=Struct.of(row_schema, {"id": 7, "name": "seven"}),
        transaction=transaction_block("tx-1", 3, 1),
    )
    record = SourceRecord({}, {}, "srv.shop.orders", value_schema=envelope, value=event)
    configs = {"add.fields": "op,file,pos,id,total_order", "add.headers": "op"}
    with TransformationHarness(ExtractNewRecordState, configs) as harness:
        flat = harness.apply(record)
    assert flat is not None
    assert flat.value.schema.name == "srv.shop.orders" + env.VALUE_SUFFIX
    assert [(f.name, flat.value.get(f.name)) for f in flat.value.schema.fields] == [
        ("id", 7),
        ("name", "seven"),
        ("__op", env.OP_CREATE),
        ("__file", "bin.000003"),
        ("__pos", 154),
        ("__id", "tx-1"),
        ("__total_order", 3),
    ]
    assert [(h.key, h.value) for h in flat.headers] == [("__op", env.OP_CREATE)]
    delete = env.envelope_value(
        envelope,
        op=env.OP_DELETE,
        source=source(),
        ts_ms=1,
        before=Struct.of(row_schema, {"id": 7, "name": "seven"}),
    )
    deleted = SourceRecord({}, {}, "t", value_schema=envelope, value=delete)
    rewrite = {"delete.tombstone.handling.mode": "rewrite"}
    with TransformationHarness(ExtractNewRecordState, rewrite) as harness:
        unwrapped = harness.apply(deleted)
    assert unwrapped is not None
    assert (unwrapped.value.get("id"), unwrapped.value.get("__deleted")) == (7, "true")
