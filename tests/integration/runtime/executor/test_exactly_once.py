"""Exactly-once source (KIP-618) against the test broker, a real Spark runtime and both
metadata stores. Every check of what was delivered reads through CommittedLogReader: the
test broker does not filter aborted transactions for read-committed consumers, and may take
a fenced zombie's in-flight batch after the fencing (the reader leaves it out by its
producer epoch, where the zombie's successor would otherwise seem to commit it)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from airflow_provider_connect.runtime.executor.exactly_once import OffsetsTopic
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import DeletionState, MetadataStore, State, TargetState
from tests.connectors import EVENTS, PLAIN, SEQUENCE_SOURCE, SequenceSourceTask, read_events
from tests.integration.conftest import start_counted_run, start_run
from tests.validation import config_errors
from tests_common.kafka import (
    committed_transactions,
    committed_values,
    new_topic,
    read_values,
    sequences,
    wait_until,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def eos_props(worker_props: dict[str, str]) -> dict[str, str]:
    """A worker with exactly-once source support, its own offsets topic and group id."""
    return {
        **worker_props,
        "exactly.once.source.support": "enabled",
        "group.id": f"g-{uuid.uuid4().hex[:6]}",
        "offset.storage.topic": f"offsets-{uuid.uuid4().hex[:6]}",
        "offset.storage.partitions": "3",
    }


@pytest.fixture
def eos_connect(eos_props: dict[str, str], spark: Any) -> Any:
    runtime = Connect("eos-runtime", eos_props)
    runtime.start()
    yield runtime
    runtime.stop()


def sequence_config(topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": SEQUENCE_SOURCE, "topic": topic, **PLAIN, **extra}


def assert_each_exactly_once(seen: dict[str, list[int]], limit: int, names: list[str]) -> None:
    assert_each_below_once(seen, dict.fromkeys(names, limit))


def assert_each_below_once(seen: dict[str, list[int]], ends: dict[str, int]) -> None:
    """Every sequence of ``ends`` was seen, each number below its end exactly once."""
    assert sorted(seen) == sorted(ends)
    for name, end in ends.items():
        numbers = seen[name]
        assert len(numbers) == len(set(numbers)), f"{name}: duplicates"
        assert sorted(numbers) == list(range(end)), f"{name}: missing numbers"


def offsets_done(store: MetadataStore, name: str, limit: int, partitions: int) -> bool:
    offsets = store.offsets.source_offsets(name)
    return len(offsets) == partitions and all(o == {"next": limit} for _, o in offsets)


def next_numbers(store: MetadataStore) -> dict[str, int]:
    """The next number of each sequence, as the store holds its committed offsets."""
    return {p["sequence"]: o["next"] for p, o in store.offsets.source_offsets("seq") if o}


# -- the verifier on its own ------------------------------------------------------------------
def test_committed_log_reader_keeps_only_committed_records(bootstrap: str) -> None:
    topic = new_topic(bootstrap)
    plain = Producer({"bootstrap.servers": bootstrap})
    tid = f"verifier-{uuid.uuid4().hex[:6]}"
    transactional = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    transactional.init_transactions(30)

    def in_transaction(prefix: str) -> None:
        transactional.begin_transaction()
        for i in range(3):
            transactional.produce(topic, f"{prefix}{i}".encode())
        assert transactional.flush(30) == 0  # in the log before the transaction ends

    plain.produce(topic, b"plain-0")
    plain.flush(30)
    in_transaction("committed-")
    transactional.commit_transaction(30)
    in_transaction("aborted-")
    transactional.abort_transaction(30)
    in_transaction("open-")
    plain.produce(topic, b"plain-1")
    plain.flush(30)
    reader = CommittedLogReader({"bootstrap.servers": bootstrap})
    try:
        expected = [b"plain-0", b"committed-0", b"committed-1", b"committed-2", b"plain-1"]
        assert [r.value for r in reader.read(topic, 0)] == expected
        fencer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
        fencer.init_transactions(30)  # aborts the open transaction
        assert [r.value for r in reader.read(topic, 0)] == expected
        records = reader.read(topic, 0, start=2)
        assert [r.value for r in records] == expected[2:]
        assert records[0].offset == 2
    finally:
        reader.close()


def test_committed_log_reader_refuses_sasl() -> None:
    with pytest.raises(Exception, match="PLAINTEXT or SSL"):
        CommittedLogReader({"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_SSL"})


# -- exactly-once source ----------------------------------------------------------------------
@pytest.mark.parametrize("boundary", ["poll", "interval", "connector"])
def test_records_and_offsets_commit_together(
    eos_connect: Connect,
    store: MetadataStore,
    bootstrap: str,
    boundary: str,
    eos_props: dict[str, str],
) -> None:
    topic, limit = new_topic(bootstrap), 3000
    extra = {"sequence.partitions": "2", "sequence.limit": str(limit), "tasks.max": "2"}
    extra["transaction.boundary"] = boundary
    if boundary == "interval":
        extra["transaction.boundary.interval.ms"] = "100"
    if boundary == "connector":
        extra["transaction.every"] = "250"
    eos_connect.add_connector("seq", sequence_config(topic, **extra))
    wait_until(lambda: offsets_done(store, "seq", limit, 2), 120, "every offset committed")
    assert_each_exactly_once(sequences(committed_values(bootstrap, topic)), limit, ["s0", "s1"])
    generation, _ = store.configs.task_configs("seq")
    assert store.configs.task_count("seq") == (generation, 2)
    offsets_topic = OffsetsTopic(WorkerConfig(eos_props), "seq", {})
    reader = CommittedLogReader({"bootstrap.servers": bootstrap})
    try:
        offsets_topic.ensure(reader)
        stored = offsets_topic.read(reader)
    finally:
        reader.close()
    assert sorted(stored.values(), key=str) == [
        ({"sequence": "s0"}, {"next": limit}),
        ({"sequence": "s1"}, {"next": limit}),
    ]


class LineWriter:
    """Appends 100 numbered lines to a file every 50 ms on a thread of its own, as a stream
    that goes on while the test watches it."""

    def __init__(self, path: Path) -> None:
        self.path, self.written, self.done = path, 0, threading.Event()
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def _write(self) -> None:
        with self.path.open("a") as lines:
            while not self.done.wait(0.05):  # the stream's pace, not a wait for an outcome
                lines.write("".join(f"line-{self.written + i}\n" for i in range(100)))
                lines.flush()
                self.written += 100

    def stop(self) -> int:
        """Ends the stream; returns how many lines it wrote."""
        self.done.set()
        self.thread.join()
        return self.written


@pytest.mark.parametrize(
    ("boundary", "interval_ms"), [("poll", None), ("interval", "300"), ("interval", None)]
)
def test_a_running_stream_commits_at_each_boundary(
    eos_props: dict[str, str],
    store: MetadataStore,
    bootstrap: str,
    tmp_path: Path,
    spark: Any,
    boundary: str,
    interval_ms: str | None,
) -> None:
    """A file source fed without pause becomes visible to read-committed consumers while
    the lines keep coming, in transactions that end at the boundary: after each poll (none
    larger than batch.size), or every transaction.boundary.interval.ms (while the worker's
    offset.flush.interval.ms is a minute), by default every offset.flush.interval.ms (each
    gathering several polls); never in one transaction that only the task's stop commits.
    Transactions are counted from the COMMIT markers in the log."""
    props = {**eos_props, "offset.flush.interval.ms": "60000"} if interval_ms else eos_props
    topic, path, batch = new_topic(bootstrap), tmp_path / "lines.txt", 50
    path.write_text("")
    config = {
        "connector.class": "FileStreamSource",
        "file": str(path),
        "topic": topic,
        "batch.size": str(batch),
        "value.converter": "StringConverter",
        "transaction.boundary": boundary,
    }
    if interval_ms is not None:
        config["transaction.boundary.interval.ms"] = interval_ms
    with Connect("eos-runtime", props) as runtime:
        runtime.add_connector("lines", config)
        writer = LineWriter(path)
        try:
            for seen in (1000, 2000, 3000):
                wait_until(
                    lambda seen=seen: len(committed_values(bootstrap, topic)) >= seen,
                    60,
                    f"{seen} lines committed while the stream goes on",
                )
                assert not writer.done.is_set()
        finally:
            written = writer.stop()
        wait_until(
            lambda: len(committed_values(bootstrap, topic)) == written, 60, "every line committed"
        )
        assert [t.state for t in store.statuses.task_statuses("lines")] == [State.RUNNING]
    assert committed_values(bootstrap, topic) == [f"line-{i}".encode() for i in range(written)]
    transactions = committed_transactions(bootstrap, topic)
    assert sum(transactions) == written
    if boundary == "poll":
        assert max(transactions) <= batch
    else:  # the stream outpaces a poll in an interval
        assert max(transactions) > batch


def test_a_running_stream_commits_where_the_connector_says(
    eos_connect: Connect, store: MetadataStore, bootstrap: str
) -> None:
    """transaction.boundary=connector: a task that asks for a commit after every 100th
    record, polling 50 at a time, commits transactions of exactly 100 records, each as it
    asks (its stream is over, the task still runs)."""
    topic = new_topic(bootstrap)
    extra = {"sequence.limit": "1000", "batch.size": "50", "transaction.every": "100"}
    eos_connect.add_connector(
        "seq", sequence_config(topic, **extra, **{"transaction.boundary": "connector"})
    )
    wait_until(lambda: offsets_done(store, "seq", 1000, 1), 60, "every offset committed")
    assert committed_transactions(bootstrap, topic) == [100] * 10
    assert sequences(committed_values(bootstrap, topic)) == {"s0": list(range(1000))}
    assert [t.state for t in store.statuses.task_statuses("seq")] == [State.RUNNING]


@pytest.mark.parametrize("dropped", [False, True], ids=["written", "dropped"])
def test_a_transaction_the_task_aborts_is_dropped_and_its_offsets_committed(
    eos_connect: Connect, store: MetadataStore, bootstrap: str, tmp_path: Path, dropped: bool
) -> None:
    """A task that asks for a commit after every 100th record and an abort on the 300th,
    its last: the first 200 commit, the aborted 100 never become visible, and their offsets
    are committed all the same, as Kafka Connect does, so that the next run resumes after
    them. Every record's commit_record comes once its offset is committed, with the
    metadata of its write; with a Filter dropping every record, with none."""
    topic, events = new_topic(bootstrap), tmp_path / "events"
    extra = {
        "sequence.limit": "300",
        "batch.size": "50",
        "transaction.every": "100",
        "transaction.abort.every": "300",
        "transaction.boundary": "connector",
        EVENTS: str(events),
        "connector.class": "tests.connectors.AcknowledgedSequenceSourceConnector",
    }
    if dropped:
        extra |= {"transforms": "drop", "transforms.drop.type": "Filter"}
    config = sequence_config(topic, **extra)
    eos_connect.add_connector("seq", config)
    wait_until(lambda: offsets_done(store, "seq", 300, 1), 60, "the aborted records' offsets")
    acks = [e for e in read_events(events) if e["event"] == "ack"]
    assert sorted(int(a["value"].split(":")[1]) for a in acks) == list(range(300))
    for ack in acks:
        number = int(ack["value"].split(":")[1])
        assert ack["committed"] > number, f"{ack}: reported before its offset committed"
        assert ack["written"] is not dropped
    assert committed_values(bootstrap, topic) == (
        [] if dropped else [f"s0:{n}".encode() for n in range(200)]
    )
    eos_connect.update_connector("seq", {**config, "poll.delay.ms": "1"})  # a new run
    wait_until(
        lambda: len([e for e in read_events(events) if e["event"] == "task.start"]) == 2,
        60,
        "the task started again",
    )
    assert [e["next"] for e in read_events(events) if e["event"] == "task.start"] == [
        {"s0": 0},
        {"s0": 300},
    ]


@pytest.mark.both_stores  # a stale run's offsets are refused under each kind's lock
def test_a_zombie_of_the_previous_generation_is_fenced(
    eos_props: dict[str, str], store: MetadataStore, bootstrap: str, spark: Any
) -> None:
    """A run of generation 1 that never learns it was superseded (its heartbeat is an hour
    apart) keeps producing while the connector is reconfigured to two tasks: the herder
    fences it before generation 2 starts, and none of its later records commit. The
    sequences have no end, so the zombie is still producing whenever the fence comes."""
    topic = new_topic(bootstrap)
    config = sequence_config(topic, **{"sequence.partitions": "2", "poll.delay.ms": "50"})
    zombie_props = {**eos_props, "task.heartbeat.interval.ms": "3600000"}
    zombie = start_run(
        store,
        zombie_props,
        "seq",
        config,
        dict(config, assigned="s0,s1"),
        SequenceSourceTask,
        before_run=lambda: store.configs.write_task_count("seq", 1, 1),  # before it checks
    )
    wait_until(lambda: store.offsets.source_offsets("seq"), 60, "the zombie commits offsets")
    runtime = Connect("eos-runtime", eos_props)
    runtime.start()
    try:
        runtime.put_connector("seq", {**config, "tasks.max": "2"})
        outcome = zombie.join(60)
        assert outcome.failed and "fenced" in (outcome.trace or "")
        at_fence = next_numbers(store)
        wait_until(
            lambda: all(n > at_fence.get(s, 0) + 1000 for s, n in next_numbers(store).items()),
            120,
            "generation 2 goes on past the zombie's last commit",
        )
    finally:
        runtime.stop()
    ends = next_numbers(store)  # the tasks' last commits: the runtime stopped cleanly
    assert sorted(ends) == ["s0", "s1"]
    assert_each_below_once(sequences(committed_values(bootstrap, topic)), ends)
    generation, _ = store.configs.task_configs("seq")
    assert store.configs.task_count("seq") == (generation, 2)


def test_a_stop_while_retrying_aborts_the_open_transaction(
    eos_props: dict[str, str], store: MetadataStore, bootstrap: str, tmp_path: Path
) -> None:
    """A run retrying a converter's unavailable store (errors.retry.timeout=-1) midway
    through a poll, an earlier poll in its open transaction, is stopped: it ends as a stop,
    its transaction aborted; the next run delivers every record exactly once."""
    topic, events = new_topic(bootstrap), tmp_path / "events.jsonl"
    config = sequence_config(
        topic,
        **{
            "assigned": "s0",
            "sequence.limit": "300",
            "transaction.boundary": "interval",
            "transaction.boundary.interval.ms": "600000",
            "errors.retry.timeout": "-1",
            "value.converter": "tests.connectors.UnavailableForValueConverter",
            f"value.converter.{EVENTS}": str(events),
            "value.converter.unavailable.for": "s0:150",
        },
    )

    def run(run_config: dict[str, str]) -> Any:
        return start_counted_run(store, eos_props, "seq", run_config, SequenceSourceTask)

    first = run(config)
    wait_until(lambda: read_events(events), 60, "the converter's store unavailable")
    store.configs.set_target_state("seq", TargetState.STOPPED)
    assert first.join().failed is False
    # the first poll was produced (the test broker hands out aborted records too), and
    # none of it committed: the transaction it was in was aborted
    produced = sequences(read_values(bootstrap, topic, 100, quiet_s=0.5))["s0"]
    assert produced[:100] == list(range(100))
    assert committed_values(bootstrap, topic) == []
    store.configs.set_target_state("seq", TargetState.STARTED)
    second = run(
        {
            **config,
            "value.converter.unavailable.for": "none",
            "transaction.boundary.interval.ms": "200",
        }
    )
    wait_until(lambda: offsets_done(store, "seq", 300, 1), 120, "every offset committed")
    store.configs.set_target_state("seq", TargetState.STOPPED)
    assert second.join().failed is False
    assert_each_exactly_once(sequences(committed_values(bootstrap, topic)), 300, ["s0"])


@pytest.mark.both_stores  # the generation is checked under each kind's lock
def test_a_run_of_a_stale_generation_refuses_to_start(
    eos_props: dict[str, str], store: MetadataStore, bootstrap: str
) -> None:
    topic = new_topic(bootstrap)
    config = sequence_config(topic, **{"assigned": "s0", "sequence.limit": "10"})
    # No task-count record after the configs: the run waits for the next generation.
    outcome = start_run(store, eos_props, "seq", config, config, SequenceSourceTask).join()
    assert not outcome.failed
    run = start_run(store, eos_props, "seq", config, config, SequenceSourceTask)
    store.configs.write_task_configs("seq", [config])  # a newer generation appears
    assert not run.join().failed
    assert committed_values(bootstrap, topic) == []
    status = {s.task_id: s for s in store.statuses.task_statuses("seq")}
    assert status[0].state is not State.RUNNING


def test_exactly_once_preflight_errors_name_their_fields(tmp_path: Path) -> None:
    recording = {
        "connector.class": "tests.connectors.RecordingSourceConnector",
        "events.file": str(tmp_path / "events"),
        "topic": "t",
        "exactly.once.support": "required",
        "transaction.boundary": "connector",
        "transaction.boundary.interval.ms": "-1",
    }
    errors = config_errors(recording)
    assert "does not implement the API required" in errors["exactly.once.support"][0]
    assert "connector-defined transaction boundaries" in errors["transaction.boundary"][0]
    assert "at least 0" in errors["transaction.boundary.interval.ms"][0]


def test_switching_to_exactly_once_resumes_from_the_stored_offsets(
    worker_props: dict[str, str],
    eos_props: dict[str, str],
    store: MetadataStore,
    bootstrap: str,
    spark: Any,
) -> None:
    """Offsets committed at-least-once (in the store) are where exactly-once starts."""
    topic = new_topic(bootstrap)
    for props, limit in ((worker_props, 1000), (eos_props, 2000)):
        runtime = Connect("runtime", props)
        runtime.start()
        try:
            runtime.put_connector("seq", sequence_config(topic, **{"sequence.limit": str(limit)}))
            wait_until(lambda limit=limit: offsets_done(store, "seq", limit, 1), 60, "offsets")
        finally:
            runtime.stop()
    assert_each_exactly_once(sequences(committed_values(bootstrap, topic)), 2000, ["s0"])


def test_offsets_set_outside_the_tasks_are_where_exactly_once_tasks_read_them(
    eos_connect: Connect, store: MetadataStore, bootstrap: str, eos_props: dict[str, str]
) -> None:
    """Exactly-once tasks read their offsets from the offsets topic: offsets altered while
    STOPPED (KIP-875), reset, or given to a new connector of the same name (KIP-995) reach
    it before they run, so each resumes where it was told."""
    topic = new_topic(bootstrap)
    config = sequence_config(topic, **{"sequence.limit": "300"})

    def stopped() -> None:
        eos_connect.writes.stop("seq")
        wait_until(
            lambda: eos_connect.status("seq")["connector"]["state"] == "STOPPED", 60, "STOPPED"
        )

    eos_connect.add_connector("seq", config)
    wait_until(lambda: offsets_done(store, "seq", 300, 1), 60, "0 to 299 committed")
    stopped()
    eos_connect.writes.alter_source_offsets("seq", [({"sequence": "s0"}, {"next": 200})])
    eos_connect.writes.resume("seq")
    wait_until(lambda: len(committed_values(bootstrap, topic)) == 400, 60, "200 to 299 again")
    wait_until(lambda: offsets_done(store, "seq", 300, 1), 60, "299 committed again")
    stopped()
    eos_connect.writes.reset_source_offsets("seq")
    eos_connect.writes.resume("seq")
    wait_until(lambda: len(committed_values(bootstrap, topic)) == 700, 60, "all again")
    eos_connect.delete_connector("seq")
    wait_until(
        lambda: (d := store.configs.deletion("seq")) is not None and d.state is DeletionState.DONE,
        60,
        "deleted",
    )
    initial = [{"partition": {"sequence": "s0"}, "offset": {"next": 250}}]
    eos_connect.add_connector("seq", config, initial_offsets=initial)
    wait_until(lambda: len(committed_values(bootstrap, topic)) == 750, 60, "250 to 299")

    numbers = sequences(committed_values(bootstrap, topic))["s0"]
    expected = [*range(300), *range(200, 300), *range(300), *range(250, 300)]
    assert sorted(numbers) == sorted(expected)
    offsets_topic = OffsetsTopic(WorkerConfig(eos_props), "seq", {})
    reader = CommittedLogReader({"bootstrap.servers": bootstrap})
    try:
        offsets_topic.ensure(reader)
        assert list(offsets_topic.read(reader).values()) == [({"sequence": "s0"}, {"next": 300})]
    finally:
        reader.close()
