"""Property-based fuzzing of the REST API from its own OpenAPI document (Schemathesis), against
a running runtime that holds real connectors: a running source and sink and a STOPPED source
(so the offsets endpoints get past their state check). Most generated ``{name}`` values are
replaced by those names, so the connector paths are exercised, not only their 404s. No
request may get a 5xx.

Before each request the connectors are put back as they were (created again if a generated
DELETE removed them, their target states reset), so every request meets the same runtime. The
sink is never STOPPED when a request comes: resetting a sink's offsets deletes its consumer
group, which the test broker does not answer (the REST call waits out its timeout).

Schemathesis sends small bodies; each operation with a body, on the REST API and on the
Connectors page's API (a real ``airflow api-server``), also gets bodies nested deeper than
any parser goes or just short of it, and a 10 MB one, over HTTP: each a 4xx with a
message."""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.runtime.rest.server import RestServer
from airflow_provider_connect.store import MetadataStore, State, TargetState
from airflow_provider_connect.ui.app import create_app as create_page_app
from tests.airflow_api_server import AirflowApiServer
from tests_common.broker import free_port
from tests_common.kafka import new_topic
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

EXAMPLES = 15
"""Generated requests per operation (bounded: the whole run takes well under a minute)."""


@pytest.fixture
def connectors(connect: Connect, bootstrap: str, tmp_path: Path) -> dict[str, dict[str, str]]:
    topic = new_topic(bootstrap)
    (tmp_path / "in.txt").write_text("one\ntwo\n")
    found = {
        "source": {
            "connector.class": "FileStreamSource",
            "file": str(tmp_path / "in.txt"),
            "topic": topic,
        },
        # named after its topic: its consumer group its own on the session's shared broker
        f"sink-{topic}": {
            "connector.class": "FileStreamSink",
            "file": str(tmp_path / "a"),
            "topics": topic,
        },
        "stopped-source": {
            "connector.class": "FileStreamSource",
            "file": str(tmp_path / "in.txt"),
            "topic": topic,
        },
    }
    restore(connect.store, found)
    wait_until(lambda: stopped(connect.store, "stopped-source"), 60, "STOPPED")
    return found


@pytest.fixture
def rest_schema(connect: Connect, connectors: dict[str, dict[str, str]]) -> Any:
    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(connect.store, connect.worker)
    )

    @schema.hook
    def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any]) -> Any:
        if not path_parameters or "name" not in path_parameters:
            return st.just(path_parameters)
        real = [{**path_parameters, "name": name} for name in connectors]
        return st.sampled_from([path_parameters, *real])  # a real name 3 times in 4

    return schema


def test_no_request_gets_a_server_error(
    rest_schema: Any, connect: Connect, connectors: dict[str, dict[str, str]]
) -> None:
    """Every operation, with valid and with invalid input (path, query and body)."""
    operations = [result.ok() for result in rest_schema.get_all_operations()]
    assert len(operations) >= 25
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def call(case: Any) -> None:
                restore(connect.store, connectors)
                case.call_and_validate(checks=[not_a_server_error])

            with contextlib.suppress(Unsatisfiable):  # no input to make invalid (GET /)
                call()


def restore(store: MetadataStore, connectors: dict[str, dict[str, str]]) -> None:
    """Creates again what an earlier generated DELETE removed (once its cleanup is done),
    and sets each connector's target state back."""
    for name, config in connectors.items():
        target = TargetState.STOPPED if name.startswith("stopped") else TargetState.STARTED
        with contextlib.suppress(AlreadyExistsException):
            store.configs.create_connector(name, {**config, "name": name}, target)
        with contextlib.suppress(NotFoundException):  # deleted, its cleanup still running
            store.configs.set_target_state(name, target)


def stopped(store: MetadataStore, name: str) -> bool:
    status = store.statuses.connector_status(name)
    return status is not None and status.state is State.STOPPED


