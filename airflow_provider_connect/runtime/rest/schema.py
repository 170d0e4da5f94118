"""The request bodies of Kafka Connect's REST API, as JSON schemas for the OpenAPI document
(``/openapi.json``, ``/docs``). The handlers parse bodies themselves, to answer malformed
ones with Kafka Connect's messages; these schemas only describe what they accept."""

from __future__ import annotations

from typing import Any

CONFIG: dict[str, Any] = {
    "type": "object",
    "description": "Connector configuration: string keys and values.",
    "additionalProperties": {"type": "string"},
}
PATCH: dict[str, Any] = {
    "type": "object",
    "description": "Keys to change; null removes a key.",
    "additionalProperties": {"type": ["string", "null"]},
}
OFFSET_ENTRIES: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["partition"],
        "properties": {
            "partition": {"type": "object"},
            "offset": {"type": ["object", "null"]},
        },
    },
}
OFFSETS: dict[str, Any] = {
    "type": "object",
    "required": ["offsets"],
    "properties": {"offsets": OFFSET_ENTRIES},
}
CREATE: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "config": CONFIG,
        "initial_state": {"type": "string", "enum": ["RUNNING", "PAUSED", "STOPPED"]},
        "initial_offsets": {"oneOf": [OFFSETS, OFFSET_ENTRIES]},
    },
}


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A route's ``openapi_extra`` for a required JSON body of ``schema``."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}
