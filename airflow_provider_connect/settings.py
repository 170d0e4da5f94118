"""The provider's settings (the Connectors page's, the Kafka cluster of the operators'
assets), in Airflow's configuration (section ``[connect]``, or environment
variables ``AIRFLOW__CONNECT__*``), declared in the provider info so that ``airflow config
list`` shows them."""

from __future__ import annotations

from typing import TypedDict


class ConfigOption(TypedDict):
    """One option as a provider info's ``config`` declares it (Airflow's provider schema)."""

    description: str
    version_added: str
    type: str
    example: str | None
    default: str


class ConfigSection(TypedDict):
    description: str
    options: dict[str, ConfigOption]


SECTION = "connect"
URL_PREFIX = "/connect"
"""Where Airflow's API server mounts the page and its API."""
KAFKA_BOOTSTRAP_SERVERS = "kafka_bootstrap_servers"
NAV_ROUTE = "connectors"
"""The ``url_route`` of the page's entry in Airflow's navigation: Airflow's UI shows the page
framed at ``/plugin/connectors``."""
OPTIONS: dict[str, ConfigOption] = {
    "ui_conn_id": {
        "description": (
            "The ``connect`` connection the Connectors page reads and changes connectors "
            "through (the metadata database; the API server needs no path to Kafka or Spark)."
        ),
        "version_added": "0.1.0",
        "type": "string",
        "example": None,
        "default": "connect_default",
    },
    "ui_refresh_interval": {
        "description": "Seconds between two refreshes of the Connectors page.",
        "version_added": "0.1.0",
        "type": "float",
        "example": None,
        "default": "5",
    },
    KAFKA_BOOTSTRAP_SERVERS: {
        "description": (
            "The Kafka cluster the runtime writes to and reads from, as its "
            "``bootstrap.servers``: the connector operators name the topics of their assets "
            "``kafka://<first server>/<topic>``, as the Apache Kafka provider does. Empty: "
            "no topic assets unless an operator is given ``bootstrap_servers``."
        ),
        "version_added": "0.1.0",
        "type": "string",
        "example": "kafka-1:9092,kafka-2:9092",
        "default": "",
    },
}


def provider_config() -> dict[str, ConfigSection]:
    """The provider info's ``config``."""
    return {
        SECTION: {
            "description": "The Connectors page of the Airflow UI, and the Kafka cluster of the assets.",
            "options": OPTIONS,
        }
    }


def setting(option: str) -> str:
    """The configured value of ``option``, or its default."""
    from airflow.configuration import conf

    return str(conf.get(SECTION, option, fallback=OPTIONS[option]["default"]))
