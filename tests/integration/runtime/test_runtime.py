"""The runtime end to end: herder on the driver, task runs as Spark jobs, a real broker, a
real SQLite store. Connectors are driven through the embedded API."""

from __future__ import annotations

import datetime
import re
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException

from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState, MetadataStore
from tests.connectors import PLAIN, read_events, recording_source
from tests_common.broker import free_port
from tests_common.kafka import new_topic, read_values, wait_until

pytestmark = pytest.mark.integration


def states(connect: Connect, name: str) -> tuple[str, list[str]]:
    status = connect.status(name)
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def running(connect: Connect, name: str, tasks: int = 1) -> bool:
    return states(connect, name) == ("RUNNING", ["RUNNING"] * tasks)


@pytest.mark.both_stores  # the runtime end to end on each kind
def test_lines_travel_from_a_file_through_kafka_to_a_file(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(2000)))
    started = time.monotonic()
    connect.add_connector(
        "file-source",
        {"connector.class": "FileStreamSource", "file": str(source), "topic": topic, **PLAIN},
    )
    connect.add_connector(
        "file-sink",
        {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic, **PLAIN},
    )
    wait_until(
        lambda: running(connect, "file-source") and running(connect, "file-sink"),
        60,
        "both RUNNING",
    )
    print(f"create -> RUNNING: {time.monotonic() - started:.1f}s")
    wait_until(
        lambda: sink.exists() and len(sink.read_text().splitlines()) >= 2000,
        60,
        "all lines in the sink file",
    )
    assert sink.read_text().splitlines() == [f"line {i}" for i in range(2000)]
    assert (
        connect.status("file-sink")["type"] == "sink"
        and connect.status("file-source")["type"] == "source"
    )


