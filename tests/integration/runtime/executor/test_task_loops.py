"""Source and sink task loops against a real broker and a real SQLite store, in-process."""

from __future__ import annotations

import itertools
import time
import uuid
from pathlib import Path

import orjson
import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaPartition

from airflow_provider_connect.connectors.file import FileStreamSinkTask, FileStreamSourceTask
from airflow_provider_connect.runtime.kafka_names import consumer_group
from airflow_provider_connect.store import MetadataStore, State, TargetState
from tests.connectors import (
    BATCHES,
    EVENTS,
    RecordingSinkTask,
    RecordingSourceTask,
    ScriptedSourceTask,
    read_events,
)
from tests.integration.conftest import TaskRun, start_run
from tests_common.kafka import (
    new_topic,
    new_topic_named,
    produce,
    read_messages,
    read_values,
    wait_until,
)

pytestmark = pytest.mark.integration
PLAIN = {"value.converter": "StringConverter", "key.converter": "StringConverter"}


def task_state(store: MetadataStore, name: str) -> State | None:
    statuses = store.statuses.task_statuses(name)
    return statuses[0].state if statuses else None


def test_file_source_produces_every_line_and_resumes_after_a_restart(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(500)))
    config = {"file": str(source), "topic": topic, **PLAIN}

    run = start_run(store, worker_props, "src", config, config, FileStreamSourceTask)
    wait_until(lambda: task_state(store, "src") is State.RUNNING, 30, "task RUNNING")
    assert len(read_values(bootstrap, topic, 500, quiet_s=0.2)) == 500
    wait_until(
        lambda: (
            store.offsets.source_offset("src", {"filename": str(source)})
            == {"position": source.stat().st_size}
        ),
        30,
        "offsets committed",
    )

    store.configs.set_target_state(
        "src", TargetState.STOPPED
    )  # the herder ends a run before the next
    assert run.join().failed is False
    with source.open("a") as f:
        f.write("".join(f"line {i}\n" for i in range(500, 800)))
        f.write("half a li")  # not a line yet
    store.configs.set_target_state("src", TargetState.STARTED)
    second = start_run(store, worker_props, "src", config, config, FileStreamSourceTask)
    values = read_values(bootstrap, topic, 800)
    assert values == [f"line {i}".encode() for i in range(800)]  # nothing lost, nothing twice
    store.configs.set_target_state("src", TargetState.STOPPED)
    assert second.join().failed is False


