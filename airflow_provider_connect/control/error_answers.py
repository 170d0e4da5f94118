"""Kafka Connect's answers to errors, as its ``ConnectExceptionMapper`` gives them: one mapping
from exception types to an HTTP status and Kafka Connect's error body
``{"error_code": <HTTP status>, "message": ...}``, used by the REST API, its admin and
security middlewares, the request body limit, and the Connectors page's API.

=================================  ======  ==============================================
exception                          status  message
=================================  ======  ==============================================
:class:`RestError`                 its own its own (Kafka's ``ConnectRestException``)
``NotFoundException``              404     the exception's
``AlreadyExistsException``         409     the exception's (a taken name, or still deleting)
``NotStoppedError``                409     the exception's (offsets of a running connector)
``BadRequestError``                400     the exception's
``ConfigValidationError``          400     every invalid field, one line per error
``RequestBodyTooLarge``            413     the size and the limit
``SchemaVersionError``             503     the database and the schema revision found
``StoreUnavailable``               503     the metadata database (never its password), cause
anything else                      500     ``Internal error: <exception type>``
=================================  ======  ==============================================

Which of them an app answers is its own choice (:func:`answer_errors`): the page's API leaves
other exceptions to its framework, as it always has.
"""

from __future__ import annotations

import json
import logging
from typing import Any, NamedTuple

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Send

from airflow_provider_connect.connect.errors import (
    AlreadyExistsException,
    ConnectException,
    NotFoundException,
)
from airflow_provider_connect.control.errors import (
    BadRequestError,
    NotStoppedError,
    RequestBodyTooLarge,
)
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.store import SchemaVersionError, StoreUnavailable

log = logging.getLogger(__name__)


class RestError(ConnectException):
    """An error that names its own HTTP status (Kafka's ``ConnectRestException``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


STATUSES: dict[type[Exception], int] = {
    NotFoundException: 404,
    AlreadyExistsException: 409,
    NotStoppedError: 409,
    BadRequestError: 400,
    ConfigValidationError: 400,
    RequestBodyTooLarge: 413,
    SchemaVersionError: 503,
    StoreUnavailable: 503,
}
"""The status of each exception type (and of its subclasses) whose message is the answer's."""


class ErrorAnswer(NamedTuple):
    """An HTTP status and its message, answered in Kafka Connect's error body."""

    status: int
    message: str

    def body(self) -> dict[str, Any]:
        return {"error_code": self.status, "message": self.message}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status)

    async def send(self, send: Send, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        """Answers from an ASGI middleware, with ``headers`` besides the content's."""
        payload = json.dumps(self.body()).encode()
        await send(
            {
                "type": "http.response.start",
                "status": self.status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    *(headers or []),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def error_answer(error: Exception) -> ErrorAnswer:
    """The answer to ``error``: its own status for a :class:`RestError`, the first of
    :data:`STATUSES` it is an instance of, else 500 naming its type (never its message,
    which may carry what it should not)."""
    if isinstance(error, RestError):
        return ErrorAnswer(error.status, str(error))
    for kind, status in STATUSES.items():
        if isinstance(error, kind):
            return ErrorAnswer(status, str(error))
    return ErrorAnswer(500, f"Internal error: {type(error).__name__}")


def answer_errors(app: Starlette, *, unexpected: bool) -> None:
    """Answers ``app``'s :class:`RestError` and the exceptions of :data:`STATUSES` with
    :func:`error_answer`; with ``unexpected``, every other exception too (logged with its
    trace), else those are the framework's."""
    kinds: list[type[Exception]] = [RestError, *STATUSES]
    for kind in kinds:
        app.add_exception_handler(kind, _answer)
    if unexpected:
        app.add_exception_handler(Exception, _answer_unexpected)


async def _answer(_: Request, error: Exception) -> JSONResponse:
    return error_answer(error).response()


async def _answer_unexpected(request: Request, error: Exception) -> JSONResponse:
    log.exception("%s %s failed", request.method, request.url.path)
    return error_answer(error).response()
