"""The hand-written loops of ``bench.record_cost``: the same work as a path of the project,
by hand, in batches of the size the project's task works in, each stage timed per batch
with the thread's CPU clock (as the project's stages are timed per call), and the process's
CPU clock over the whole loop.

A stage a loop does not have stays at 0 (the change capture loop decodes pgoutput and
writes its JSON in one step, counted under ``poll/build``)."""

from __future__ import annotations

import datetime as dt
import os
import select
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from airflow_provider_connect import __version__
from bench.avro import avro_schema
from bench.generator import FIRST_TIMESTAMP, ORDER, order, order_fields
from bench.jdbc import EPOCH, jdbc_envelope, orders
from bench.postgres_cdc import TABLE, PeerDecoder
from bench.record_cost_project import SINK_STAGES, SOURCE_STAGES, StageClock, figures
from bench.sink_path import peer_consumer
from bench.source_path import STRING_SCHEMA
from bench.transform_chain import by_hand

NOT_NULL = """
SELECT n.nspname, c.relname, a.attname FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE a.attnotnull AND a.attnum > 0 AND NOT a.attisdropped"""
"""(schema, table, column) of every NOT NULL column."""


class Loop:
    """A hand loop's clocks, started when it is made (after the loop's clients):
    ``stage(name)`` times a block on the thread's CPU clock; what no block timed (the
    loop's own steps) counts in the last stage, as the project's rest does."""

    def __init__(self, stages: tuple[str, ...]) -> None:
        self.clock = StageClock(stages)
        self.last = stages[-1]
        self.process_started = time.process_time()
        self.thread_started = time.thread_time()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.thread_time()
        yield
        self.clock.seconds[name] += time.thread_time() - started

    def figures(self, records: int) -> dict[str, Any]:
        thread_s = time.thread_time() - self.thread_started
        process_s = time.process_time() - self.process_started
        seconds = self.clock.seconds
        seconds[self.last] += thread_s - sum(seconds.values())
        return figures(self.clock, records, thread_s, process_s)


def producer(bootstrap: str) -> Producer:
    """The loops' producer, set as the project's (``linger.ms`` 5)."""
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})


def produce_all(
    kafka: Producer,
    topics: str | list[str],
    values: list[bytes],
    timestamps: list[int] | None = None,
) -> None:
    """Produces ``values`` to ``topics`` (one, or one each) with ``timestamps`` (when
    given), waiting while the queue is full; then serves delivery reports once. The usual
    case (one topic, no timestamps) is a loop of ``produce`` calls alone."""
    produce = kafka.produce
    if isinstance(topics, str) and timestamps is None:
        for value in values:
            try:
                produce(topics, value)
            except BufferError:
                _produce_when_room(kafka, topics, value, {})
    else:
        for i, value in enumerate(values):
            topic = topics if isinstance(topics, str) else topics[i]
            options = {} if timestamps is None else {"timestamp": timestamps[i]}
            try:
                produce(topic, value, **options)
            except BufferError:
                _produce_when_room(kafka, topic, value, options)
    kafka.poll(0)


def _produce_when_room(kafka: Producer, topic: str, value: bytes, options: dict[str, Any]) -> None:
    """One ``produce`` that waits while the local queue is full."""
    while True:
        kafka.poll(0.1)
        try:
            kafka.produce(topic, value, **options)
            return
        except BufferError:
            continue


def flushed(loop: Loop, kafka: Producer, records: int) -> dict[str, Any]:
    with loop.stage("produce"):
        assert kafka.flush(120) == 0
    return loop.figures(records)