def test_reconfiguration_starts_a_new_generation_without_loss(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    config = recording_source(str(tmp_path / "e.jsonl"), topic, {"count": "50", "tasks.max": "1"})
    connect.add_connector("rec", config)
    wait_until(lambda: running(connect, "rec"), 60, "RUNNING")
    assert len(read_values(bootstrap, topic, 50, quiet_s=0.2)) == 50
    connect.update_connector("rec", {**config, "tasks.max": "2"})
    wait_until(lambda: running(connect, "rec", tasks=2), 60, "two tasks RUNNING")
    values = read_values(bootstrap, topic, 100)
    assert sorted(v.decode() for v in values) == sorted(
        [f"0-{i}" for i in range(50)] + [f"1-{i}" for i in range(50)]
    )
    starts = [
        e
        for e in read_events(tmp_path / "e.jsonl")
        if e["event"] == "task.start" and e["task"] == 0
    ]
    assert [s["resume_from"] for s in starts] == [0, 50]  # task 0 resumed from its committed offset


def test_delete_stops_everything_as_deleted(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    events = tmp_path / "e.jsonl"
    connect.add_connector(
        "rec",
        recording_source(str(events), new_topic(bootstrap)),
    )
    wait_until(lambda: running(connect, "rec"), 60, "RUNNING")
    connect.delete_connector("rec")
    deletion = wait_until(
        lambda: (
            (d := connect.store.configs.deletion("rec"))
            and d.state is not DeletionState.PENDING
            and d
        ),
        60,
        "cleanup done",
    )
    assert deletion.state is DeletionState.DONE
    stops = {
        (e["event"], e["deleted"]) for e in read_events(events) if e["event"].endswith(".stop")
    }
    assert stops == {("connector.stop", True), ("task.stop", True)}
    task_events = [e["event"] for e in read_events(events) if e["event"].startswith("task.")]
    assert task_events[-1] == "task.stopped"  # last of the task's calls (KIP-419)


def test_failing_task_goes_failed_and_restart_brings_it_back(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    config = recording_source(
        str(tmp_path / "e.jsonl"), topic, {"count": "30", "fail.after": "6", "tasks.max": "2"}
    )
    connect.add_connector("flaky", config)
    wait_until(
        lambda: states(connect, "flaky")[1] == ["FAILED", "RUNNING"],
        60,
        "task 0 FAILED, task 1 RUNNING",
    )
    failed = connect.status("flaky")["tasks"][0]
    assert "failed on purpose at record 6" in failed["trace"]
    connect.update_connector("flaky", {**config, "fail.after": "-1"})  # fixed; then restart
    wait_until(lambda: running(connect, "flaky", tasks=2), 60, "both RUNNING after the fix")
    values = {v.decode() for v in read_values(bootstrap, topic, 60)}
    assert values == {f"{t}-{i}" for t in (0, 1) for i in range(30)}


def test_restart_request_restarts_a_failed_task(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    config = recording_source(str(tmp_path / "e.jsonl"), new_topic(bootstrap), {"fail.after": "0"})
    connect.add_connector("f", config)
    wait_until(lambda: states(connect, "f")[1] == ["FAILED"], 60, "FAILED")
    connect.store.configs.request_restart("f", include_tasks=True, only_failed=True)
    wait_until(
        lambda: sum(e["event"] == "task.start" for e in read_events(tmp_path / "e.jsonl")) == 2,
        60,
        "started again",
    )


def test_invalid_config_is_rejected_with_every_field(connect: Connect) -> None:
    with pytest.raises(ConfigValidationError) as e:
        connect.add_connector("bad", {"connector.class": "FileStreamSource", "tasks.max": "0"})
    message = str(e.value)
    assert "tasks.max" in message and "file" in message and "topic" in message
    with pytest.raises(
        ConfigValidationError, match="Failed to find any class that implements Connector"
    ):
        connect.add_connector("bad", {"connector.class": "no.such.Connector"})


def test_delete_while_the_runtime_is_down_cleans_up_on_start(
    worker_props: dict[str, str], spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    events = tmp_path / "e.jsonl"
    first = Connect("test-runtime", worker_props)
    first.start()
    first.add_connector(
        "rec",
        recording_source(str(events), new_topic(bootstrap)),
    )
    wait_until(lambda: running(first, "rec"), 60, "RUNNING")
    first.stop()
    assert {
        (e["event"], e.get("deleted")) for e in read_events(events) if e["event"].endswith(".stop")
    } == {
        ("connector.stop", False),
        ("task.stop", False),
    }
    offline = MetadataStore(worker_props["metadata.url"])  # e.g. an Airflow task, runtime down
    offline.configs.delete_connector("rec")
    assert offline.configs.deletion("rec").state is DeletionState.PENDING

    second = Connect("test-runtime", worker_props)
    second.start()
    try:
        wait_until(
            lambda: offline.configs.deletion("rec").state is DeletionState.DONE,
            60,
            "cleanup ran after the restart",
        )
    finally:
        second.stop()
        offline.close()
    deleted_stops = {
        e["event"] for e in read_events(events) if e["event"].endswith(".stop") and e["deleted"]
    }
    assert deleted_stops == {"connector.stop", "task.stop"}


def test_ten_connectors_at_once(connect: Connect, bootstrap: str, tmp_path: Path) -> None:
    topics = {f"c{i}": new_topic(bootstrap) for i in range(10)}
    for name, topic in topics.items():
        config = recording_source(str(tmp_path / f"{name}.jsonl"), topic, {"count": "20"})
        connect.add_connector(name, config)
    wait_until(lambda: all(running(connect, name) for name in topics), 120, "all ten RUNNING")
    for name, topic in topics.items():
        assert len(read_values(bootstrap, topic, 20, quiet_s=0.1)) == 20, name


def test_source_topics_are_created_with_the_configured_partitions(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    from confluent_kafka.admin import AdminClient

    topic = f"created-{uuid.uuid4().hex[:8]}"
    config = recording_source(
        str(tmp_path / "e.jsonl"),
        topic,
        {
            "count": "9",
            "topic.creation.default.partitions": "3",
            "topic.creation.default.replication.factor": "1",
            "producer.override.linger.ms": "0",
        },
    )
    connect.add_connector("creator", config)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    wait_until(lambda: topic in admin.list_topics(timeout=5).topics, 60, "topic created")
    assert len(admin.list_topics(timeout=5).topics[topic].partitions) == 3
    assert len(read_values(bootstrap, topic, 9, quiet_s=0.2)) == 9
    assert connect.store.statuses.active_topics("creator") == [topic]


def test_a_task_without_heartbeats_is_not_reported_running(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    from sqlalchemy import update

    from airflow_provider_connect.store.models import TaskStatusRow

    config = recording_source(str(tmp_path / "e.jsonl"), new_topic(bootstrap))
    connect.add_connector("quiet", config)
    wait_until(lambda: running(connect, "quiet"), 60, "RUNNING")
    connect.stop()  # the runtime is gone: nobody beats any more
    long_ago = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    with connect.store.engine.begin() as c:  # as if the last beat were long ago
        c.execute(update(TaskStatusRow).values(heartbeat_at=long_ago, state="RUNNING"))
    (task,) = connect.status("quiet")["tasks"]
    assert task["state"] == "UNASSIGNED"
    assert re.fullmatch(
        rf"No heartbeat from worker {re.escape(task['worker_id'])} for \d+ s "
        r"\(task.heartbeat.timeout.ms is 15000\): the executor running the task cannot reach "
        r"the metadata database \(a network partition, a lost executor\) or has stopped",
        task["trace"],
    )


def test_a_connector_can_ask_for_new_task_configs(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    tasks_file = tmp_path / "partitions"
    tasks_file.write_text("1")
    config = recording_source(
        str(tmp_path / "e.jsonl"),
        new_topic(bootstrap),
        {"tasks.max": "3", "tasks.file": str(tasks_file)},
    )
    connect.add_connector("growing", config)
    wait_until(lambda: running(connect, "growing", tasks=1), 60, "one task")
    tasks_file.write_text(
        "3"
    )  # the source system grew: the connector calls request_task_reconfiguration()
    wait_until(lambda: running(connect, "growing", tasks=3), 60, "three tasks")


def test_failed_tasks_restart_with_backoff_when_configured(
    worker_props: dict[str, str], spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    events = tmp_path / "e.jsonl"
    props = {**worker_props, "task.restart.backoff.ms": "100", "task.restart.backoff.max.ms": "400"}
    with Connect("test-runtime", props) as runtime:
        config = recording_source(str(events), new_topic(bootstrap), {"fail.after": "0"})
        runtime.add_connector("retrying", config)
        wait_until(
            lambda: sum(e["event"] == "task.start" for e in read_events(events)) >= 4,
            60,
            "restarted three times",
        )
        runtime.delete_connector("retrying")


@pytest.mark.both_stores  # the herder lease is taken under each kind's lock
def test_one_driver_runs_the_connectors_and_a_standby_takes_over(
    worker_props: dict[str, str], store: MetadataStore, spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    """Two runtimes started together: whichever takes the lease first leads (nothing says
    which, as with Kafka Connect's group leader); when it stops, the other takes over."""
    events = tmp_path / "e.jsonl"
    runtimes = [Connect("test-runtime", worker_props), Connect("test-runtime", worker_props)]
    for runtime in runtimes:
        runtime.start()
    try:
        runtimes[0].add_connector(
            "solo",
            recording_source(str(events), new_topic(bootstrap)),
        )
        wait_until(lambda: leader(runtimes, store) is not None, 60, "a runtime leads")
        first = leader(runtimes, store)
        assert first is not None
        (standby,) = [r for r in runtimes if r is not first]
        wait_until(lambda: running(standby, "solo"), 60, "RUNNING")
        starts = sum(e["event"] == "task.start" for e in read_events(events))
        assert starts == 1  # the standby did not start it too
        first.stop()  # the leader goes away: the standby takes over
        wait_until(
            lambda: (
                running(standby, "solo")
                and sum(e["event"] == "task.start" for e in read_events(events)) == 2
            ),
            60,
            "the standby runs it",
        )
        assert leader(runtimes, store) is standby
    finally:
        for runtime in runtimes:
            runtime.stop()


def leader(runtimes: list[Connect], store: MetadataStore) -> Connect | None:
    """The runtime whose herder holds the lease, as the store says."""
    holder = store.lease.current()
    for runtime in runtimes:
        if holder is not None and runtime.herder and runtime.herder.lease_holder == holder.holder:
            return runtime
    return None


def test_the_embedded_api_example_of_the_docs_runs(
    bootstrap: str,
    spark: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/runtime.md's embedded example, as written but for the broker's address: it
    starts a runtime, creates a connector and prints its status."""
    docs = Path(__file__).resolve().parents[3] / "docs" / "runtime.md"
    (block,) = [
        b
        for b in re.findall(r"```python\n(.*?)```", docs.read_text(), re.S)
        if "from airflow_provider_connect.runtime import Connect" in b
    ]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("one\n")
    exec(compile(block.replace("127.0.0.1:9092", bootstrap), str(docs), "exec"), {})
    printed = capsys.readouterr().out
    assert "'name': 'lines'" in printed and "'type': 'source'" in printed, printed
    store = MetadataStore(f"sqlite:///{tmp_path / 'connect.db'}")
    assert store.configs.connector("lines").config["topic"] == "lines"
    store.close()


def test_a_runtime_that_fails_to_start_leaves_no_rest_listener_bound(
    worker_props: dict[str, str], spark: Any
) -> None:
    """The REST API starts first; an admin client setting librdkafka refuses then fails the
    cluster watch: the error reaches the caller and the REST port is free again."""
    port = free_port()
    props = {
        **worker_props,
        "listeners": f"http://127.0.0.1:{port}",
        "admin.no.such.property": "1",
    }
    runtime = Connect("test-runtime", props)
    with pytest.raises(KafkaException, match="no.such.property"):
        runtime.start(rest=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # raises if a listener were left bound
