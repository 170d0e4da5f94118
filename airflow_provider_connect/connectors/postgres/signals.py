"""The signal channels of the PostgreSQL connector: rows of its ``signal.data.collection``
table in the captured database (Debezium's source channel), records of
``signal.kafka.topic`` (kafka) and lines of ``signal.file`` (file), as
``signal.enabled.channels`` enables them."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.signals import SignalChannels, SignalDatabase
from airflow_provider_connect.connectors.change_capture.config import (
    SIGNAL_DATA_COLLECTION,
    described_channels,
)
from airflow_provider_connect.connectors.postgres.config import CONFIG_DEF, connection_parameters


def signal_channels(config: Mapping[str, str]) -> SignalChannels:
    """The connector's signal channels; the signal table is reached as the connector's own
    connections reach the database."""
    parsed = CONFIG_DEF.parse(dict(config))
    database = connection_parameters(parsed, "airflow-provider-connect")
    return described_channels(
        parsed,
        parsed[SIGNAL_DATA_COLLECTION],
        SignalDatabase(
            drivername="postgresql+psycopg",
            host=database["host"],
            port=database["port"],
            username=database["user"],
            password=database["password"] or None,
            database=database["dbname"],
            query={"sslmode": database["sslmode"]},
        ),
    )
