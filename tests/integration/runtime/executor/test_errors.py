"""Error handling in the sink loop (KIP-298, KIP-610): malformed records fail the task
naming the stage and the record, or, tolerated, go to the dead-letter queue with context
headers while every good record is delivered; and a source's records Kafka does not take
fail the task, or, tolerated, are skipped (KIP-779)."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState
from tests.connectors import EVENTS, PLAIN, read_events
from tests_common.broker import free_port
from tests_common.kafka import new_topic, produce, read_messages, read_values, wait_until

pytestmark = pytest.mark.integration

GOOD = b'{"schema":{"type":"string","optional":false},"payload":"good %d"}'
MISMATCH = b'{"schema":{"type":"int32","optional":false},"payload":"not a number"}'


def mixed_values() -> list[bytes]:
    """Ten records: 0-9 good, except 3 (not JSON) and 7 (payload against its schema)."""
    values = [GOOD % i for i in range(10)]
    values[3], values[7] = b"not json {", MISMATCH
    return values


def recording_sink(events: Path, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "tests.connectors.RecordingSinkConnector",
        EVENTS: str(events),
        "topics": topic,
        "value.converter": "JsonConverter",
        **extra,
    }


def task_state(connect: Connect, name: str) -> str | None:
    tasks = connect.status(name)["tasks"]
    return tasks[0]["state"] if tasks else None


def put_values(events: Path) -> list[str]:
    return [v for e in read_events(events) if e["event"] == "put" for v in e["values"]]


def test_tolerance_none_fails_at_the_bad_record(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, mixed_values())
    events = tmp_path / "events.jsonl"
    connect.add_connector("strict", recording_sink(events, topic))
    wait_until(lambda: task_state(connect, "strict") == "FAILED", 60, "task FAILED")
    trace = connect.status("strict")["tasks"][0]["trace"]
    assert "VALUE_CONVERTER" in trace and f"{topic}-0 at offset 3" in trace
    (task,) = connect.store.statuses.task_statuses("strict")
    assert task.metrics is not None and task.metrics["total_record_failures"] == 1
    assert put_values(events) == []  # the batch holding the bad record never reached put
    progress = connect.store.offsets.sink_progress("strict")
    assert all((p.committed_offset or 0) <= 3 for p in progress)  # nothing past it


def test_tolerance_all_sends_bad_records_to_the_dead_letter_queue(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic, dlq = new_topic(bootstrap), new_topic(bootstrap)
    produce(bootstrap, topic, mixed_values())
    events = tmp_path / "events.jsonl"
    config = recording_sink(
        events,
        topic,
        **{
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    connect.add_connector("tolerant", config)
    good = [f"good {i}" for i in range(10) if i not in (3, 7)]
    wait_until(lambda: sorted(put_values(events)) == sorted(good), 60, "the good records")
    dead = read_messages(bootstrap, dlq, 2)
    assert [m.value() for m in dead] == [b"not json {", MISMATCH]
    headers = dict(dead[0].headers())
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.topic"] == topic.encode()
    assert headers["__connect.errors.offset"] == b"3"
    assert headers["__connect.errors.exception.class.name"] == b"DataException"
    assert task_state(connect, "tolerant") == "RUNNING"

    def counted() -> dict[str, float] | None:  # task-error metrics, as of a heartbeat
        (task,) = connect.store.statuses.task_statuses("tolerant")
        metrics = task.metrics or {}
        return metrics if metrics.get("sink_record_send_total") == len(good) else None

    metrics = wait_until(counted, 30, "the task's counters")
    assert metrics["total_record_errors"] == metrics["total_records_skipped"] == 2
    assert metrics["deadletterqueue_produce_requests"] == 2
    assert metrics["total_record_failures"] == 0 and metrics["last_error_timestamp"] > 0
    assert metrics["sink_record_read_total"] == 10

    def all_committed() -> bool:  # the bad records' offsets too, in the same batch
        progress = connect.store.offsets.sink_progress("tolerant")
        return [p.committed_offset for p in progress] == [10]

    wait_until(all_committed, 30, "every offset committed, the dead-lettered ones included")


def test_a_poison_record_fails_put_without_tolerance(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, [b"a", b"poison", b"b"])
    events = tmp_path / "events.jsonl"
    connect.add_connector(
        "strict-put", {**recording_sink(events, topic, **{"poison.value": "poison"}), **PLAIN}
    )
    wait_until(lambda: task_state(connect, "strict-put") == "FAILED", 60, "task FAILED")
    assert "cannot write 'poison'" in connect.status("strict-put")["tasks"][0]["trace"]
    assert "b" not in put_values(events)  # nothing after the poison record was written
    progress = connect.store.offsets.sink_progress("strict-put")
    assert all((p.committed_offset or 0) <= 1 for p in progress)  # nor committed past it


def test_errant_record_reporter(connect: Connect, bootstrap: str, tmp_path: Path) -> None:
    topic, dlq = new_topic(bootstrap), new_topic(bootstrap)
    produce(bootstrap, topic, [b"a", b"poison", b"b"])
    events = tmp_path / "events.jsonl"
    config = {
        **recording_sink(events, topic, **{"poison.value": "poison"}),
        **PLAIN,
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
    }
    connect.add_connector("reporting", config)
    wait_until(lambda: put_values(events) == ["a", "b"], 60, "the good records")
    assert [m.value() for m in read_messages(bootstrap, dlq, 1)] == [b"poison"]


def undeliverable_source(source: Path, topic: str, **extra: str) -> dict[str, str]:
    """A file source whose producer reaches no broker (a loopback port nobody listens on)
    and gives up on each record after 500 ms (``message.timeout.ms``), as when the broker
    does not answer for longer than that."""
    return {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": topic,
        "producer.override.bootstrap.servers": f"127.0.0.1:{free_port()}",
        "producer.override.message.timeout.ms": "500",
        **extra,
    }


def test_a_source_whose_deliveries_fail_fails_without_tolerance(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(10)))
    connect.add_connector("undelivered", undeliverable_source(source, new_topic(bootstrap)))
    wait_until(lambda: task_state(connect, "undelivered") == "FAILED", 60, "task FAILED")
    trace = connect.status("undelivered")["tasks"][0]["trace"]
    assert "Producing to Kafka failed" in trace and "timed out" in trace.lower()
    assert connect.store.offsets.source_offsets("undelivered") == []  # nothing committed
    deleted(connect, "undelivered")


def test_a_source_whose_deliveries_fail_skips_them_under_tolerance_all(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    """KIP-779: with ``errors.tolerance=all`` a record Kafka did not take is counted as a
    tolerated error and skipped; the task stays RUNNING and its offsets move past it."""
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(10)))
    config = undeliverable_source(source, new_topic(bootstrap), **{"errors.tolerance": "all"})
    connect.add_connector("tolerant", config)

    def skipped_all() -> bool:
        tasks = connect.store.statuses.task_statuses("tolerant")
        offsets = connect.store.offsets.source_offsets("tolerant")
        return bool(
            tasks
            and tasks[0].metrics
            and tasks[0].metrics["total_record_errors"] == 10
            and offsets
            and offsets[0][1] == {"position": source.stat().st_size}
        )

    wait_until(skipped_all, 60, "the ten records skipped and their offsets committed")
    (task,) = connect.store.statuses.task_statuses("tolerant")
    assert task_state(connect, "tolerant") == "RUNNING"
    assert task.metrics is not None and task.metrics["total_record_failures"] == 0
    deleted(connect, "tolerant")


def too_large_source(source: Path, topic: str, **extra: str) -> dict[str, str]:
    """A file source of five lines whose third is larger than its producer may send
    (``message.max.bytes``, 1000 bytes): the producer refuses it, as Kafka refuses a record
    larger than a topic's ``max.message.bytes``."""
    lines = ["line 0", "line 1", "x" * 3000, "line 3", "line 4"]
    source.write_text("".join(f"{line}\n" for line in lines))
    return {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": topic,
        "value.converter": "StringConverter",
        "producer.override.message.max.bytes": "1000",
        **extra,
    }


