"""What the REST API's routers share: the reading of request bodies and query flags as Kafka
Connect reads them (errors answered by ``control.error_answers``), and the running of what
may block (a connector's ``validate``, which may open a connection to its system; store
writes) off the event loop, under Kafka Connect's request deadline."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, ParamSpec, TypeVar

import anyio
import anyio.to_thread
from fastapi import Request

from airflow_provider_connect.control.connectors import config_strings
from airflow_provider_connect.control.error_answers import RestError

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

REQUEST_TIMEOUT_S = 90.0
"""How long a request waits for what it runs off the event loop before it is answered 500
(Kafka Connect's ``ConnectResource.DEFAULT_REST_REQUEST_TIMEOUT_MS``); an app may set
another as ``app.state.request_timeout_s``."""


async def off_loop(
    request: Request, doing: str, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """``call(*args, **kwargs)`` on a worker thread, so that the event loop goes on answering
    other requests meanwhile. When it has not returned by the app's request deadline
    (:data:`REQUEST_TIMEOUT_S`), :class:`RestError` 500 with Kafka Connect's message, naming
    what timed out: "Request timed out. The worker is currently ``doing``, which began at
    <UTC time>." The call is abandoned then, not stopped: it runs to its end on its thread,
    and what it writes may still be written (as in Kafka Connect)."""
    timeout_s: float = getattr(request.app.state, "request_timeout_s", REQUEST_TIMEOUT_S)
    began = datetime.now(timezone.utc)
    bound = functools.partial(call, *args, **kwargs)
    with anyio.move_on_after(timeout_s):
        return await anyio.to_thread.run_sync(bound, abandon_on_cancel=True)
    log.warning("%s %s: %s took over %g s", request.method, request.url.path, doing, timeout_s)
    raise RestError(
        500,
        f"Request timed out. The worker is currently {doing}, which began at "
        f"{began.isoformat(timespec='milliseconds').replace('+00:00', 'Z')}.",
    )


def flag(value: str | None) -> bool:
    """Query booleans, read as Kafka Connect reads them: case-insensitively."""
    return value is not None and value.strip().lower() == "true"


async def body(request: Request) -> Any:
    """The request's JSON body; RestError 400 when it is not JSON (``NaN`` and
    ``Infinity``, which Python's parser takes, are not JSON) or nests deeper than the
    parser goes."""
    try:
        return json.loads(await request.body(), parse_constant=_not_json)
    except ValueError as e:
        raise RestError(400, f"Request body is not valid JSON: {e}") from None
    except RecursionError:
        raise RestError(400, "Request body is not valid JSON: it nests too deeply") from None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def config_body(value: Any) -> dict[str, str]:
    """A connector config from a JSON body: string keys, values as strings (booleans
    lowercase), null values left out; RestError 400 for anything but an object."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise RestError(400, "Connector configuration must be a JSON object")
    return config_strings(value)
