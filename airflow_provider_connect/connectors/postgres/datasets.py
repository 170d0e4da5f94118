"""What a PostgreSQL change-capture config reads and writes: per table of
``table.include.list`` that names one, the table and its topic as the connector names it."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.datasets import ConnectorData, table
from airflow_provider_connect.connectors.change_capture import datasets
from airflow_provider_connect.connectors.postgres import config as keys


def captured_datasets(config: Mapping[str, str], cluster: str | None) -> ConnectorData:
    """The tables ``table.include.list`` names and their topics
    (:func:`~airflow_provider_connect.connectors.change_capture.datasets.captured_datasets`)
    in ``postgresql://<host>:<port>/<dbname>``; nothing without ``database.hostname``."""
    host = config.get(keys.HOSTNAME)
    if not host:
        return ConnectorData()
    port, database = config.get(keys.PORT) or "5432", config.get(keys.DBNAME) or ""
    url = f"postgresql://{host}:{port}/{database}"
    return datasets.captured_datasets(config, lambda s, t: table(url, f"{s}.{t}"), cluster)