def test_a_source_record_too_large_for_kafka_fails_the_task_without_tolerance(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    connect.add_connector("large", too_large_source(tmp_path / "in.txt", new_topic(bootstrap)))
    wait_until(lambda: task_state(connect, "large") == "FAILED", 60, "task FAILED")
    trace = connect.status("large")["tasks"][0]["trace"]
    assert "Producing to Kafka failed" in trace and "MSG_SIZE_TOO_LARGE" in trace
    assert connect.store.offsets.source_offsets("large") == []  # nothing past it committed
    deleted(connect, "large")


def test_a_source_record_too_large_for_kafka_is_skipped_and_logged_under_tolerance_all(
    worker_props: dict[str, str], spark: object, bootstrap: str, tmp_path: Path
) -> None:
    """KIP-779: the record the producer refuses is counted as a tolerated error and
    skipped, once logged with Kafka's error; the others are delivered, the offsets move past
    it, the task stays RUNNING."""
    logs, source, topic = tmp_path / "logs", tmp_path / "in.txt", new_topic(bootstrap)
    connect = Connect("too-large", {**worker_props, "log.dir": str(logs)})
    connect.start()
    try:
        config = too_large_source(source, topic, **{"errors.tolerance": "all"})
        connect.add_connector("large", config)
        assert read_values(bootstrap, topic, 4) == [b"line 0", b"line 1", b"line 3", b"line 4"]

        def committed() -> bool:
            (task,) = connect.store.statuses.task_statuses("large")
            offsets = connect.store.offsets.source_offsets("large")
            return bool(
                task.metrics
                and task.metrics["total_record_errors"] == 1
                and offsets == [({"filename": str(source)}, {"position": source.stat().st_size})]
            )

        wait_until(committed, 60, "the large record skipped and the offsets past it committed")
        assert task_state(connect, "large") == "RUNNING"
        (log,) = logs.glob("large-0-*")
        assert "1 records could not be delivered to Kafka and are skipped" in log.read_text()
        assert "MSG_SIZE_TOO_LARGE" in log.read_text()
    finally:
        connect.stop()


def deleted(connect: Connect, name: str) -> None:
    """Deletes the connector and waits until its tasks stopped (their producers, which
    reach no broker, are gone with them)."""
    connect.delete_connector(name)

    def done() -> bool:
        deletion = connect.store.configs.deletion(name)
        return deletion is not None and deletion.state is DeletionState.DONE

    wait_until(done, 60, f"{name} deleted")
