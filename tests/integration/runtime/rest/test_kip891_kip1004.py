"""KIP-891 (plugin versions) and KIP-1004 (``tasks.max.enforce``) through the REST API of a
running runtime: requirements checked against the installed plugins, the plugin listing of
Kafka 4, versions in status, and connectors that generate more tasks than ``tasks.max``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect import __version__
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from tests.connectors import SEQUENCE_SOURCE, TOO_MANY_TASKS_SOURCE
from tests_common.kafka import new_topic, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def client(connect: Connect) -> Iterator[TestClient]:
    with TestClient(create_app(connect.store, connect.worker)) as test_client:
        yield test_client


def status(client: TestClient, name: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/connectors/{name}/status").json()
    return body


def states(client: TestClient, name: str) -> tuple[str, list[str]]:
    """The connector's state and its tasks'."""
    body = status(client, name)
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def test_plugin_versions(client: TestClient, bootstrap: str) -> None:
    sequence = {
        "connector.class": SEQUENCE_SOURCE,
        "topic": new_topic(bootstrap),
        "sequence.limit": "10",
        "value.converter": "StringConverter",
        "key.converter": "StringConverter",
    }
    created = client.post(
        "/connectors",
        json={"name": "pinned", "config": {**sequence, "connector.plugin.version": "[1.0,2.0)"}},
    )
    assert created.status_code == 201

    too_new = {**sequence, "connector.plugin.version": "[2.0,)"}
    refused = client.post("/connectors", json={"name": "too-new", "config": too_new})
    assert refused.status_code == 400
    assert (
        "connector.class, connector.plugin.version: Plugin "
        "tests.connectors.SequenceSourceConnector not found that matches the version range "
        "[2.0,), available versions: [1.0]"
    ) in refused.json()["message"]
    unparsable = {**sequence, "connector.plugin.version": "[1.0"}
    refused = client.post("/connectors", json={"name": "bad", "config": unparsable})
    assert refused.status_code == 400
    assert (
        "connector.plugin.version: Invalid value [1.0 for configuration"
        in (refused.json()["message"])
    )
    routed = {
        **sequence,
        "transforms": "route",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-routed",
        "transforms.route.plugin.version": "(,0.0.1]",
    }
    refused = client.post("/connectors", json={"name": "routed", "config": routed})
    assert refused.status_code == 400
    assert "transforms.route.plugin.version: Plugin" in refused.json()["message"]
    assert client.get("/connectors").json() == ["pinned"]

    # Kafka 4's listing: every kind of plugin, each with its installed version
    plugins = client.get("/connector-plugins?connectorsOnly=false").json()
    assert {p["type"] for p in plugins} == {
        "source",
        "sink",
        "converter",
        "header_converter",
        "transformation",
        "predicate",
    }
    assert {
        "class": "org.apache.kafka.connect.transforms.RegexRouter",
        "type": "transformation",
        "version": __version__,
    } in plugins
    assert all(p["version"] for p in plugins)
    assert {p["type"] for p in client.get("/connector-plugins").json()} == {"source", "sink"}

    definition = client.get("/connector-plugins/FileStreamSource/config?version=[0.1,1.0)")
    assert definition.status_code == 200
    keys = {d["name"]: d for d in definition.json()}
    assert keys["connector.plugin.version"]["default_value"] == __version__
    assert keys["tasks.max.enforce"]["default_value"] == "true"
    missing = client.get("/connector-plugins/FileStreamSource/config?version=[9.0,)")
    assert (
        missing.status_code == 400
        and "matches the version range [9.0,)" in (missing.json()["message"])
    )
    assert client.get("/connector-plugins/FileStreamSource/config?version=[9").status_code == 400
    assert client.get("/connector-plugins/RegexRouter/config").status_code == 200
    assert client.get("/connector-plugins/Nope/config?version=1.0").status_code == 404

    wait_until(lambda: states(client, "pinned") == ("RUNNING", ["RUNNING"]), 60, "pinned RUNNING")
    running = status(client, "pinned")
    assert running["connector"]["version"] == "1.0" and running["tasks"][0]["version"] == "1.0"


def test_tasks_max_enforce(client: TestClient, bootstrap: str) -> None:
    three = {
        "connector.class": TOO_MANY_TASKS_SOURCE,
        "tasks.max": "1",
        "sequence.partitions": "3",
        "sequence.limit": "10",
        "topic": new_topic(bootstrap),
    }
    assert client.post("/connectors", json={"name": "many", "config": three}).status_code == 201
    allowed = {**three, "tasks.max.enforce": "false"}
    assert client.post("/connectors", json={"name": "few", "config": allowed}).status_code == 201

    wait_until(lambda: states(client, "many")[0] == "FAILED", 60, "many FAILED")
    assert (
        "The connector many has generated 3 tasks, which is greater than 1, the maximum number "
        "of tasks it is configured to create. This behaviour should be considered a bug and is "
        "disallowed. If necessary, it can be permitted by reconfiguring the connector with "
        "'tasks.max.enforce' set to false; however, this option will be removed in a future "
        "release of Kafka Connect."
    ) in status(client, "many")["connector"]["trace"]
    assert status(client, "many")["tasks"] == []

    wait_until(
        lambda: states(client, "few") == ("RUNNING", ["RUNNING"] * 3), 60, "few's 3 tasks RUNNING"
    )
    assert len(client.get("/connectors/few/tasks").json()) == 3
