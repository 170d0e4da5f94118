"""Kafka Connect's REST API, every endpoint and its error paths, on a running runtime."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect import __version__
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from tests.connectors import recording_source
from tests.plugins import KAFKA, KAFKA_ORDER, KAFKA_PLUGINS
from tests_common.kafka import new_topic, wait_until

# On both stores: REST's answers (409 for a taken name, ...) come from each kind's errors.
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]


@pytest.fixture
def client(connect: Connect) -> Iterator[TestClient]:
    with TestClient(create_app(connect.store, connect.worker)) as test_client:
        yield test_client


@pytest.fixture
def config(bootstrap: str, tmp_path: Path) -> dict[str, str]:
    return recording_source(
        str(tmp_path / "e.jsonl"), new_topic(bootstrap), {"count": "5", "secret": "hunter2"}
    )


def task_states(client: TestClient, name: str) -> list[str]:
    return states(client, name)[1]


def states(client: TestClient, name: str) -> tuple[str, list[str]]:
    """The connector's state and its tasks' (each updated on its own, within a second)."""
    status = client.get(f"/connectors/{name}/status").json()
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def test_root_and_health(client: TestClient) -> None:
    assert "version" in client.get("/").json()
    assert client.get("/health").json()["status"] == "healthy"


def test_create_read_and_delete(client: TestClient, config: dict[str, str]) -> None:
    created = client.post("/connectors", json={"name": "rec", "config": config})
    assert created.status_code == 201
    body = created.json()
    assert (
        body["name"] == "rec"
        and body["type"] == "source"
        and body["config"]["secret"] == "[hidden]"
    )
    assert client.post("/connectors", json={"name": "rec", "config": config}).status_code == 409
    assert client.get("/connectors").json() == ["rec"]
    assert client.get("/connectors/").json() == ["rec"]  # a trailing slash is fine
    wait_until(lambda: task_states(client, "rec") == ["RUNNING"], 60, "RUNNING")
    status = client.get("/connectors/rec/status").json()
    assert status["connector"]["state"] == "RUNNING" and status["type"] == "source"
    expanded = client.get("/connectors?expand=status&expand=info").json()
    assert expanded["rec"]["status"]["name"] == "rec" and expanded["rec"]["info"]["tasks"] == [
        {"connector": "rec", "task": 0}
    ]
    assert client.get("/connectors/rec").json()["tasks"] == [{"connector": "rec", "task": 0}]
    assert client.get("/connectors/rec/config").json()["secret"] == "[hidden]"
    (task,) = client.get("/connectors/rec/tasks").json()
    assert task["id"] == {"connector": "rec", "task": 0} and task["config"]["secret"] == "[hidden]"
    assert client.get("/connectors/rec/tasks/0/status").json()["state"] == "RUNNING"
    assert "hunter2" not in client.get("/connectors?expand=info&expand=status").text

    assert client.delete("/connectors/rec").status_code == 204
    assert client.get("/connectors/rec").status_code == 404
    assert client.get("/connectors").json() == []


def test_put_creates_then_updates_and_keeps_hidden_secrets(
    connect: Connect, client: TestClient, config: dict[str, str]
) -> None:
    assert client.put("/connectors/rec/config", json=config).status_code == 201
    updated = client.put(
        "/connectors/rec/config", json={**config, "count": "7", "secret": "[hidden]"}
    )
    assert updated.status_code == 200 and updated.json()["config"]["count"] == "7"
    assert (
        connect.store.configs.connector("rec").config["secret"] == "hunter2"
    )  # the stored secret was kept
    patched = client.patch("/connectors/rec/config", json={"count": "9", "value.converter": None})
    assert patched.status_code == 200
    stored = connect.store.configs.connector("rec").config
    assert (
        stored["count"] == "9" and "value.converter" not in stored and stored["secret"] == "hunter2"
    )


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"config": {}}', "Connector name must be provided"),
        (
            b'{"name": "x", "config": {"connector.class": "no.such.Thing"}}',
            "Failed to find any class that implements Connector",
        ),
        (
            b'{"name": "x", "config": {"connector.class": "FileStreamSource", "tasks.max": "zero"}}',
            "tasks.max",
        ),
    ],
)
def test_client_mistakes_are_400(client: TestClient, request_body: bytes, message: str) -> None:
    response = client.post(
        "/connectors", content=request_body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error_code"] == 400 and message in response.json()["message"]


def test_invalid_config_lists_each_bad_field(client: TestClient) -> None:
    response = client.post(
        "/connectors",
        json={"name": "f", "config": {"connector.class": "FileStreamSource", "tasks.max": "0"}},
    )
    message = response.json()["message"]
    assert response.status_code == 400 and "3 error(s)" in message
    for field in ("tasks.max", "one of file or files", '"topic"'):
        assert field in message


def test_unknown_names_are_404(client: TestClient, config: dict[str, str]) -> None:
    for method, path in [
        ("get", "/connectors/nope"),
        ("get", "/connectors/nope/status"),
        ("get", "/connectors/nope/config"),
        ("delete", "/connectors/nope"),
        ("put", "/connectors/nope/pause"),
        ("post", "/connectors/nope/restart"),
        ("get", "/connectors/nope/tasks"),
        ("get", "/connectors/nope/offsets"),
        ("get", "/connector-plugins/Nope/config"),
    ]:
        response = getattr(client, method)(path)
        assert response.status_code == 404, (method, path)
        assert response.json()["error_code"] == 404
    client.post("/connectors", json={"name": "rec", "config": config})
    assert client.get("/connectors/rec/tasks/7/status").status_code == 404


def test_pause_resume_stop_and_restart(client: TestClient, config: dict[str, str]) -> None:
    client.post("/connectors", json={"name": "rec", "config": config})
    wait_until(lambda: task_states(client, "rec") == ["RUNNING"], 60, "RUNNING")
    assert client.put("/connectors/rec/pause").status_code == 202
    wait_until(
        lambda: states(client, "rec") == ("PAUSED", ["PAUSED"]), 60, "connector and task PAUSED"
    )
    assert client.put("/connectors/rec/resume").status_code == 202
    wait_until(lambda: task_states(client, "rec") == ["RUNNING"], 60, "RUNNING again")
    assert client.post("/connectors/rec/restart").status_code == 204
    restarted = client.post("/connectors/rec/restart?includeTasks=True&onlyFailed=false")
    assert restarted.status_code == 202 and restarted.json()["name"] == "rec"
    assert client.post("/connectors/rec/tasks/0/restart").status_code == 204
    assert client.put("/connectors/rec/stop").status_code == 204
    wait_until(
        lambda: client.get("/connectors/rec/status").json()["connector"]["state"] == "STOPPED",
        60,
        "STOPPED",
    )
    assert task_states(client, "rec") == []


def test_offsets_can_change_only_when_stopped(
    client: TestClient, config: dict[str, str], bootstrap: str
) -> None:
    client.post("/connectors", json={"name": "rec", "config": config})
    wait_until(
        lambda: (
            client.get("/connectors/rec/offsets").json()["offsets"]
            == [{"partition": {"task": 0}, "offset": {"next": 5}}]
        ),
        60,
        "offsets committed",
    )
    new = {"offsets": [{"partition": {"task": 0}, "offset": {"next": 2}}]}
    conflict = client.patch("/connectors/rec/offsets", json=new)
    assert conflict.status_code == 409 and "STOPPED" in conflict.json()["message"]
    assert client.delete("/connectors/rec/offsets").status_code == 409
    client.put("/connectors/rec/stop")
    wait_until(
        lambda: client.get("/connectors/rec/status").json()["connector"]["state"] == "STOPPED",
        60,
        "STOPPED",
    )
    assert client.patch("/connectors/rec/offsets", json=new).status_code == 200
    assert client.get("/connectors/rec/offsets").json() == new
    assert client.patch("/connectors/rec/offsets", json={"offsets": "nope"}).status_code == 400
    assert client.delete("/connectors/rec/offsets").status_code == 200
    assert client.get("/connectors/rec/offsets").json() == {"offsets": []}


def test_topics(client: TestClient, config: dict[str, str]) -> None:
    client.post("/connectors", json={"name": "rec", "config": config})
    wait_until(
        lambda: (
            client.get("/connectors/rec/topics").json() == {"rec": {"topics": [config["topic"]]}}
        ),
        60,
        "topic recorded",
    )
    assert client.put("/connectors/rec/topics/reset").status_code == 202
    assert client.get("/connectors/rec/topics").json() == {"rec": {"topics": []}}


def test_connector_plugins(client: TestClient) -> None:
    plugins = client.get("/connector-plugins").json()
    assert {
        "class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "type": "source",
        "version": __version__,
    } in plugins
    assert {p["type"] for p in client.get("/connector-plugins?connectorsOnly=FALSE").json()} >= {
        "converter",
        "source",
        "sink",
    }
    definitions = client.get("/connector-plugins/FileStreamSource/config").json()
    # Kafka 4: the plugin's own keys, then the keys every source connector shares
    assert {d["name"] for d in definitions[:4]} == {"file", "files", "topic", "batch.size"}
    assert {"connector.class", "tasks.max", "tasks.max.enforce", "exactly.once.support"} <= {
        d["name"] for d in definitions
    }
    result = client.put("/connector-plugins/FileStreamSource/config/validate", json={"topic": "t"})
    assert result.status_code == 200
    assert (
        result.json()["name"] == KAFKA + "file.FileStreamSourceConnector"
        and result.json()["error_count"] >= 2
    )
    mismatch = client.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={"connector.class": "FileStreamSink"},
    )
    assert mismatch.status_code == 400


def test_plugins_are_listed_and_looked_up_by_their_java_names(client: TestClient) -> None:
    """Tools copy a listed ``class`` into configs: every converter, header converter,
    transformation and predicate (each has a Kafka or Confluent counterpart) is listed under
    its Java name, in Kafka's order; that name and the Python path both find the plugin."""
    plugins = client.get("/connector-plugins?connectorsOnly=false").json()
    others = [p for p in plugins if p["type"] not in ("source", "sink")]
    assert {p["type"] for p in others} == {
        "converter",
        "header_converter",
        "transformation",
        "predicate",
    }
    assert [p["class"] for p in others if p["class"].startswith("airflow_provider_connect")] == []
    assert {(p["class"], p["type"]) for p in plugins} >= KAFKA_PLUGINS
    types = [p["type"] for p in plugins]
    assert types == sorted(types, key=KAFKA_ORDER.index)

    by_java = client.get(f"/connector-plugins/{KAFKA}transforms.InsertField$Value/config")
    by_python = client.get(
        "/connector-plugins/airflow_provider_connect.transforms.insert_field.InsertFieldValue/config"
    )
    assert by_java.status_code == by_python.status_code == 200
    assert by_java.json() == by_python.json()
    assert {d["name"] for d in by_java.json()} >= {"static.field", "static.value"}
    assert client.get(f"/connector-plugins/{KAFKA}json.JsonConverter/config").status_code == 200