def test_source_offsets_wait_for_delivery_without_failing_the_task(
    store: MetadataStore,
    worker_props: dict[str, str],
    bootstrap: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A commit that finds records undelivered after offset.flush.timeout.ms (here 0, with
    records held back by a linger.ms of 10 s, fifty commit intervals: a loaded machine may
    delay the first commit by seconds) commits nothing and
    does not fail the task; a later commit covers them. (A flush with no time to wait does
    not always make librdkafka send what lingers: with a linger of minutes, whether a later
    commit covered them depended on the machine's load.)"""
    topic = new_topic(bootstrap)
    props = {**worker_props, "offset.flush.timeout.ms": "0", "producer.linger.ms": "10000"}
    config = {EVENTS: str(tmp_path / "events.jsonl"), "topic": topic, "count": "30", **PLAIN}
    run = start_run(store, props, "slow", config, config, RecordingSourceTask)
    wait_until(lambda: "not yet acknowledged" in caplog.text, 30, "a commit finding records due")
    wait_until(
        lambda: store.offsets.source_offset("slow", {"task": 0}) == {"next": 30},
        60,
        "offsets committed",
    )
    assert task_state(store, "slow") is State.RUNNING
    assert len(read_values(bootstrap, topic, 30, quiet_s=0.2)) == 30
    store.configs.set_target_state("slow", TargetState.STOPPED)
    assert run.join().failed is False


def test_source_lifecycle_calls_and_delete(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    events = tmp_path / "events.jsonl"
    config = {EVENTS: str(events), "topic": topic, "count": "30", **PLAIN}
    run = start_run(store, worker_props, "rec", config, config, RecordingSourceTask)
    assert len(read_values(bootstrap, topic, 30, quiet_s=0.2)) == 30
    store.configs.delete_connector("rec")
    outcome = run.join()
    assert outcome.deleted and outcome.cleanup_trace is None
    names = [e["event"] for e in read_events(events)]
    assert names[0] == "task.start" and names[-1] == "task.stopped"  # stopped() is last (KIP-419)
    assert names.count("task.stopped") == 1
    (stop,) = [e for e in read_events(events) if e["event"] == "task.stop"]
    assert stop["deleted"] is True  # KIP-901


def test_the_converters_are_closed_once_after_the_task_stopped(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    """A run configures its key and value converters before the task starts and closes
    each once after it stopped (a Schema Registry converter's HTTP client with it)."""
    topic = new_topic(bootstrap)
    events = tmp_path / "events.jsonl"
    config = {EVENTS: str(events), "topic": topic, "count": "5"}
    for part in ("key", "value"):
        config[f"{part}.converter"] = "tests.connectors.RecordingConverter"
        config[f"{part}.converter.{EVENTS}"] = str(events)
    run = start_run(store, worker_props, "conv", config, config, RecordingSourceTask)
    assert len(read_values(bootstrap, topic, 5, quiet_s=0.2)) == 5
    store.configs.set_target_state("conv", TargetState.STOPPED)
    assert run.join().failed is False
    recorded = [(e["event"], e.get("is_key")) for e in read_events(events)]
    assert sorted(recorded[:2]) == [("converter.configure", False), ("converter.configure", True)]
    closes = [i for i, (event, _) in enumerate(recorded) if event == "converter.close"]
    assert sorted(recorded[i][1] for i in closes) == [False, True]
    assert min(closes) > recorded.index(("task.stopped", None))


def test_failed_cleanup_is_reported(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    config = {EVENTS: str(tmp_path / "e.jsonl"), "topic": topic, "fail.on.stop": "true", **PLAIN}
    run = start_run(store, worker_props, "rec", config, config, RecordingSourceTask)
    wait_until(lambda: task_state(store, "rec") is State.RUNNING, 30, "task RUNNING")
    store.configs.delete_connector("rec")
    outcome = run.join()
    assert outcome.deleted and "could not drop the audit table" in outcome.cleanup_trace


def test_cleanup_only_run_starts_and_stops_as_deleted(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    config = {EVENTS: str(events), "topic": new_topic(bootstrap), **PLAIN}
    outcome = start_run(
        store, worker_props, "rec", config, config, RecordingSourceTask, cleanup_only=True
    ).join()
    assert outcome.deleted
    assert [(e["event"], e.get("deleted")) for e in read_events(events)] == [
        ("task.start", None),
        ("task.stop", True),
        ("task.stopped", None),
    ]


def test_a_failing_source_task_is_failed_with_its_trace(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    config = {
        EVENTS: str(tmp_path / "e.jsonl"),
        "topic": topic,
        "fail.after": "6",
        "count": "100",
        **PLAIN,
    }
    outcome = start_run(store, worker_props, "bad", config, config, RecordingSourceTask).join()
    assert outcome.failed and "failed on purpose at record 6" in outcome.trace
    (status,) = store.statuses.task_statuses("bad")
    assert status.state is State.FAILED and "failed on purpose" in status.trace
    assert store.offsets.source_offset("bad", {"task": 0}) == {
        "next": 6
    }  # everything produced is committed
    assert len(read_values(bootstrap, topic, 6, quiet_s=0.3)) == 6


def test_pause_and_resume(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    config = {"file": str(source), "topic": topic, **PLAIN}
    run = start_run(store, worker_props, "p", config, config, FileStreamSourceTask)
    assert read_values(bootstrap, topic, 1, quiet_s=0.1) == [b"a"]
    store.configs.set_target_state("p", TargetState.PAUSED)
    wait_until(lambda: task_state(store, "p") is State.PAUSED, 30, "task PAUSED")
    with source.open("a") as f:
        f.write("b\n")
    assert read_values(bootstrap, topic, 1, quiet_s=0.5) == [b"a"]  # nothing moves while paused
    store.configs.set_target_state("p", TargetState.STARTED)
    wait_until(lambda: task_state(store, "p") is State.RUNNING, 30, "task RUNNING again")
    assert read_values(bootstrap, topic, 2, quiet_s=0.1) == [b"a", b"b"]
    store.configs.delete_connector("p")
    run.join()


def committed_offset(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return consumer.committed([KafkaPartition(topic, 0)], timeout=10)[0].offset
    finally:
        consumer.close()


def test_file_sink_writes_every_record_and_commits(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    produce(
        bootstrap,
        topic,
        [
            orjson.dumps({"schema": {"type": "string", "optional": False}, "payload": f"v{i}"})
            for i in range(300)
        ],
    )
    sink = tmp_path / "out.txt"
    config = {"file": str(sink), "topics": topic}
    run = start_run(store, worker_props, "snk", config, config, FileStreamSinkTask)
    wait_until(
        lambda: sink.exists() and len(sink.read_text().splitlines()) == 300, 60, "all lines written"
    )
    wait_until(
        lambda: committed_offset(bootstrap, consumer_group("snk"), topic) == 300,
        30,
        "offsets committed",
    )
    store.configs.set_target_state("snk", TargetState.STOPPED)
    assert run.join().failed is False
    assert sink.read_text().splitlines() == [f"v{i}" for i in range(300)]


def recording_sink_put_all(
    store: MetadataStore,
    worker_props: dict[str, str],
    bootstrap: str,
    tmp_path: Path,
    name: str,
    count: int,
    extra: dict[str, str] | None = None,
) -> tuple[str, Path, TaskRun]:
    """A RecordingSinkTask run (with ``extra`` config) over a new topic of ``count``
    records, once it has put them all: the topic, the events file and the run."""
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, [f"{i}".encode() for i in range(count)])
    events = tmp_path / "events.jsonl"
    config = {
        EVENTS: str(events),
        "topics": topic,
        **PLAIN,
        **(extra or {}),
    }
    run = start_run(store, worker_props, name, config, config, RecordingSinkTask)
    wait_until(
        lambda: sum(len(e.get("values", [])) for e in read_events(events)) == count,
        60,
        "all records put",
    )
    return topic, events, run


def test_sink_closes_partitions_with_is_closing_then_stops(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    topic, events, run = recording_sink_put_all(store, worker_props, bootstrap, tmp_path, "rs", 20)
    store.configs.delete_connector("rs")
    assert run.join().deleted
    recorded = read_events(events)
    names = [e["event"] for e in recorded]
    assert names[-3:] == ["pre_commit", "close", "task.stop"]
    assert recorded[-3]["closing"] is True and recorded[-3]["offsets"] == {f"{topic}-0": 20}
    assert all(
        e["closing"] is False for e in recorded[:-3] if e["event"] == "pre_commit"
    )  # KIP-275
    assert recorded[-1]["deleted"] is True
    assert [v for e in recorded for v in e.get("values", [])] == [str(i) for i in range(20)]


def test_an_idle_sink_task_is_put_empty_batches_except_while_paused(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    """As Kafka Connect's WorkerSinkTask: each poll that brings nothing still calls ``put``
    with an empty batch (a task flushes on time without new records), never while paused."""
    _, events, run = recording_sink_put_all(store, worker_props, bootstrap, tmp_path, "idle", 5)

    def empty_puts() -> list[int]:
        return [e["empty_puts"] for e in read_events(events) if e["event"] == "pre_commit"]

    wait_until(lambda: len(found := empty_puts()) >= 2 and found[-1] > found[0], 30, "empty puts")
    store.configs.set_target_state("idle", TargetState.PAUSED)
    wait_until(lambda: task_state(store, "idle") is State.PAUSED, 30, "task PAUSED")
    paused_at = len(empty_puts())
    counts = wait_until(
        lambda: (found := empty_puts()[paused_at:]) and len(found) >= 3 and found,
        30,
        "three commits while paused",
    )
    assert counts[-1] == counts[1]  # none after the pause took effect
    store.configs.delete_connector("idle")
    assert run.join().deleted


def test_max_poll_records_bounds_each_put(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    _, events, run = recording_sink_put_all(
        store,
        worker_props,
        bootstrap,
        tmp_path,
        "mp",
        50,
        {"consumer.override.max.poll.records": "7"},
    )
    store.configs.set_target_state("mp", TargetState.STOPPED)
    assert not run.join().failed
    sizes = [len(e["values"]) for e in read_events(events) if e["event"] == "put" and e["values"]]
    assert max(sizes) == 7 and sum(sizes) == 50


@pytest.mark.parametrize("batches", ["false", "true"])
def test_commit_record_is_called_once_per_acknowledged_record(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path, batches: str
) -> None:
    """As lists or as ``SourceRecordBatch`` (read as records for ``commit_record``)."""
    events = tmp_path / "e.jsonl"
    config = {
        EVENTS: str(events),
        "topic": new_topic(bootstrap),
        "count": "12",
        "record.acks": "true",
        BATCHES: batches,
        **PLAIN,
    }
    run = start_run(store, worker_props, "acks", config, config, RecordingSourceTask)
    wait_until(
        lambda: sum(e["event"] == "ack" for e in read_events(events)) >= 12,
        30,
        "every record acknowledged",
    )
    store.configs.delete_connector("acks")
    run.join()
    acks = [e for e in read_events(events) if e["event"] == "ack"]
    assert [a["value"] for a in acks] == [f"0-{i}" for i in range(12)]
    assert [a["offset"] for a in acks] == list(range(12))  # where Kafka stored each record


@pytest.mark.parametrize("batches", ["false", "true"])
def test_polls_are_produced_in_order_with_each_partitions_latest_offset(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, batches: str
) -> None:
    """Polls the loop converts together (one topic and schema: keyed or not, with
    timestamps and a partition or not, or with nothing but a value) and one it converts
    record by record (schemas differ; a timestamp, a header): every record arrives in order
    with its timestamp, the one whose value does not match its schema is skipped under
    ``errors.tolerance=all`` and the good ones of its poll still go, and each source
    partition commits its last record's offset, partitions interleaved or not. The same
    when the polls that can be are ``SourceRecordBatch`` (the first, with the bad value,
    and the last)."""
    topic = new_topic(bootstrap)
    config = {
        BATCHES: batches,
        "topic": topic,
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "key.converter": "StringConverter",
        "errors.tolerance": "all",
    }
    started_ms = time.time() * 1000
    run = start_run(store, worker_props, "scripted", config, config, ScriptedSourceTask)
    messages = read_messages(bootstrap, topic, 15)
    assert [(m.key(), m.value()) for m in messages] == [
        (None, b'"a1"'),
        (None, b'"a2"'),
        (None, b'"a4"'),
        (None, b'"a5"'),
        (b"k6", b'"a6"'),
        (b"k1", b'"b1"'),
        (b"k7", b'"a7"'),
        (None, b'"b2"'),
        (None, b"8"),
        (None, b'"a9"'),
        (None, b'"b3"'),
        (None, b'"b4"'),
        (None, b'"b5"'),
        (None, b'"b6"'),
        (None, b'"b7"'),
    ]
    assert messages[9].timestamp()[1] == 1234 and messages[9].headers() == [("h", b"v")]
    assert [m.timestamp()[1] for m in messages[10:12]] == [1001, 1002]
    assert messages[12].timestamp()[1] >= started_ms  # none set: the time it was produced
    wait_until(
        lambda: (
            store.offsets.source_offset("scripted", {"p": "a"}) == {"o": 9}
            and store.offsets.source_offset("scripted", {"p": "b"}) == {"o": 7}
        ),
        30,
        "each partition's last offset committed",
    )
    store.configs.delete_connector("scripted")
    run.join()


@pytest.mark.parametrize("batches", ["false", "true"])
@pytest.mark.parametrize(
    ("guarantee", "committed_while_running"), [("at-most-once", True), ("at-least-once", False)]
)
def test_at_most_once_commits_offsets_before_producing(
    store: MetadataStore,
    worker_props: dict[str, str],
    bootstrap: str,
    tmp_path: Path,
    guarantee: str,
    committed_while_running: bool,
    batches: str,
) -> None:
    """With a flush interval of an hour, at-least-once commits offsets only when the task
    stops (after the producer flushed); at-most-once commits each batch before producing it.
    The same for polls returned as lists and as ``SourceRecordBatch``."""
    topic = new_topic(bootstrap)
    config = {
        EVENTS: str(tmp_path / "e.jsonl"),
        "topic": topic,
        "count": "9",
        "delivery.guarantee": guarantee,
        BATCHES: batches,
        **PLAIN,
    }
    props = {**worker_props, "offset.flush.interval.ms": "3600000"}
    run = start_run(store, props, "g", config, config, RecordingSourceTask)
    assert len(read_values(bootstrap, topic, 9, quiet_s=0.2)) == 9
    assert (store.offsets.source_offset("g", {"task": 0}) == {"next": 9}) is committed_while_running
    store.configs.delete_connector("g")
    run.join()
    assert store.offsets.source_offset("g", {"task": 0}) == {"next": 9}


def test_sink_subscribes_by_regex(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    prefix = f"rx{uuid.uuid4().hex[:6]}"
    topics = [new_topic_named(bootstrap, f"{prefix}-{i}") for i in range(2)]
    for topic in topics:
        produce(bootstrap, topic, [f"{topic}:{i}".encode() for i in range(5)])
    produce(bootstrap, new_topic(bootstrap), [b"not matched"])
    events = tmp_path / "events.jsonl"
    config = {EVENTS: str(events), "topics.regex": f"{prefix}-.*", **PLAIN}
    run = start_run(store, worker_props, "rx", config, config, RecordingSinkTask)
    wait_until(
        lambda: sum(len(e.get("values", [])) for e in read_events(events)) == 10,
        60,
        "both topics consumed",
    )
    store.configs.delete_connector("rx")
    run.join()
    values = {v for e in read_events(events) for v in e.get("values", [])}
    assert values == {f"{t}:{i}" for t in topics for i in range(5)}


def test_a_sink_task_pauses_and_resumes_its_own_partition(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    """``context.pause`` holds a partition's records back until ``context.resume``, though
    the loop keeps polling meanwhile."""
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, [b"a", b"hold"])
    events, resume = tmp_path / "events.jsonl", tmp_path / "resume"
    config = {
        EVENTS: str(events),
        "topics": topic,
        "pause.on.value": "hold",
        "resume.file": str(resume),
        **PLAIN,
    }
    run = start_run(store, worker_props, "holds", config, config, RecordingSinkTask)

    def put_values() -> list[str]:
        return [v for e in read_events(events) for v in e.get("values", [])]

    def pre_commits() -> int:
        return sum(e["event"] == "pre_commit" for e in read_events(events))

    wait_until(lambda: put_values() == ["a", "hold"], 60, "the records before the pause put")
    produce(bootstrap, topic, [b"b"])
    before = pre_commits()
    wait_until(lambda: pre_commits() >= before + 5, 30, "the loop polling on while paused")
    assert put_values() == ["a", "hold"]
    resume.touch()
    wait_until(lambda: put_values() == ["a", "hold", "b"], 30, "the record after it put")
    store.configs.delete_connector("holds")
    run.join()


def test_retriable_put_is_retried_at_a_steady_pace(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    """A put that raises RetriableException gets the same records again, after a pause
    even when the task set no context.timeout(), and nothing is skipped."""
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, [b"a", b"b"])
    events = tmp_path / "events.jsonl"
    config = {EVENTS: str(events), "topics": topic, "fail.puts": "3", **PLAIN}
    run = start_run(store, worker_props, "retry", config, config, RecordingSinkTask)
    wait_until(lambda: any(e["event"] == "put" for e in read_events(events)), 60, "put succeeded")
    store.configs.delete_connector("retry")
    run.join()
    attempts = [e["at"] for e in read_events(events) if e["event"] == "put.retriable"]
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert len(attempts) == 3 and min(gaps) >= 0.1  # it waits between attempts, never spins
    assert [v for e in read_events(events) for v in e.get("values", [])] == ["a", "b"]


def test_a_put_retried_past_max_poll_interval_keeps_the_group_and_every_record(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    """As Kafka's WorkerSinkTask: while put raises RetriableException the partitions are
    paused and the loop keeps polling, so retrying for longer than max.poll.interval.ms
    (6 s here, librdkafka's least with a 6 s session) neither drops the consumer from its
    group nor loses or repeats a record."""
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, [f"{i}".encode() for i in range(50)])
    events = tmp_path / "events.jsonl"
    config = {
        EVENTS: str(events),
        "topics": topic,
        "fail.puts.for.ms": "9000",
        "retry.timeout.ms": "500",
        "consumer.override.max.poll.interval.ms": "6000",
        **PLAIN,
    }
    run = start_run(store, worker_props, "slow", config, config, RecordingSinkTask)
    wait_until(
        lambda: sum(len(e.get("values", [])) for e in read_events(events)) == 50,
        60,
        "every record put once the destination is back",
    )
    recorded = read_events(events)
    retries = [e["at"] for e in recorded if e["event"] == "put.retriable"]
    assert retries[-1] - retries[0] > 8  # failing for longer than max.poll.interval.ms
    assert task_state(store, "slow") is State.RUNNING
    store.configs.delete_connector("slow")
    assert run.join().failed is False
    recorded = read_events(events)
    assert [e["event"] for e in recorded if e["event"] in ("open", "close")] == ["open", "close"]
    assert recorded[-1]["event"] == "task.stop"  # the one close came with the delete
    assert [v for e in recorded for v in e.get("values", [])] == [str(i) for i in range(50)]


def test_a_stop_during_the_retry_backoff_ends_the_run_cleanly(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str, tmp_path: Path
) -> None:
    """The runtime shuts down while a put waits for its retry: the run ends UNASSIGNED,
    not FAILED, and the records it never put are not committed."""
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, [b"a", b"b", b"c"])
    events = tmp_path / "events.jsonl"
    config = {
        EVENTS: str(events),
        "topics": topic,
        "fail.puts.for.ms": "600000",
        "retry.timeout.ms": "60000",
        **PLAIN,
    }
    run = start_run(store, worker_props, "backoff", config, config, RecordingSinkTask)
    wait_until(
        lambda: any(e["event"] == "put.retriable" for e in read_events(events)),
        60,
        "the first put failed",
    )
    store.statuses.unassign_task("backoff", 0, run.spec.run_id)  # as the runtime's shutdown
    outcome = run.join(30)
    assert outcome.failed is False and outcome.trace is None
    assert task_state(store, "backoff") is State.UNASSIGNED
    assert committed_offset(bootstrap, consumer_group("backoff"), topic) < 0  # none committed
    assert not any(e["event"] == "put" for e in read_events(events))
