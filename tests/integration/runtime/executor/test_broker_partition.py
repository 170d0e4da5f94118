"""A source task's loop while its broker is cut off (the broker in a host of the test's own,
``tests_common.netns``: every packet over its link dropped, no reset)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from airflow_provider_connect.store import MetadataStore
from tests.connectors import EVENTS, RecordingSourceTask
from tests.integration.conftest import start_run
from tests_common import netns
from tests_common.broker import EmbeddedBroker
from tests_common.kafka import new_topic, read_values, wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())
    ),
]
PLAIN = {"value.converter": "StringConverter", "key.converter": "StringConverter"}
QUEUE_FULL = "the producer's queue is full"


def test_a_stop_while_the_producer_queue_is_full_ends_the_run_without_its_poll(
    store: MetadataStore,
    worker_props: dict[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The broker is cut off once some records are committed; the producer's queue (five
    messages) fills and the loop waits for deliveries that cannot come. Asked to stop, the
    run ends at once, as a stop (not a failure), rather than once the queued records time
    out (``message.timeout.ms``, 5 minutes); the offsets it committed cover only records
    that reached the topic (read after the heal), so the next run polls the rest again."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="airflow_provider_connect.runtime.executor.source_task")
    with netns.NetworkHost() as host, EmbeddedBroker(host=host) as broker:
        topic = new_topic(broker.bootstrap_servers)
        props = {
            **worker_props,
            "bootstrap.servers": broker.bootstrap_servers,
            "producer.queue.buffering.max.messages": "5",
        }
        config = {EVENTS: str(tmp_path / "events.jsonl"), "topic": topic, "count": "100000"}
        config |= PLAIN
        run = start_run(store, props, "cut", config, config, RecordingSourceTask)
        wait_until(
            lambda: store.offsets.source_offset("cut", {"task": 0}) is not None,
            60,
            "a first commit",
        )
        host.cut()
        wait_until(lambda: QUEUE_FULL in caplog.text, 60, "the producer's queue full")
        store.statuses.unassign_task("cut", 0, run.spec.run_id)  # as the runtime's shutdown
        outcome = run.join(30)
        assert outcome.failed is False and outcome.trace is None
        assert "stopped while retrying producing to" in caplog.text
        host.heal()
        committed = store.offsets.source_offset("cut", {"task": 0})
        assert committed is not None
        values = read_values(broker.bootstrap_servers, topic, committed["next"], quiet_s=1)
        assert {f"0-{i}".encode() for i in range(committed["next"])} <= set(values)
