"""Signals, as Debezium's signal table carries them (``signal.data.collection``; columns
``id``, ``type``, ``data``): the ``execute-snapshot`` request of an incremental snapshot and
the window rows the task writes around each chunk it reads."""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger(__name__)

EXECUTE_SNAPSHOT = "execute-snapshot"
WINDOW_OPEN = "snapshot-window-open"
WINDOW_CLOSE = "snapshot-window-close"

SIGNAL_COLUMNS = ("id", "type", "data")


def snapshot_request(data_collections: list[str], signal_id: str) -> dict[str, Any]:
    """The signal row that asks for an incremental snapshot of ``data_collections``."""
    data = json.dumps({"data-collections": list(data_collections), "type": "incremental"})
    return {"id": signal_id, "type": EXECUTE_SNAPSHOT, "data": data}


def requested_collections(data: str | None) -> list[str] | None:
    """The data collections (names or regular expressions) an ``execute-snapshot`` signal's
    ``data`` asks for; None (logged) when it is malformed or not of an incremental
    snapshot."""
    try:
        request = json.loads(data or "{}")
        wanted: list[str] = request.get("data-collections") or []
        if request.get("type", "incremental").lower() != "incremental":
            log.warning("Only incremental snapshots are supported; signal ignored: %s", data)
            return None
    except (ValueError, AttributeError):
        log.warning("Malformed execute-snapshot signal ignored: %s", data)
        return None
    return wanted