def file_source(
    bootstrap: str, topic: str, records: int, files: list[str], schemas: bool, batch: int
) -> dict[str, Any]:
    """Lines read → JsonConverter's bytes of a string (orjson) → produce: blocks of about
    ``batch`` lines read at once and cut at their last newline, decoded together and split,
    each line's JSON string written after a prefix made once."""
    kafka, loop, done = producer(bootstrap), Loop(SOURCE_STAGES), 0
    prefix, dumps = b'{"schema":' + STRING_SCHEMA + b',"payload":', orjson.dumps
    for path in files:
        with Path(path).open("rb") as f:
            rest = b""
            while True:
                with loop.stage("poll/build"):
                    block = rest + f.read(batch * 128)
                    end = block.rfind(b"\n") + 1
                    rest, lines = block[end:], block[:end].decode().split("\n")[:-1]
                if not lines:
                    break
                with loop.stage("convert"):
                    if schemas:
                        values = [prefix + dumps(line) + b"}" for line in lines]
                    else:
                        values = [dumps(line) for line in lines]
                with loop.stage("produce"):
                    produce_all(kafka, topic, values)
                done += len(lines)
    return flushed(loop, kafka, done)


def generator_source(
    bootstrap: str, topic: str, records: int, chain: bool, avro_registry: str | None, batch: int
) -> dict[str, Any]:
    """Generated orders → (the chain's work on dicts) → orjson, or ``AvroSerializer`` with
    ``avro_registry`` → produce."""
    kafka = producer(bootstrap)
    serialize = _avro_serializer(avro_registry, topic) if avro_registry else orjson.dumps
    build = order_fields if avro_registry else order
    loop = Loop(SOURCE_STAGES)
    for start in range(0, records, batch):
        with loop.stage("poll/build"):
            values = [build(i) for i in range(start, min(start + batch, records))]
            timestamps = [FIRST_TIMESTAMP + i for i in range(start, start + len(values))]
        targets: str | list[str] = topic
        if chain:
            with loop.stage("transform"):
                routed = [by_hand(v, topic, t) for v, t in zip(values, timestamps, strict=True)]
                targets, values = [t for t, _ in routed], [v for _, v in routed]
        with loop.stage("convert"):
            encoded = [serialize(value) for value in values]
        with loop.stage("produce"):
            produce_all(kafka, targets, encoded, timestamps)
    return flushed(loop, kafka, records)


def _avro_serializer(registry: str, topic: str) -> Callable[[dict[str, Any]], bytes]:
    serializer = AvroSerializer(
        SchemaRegistryClient({"url": registry}),
        avro_schema(ORDER),
        conf={"subject.name.strategy": topic_subject_name_strategy},
    )
    context = SerializationContext(topic, MessageField.VALUE)
    return lambda value: serializer(value, context)


def jdbc_source(bootstrap: str, topic: str, records: int, url: str, batch: int) -> dict[str, Any]:
    """psycopg queries of the next ``batch`` rows by id (the connector's incrementing
    mode) → JsonConverter's envelope with orjson (the decimal as the exact numeral of
    ``decimal.format`` NUMERIC) → produce, without a key."""
    import psycopg  # the project's driver (SQLAlchemy's postgresql+psycopg)

    target = make_url(url)
    connection = psycopg.connect(
        host=target.host, port=target.port, user=target.username, dbname=target.database
    )
    kafka, loop, done, last = producer(bootstrap), Loop(SOURCE_STAGES), 0, 0
    query = "SELECT id, customer, amount, at FROM orders WHERE id > %s ORDER BY id LIMIT %s"
    with connection.cursor() as cursor:
        while done < records:
            with loop.stage("poll/build"):
                cursor.execute(query, (last, batch))
                rows = cursor.fetchall()
                connection.commit()
            with loop.stage("convert"):
                values = [jdbc_envelope(*row) for row in rows]
            with loop.stage("produce"):
                produce_all(kafka, topic, values)
            done, last = done + len(rows), rows[-1][0]
    connection.close()
    return flushed(loop, kafka, done)


