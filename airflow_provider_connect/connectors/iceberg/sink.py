"""``org.apache.iceberg.connect.IcebergSinkConnector`` (and Tabular's
``io.tabular.iceberg.connect.IcebergSinkConnector``): topics into Apache Iceberg tables,
with Apache's config names, through any pyiceberg catalog.

The connector checks the config and hands it to every task (:mod:`.task`: how records
become data files and commits, exactly once). This module imports no pyiceberg, so naming
the connector's datasets (an Airflow DAG's assets, at parse time) stays light.
"""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigDef
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.datasets import ConnectorData
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connectors.iceberg import config as c
from airflow_provider_connect.connectors.iceberg.datasets import iceberg_datasets


class IcebergSinkConnector(SinkConnector):
    """Hands its config to every task; checks it as Apache's ``IcebergSinkConfig`` does."""

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return c.CONFIG_DEF

    def validate(self, connector_configs: dict[str, str]) -> Config:
        return c.validate(connector_configs)

    def start(self, props: dict[str, str]) -> None:
        c.IcebergSinkConfig(props)
        self.props = props

    def task_class(self) -> type[Task]:
        from airflow_provider_connect.connectors.iceberg.task import IcebergSinkTask

        return IcebergSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        return iceberg_datasets(config, cluster)
