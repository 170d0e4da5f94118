"""The signal channels of the binlog connectors: rows of their ``signal.data.collection``
table (``<database>.<table>``) on the captured server (Debezium's source channel), records
of ``signal.kafka.topic`` (kafka) and lines of ``signal.file`` (file), as
``signal.enabled.channels`` enables them."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.signals import SignalChannels, SignalDatabase
from airflow_provider_connect.connectors.change_capture.config import (
    SIGNAL_DATA_COLLECTION,
    described_channels,
)
from airflow_provider_connect.connectors.mysql.config import CONFIG_DEFS, connection_parameters
from airflow_provider_connect.connectors.mysql.flavors import Flavor


def signal_channels(flavor: Flavor, config: Mapping[str, str]) -> SignalChannels:
    """The connector's signal channels; the signal table is reached as the connector's own
    connections reach the server, its database named by the table's first part."""
    parsed = CONFIG_DEFS[flavor.name].parse(dict(config))
    database, _, table = (parsed[SIGNAL_DATA_COLLECTION] or "").partition(".")
    server = connection_parameters(parsed, "disabled")
    return described_channels(
        parsed,
        table or None,
        SignalDatabase(
            drivername="mysql+pymysql",
            host=server["host"],
            port=server["port"],
            username=server["user"],
            password=server["password"] or None,
            database=database,
            query={"charset": "utf8mb4"},
        ),
    )
