"""A source task's loop while its broker is cut off (the broker in a host of the test's own,
``tests_common.netns``: every packet over its link dropped, no reset)."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest

from airflow_provider_connect.store import MetadataStore, TargetState
from tests.connectors import EVENTS, PLAIN, SEQUENCE_SOURCE, RecordingSourceTask, SequenceSourceTask
from tests.integration.conftest import TaskRun, start_counted_run, start_run
from tests_common import netns
from tests_common.broker import EmbeddedBroker
from tests_common.kafka import committed_values, new_topic, read_values, sequences, wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())
    ),
]
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


def test_an_exactly_once_commit_cut_off_past_its_transaction_timeout_runs_the_task_again(
    store: MetadataStore, worker_props: dict[str, str]
) -> None:
    """The broker is cut off mid-stream for longer than the transaction's timeout (10 s
    here): the commit is tried again until then, the transaction is given up and the run
    ends asking to start again, not FAILED. A new run, once the link is back, fences the
    old producer and goes on from the offsets committed: every number reaches the topic
    exactly once."""
    limit = 20_000
    with netns.NetworkHost() as host, EmbeddedBroker(host=host) as broker:
        bootstrap = broker.bootstrap_servers
        topic = new_topic(bootstrap)
        props = {
            **worker_props,
            "bootstrap.servers": bootstrap,
            "exactly.once.source.support": "enabled",
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "offset.storage.topic": f"offsets-{uuid.uuid4().hex[:6]}",
            "offset.storage.partitions": "1",
            "producer.transaction.timeout.ms": "10000",
        }
        config = {
            "connector.class": SEQUENCE_SOURCE,
            "topic": topic,
            "assigned": "s0",
            "sequence.limit": str(limit),
            "poll.delay.ms": "100",
            **PLAIN,
        }

        def run() -> TaskRun:
            return start_counted_run(store, props, "seq", config, SequenceSourceTask)

        first = run()
        wait_until(lambda: store.offsets.source_offsets("seq"), 60, "a first commit")
        host.cut()
        try:
            outcome = first.join(120)
        finally:
            host.heal()
        assert outcome.failed is False and outcome.trace is None
        assert outcome.run_again and "could not be committed" in outcome.run_again
        second = run()
        wait_until(
            lambda: store.offsets.source_offsets("seq") == [({"sequence": "s0"}, {"next": limit})],
            120,
            "every offset committed",
        )
        store.configs.set_target_state("seq", TargetState.STOPPED)
        assert second.join().failed is False
        numbers = sequences(committed_values(bootstrap, topic))["s0"]
    assert len(numbers) == len(set(numbers)) and sorted(numbers) == list(range(limit))
