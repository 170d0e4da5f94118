"""The one mapping from exceptions to Kafka Connect's error answers that the REST API and the
Connectors page's API share (``control.error_answers``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route
from starlette.testclient import TestClient

from airflow_provider_connect.connect.errors import (
    AlreadyExistsException,
    ConfigException,
    NotFoundException,
)
from airflow_provider_connect.control.error_answers import (
    ErrorAnswer,
    RestError,
    answer_errors,
    error_answer,
)
from airflow_provider_connect.control.errors import (
    BadRequestError,
    NotStoppedError,
    RequestBodyTooLarge,
)
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.store import SchemaBehindError, SchemaVersionError, StoreUnavailable

INVALID = {
    "name": "FileStreamSink",
    "error_count": 2,
    "configs": [
        {"value": {"name": "topics", "errors": ["Must configure one of topics or topics.regex"]}},
        {"value": {"name": "file", "errors": ["Missing required configuration"]}},
    ],
}


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFoundException("Connector c not found"), 404),
        (AlreadyExistsException("Connector c already exists"), 409),
        (NotStoppedError("Connector c must be STOPPED"), 409),
        (BadRequestError('Connector name must be provided in the request body as "name"'), 400),
        (RequestBodyTooLarge("Request body of 2 bytes or more is larger than 1 bytes"), 413),
        (SchemaVersionError("The metadata database x is at schema revision z"), 503),
        (SchemaBehindError("The metadata database x has no Connect schema yet"), 503),
        (StoreUnavailable("The metadata database x is unreachable: refused"), 503),
        (RestError(418, "a status of its own"), 418),
    ],
)
def test_each_exception_type_has_its_status_and_its_message(error: Exception, status: int) -> None:
    assert error_answer(error) == ErrorAnswer(status, str(error))
    assert error_answer(error).body() == {"error_code": status, "message": str(error)}


def test_an_invalid_config_is_a_400_naming_every_invalid_field() -> None:
    answer = error_answer(ConfigValidationError(INVALID))
    assert answer.status == 400
    assert "topics: Must configure one of topics or topics.regex" in answer.message
    assert "file: Missing required configuration" in answer.message


@pytest.mark.parametrize("error", [ValueError("secret=hunter2"), ConfigException("secret")])
def test_anything_else_is_a_500_naming_the_type_but_not_the_message(error: Exception) -> None:
    assert error_answer(error) == ErrorAnswer(500, f"Internal error: {type(error).__name__}")


async def _collected(answer: ErrorAnswer, headers: list[tuple[bytes, bytes]]) -> list[Any]:
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    await answer.send(send, headers)
    return sent


def test_a_middleware_sends_the_same_body_with_its_headers() -> None:
    challenge = (b"www-authenticate", b'Basic realm="connect"')
    start, body = asyncio.run(_collected(ErrorAnswer(401, "who?"), [challenge]))
    payload = json.dumps({"error_code": 401, "message": "who?"}).encode()
    assert (start["status"], body["body"]) == (401, payload)
    assert dict(start["headers"]) == {
        b"content-type": b"application/json",
        b"content-length": str(len(payload)).encode(),
        b"www-authenticate": b'Basic realm="connect"',
    }


def _app(error: Exception, *, unexpected: bool) -> TestClient:
    async def fail(_: Request) -> None:
        raise error

    app = Starlette(routes=[Route("/", fail)])
    answer_errors(app, unexpected=unexpected)
    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize("unexpected", [True, False])
def test_an_app_answers_the_mapped_exceptions(unexpected: bool) -> None:
    answer = _app(NotFoundException("Connector c not found"), unexpected=unexpected).get("/")
    assert (answer.status_code, answer.json()) == (
        404,
        {"error_code": 404, "message": "Connector c not found"},
    )


def test_other_exceptions_are_answered_only_when_asked() -> None:
    answered = _app(KeyError("k"), unexpected=True).get("/")
    assert (answered.status_code, answered.json()) == (
        500,
        {"error_code": 500, "message": "Internal error: KeyError"},
    )
    left = _app(KeyError("k"), unexpected=False).get("/")
    assert (left.status_code, left.text) == (500, "Internal Server Error")
