"""The signal table as Debezium's source channel uses it (``signal.data.collection``;
columns ``id``, ``type``, ``data``): besides the signals users write
(:mod:`airflow_provider_connect.connect.signals` names them, :mod:`.signal_processor` acts
on them), the window rows the task writes around each chunk of an incremental snapshot."""

from __future__ import annotations

WINDOW_OPEN = "snapshot-window-open"
WINDOW_CLOSE = "snapshot-window-close"

SIGNAL_COLUMNS = ("id", "type", "data")
