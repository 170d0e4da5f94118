"""Limits on bad input, each a 4xx that names the problem: connector names the REST API could
not address or the store could not hold, oversized bodies (413, answered to a client still
sending one), ``tasks.max`` past its maximum, and topic names Kafka would refuse where the
runtime creates topics."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from fastapi.testclient import TestClient

from airflow_provider_connect.connect.connector_config import MAX_NAME_LENGTH, MAX_TASKS
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.runtime.rest.server import RestServer
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import MetadataStore
from tests.validation import config_errors
from tests_common.broker import free_port

# On both stores: what each kind's columns can hold is part of the limits.
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]

FILE_SOURCE = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "lines"}
FILE_SINK = {"connector.class": "FileStreamSink", "file": "/tmp/out.txt", "topics": "lines"}


LIMITED = "limit of 200000 bytes (rest.request.max.bytes)"


def limited_worker(store: MetadataStore, bootstrap: str) -> WorkerConfig:
    return WorkerConfig(
        {
            "bootstrap.servers": bootstrap,
            "metadata.url": store.url,
            "rest.request.max.bytes": "200000",
        }
    )


@pytest.fixture
def client(store: MetadataStore, bootstrap: str) -> Iterator[TestClient]:
    with TestClient(create_app(store, limited_worker(store, bootstrap))) as test_client:
        yield test_client


@pytest.fixture
def served(store: MetadataStore, bootstrap: str) -> Iterator[str]:
    """The same app served by uvicorn on a loopback port, as the runtime serves it."""
    server = RestServer(
        create_app(store, limited_worker(store, bootstrap)), f"http://127.0.0.1:{free_port()}"
    )
    server.start()
    yield server.url
    server.stop()


def refused(response: Any, status: int = 400) -> str:
    """The message of a ``status`` answer in Kafka Connect's error shape."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == status
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
    message = refused(client.post("/connectors", json={"name": "big", "config": big}), 413)
    assert LIMITED in message

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"name": "big", "config": {"padding": "'
        for _ in range(25):
            yield b"p" * 10_000
        yield b'"}}'

    chunked = client.put(
        "/connectors/big/config", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert LIMITED in refused(chunked, 413)
    assert client.get("/connectors").json() == []


TEN_MB = json.dumps({"name": "big", "config": {**FILE_SOURCE, "padding": "p" * 10_000_000}})


def urllib_post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    """POSTs as urllib does (``Connection: close``, as the Airflow hook and the benchmarks
    send): the status and JSON body of the answer, whatever the status."""
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_client_that_sends_a_10_mb_body_whole_gets_the_413(
    served: str, store: MetadataStore
) -> None:
    """The server reads what the client sends of a body it refuses (to a point) before it
    answers: one that closed the connection while the client was still sending would reset
    it, and the client would see no status at all."""
    status, answer = urllib_post(f"{served}/connectors", TEN_MB.encode())
    assert (status, answer["error_code"]) == (413, 413) and LIMITED in answer["message"]
    with requests.Session() as session:  # keep-alive: the connection serves the next request
        for _ in range(2):
            response = session.put(
                f"{served}/connectors/big/config",
                data=TEN_MB,
                headers={"Content-Type": "application/json"},
                timeout=60,
            )
            assert LIMITED in refused(response, 413)
        chunked = session.post(  # no Content-Length: counted as it arrives
            f"{served}/connectors",
            data=(TEN_MB[i : i + 65536].encode() for i in range(0, len(TEN_MB), 65536)),
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        assert LIMITED in refused(chunked, 413)
    assert store.configs.connectors() == []


def test_a_client_that_waits_for_100_continue_gets_the_413_without_sending(served: str) -> None:
    host, port = served.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            b"POST /connectors HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 10000000\r\n"
            b"Expect: 100-continue\r\n\r\n"
        )
        answer = b""
        while not answer.endswith(b"}"):  # the error body ends the answer
            received = sock.recv(65536)
            assert received, f"the connection closed after {answer!r}"
            answer += received
    assert answer.startswith(b"HTTP/1.1 413 ") and LIMITED in answer.decode(), answer


def test_the_airflow_hook_refuses_them_too(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_LIMITS",
        f'{{"conn_type": "connect", "extra": {{"metadata_url": "{store.url}"}}}}',
    )
    with pytest.raises(ConfigValidationError, match="may not contain '/'"):
        ConnectHook("limits").create_connector("a/b", FILE_SOURCE)