def change_capture(
    bootstrap: str, topic: str, records: int, parameters: dict[str, Any], slot: str, prefix: str
) -> dict[str, Any]:
    """bench.postgres_cdc's peer, in batches: psycopg2's logical replication of ``slot``,
    pgoutput decoded and the Debezium JSON written by ``PeerDecoder`` (the NOT NULL columns
    read from the catalog first, as the connector reads its tables' metadata when it
    starts; the connector's version) → produce."""
    import psycopg2
    import psycopg2.extras

    with closing(psycopg2.connect(**parameters)) as catalog, catalog.cursor() as cursor:
        cursor.execute(NOT_NULL)
        required = frozenset(cursor.fetchall())
    connection = psycopg2.connect(
        **parameters, connection_factory=psycopg2.extras.LogicalReplicationConnection
    )
    cursor = connection.cursor()
    cursor.start_replication(
        slot_name=slot, decode=False, options={"proto_version": "1", "publication_names": slot}
    )
    kafka, loop, done = producer(bootstrap), Loop(SOURCE_STAGES), 0
    decoder = PeerDecoder(prefix, parameters["dbname"], version=__version__, required=required)
    assert topic == f"{prefix}.public.{TABLE}"
    while done < records:
        with loop.stage("poll/build"):
            events = _events(cursor, decoder, records - done)
        with loop.stage("produce"):
            for key, value in events:
                while True:
                    try:
                        kafka.produce(topic, value, key)
                        break
                    except BufferError:
                        kafka.poll(0.1)
            kafka.poll(0)
        done += len(events)
    figures = flushed(loop, kafka, done)
    cursor.send_feedback(flush_lsn=decoder.last_commit, force=True)
    connection.close()
    return figures


def _events(cursor: Any, decoder: PeerDecoder, most: int) -> list[tuple[bytes, bytes]]:
    """The change events of the messages read until none is waiting (at least one event,
    at most ``most`` and 2,048, the connector's ``max.batch.size``)."""
    events: list[tuple[bytes, bytes]] = []
    while len(events) < min(most, 2048):
        message = cursor.read_message()
        if message is None:
            if events:
                break
            select.select([cursor], [], [], 1.0)
            continue
        event = decoder.feed(message.payload, message.data_start)
        if event is not None:
            events.append(event)
    return events


def file_sink(bootstrap: str, topic: str, records: int, out: str, batch: int) -> dict[str, Any]:
    """Consume → the envelope's payload (orjson) → a line appended to a file, fsynced."""
    consumer, loop, done = peer_consumer(bootstrap, topic), Loop(SINK_STAGES), 0
    with Path(out).open("w") as f:
        while done < records:
            with loop.stage("consume"):
                messages = [m for m in consumer.consume(batch, 0.2) if m.error() is None]
            with loop.stage("convert"):
                payloads = [orjson.loads(m.value() or b"null")["payload"] for m in messages]
            with loop.stage("put"):
                f.write("".join(f"{p}\n" for p in payloads))
            done += len(messages)
        with loop.stage("put"):
            f.flush()
            os.fsync(f.fileno())
    figures = loop.figures(done)
    consumer.close()
    return figures


def jdbc_sink(
    bootstrap: str, topic: str, records: int, url: str, table: str, batch: int
) -> dict[str, Any]:
    """bench.jdbc's peer_sink: consume → the payloads (orjson, the timestamp as datetime)
    → one INSERT of the batch in a transaction."""
    engine, into = create_engine(url), orders(table)
    consumer, loop, done = peer_consumer(bootstrap, topic), Loop(SINK_STAGES), 0
    while done < records:
        with loop.stage("consume"):
            messages = [m for m in consumer.consume(batch, 0.2) if m.error() is None]
        if not messages:
            continue
        with loop.stage("convert"):
            values = [orjson.loads(m.value() or b"null")["payload"] for m in messages]
            for v in values:
                v["at"] = EPOCH + dt.timedelta(milliseconds=v["at"])
        with loop.stage("put"), engine.begin() as c:
            c.execute(into.insert(), values)
        done += len(values)
    figures = loop.figures(done)
    consumer.close()
    engine.dispose()
    return figures
