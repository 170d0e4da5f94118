"""Schema Registry formats end to end on the real broker and Spark, through REST:
table rows through a topic in each format into another table; an Avro topic whose schema
evolved into the JDBC sink; a registry outage mid-stream, counted afterwards; records the
converter cannot read, in the dead-letter queue with the reason."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import (
    SchemaRegistryClient,
    header_schema_id_serializer,
    topic_subject_name_strategy,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from fastapi.testclient import TestClient
from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    select,
    text,
)
from sqlalchemy.engine import Engine

from airflow_provider_connect.store import MetadataStore, TargetState
from tests.connectors import EVENTS, RecordingSinkTask, read_events
from tests.databases import database
from tests.integration.conftest import create, start_run
from tests_common.kafka import new_topic, produce, read_messages, wait_until
from tests_common.schema_registry import TestSchemaRegistry, schema_registry, skip_if_external

pytestmark = pytest.mark.integration

CONVERTERS = {
    "avro": "io.confluent.connect.avro.AvroConverter",
    "protobuf": "io.confluent.connect.protobuf.ProtobufConverter",
    "json": "io.confluent.connect.json.JsonSchemaConverter",
}


@pytest.fixture(scope="module")
def registry_url() -> Iterator[str]:
    with schema_registry() as url:
        yield url


def status(rest: TestClient, name: str) -> dict[str, Any]:
    return dict(rest.get(f"/connectors/{name}/status").json())


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = create_engine(f"sqlite:///{tmp_path / 'data.db'}")
    yield engine
    engine.dispose()


def orders_table(engine: Engine, rows: int) -> None:
    table = Table(
        "orders",
        MetaData(),
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("amount", Numeric(10, 2), nullable=False),
        Column("note", String(50)),
        Column("day", Date, nullable=False),
        Column("updated", DateTime, nullable=False),
    )
    table.create(engine)
    with engine.begin() as c:
        c.execute(
            table.insert(),
            [
                {
                    "id": i,
                    "amount": decimal.Decimal(i) / 4,
                    "note": None if i % 7 == 0 else f"order {i}",
                    "day": dt.date(2026, 1, 1) + dt.timedelta(days=i % 300),
                    "updated": dt.datetime(2026, 11, 1, 12, 0, i % 60),
                }
                for i in range(1, rows + 1)
            ],
        )


def table_rows(engine: Engine, name: str) -> list[dict[str, Any]]:
    with engine.connect() as c:
        if not engine.dialect.has_table(c, name):
            return []
        table = Table(name, MetaData(), autoload_with=c)
        return [dict(r._mapping) for r in c.execute(select(table).order_by(table.c.id))]


@pytest.mark.parametrize("fmt", list(CONVERTERS))
def test_rows_through_a_topic_in_each_format_into_a_table(
    fmt: str, engine: Engine, registry_url: str, rest: TestClient, bootstrap: str
) -> None:
    """A JDBC source writes a table's rows in the format, a JDBC sink reads them into another
    table: the same rows arrive, each once; for Avro, confluent-kafka's AvroDeserializer
    reads the topic too."""
    orders_table(engine, 300)
    prefix = f"{fmt}-{uuid.uuid4().hex[:6]}-"
    converter = {
        "value.converter": CONVERTERS[fmt],
        "value.converter.schema.registry.url": registry_url,
    }
    if fmt == "protobuf":  # a null string is proto3's "" unless optional fields say so
        converter["value.converter.optional.for.nullables"] = "true"
    create(
        rest,
        f"{prefix}source",
        {
            "connector.class": "JdbcSourceConnector",
            "connection.url": str(engine.url),
            "topic.prefix": prefix,
            "mode": "incrementing",
            "incrementing.column.name": "id",
            "poll.interval.ms": "200",
            "batch.max.rows": "100",
            **converter,
        },
    )
    topic = prefix + "orders"
    target = f"copy_{fmt}"
    create(
        rest,
        f"{prefix}sink",
        {
            "connector.class": "JdbcSinkConnector",
            "connection.url": str(engine.url),
            "topics": topic,
            "table.name.format": target,
            "auto.create": "true",
            **converter,
        },
    )
    wait_until(lambda: len(table_rows(engine, target)) >= 300, 120, f"300 rows in {target}")
    copied = table_rows(engine, target)
    assert copied == table_rows(engine, "orders")  # every row once, every value the same
    if fmt == "avro":
        read = AvroDeserializer(SchemaRegistryClient({"url": registry_url}))
        records = [
            read(m.value(), SerializationContext(topic, MessageField.VALUE))
            for m in read_messages(bootstrap, topic, 300)
        ]
        assert sorted(r["id"] for r in records) == list(range(1, 301))
        assert records[0]["amount"] == decimal.Decimal(records[0]["id"]) / 4


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_an_evolving_avro_schema_into_the_jdbc_sink(
    kind: str, tmp_path: Path, registry_url: str, rest: TestClient, bootstrap: str
) -> None:
    """Records of a schema and of its evolution (fields added with defaults: text, boolean,
    number), in one batch: auto.evolve adds the columns with their defaults in the
    database's dialect, and every record lands."""
    client = SchemaRegistryClient({"url": registry_url})
    topic = new_topic(bootstrap)
    v1 = {
        "type": "record",
        "name": "Customer",
        "namespace": "com.example",
        "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}],
    }
    added = [
        {"name": "tier", "type": "string", "default": "gold"},
        {"name": "vip", "type": "boolean", "default": True},
        {"name": "score", "type": "double", "default": 1.5},
    ]
    v2 = {**v1, "fields": [*v1["fields"], *added]}
    values: list[bytes | None] = []
    for schema, records in (
        (v1, [{"id": i, "name": f"c{i}"} for i in range(1, 51)]),
        (
            v2,
            [
                {"id": i, "name": f"c{i}", "tier": "silver", "vip": False, "score": 0.5}
                for i in range(51, 101)
            ],
        ),
    ):
        write = AvroSerializer(
            client, json.dumps(schema), conf={"subject.name.strategy": topic_subject_name_strategy}
        )
        context = SerializationContext(topic, MessageField.VALUE)
        values += [write(r, context) for r in records]
    produce(bootstrap, topic, values)
    with database(kind, tmp_path, "data.db") as url:
        engine = create_engine(url)
        try:
            create(
                rest,
                f"evolve-{topic}",
                {
                    "connector.class": "JdbcSinkConnector",
                    "connection.url": url,
                    "topics": topic,
                    "auto.create": "true",
                    "auto.evolve": "true",
                    "value.converter": "AvroConverter",
                    "value.converter.schema.registry.url": registry_url,
                },
            )
            wait_until(lambda: len(table_rows(engine, topic)) == 100, 120, "100 rows")
            rows = [(r["tier"], bool(r["vip"]), r["score"]) for r in table_rows(engine, topic)]
        finally:
            assert rest.delete(f"/connectors/evolve-{topic}").status_code == 204
            engine.dispose()
    assert rows[:50] == [("gold", True, 1.5)] * 50  # the defaults, for the old records
    assert rows[50:] == [("silver", False, 0.5)] * 50


