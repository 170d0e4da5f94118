"""The producer a slot host's source tasks share, on the test broker: each task flushes,
counts and fails on its own records only, and every record reaches the topic."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from airflow_provider_connect.runtime.executor.shared_producer import SharedProducers
from tests_common.kafka import new_topic, read_values

pytestmark = pytest.mark.integration


def test_tasks_sharing_a_producer_flush_and_fail_on_their_own_records(bootstrap: str) -> None:
    producers = SharedProducers()
    config = {"bootstrap.servers": bootstrap, "linger.ms": "5"}
    failed: dict[str, list[Any]] = {"a": [], "b": []}
    a = producers.client({**config, "on_delivery": lambda e, _: failed["a"].append(e)})
    b = producers.client({**config, "on_delivery": lambda e, _: failed["b"].append(e)})
    other = producers.client({**config, "acks": "1", "on_delivery": None})
    assert a._producer is b._producer and other._producer is not a._producer
    topic = new_topic(bootstrap)
    for i in range(100):
        a.produce(topic, f"a{i}".encode())
    acked: list[int] = []
    b.produce(topic, b"b", on_delivery=lambda _, message: acked.append(message.offset()))
    assert a.flush(30) == 0 and len(a) == 0
    assert b.flush(30) == 0 and len(acked) == 1
    try:  # the broker refuses the name: a delivery failure of a's record...
        a.produce("no such topic!", b"lost")
    except KafkaException as e:  # ...or at once, when librdkafka's metadata already says so
        assert e.args[0].code() == KafkaError._UNKNOWN_TOPIC
        refused = 0
    else:
        refused = 1
    assert a.flush(30) == 0
    assert len(failed["a"]) == refused and failed["b"] == []
    values = read_values(bootstrap, topic, 101, quiet_s=0.2)
    assert sorted(v for v in values if v) == sorted([b"b", *(f"a{i}".encode() for i in range(100))])
    for client in (a, b, other):  # the last user of each producer closes it
        client.release()
    assert producers._producers == {}


def test_a_failing_callback_fails_its_own_task_and_none_after_detach(bootstrap: str) -> None:
    producers = SharedProducers()
    config = {"bootstrap.servers": bootstrap, "on_delivery": None}
    failing, neighbour = producers.client(config), producers.client(config)
    topic = new_topic(bootstrap)

    def fail(*_: Any) -> None:
        raise RuntimeError("commit_record failed")

    failing.produce(topic, b"1", on_delivery=fail)
    with pytest.raises(RuntimeError, match="commit_record failed"):
        failing.flush(30)
    called: list[Any] = []
    neighbour.produce(topic, b"2", on_delivery=lambda *_: called.append(1))
    assert neighbour.flush(30) == 0 and called == [1]  # the poller served it still
    neighbour.detach()
    neighbour.produce(topic, b"3", on_delivery=lambda *_: called.append(2))
    assert neighbour.flush(30) == 0 and called == [1]
    failing.release()
    neighbour.release()


def test_a_producer_that_hit_a_fatal_error_is_replaced_for_the_tasks_after_it(
    bootstrap: str,
) -> None:
    """After a fatal error (librdkafka's error callback, as an idempotent producer's
    broken sequence raises it), the next task of the same config gets a new producer that
    delivers; the task still holding the broken one releases it as it ends, which closes it
    without touching the new one."""
    producers = SharedProducers()
    config = {"bootstrap.servers": bootstrap, "on_delivery": None}
    broken = producers.client(config)
    (shared,) = producers._producers.values()
    shared.errors.on_error(KafkaError(KafkaError._FATAL, "the producer is fenced", fatal=True))
    fresh = producers.client(config)
    assert fresh._producer is not broken._producer
    topic = new_topic(bootstrap)
    fresh.produce(topic, b"after")
    assert fresh.flush(30) == 0
    broken.release()
    assert list(producers._producers.values()) != [shared] and len(producers._producers) == 1
    assert read_values(bootstrap, topic, 1, quiet_s=0.2) == [b"after"]
    fresh.release()
    assert producers._producers == {}