def test_a_config_of_java_names_validates_with_java_recommendations(
    client: TestClient, tmp_path: Path
) -> None:
    config = {
        "name": "java-named",
        "connector.class": KAFKA + "file.FileStreamSourceConnector",
        "file": str(tmp_path / "in.txt"),
        "topic": "t",
        "value.converter": KAFKA + "converters.IntegerConverter",
        "header.converter": KAFKA + "storage.SimpleHeaderConverter",
        "transforms": "add",
        "transforms.add.type": KAFKA + "transforms.InsertField$Value",
        "transforms.add.static.field": "f",
        "transforms.add.static.value": "v",
        "transforms.add.predicate": "topic",
        "predicates": "topic",
        "predicates.topic.type": KAFKA + "transforms.predicates.TopicNameMatches",
        "predicates.topic.pattern": "t.*",
    }
    for plugin in (config["connector.class"], "FileStreamSource"):
        answer = client.put(f"/connector-plugins/{plugin}/config/validate", json=config)
        assert answer.status_code == 200, answer.text
        assert answer.json()["error_count"] == 0, answer.text
    values = {c["value"]["name"]: c["value"] for c in answer.json()["configs"]}
    assert values["value.converter"]["value"] == KAFKA + "converters.IntegerConverter"
    assert KAFKA + "json.JsonConverter" in values["value.converter"]["recommended_values"]
    assert (
        KAFKA + "transforms.InsertField$Key" in values["transforms.add.type"]["recommended_values"]
    )
    assert (
        KAFKA + "transforms.predicates.HasHeaderKey"
        in values["predicates.topic.type"]["recommended_values"]
    )
    for key in ("key.converter", "header.converter", "transforms.add.type"):
        recommended = values[key]["recommended_values"]
        assert recommended and not [v for v in recommended if "airflow_provider_connect" in v]
