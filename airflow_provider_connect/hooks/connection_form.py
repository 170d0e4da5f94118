"""The ``connect`` connection's form, declared once: Airflow 3.2+ reads it from the provider
info (``conn-fields`` and ``ui-field-behaviour``, without importing the hook); earlier
versions ask the hook (``get_connection_form_widgets`` and ``get_ui_field_behaviour``)."""

from __future__ import annotations

from typing import Any

EXTRA_FIELDS: dict[str, dict[str, str]] = {
    "metadata_url": {
        "label": "Metadata database URL",
        "description": (
            "The SQLAlchemy URL of the runtime's metadata database; leave empty to describe "
            "a PostgreSQL server with Host, Port, Database, User and Password instead."
        ),
        "placeholder": "postgresql+psycopg://connect@db:5432/connect or sqlite:////path/metadata.db",
    },
    "rest_url": {
        "label": "Runtime REST URL",
        "description": "Where the runtime serves Kafka Connect's REST API (optional).",
        "placeholder": "http://127.0.0.1:8083",
    },
    "metadata_timeout": {
        "label": "Metadata database timeout",
        "description": (
            "Seconds each metadata-database transaction may take, connecting included, "
            "before a task, sensor or trigger reports the database unreachable (optional; "
            "default 10)."
        ),
        "placeholder": "10",
    },
}
"""The connection's extras shown as form fields: label, description and placeholder each."""

RELABELING = {"schema": "Database", "login": "User"}
PLACEHOLDERS = {
    "host": "PostgreSQL host of the metadata database (or set the metadata database URL)",
    "schema": "connect",
    **{name: field["placeholder"] for name, field in EXTRA_FIELDS.items()},
}


def ui_field_behaviour() -> dict[str, Any]:
    """What ``get_ui_field_behaviour`` returns."""
    return {"hidden_fields": [], "relabeling": RELABELING, "placeholders": PLACEHOLDERS}


def provider_connection_fields() -> dict[str, Any]:
    """The provider-info keys of the ``connect`` connection type (Airflow 3.2+)."""
    return {
        "conn-fields": {
            name: {
                "label": field["label"],
                "description": field["description"],
                "schema": {"type": ["string", "null"]},
            }
            for name, field in EXTRA_FIELDS.items()
        },
        "ui-field-behaviour": {
            "hidden-fields": [],
            "relabeling": RELABELING,
            "placeholders": PLACEHOLDERS,
        },
    }