def test_a_registry_outage_mid_stream_loses_nothing(
    engine: Engine, rest: TestClient, bootstrap: str
) -> None:
    """The registry goes away while records of a schema id the sink has not read yet
    arrive: the task retries within errors.retry.timeout and fails naming the registry
    (errors.tolerance=all does not skip them); once the registry is back and the task
    restarted, every record is in the table, each once."""
    skip_if_external("stopping the registry")
    with TestSchemaRegistry() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        topic = new_topic(bootstrap)
        schema = {
            "type": "record",
            "name": "Reading",
            "fields": [{"name": "id", "type": "int"}, {"name": "value", "type": "double"}],
        }

        def batch(ids: range, extra: bool = False) -> list[bytes | None]:
            written = (
                {
                    **schema,
                    "fields": [
                        *schema["fields"],
                        {"name": "unit", "type": ["null", "string"], "default": None},
                    ],
                }
                if extra
                else schema
            )
            write = AvroSerializer(
                client,
                json.dumps(written),
                conf={"subject.name.strategy": topic_subject_name_strategy},
            )
            context = SerializationContext(topic, MessageField.VALUE)
            return [write({"id": i, "value": i / 2}, context) for i in ids]

        produce(bootstrap, topic, batch(range(1, 101)))
        name = f"outage-{topic}"
        create(
            rest,
            name,
            {
                "connector.class": "JdbcSinkConnector",
                "connection.url": str(engine.url),
                "topics": topic,
                "auto.create": "true",
                "auto.evolve": "true",
                "errors.tolerance": "all",
                "errors.retry.timeout": "3000",
                "errors.retry.delay.max.ms": "500",
                "value.converter": "AvroConverter",
                "value.converter.schema.registry.url": registry.url,
                "value.converter.max.retries": "0",
            },
        )
        wait_until(lambda: len(table_rows(engine, topic)) == 100, 120, "the first 100 rows")
        second = batch(range(101, 201), extra=True)  # a new schema id, registered now
        registry.down()
        produce(bootstrap, topic, second)

        def failed() -> str | None:
            task = status(rest, name)["tasks"][0]
            return task.get("trace") if task["state"] == "FAILED" else None

        trace = wait_until(failed, 120, "the task failed", state=lambda: status(rest, name))
        assert f"Schema Registry at {registry.url}" in trace and "could not be reached" in trace
        assert len(table_rows(engine, topic)) == 100  # none written while it was away
        registry.up()
        restart = rest.post(f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")
        assert restart.status_code == 202, restart.text
        wait_until(lambda: len(table_rows(engine, topic)) >= 200, 120, "all 200 rows")
        ids = [r["id"] for r in table_rows(engine, topic)]
        assert ids == list(range(1, 201))  # each once


def test_a_task_stopped_while_retrying_the_registry_stops_and_loses_nothing(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    """A task retrying a failing registry (errors.retry.timeout=-1) is stopped: its run
    ends as a stop, not FAILED, with nothing put; the next run, the registry back, puts
    every record."""
    skip_if_external("failing the registry")
    with TestSchemaRegistry() as registry:
        topic = new_topic(bootstrap)
        write = AvroSerializer(SchemaRegistryClient({"url": registry.url}), '"int"')
        context = SerializationContext(topic, MessageField.VALUE)
        values = [write(i, context) for i in range(1, 4)]
        produce(bootstrap, topic, values)
        schema_id = int.from_bytes(values[0][1:5], "big")  # type: ignore[index]
        events = tmp_path / "events.jsonl"
        config = {
            "topics": topic,
            EVENTS: str(events),
            "errors.retry.timeout": "-1",
            "value.converter": "AvroConverter",
            "value.converter.schema.registry.url": registry.url,
            "value.converter.max.retries": "0",
        }
        with registry.failing(503):
            run = start_run(store, worker_props, "retrying", config, config, RecordingSinkTask)
            wait_until(lambda: registry.count(f"/schemas/ids/{schema_id}") >= 2, 60, "a retry")
            store.configs.set_target_state("retrying", TargetState.STOPPED)
            assert run.join().failed is False
        assert [e for e in read_events(events) if e["event"] == "put"] == []
        store.configs.set_target_state("retrying", TargetState.STARTED)
        run = start_run(store, worker_props, "retrying", config, config, RecordingSinkTask)
        wait_until(
            lambda: [v for e in read_events(events) if e["event"] == "put" for v in e["values"]],
            60,
            "the records put",
        )
        store.configs.set_target_state("retrying", TargetState.STOPPED)
        assert run.join().failed is False
    put = [v for e in read_events(events) if e["event"] == "put" for v in e["values"]]
    assert put == [1, 2, 3]


def test_records_the_converter_cannot_read_go_to_the_dead_letter_queue(
    engine: Engine, registry_url: str, rest: TestClient, bootstrap: str
) -> None:
    """Under errors.tolerance=all, a record not in the wire format and one whose schema id
    the registry does not have go to the dead-letter queue with the reason in its headers;
    the good records around them land, one with its schema's GUID in a header among them."""
    client = SchemaRegistryClient({"url": registry_url})
    topic = new_topic(bootstrap)
    dlq = new_topic(bootstrap)
    write = AvroSerializer(
        client,
        '{"type":"record","name":"Ok","fields":[{"name":"id","type":"int"}]}',
        conf={"subject.name.strategy": topic_subject_name_strategy},
    )
    context = SerializationContext(topic, MessageField.VALUE)
    in_header = AvroSerializer(
        client,
        '{"type":"record","name":"Ok","fields":[{"name":"id","type":"int"}]}',
        conf={
            "subject.name.strategy": topic_subject_name_strategy,
            "schema.id.serializer": header_schema_id_serializer,
        },
    )
    headers: list[tuple[str, bytes]] = []
    produce(
        bootstrap,
        topic,
        [
            write({"id": 1}, context),
            b'{"id": 2}',
            b"\x00\x7f\xff\xff\x00\x02",
            write({"id": 4}, context),
            in_header({"id": 5}, SerializationContext(topic, MessageField.VALUE, headers)),
        ],
        headers=[[], [], [], [], headers],
    )
    create(
        rest,
        f"dlq-{topic}",
        {
            "connector.class": "JdbcSinkConnector",
            "connection.url": str(engine.url),
            "topics": topic,
            "auto.create": "true",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.context.headers.enable": "true",
            "value.converter": "AvroConverter",
            "value.converter.schema.registry.url": registry_url,
        },
    )
    wait_until(lambda: len(table_rows(engine, topic)) == 3, 120, "the three good rows")
    assert [r["id"] for r in table_rows(engine, topic)] == [1, 4, 5]
    dead = read_messages(bootstrap, dlq, 2)
    reasons = [dict(m.headers() or [])["__connect.errors.exception.message"].decode() for m in dead]
    assert "not in the Schema Registry's wire format" in reasons[0]
    assert "2147483392" in reasons[1] and "40403" in reasons[1]
    assert [dict(m.headers() or [])["__connect.errors.stage"] for m in dead] == [
        b"VALUE_CONVERTER"
    ] * 2
    with engine.connect() as c:  # nothing else was written
        assert c.execute(text(f'SELECT COUNT(*) FROM "{topic}"')).scalar_one() == 3
