"""The mirror source end to end: topics of a second broker copied with keys, headers,
timestamps and partitions; new topics picked up; a restart mid-stream loses nothing."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from airflow_provider_connect.runtime import Connect
from tests.validation import config_errors
from tests_common.broker import EmbeddedBroker
from tests_common.kafka import new_topic_named, read_messages, wait_until

pytestmark = pytest.mark.integration

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


@pytest.fixture(scope="module")
def source_cluster() -> Iterator[str]:
    """A second broker: the cluster to copy from."""
    with EmbeddedBroker() as broker:
        yield broker.bootstrap_servers


def mirror_config(source: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "MirrorSourceConnector",
        "source.bootstrap.servers": source,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "topic.creation.default.partitions": "3",
        "topic.creation.default.replication.factor": "1",
        **extra,
    }


def produce_numbered(source: str, topic: str, numbers: range) -> None:
    producer = Producer({"bootstrap.servers": source})
    for i in numbers:
        producer.produce(
            topic,
            f"value {i}".encode(),
            f"key {i}".encode(),
            partition=i % 3,
            timestamp=1_700_000_000_000 + i,
            headers=[("n", str(i).encode()), ("tag", b"\x00\xff")],
        )
    assert producer.flush(30) == 0


def summary(message: Any) -> tuple[Any, ...]:
    return (
        message.partition(),
        message.key(),
        message.value(),
        message.timestamp()[1],
        tuple(message.headers() or ()),
    )


def test_copies_keys_headers_timestamps_and_partitions(
    connect: Connect, source_cluster: str, bootstrap: str
) -> None:
    topic = f"mirror-{uuid.uuid4().hex[:8]}"
    new_topic_named(source_cluster, topic, partitions=3)
    produce_numbered(source_cluster, topic, range(300))
    connect.add_connector(
        "mirror", mirror_config(source_cluster, topics=topic, **{"tasks.max": "2"})
    )
    copied = read_messages(bootstrap, topic, 300)
    originals = read_messages(source_cluster, topic, 300)
    assert sorted(map(summary, copied)) == sorted(map(summary, originals))
    assert len(copied) == 300


def test_new_topics_and_a_restart(
    worker_props: dict[str, str], spark: Any, source_cluster: str, bootstrap: str
) -> None:
    prefix = f"mirror-{uuid.uuid4().hex[:6]}-"
    first_topic = new_topic_named(source_cluster, prefix + "a", partitions=3)
    total, step = 3000, 100
    done = threading.Event()

    def write() -> None:
        for start in range(0, total, step):
            produce_numbered(source_cluster, first_topic, range(start, start + step))
            if done.wait(0.05):
                return

    writer = threading.Thread(target=write)
    writer.start()
    config = mirror_config(
        source_cluster,
        **{"topics.regex": prefix.replace("-", r"\-") + ".*", "refresh.topics.interval.ms": "300"},
    )
    try:
        runtime = Connect("first", worker_props)
        runtime.start()
        try:
            runtime.add_connector("mirror", config)
            wait_until(
                lambda: len(read_messages(bootstrap, first_topic, 500, 2, 0.1)) >= 500,
                60,
                "some records copied",
            )
        finally:
            runtime.stop()
        runtime = Connect("second", worker_props)
        runtime.start()
        try:
            second_topic = new_topic_named(source_cluster, prefix + "b", partitions=3)
            produce_numbered(source_cluster, second_topic, range(30))
            writer.join()
            copied = read_messages(bootstrap, first_topic, total, timeout_s=120)
            assert {m.value() for m in copied} == {f"value {i}".encode() for i in range(total)}
            assert len(copied) < 2 * total  # resumed from the stored offsets
            later = read_messages(bootstrap, second_topic, 30, timeout_s=60)
            assert sorted(m.value() for m in later) == sorted(
                f"value {i}".encode() for i in range(30)
            )
        finally:
            runtime.stop()
    finally:
        done.set()
        writer.join()


def test_bad_configs_name_their_fields(source_cluster: str) -> None:
    both = config_errors(mirror_config(source_cluster, topics="a", **{"topics.regex": "b.*"}))
    assert list(both) == ["topics"]
    plain = mirror_config(source_cluster, topics="a")
    del plain["value.converter"]
    assert list(config_errors(plain)) == ["value.converter"]
