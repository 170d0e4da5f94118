"""Avro through a Schema Registry: the source and the sink path with ``AvroConverter``,
beside loops with confluent-kafka's own ``AvroSerializer`` and ``AvroDeserializer``, in one
run, on one broker and one registry (``tests_common.schema_registry.TestSchemaRegistry``, asked once
per schema by every variant: its speed does not count).

The records: ``--records`` orders of eight fields (``bench.generator.ORDER``: long, string,
double, int, string, boolean, long, optional string), one partition.

* source, project: ``bench.generator.GeneratorSourceConnector`` (``generator.structs``: the
  task builds each struct as connectors do, checking each value) with ``AvroConverter``,
  one task, offsets committed every 250 ms: records/s between its first and last commit
  before the end (``bench.common.connector_run``);
* source, hand-written loop: the same orders as dicts, ``AvroSerializer`` and ``produce``,
  timed from the first record to the end of the flush;
* sink, project: ``bench.discard.DiscardSinkConnector`` (it keeps nothing: the path is what
  is timed) with ``AvroConverter``, one task, on a topic the hand-written source loop filled,
  timed from its committed offsets as above;
* sink, hand-written loop: a consumer (``fetch.queue.backoff.ms=0``) that decodes every
  record with ``AvroDeserializer``, timed from its first record to its last.

Each figure is the median of ``--runs`` runs with min and max; the variants run in turn.

    python -m bench.avro [--records N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.schema_registry.avro_data import AvroData, AvroDataConfig
from bench.common import broker, command_line, connector_run, interleaved, rate, ratio_table
from bench.generator import ORDER, RECORDS, STRUCTS, order_fields
from bench.source_path import new_topic
from tests_common.schema_registry import TestSchemaRegistry


def avro_schema(schema: Schema) -> str:
    """The Avro schema AvroConverter registers for ``schema`` (the peers write with it)."""
    return json.dumps(AvroData(AvroDataConfig()).writer(schema).schema)


def source_loop(bootstrap: str, registry: str, records: int, topic: str | None = None) -> float:
    """The peer: the orders as dicts through ``AvroSerializer`` into a topic."""
    topic = topic or new_topic(bootstrap, 1)
    serialize = AvroSerializer(
        SchemaRegistryClient({"url": registry}),
        avro_schema(ORDER),
        conf={"subject.name.strategy": topic_subject_name_strategy},
    )
    context = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    started = time.monotonic()
    for i in range(records):
        value = serialize(order_fields(i), context)
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(120) == 0
    return records / (time.monotonic() - started)


def source_project(bootstrap: str, registry: str, folder: Path, records: int) -> float:
    config = {
        "connector.class": "bench.generator.GeneratorSourceConnector",
        RECORDS: str(records),
        STRUCTS: "true",
        "topic": new_topic(bootstrap, 1),
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": registry,
    }
    worker = {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": "250"}

    def progress(store: Any, name: str) -> float:
        return sum(o["next"] for _, o in store.offsets.source_offsets(name) if o) / records

    return connector_run(worker, folder, config, records, progress).records_per_s


def sink_loop(bootstrap: str, registry: str, topic: str, records: int) -> float:
    """The peer: a consumer decoding each record with ``AvroDeserializer``."""
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": registry}))
    context = SerializationContext(topic, MessageField.VALUE)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"peer-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "fetch.queue.backoff.ms": 0,
        }
    )
    consumer.subscribe([topic])
    read, first = 0, None
    while read < records:
        batch = [m for m in consumer.consume(10_000, 0.5) if m.error() is None]
        if not batch:
            continue
        first = first or time.monotonic()
        for message in batch:
            deserialize(message.value(), context)
        read += len(batch)
    consumer.close()
    return records / (time.monotonic() - (first or time.monotonic()))


def sink_project(bootstrap: str, registry: str, folder: Path, topic: str, records: int) -> float:
    config = {
        "connector.class": "bench.discard.DiscardSinkConnector",
        "topics": topic,
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": registry,
    }
    worker = {
        "bootstrap.servers": bootstrap,
        "offset.flush.interval.ms": "250",
        "consumer.session.timeout.ms": "6000",
    }

    def progress(store: Any, name: str) -> float:
        return sum(p.committed_offset or 0 for p in store.offsets.sink_progress(name)) / records

    return connector_run(worker, folder, config, records, progress).records_per_s


def measure(records: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    with (
        broker(bootstrap) as servers,
        TestSchemaRegistry() as registry,
        tempfile.TemporaryDirectory() as name,
    ):
        folder = Path(name)
        topic = new_topic(servers, 1)
        source_loop(servers, registry.url, records, topic)  # the sink variants' topic
        variants: dict[str, Callable[[], float]] = {
            "source: project (AvroConverter), 1 task": partial(
                source_project, servers, registry.url, folder, records
            ),
            "source: hand-written loop (AvroSerializer)": partial(
                source_loop, servers, registry.url, records
            ),
            "sink: project (AvroConverter), 1 task": partial(
                sink_project, servers, registry.url, folder, topic, records
            ),
            "sink: hand-written loop (AvroDeserializer)": partial(
                sink_loop, servers, registry.url, topic, records
            ),
        }
        return {"records": records, "runs": runs, "records_per_s": interleaved(variants, runs)}


def table(results: dict[str, Any]) -> str:
    figures = results["records_per_s"]
    rows = []
    for path, peer in (("source", "AvroSerializer"), ("sink", "AvroDeserializer")):
        mine = figures[f"{path}: project (AvroConverter), 1 task"]
        loop = figures[f"{path}: hand-written loop ({peer})"]
        rows.append(
            [
                f"{path}: project (AvroConverter), 1 task",
                rate(mine),
                f"{mine['median'] / loop['median']:.2f}x",
            ]
        )
        rows.append([f"{path}: hand-written loop ({peer})", rate(loop), "1.00x"])
    return ratio_table(
        f"Avro through a Schema Registry: {results['records']:,} records of 8 fields, median "
        f"of {results['runs']} runs (min to max)",
        ["variant", "records/s", "vs the loop with confluent-kafka's serializer"],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--records", 500_000), measure, table)


if __name__ == "__main__":
    main()
