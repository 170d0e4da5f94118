"""The Airflow provider entry point (``apache_airflow_provider``)."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.hooks.connection_form import provider_connection_fields
from airflow_provider_connect.settings import provider_config


def get_provider_info() -> dict[str, Any]:
    """What Airflow's ProvidersManager reads about this provider.

    ``airflow providers list`` shows the package; the connection form (Airflow 3.2+) and
    the UI plugin's settings are declared here, so reading them imports no hook.
    """
    integration = "Kafka Connect on Spark"
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
                "integration-name": integration,
                "tags": ["service"],
            }
        ],
        "operators": [
            {
                "integration-name": integration,
                "python-modules": [
                    "airflow_provider_connect.operators.connector",
                    "airflow_provider_connect.operators.runtime",
                    "airflow_provider_connect.operators.snapshot",
                ],
            }
        ],
        "sensors": [
            {
                "integration-name": integration,
                "python-modules": [
                    "airflow_provider_connect.sensors.connector",
                    "airflow_provider_connect.sensors.runtime",
                    "airflow_provider_connect.sensors.snapshot",
                ],
            }
        ],
        "hooks": [
            {
                "integration-name": integration,
                "python-modules": ["airflow_provider_connect.hooks.connect"],
            }
        ],
        "triggers": [
            {
                "integration-name": integration,
                "python-modules": [
                    "airflow_provider_connect.triggers.commits",
                    "airflow_provider_connect.triggers.connector",
                    "airflow_provider_connect.triggers.runtime",
                    "airflow_provider_connect.triggers.snapshot",
                ],
            }
        ],
        "plugins": [
            {
                "name": "connect",
                "plugin-class": "airflow_provider_connect.ui.plugin.ConnectUIPlugin",
            }
        ],
        "config": provider_config(),
        "extra-links": ["airflow_provider_connect.links.connector.ConnectorStatusLink"],
        "connection-types": [
            {
                "hook-class-name": "airflow_provider_connect.hooks.connect.ConnectHook",
                "connection-type": "connect",
                "hook-name": integration,
                **provider_connection_fields(),
            }
        ],
    }
