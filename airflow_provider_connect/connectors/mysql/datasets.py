"""What a MySQL or MariaDB change-capture config reads and writes: per table of
``table.include.list`` that names one, the table (``mysql://<host>:<port>/<database>/<table>``,
the asset URI of Airflow's MySQL provider) and its topic as the connector names it."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.datasets import ConnectorData, table
from airflow_provider_connect.connectors.change_capture import datasets
from airflow_provider_connect.connectors.mysql import config as keys


def captured_datasets(config: Mapping[str, str], cluster: str | None) -> ConnectorData:
    """See :func:`~airflow_provider_connect.connectors.change_capture.datasets.captured_datasets`;
    nothing without ``database.hostname``."""
    host = config.get(keys.HOSTNAME)
    if not host:
        return ConnectorData()
    server = f"mysql://{host}:{config.get(keys.PORT) or 3306}"
    return datasets.captured_datasets(config, lambda db, t: table(f"{server}/{db}", t), cluster)
