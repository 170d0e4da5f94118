"""The extra link from a connector task in Airflow's UI to the connector's status in the
runtime's REST API (when the connection names a ``rest_url``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from airflow.sdk import BaseOperatorLink

from airflow_provider_connect.hooks.connect import ConnectHook


def status_url(rest_url: str | None, connector_name: str) -> str:
    """``{rest_url}/connectors/{name}/status``, or "" without a REST URL."""
    if not rest_url:
        return ""
    return f"{rest_url.rstrip('/')}/connectors/{quote(connector_name, safe='')}/status"


class ConnectorStatusLink(BaseOperatorLink):
    """Computed on the worker once the task has run (its fields rendered) and kept by
    Airflow under ``xcom_key``."""

    name = "Connector status"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        hook = ConnectHook(operator.connect_conn_id)
        return status_url(hook.rest_url, operator.connector_name)