PLUGIN = "FileStreamSource"
DEPTHS = (100_000, *range(900, 1001, 5))
"""How deep the bad bodies nest: past any parser, and around Python's recursion limit,
where a body parses and what handles it next may recurse too deep."""
TEN_MB = 10_000_000


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def bad_bodies() -> Iterator[bytes]:
    """Unclosed brackets, then well-formed JSON nested at each of :data:`DEPTHS`, in every
    field a request body of either API has (what a parser takes may be a valid body: the
    validation of a config answers 200), then 10 MB."""
    yield b"[" * 100_000
    for depth in DEPTHS:
        deep = nested(depth)
        fields = ("name", "config", "initial_offsets", "level", "x", "connector.class")
        yield ("{" + ",".join(f'"{k}": {deep}' for k in fields) + "}").encode()
        yield f'{{"name": "deep", "config": {{"x": {deep}}}, "offsets": [{{"partition": {{"p": {deep}}}}}]}}'.encode()
    yield json.dumps({"name": "big", "config": {"padding": "p" * TEN_MB}}).encode()


def send(method: str, url: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    """The status and body of the answer (JSON, or ``{"text": ...}``); sent as urllib sends
    (``Connection: close``, the whole body before reading the answer)."""
    request = urllib.request.Request(url, body, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, {"text": raw.decode(errors="replace")}


def body_operations(openapi: dict[str, Any], connector: str) -> list[tuple[str, str]]:
    """(method, path) of every operation of ``openapi`` that takes a body, naming
    ``connector``, or :data:`PLUGIN` under ``connector-plugins`` (whose parameter the REST
    API calls ``{name}`` too)."""
    return [
        (
            method.upper(),
            path.format(name=PLUGIN if "/connector-plugins/" in path else connector, plugin=PLUGIN),
        )
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    ]


def assert_client_errors(
    base: str, operations: list[tuple[str, str]], headers: dict[str, str]
) -> None:
    """Every bad body on every operation: no 5xx; a 4xx with a message (Kafka Connect's
    error body, or FastAPI's ``detail`` for a body of the wrong shape on the page's API)
    for what no parser takes; the 10 MB body a 413 naming the limit."""
    for body in bad_bodies():
        for method, path in operations:
            status, answer = send(method, base + path, body, headers)
            where = f"{method} {path} with {body[:40]!r}… ({len(body)} bytes): {status} {answer}"
            assert status < 500, where
            if status >= 400 or b"[" * 100_000 in body:
                assert status >= 400 and (answer.get("message") or answer.get("detail")), where
            if len(body) > TEN_MB:
                assert answer["error_code"] == 413 == status, where
                assert "larger than the limit of 1048576 bytes" in answer["message"], where


def test_bad_bodies_get_a_client_error(
    connect: Connect, connectors: dict[str, dict[str, str]]
) -> None:
    """On the REST API, served by uvicorn as the runtime serves it."""
    app = create_app(connect.store, connect.worker)
    operations = body_operations(app.openapi(), "source")
    assert len(operations) >= 5
    operations.append(("PUT", "/admin/loggers/root"))  # reads its body itself, undocumented
    server = RestServer(app, f"http://127.0.0.1:{free_port()}")
    server.start()
    try:
        assert_client_errors(server.url, operations, {"Content-Type": "application/json"})
    finally:
        server.stop()
    assert sorted(c.name for c in connect.store.configs.connectors()) == sorted(connectors)


@pytest.fixture
def page_api(tmp_path: Path) -> Iterator[AirflowApiServer]:
    """An Airflow API server with the Connectors page, on a metadata database of its own."""
    store = MetadataStore(f"sqlite:///{tmp_path / 'metadata.db'}", migrate=True)
    server = AirflowApiServer(tmp_path / "airflow", store.url)
    try:
        yield server.start()
    finally:
        server.stop()
        store.close()


def test_bad_bodies_get_a_client_error_from_the_pages_api(page_api: AirflowApiServer) -> None:
    operations = body_operations(create_page_app().openapi(), "source")
    assert len(operations) >= 4
    headers = {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {page_api.token('admin')}",
    }
    assert_client_errors(
        f"{page_api.url}/connect", [(m, p) for m, p in operations if p.startswith("/api/")], headers
    )
    answer = requests.get(f"{page_api.url}/connect/api/connectors", headers=headers, timeout=30)
    assert answer.status_code == 200 and answer.json()["connectors"] == []
