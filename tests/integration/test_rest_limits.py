"""Limits on bad input, each a 400 that names the problem: connector names the REST API could
not address or the store could not hold, oversized bodies, ``tasks.max`` past its maximum, and
topic names Kafka would refuse where the runtime creates topics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.connect.connector_config import MAX_NAME_LENGTH, MAX_TASKS
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import MetadataStore
from tests.validation import config_errors

pytestmark = pytest.mark.integration

FILE_SOURCE = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "lines"}
FILE_SINK = {"connector.class": "FileStreamSink", "file": "/tmp/out.txt", "topics": "lines"}


@pytest.fixture
def client(store: MetadataStore, bootstrap: str) -> Iterator[TestClient]:
    worker = WorkerConfig(
        {
            "bootstrap.servers": bootstrap,
            "metadata.url": store.url,
            "rest.request.max.bytes": "200000",
        }
    )
    with TestClient(create_app(store, worker)) as test_client:
        yield test_client


def refused(response: Any) -> str:
    """The message of a 400 in Kafka Connect's error shape."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error_code"] == 400
    return str(body["message"])


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("a/b", "may not contain '/'"),
        ("x" * 100_000, f"at most {MAX_NAME_LENGTH} characters"),
        ("tab\there", "control sequences"),
    ],
    ids=["slash", "100k-chars", "control-char"],
)
def test_unaddressable_names_are_refused(
    client: TestClient, store: MetadataStore, name: str, problem: str
) -> None:
    response = client.post("/connectors", json={"name": name, "config": FILE_SOURCE})
    assert problem in refused(response)
    assert store.configs.connectors() == []
    assert problem in str(config_errors({**FILE_SOURCE, "name": name})["name"])


def test_a_name_of_the_longest_length_is_fine(client: TestClient) -> None:
    name = "n" * MAX_NAME_LENGTH
    assert client.post("/connectors", json={"name": name, "config": FILE_SOURCE}).status_code == 201
    assert client.get(f"/connectors/{name}/config").json()["name"] == name


def test_tasks_max_has_a_maximum(client: TestClient) -> None:
    config = {**FILE_SOURCE, "tasks.max": str(MAX_TASKS + 1)}
    message = refused(client.post("/connectors", json={"name": "many", "config": config}))
    assert "tasks.max" in message and f"no more than {MAX_TASKS}" in message


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({**FILE_SOURCE, "topic": "has space"}, "topic"),
        ({**FILE_SOURCE, "topic": "t" * 250}, "topic"),
        (
            {**FILE_SINK, "errors.deadletterqueue.topic.name": "dlq/1"},
            "errors.deadletterqueue.topic.name",
        ),
        ({**FILE_SOURCE, "offsets.storage.topic": ".."}, "offsets.storage.topic"),
    ],
    ids=["space", "250-chars", "dlq-slash", "dot-dot"],
)
def test_topic_names_kafka_would_refuse_are_refused(
    client: TestClient, config: dict[str, str], key: str
) -> None:
    message = refused(client.post("/connectors", json={"name": "topical", "config": config}))
    assert key in message and "Topic name" in message
    assert "Topic name" in str(config_errors(config)[key])


def test_oversized_bodies_are_refused_before_they_are_read(client: TestClient) -> None:
    big = {**FILE_SOURCE, "padding": "p" * 250_000}
    message = refused(client.post("/connectors", json={"name": "big", "config": big}))
    assert "limit of 200000 bytes (rest.request.max.bytes)" in message

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"name": "big", "config": {"padding": "'
        for _ in range(25):
            yield b"p" * 10_000
        yield b'"}}'

    chunked = client.put(
        "/connectors/big/config", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert "rest.request.max.bytes" in refused(chunked)
    assert client.get("/connectors").json() == []


def test_the_airflow_hook_refuses_them_too(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_LIMITS",
        f'{{"conn_type": "connect", "extra": {{"metadata_url": "{store.url}"}}}}',
    )
    with pytest.raises(ConfigValidationError, match="may not contain '/'"):
        ConnectHook("limits").create_connector("a/b", FILE_SOURCE)
