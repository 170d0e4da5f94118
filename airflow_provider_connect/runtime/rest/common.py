"""What the REST API's routers share: the reading of request bodies and query flags as Kafka
Connect reads them (errors answered by ``control.error_answers``)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from airflow_provider_connect.control.connectors import config_strings
from airflow_provider_connect.control.error_answers import RestError


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
