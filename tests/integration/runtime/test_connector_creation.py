"""Creating a connector as Kafka Connect 4.x does, on a running runtime: in an initial state
(KIP-980) and from initial offsets (KIP-995), through REST and through the Airflow
operator; and the worker's health while it starts, runs, and is held up (KIP-1017)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient

from airflow_provider_connect import __version__
from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.offsets import sink_entry
from airflow_provider_connect.control.overrides import OverridePolicy
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import MetadataStore
from tests.connectors import read_events, recording_source
from tests_common.broker import free_port
from tests_common.kafka import new_topic, produce, read_values, wait_until

pytestmark = pytest.mark.integration

STARTING = "Worker is still starting up."


@pytest.fixture
def runtime(worker_props: dict[str, str], spark: Any) -> Iterator[Connect]:
    """A runtime serving its REST API (``runtime.rest.url``)."""
    connect = Connect("creation", {**worker_props, "listeners": f"http://127.0.0.1:{free_port()}"})
    connect.start(rest=True)
    yield connect
    connect.stop()


def url(runtime: Connect, path: str) -> str:
    assert runtime.rest is not None
    return runtime.rest.url + path


def status(runtime: Connect, name: str) -> tuple[str, list[str]]:
    found = requests.get(url(runtime, f"/connectors/{name}/status"), timeout=10).json()
    return found["connector"]["state"], [t["state"] for t in found["tasks"]]


def create(runtime: Connect, body: dict[str, Any]) -> requests.Response:
    return requests.post(url(runtime, "/connectors"), json=body, timeout=10)


def test_a_connector_starts_in_its_initial_state(
    runtime: Connect, bootstrap: str, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    config = recording_source(events, new_topic(bootstrap), {"tasks.max": "2"})
    for name, initial in [("stopped", "stopped"), ("paused", "PAUSED"), ("running", "Running")]:
        answer = create(runtime, {"name": name, "config": config, "initial_state": initial})
        assert answer.status_code == 201, answer.text
        assert "offsets_status" not in answer.json()  # only with initial offsets
    wait_until(lambda: status(runtime, "stopped") == ("STOPPED", []), 60, "created STOPPED")
    wait_until(lambda: status(runtime, "paused") == ("PAUSED", ["PAUSED", "PAUSED"]), 60, "PAUSED")
    wait_until(
        lambda: status(runtime, "running") == ("RUNNING", ["RUNNING", "RUNNING"]), 60, "RUNNING"
    )
    starts = [e for e in read_events(events) if e["event"] == "connector.start"]
    assert len(starts) == 2  # the STOPPED connector was never started

    wrong = create(runtime, {"name": "odd", "config": config, "initial_state": "SLEEPING"})
    assert wrong.status_code == 400
    assert wrong.json()["message"] == (
        "Invalid initial_state 'SLEEPING': must be one of RUNNING, PAUSED, STOPPED"
    )
    assert requests.get(url(runtime, "/connectors/odd"), timeout=10).status_code == 404

    assert requests.put(url(runtime, "/connectors/stopped/resume"), timeout=10).status_code == 202
    wait_until(
        lambda: status(runtime, "stopped") == ("RUNNING", ["RUNNING", "RUNNING"]), 60, "resumed"
    )


@pytest.mark.both_stores  # the stored offsets are replaced in one transaction
def test_a_source_starts_from_its_initial_offsets(
    runtime: Connect, store: MetadataStore, bootstrap: str, tmp_path: Path
) -> None:
    topic, events = new_topic(bootstrap), tmp_path / "events.jsonl"
    # what an earlier connector of that name left: replaced, not merged
    store.offsets.commit_source_offsets(
        "rec", [({"task": 0}, {"next": 4}), ({"task": 1}, {"n": 9})]
    )
    initial = [{"partition": {"task": 0}, "offset": {"next": 2}}]
    body = {
        "name": "rec",
        "config": recording_source(events, topic),
        "initial_offsets": initial,
        "initial_state": "STOPPED",  # its offsets read before it commits any
    }
    # KIP-995 gives the field "in the same format as the PATCH /connectors/{name}/offsets
    # body", and a list in its example: both mean the same
    for name, given in [("rec", initial), ("rec-body", {"offsets": initial})]:
        answer = create(runtime, {**body, "name": name, "initial_offsets": given})
        assert answer.status_code == 201, answer.text
        assert answer.json()["offsets_status"] == (
            "The offsets for this connector have been altered successfully"
        )
        offsets = requests.get(url(runtime, f"/connectors/{name}/offsets"), timeout=10)
        assert offsets.json() == {"offsets": initial}
    assert requests.put(url(runtime, "/connectors/rec/resume"), timeout=10).status_code == 202
    assert read_values(bootstrap, topic, 8) == [f"0-{i}".encode() for i in range(2, 10)]
    (start,) = [e for e in read_events(events) if e["event"] == "task.start"]
    assert start["resume_from"] == 2

    shape = (
        'initial_offsets must be {"offsets": [{"partition": {...}, "offset": {...}}]}, as '
        "PATCH /connectors/{name}/offsets takes them, or the list alone"
    )
    for bad, message in [
        ({"offsets": initial, "more": 1}, shape),
        ({"offset": initial}, shape),
        ({"offsets": {"partition": {"task": 0}}}, shape),
        ("offsets", shape),
        ([{"partition": {"task": [0]}, "offset": None}], "primitive values"),
        ({"offsets": [{"partition": {"task": [0]}}]}, "primitive values"),
        ([], "initial_offsets must not be empty"),
        ({"offsets": []}, "initial_offsets must not be empty"),
    ]:
        refused = create(runtime, {**body, "name": "bad", "initial_offsets": bad})
        assert refused.status_code == 400 and refused.json()["error_code"] == 400, refused.text
        assert message in refused.json()["message"]
    not_json = '{"name": "bad", "config": {}, "initial_offsets": [{"partition": {"p": NaN}}]}'
    refused = requests.post(
        url(runtime, "/connectors"),
        data=not_json,
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert refused.status_code == 400 and "NaN is not a JSON value" in refused.json()["message"]
    assert store.offsets.source_offsets("bad") == []


def test_a_sink_starts_from_its_initial_offsets(
    runtime: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic, events = new_topic(bootstrap), tmp_path / "events.jsonl"
    name = f"sink-{topic}"  # its consumer group its own on the session's shared broker
    produce(bootstrap, topic, [f"v{i}".encode() for i in range(6)])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # What an earlier sink of that name left: replaced. (An earlier sink's offsets of other
    # partitions are dropped by deleting the group first, which the test broker mishandles:
    # later offset commits of a deleted group hang there. tests/unit/runtime/test_sink_offsets.py
    # covers that branch.)
    group = f"connect-{name}"
    admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [KafkaPartition(topic, 0, 5)])]
    )[group].result(timeout=30)
    config = {
        "connector.class": "tests.connectors.RecordingSinkConnector",
        "events.file": str(events),
        "topics": topic,
        "value.converter": "StringConverter",
    }
    initial = [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 2}}
    ]
    too_far = {"kafka_topic": topic, "kafka_partition": 2**31}
    for bad in [
        [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"at": 2}}],
        [{"partition": too_far, "offset": {"kafka_offset": 2}}],
    ]:
        refused = create(runtime, {"name": name, "config": config, "initial_offsets": bad})
        assert refused.status_code == 400 and "kafka_offset" in refused.json()["message"]

    answer = create(runtime, {"name": name, "config": config, "initial_offsets": initial})
    assert answer.status_code == 201, answer.text
    assert requests.get(url(runtime, f"/connectors/{name}/offsets"), timeout=10).json() == {
        "offsets": initial
    }

    def put() -> list[str]:
        return [v for e in read_events(events) if e["event"] == "put" for v in e["values"]]

    wait_until(lambda: put() == ["v2", "v3", "v4", "v5"], 60, "records from offset 2 put")
    assert requests.put(url(runtime, f"/connectors/{name}/stop"), timeout=10).status_code == 204
    wait_until(lambda: status(runtime, name) == ("STOPPED", []), 60, "STOPPED")
    offsets = requests.get(url(runtime, f"/connectors/{name}/offsets"), timeout=10).json()
    assert offsets == {"offsets": [sink_entry(topic, 0, 6)]}

    # Altered while STOPPED by a writer that reaches no Kafka (the Connectors page, the
    # hook): staged, shown over Kafka's, then written at the next start, changing only the
    # partitions they name (KIP-875's alter).
    other = new_topic(bootstrap)
    ConnectorWrites(runtime.store, OverridePolicy).alter_offsets(name, [sink_entry(other, 0, 1)])
    both = {"offsets": sorted([sink_entry(topic, 0, 6), sink_entry(other, 0, 1)], key=str)}

    def shown() -> dict[str, Any]:
        found = requests.get(url(runtime, f"/connectors/{name}/offsets"), timeout=10).json()
        return {"offsets": sorted(found["offsets"], key=str)}

    assert shown() == both
    assert requests.put(url(runtime, f"/connectors/{name}/resume"), timeout=10).status_code == 202
    wait_until(lambda: runtime.store.configs.connector(name).initial_offsets is None, 60, "written")
    assert requests.put(url(runtime, f"/connectors/{name}/stop"), timeout=10).status_code == 204
    wait_until(lambda: status(runtime, name) == ("STOPPED", []), 60, "STOPPED again")
    assert shown() == both


def test_the_operator_creates_a_connector_stopped_at_its_initial_offsets(
    connection: str, runtime: Connect, store: MetadataStore, bootstrap: str, tmp_path: Path
) -> None:
    """Given as the body of ``PATCH /connectors/{name}/offsets`` (KIP-995's format; REST's
    test has the list too)."""
    initial = {"offsets": [{"partition": {"task": 0}, "offset": {"next": 7}}]}
    outcome = CreateConnectorOperator(
        task_id="create",
        connector_name="later",
        config=recording_source(tmp_path / "events.jsonl", new_topic(bootstrap)),
        initial_state="STOPPED",
        initial_offsets=initial,
        poll_interval=0.2,
        timeout=60,
        deferrable=False,
    ).execute(context={})
    assert outcome["created"] is True
    assert outcome["status"]["connector"]["state"] == "STOPPED" and outcome["status"]["tasks"] == []
    assert store.offsets.source_offsets("later") == [({"task": 0}, {"next": 7})]


def test_health_follows_the_herder(
    connection: str, worker_props: dict[str, str], spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    """Starting (503) until the herder's first pass ends, here held up by a connector's
    ``start``; healthy (200) once it has; unhealthy (500) while a connector holds it up for
    longer than the health check's timeout, saying what the herder is doing. The Airflow
    hook reads the same, and finds the runtime serving only once it is healthy."""
    hook = ConnectHook()
    gate, later_gate = tmp_path / "gate", tmp_path / "later-gate"
    topic, events = new_topic(bootstrap), tmp_path / "events.jsonl"
    connect = Connect("health", {**worker_props, "listeners": f"http://127.0.0.1:{free_port()}"})
    connect.health_timeout_s = 5.0
    connect.add_connector("slow", recording_source(events, topic, {"start.gate": str(gate)}))
    connect.start(rest=True)

    def health() -> tuple[int, dict[str, str]]:
        answer = requests.get(url(connect, "/health"), timeout=10)
        return answer.status_code, answer.json()

    try:
        code, body = wait_until(
            lambda: "starting connector slow" in (h := health())[1]["message"] and h,
            60,
            "the herder held up by the connector's start",
        )
        assert code == 503 and body["status"] == "starting"
        assert body["message"].startswith(f"{STARTING} The herder is currently starting ")
        seen = hook.runtime_health()
        assert seen is not None and seen["status"] == "starting" and "slow" in seen["message"]
        assert hook.serving_runtime() is None
        gate.touch()
        healthy = {
            "status": "healthy",
            "message": "Worker has completed startup and is ready to handle requests.",
        }
        wait_until(lambda: health() == (200, healthy), 60, "healthy", state=health)
        assert wait_until(hook.serving_runtime, 60, "the hook finds it serving") == {
            "holder": seen["holder"],
            "rest_url": url(connect, ""),
            "version": __version__,
        }
        connect.add_connector(
            "slower", recording_source(events, topic, {"start.gate": str(later_gate)})
        )
        code, body = wait_until(lambda: (h := health())[0] == 500 and h, 60, "unhealthy")
        assert body["status"] == "unhealthy" and body["message"].startswith(
            "Worker was unable to handle this request and may be unable to handle other "
            "requests. The herder is currently "
        )
        assert "slower" in body["message"]
        later_gate.touch()
        wait_until(lambda: health()[0] == 200, 60, "healthy again", state=health)
    finally:
        gate.touch()
        later_gate.touch()
        connect.stop()
