"""The extra link from a connector task in Airflow's UI to the connector on the Connectors
page of the provider's UI plugin, inside Airflow's UI.

Airflow's UI opens an extra link to its own origin in the same tab, and from 3.3 on it shows
the navigation's views with deep links: at ``/plugin/<url_route>/<path>?<query>`` it frames
``/<path>?<query>`` of its origin (and keeps the browser's URL in step with the frame). The
link opens the page there, on the connector, with Airflow's navigation around it. Before 3.3
the framed view always shows the page's start, so the link opens the page itself (which then
offers a way back to Airflow)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlsplit

from airflow.configuration import conf
from airflow.sdk import BaseOperatorLink

from airflow_provider_connect.settings import NAV_ROUTE, URL_PREFIX


def airflow_frames_deep_links(version: str | None = None) -> bool:
    """Whether Airflow's UI (of ``version``, default the installed one) passes a path and a
    query under a navigation view's route on to its frame (3.3+)."""
    if version is None:
        import airflow

        version = airflow.__version__
    major, minor = (int(part) for part in re.findall(r"\d+", version)[:2])
    return (major, minor) >= (3, 3)


def connector_page_url(base_url: str, connector_name: str, *, framed: bool | None = None) -> str:
    """The page opened on ``connector_name``, under Airflow's ``[api] base_url``: inside
    Airflow's UI when it frames deep links (``framed``, default: the installed Airflow
    does), else the page itself."""
    base = base_url.rstrip("/")
    page = f"{URL_PREFIX}/?connector={quote(connector_name, safe='')}"
    if framed is None:
        framed = airflow_frames_deep_links()
    if not framed:
        return base + page
    # The frame's URL is a path from the origin: the base URL's own path comes in it again.
    return f"{base}/plugin/{NAV_ROUTE}{urlsplit(base).path}{page}"


class ConnectorStatusLink(BaseOperatorLink):
    """Computed on the worker once the task has run (its fields rendered) and kept by
    Airflow under ``xcom_key``; relative to the API server when ``[api] base_url`` is unset."""

    name = "Connector status"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        base_url = conf.get("api", "base_url", fallback="") or ""
        return connector_page_url(base_url, operator.connector_name)
