"""The extra link from a connector task in Airflow's UI to the connector on the Connectors
page of the provider's UI plugin."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from airflow.configuration import conf
from airflow.sdk import BaseOperatorLink

from airflow_provider_connect.ui.settings import URL_PREFIX


def connector_page_url(base_url: str, connector_name: str) -> str:
    """The page opened on ``connector_name``, under Airflow's ``[api] base_url``."""
    return f"{base_url.rstrip('/')}{URL_PREFIX}/?connector={quote(connector_name, safe='')}"


class ConnectorStatusLink(BaseOperatorLink):
    """Computed on the worker once the task has run (its fields rendered) and kept by
    Airflow under ``xcom_key``; relative to the API server when ``[api] base_url`` is unset."""

    name = "Connector status"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        base_url = conf.get("api", "base_url", fallback="") or ""
        return connector_page_url(base_url, operator.connector_name)
