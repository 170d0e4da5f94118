"""The Airflow provider entry point (``apache_airflow_provider``)."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect import __version__


def get_provider_info() -> dict[str, Any]:
    """What Airflow's ProvidersManager reads about this provider.

    Lists only what exists; operators, sensors, triggers and links are added here as they
    land.
    """
    return {
        "package-name": "airflow-provider-connect",
        "name": "Kafka Connect on Spark",
        "description": (
            "Kafka Connect rebuilt in Python on Spark: run connectors that move data between "
            "Kafka and other systems, and drive their lifecycles from DAGs."
        ),
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Kafka Connect on Spark",
                "tags": ["service"],
            }
        ],
        "hooks": [
            {
                "integration-name": "Kafka Connect on Spark",
                "python-modules": ["airflow_provider_connect.hooks.connect"],
            }
        ],
        "connection-types": [
            {
                "hook-class-name": "airflow_provider_connect.hooks.connect.ConnectHook",
                "connection-type": "connect",
            }
        ],
    }
