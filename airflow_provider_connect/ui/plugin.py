"""The Airflow plugin of the provider, registered twice over: through the provider info's
``plugins`` and through the ``airflow.plugins`` entry point (Airflow loads it once, by name).

* Every Airflow 3 version that loads plugins mounts the Connectors page and its API at
  ``/connect`` (``fastapi_apps``).
* Airflow 3.1+ also shows it: a "Connectors" entry in the navigation, and a "Connector" tab
  on task instances that opens the connector of the task (``external_views``; the tab shows
  on every task instance, and a task of another provider's operator finds no connector).

The navigation draws a view's icon as an ``<img>`` (``currentColor`` does not reach it) on its
own background: light (light mode) or dark blue (dark mode) at rest, mid blue when active.
``icon`` is a dark glyph in a white halo, readable on the light and the mid blue; Airflow
shows ``icon_dark_mode`` in dark mode, a light glyph readable on both blues.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from airflow_provider_connect.settings import NAV_ROUTE, URL_PREFIX
from airflow_provider_connect.ui.app import create_app

PAGE = URL_PREFIX.lstrip("/") + "/"
"""The page, relative to Airflow's base URL (the UI resolves external views against it)."""
ICON = PAGE + "static/connectors.svg"
ICON_DARK_MODE = PAGE + "static/connectors-dark.svg"
ICONS = {"icon": ICON, "icon_dark_mode": ICON_DARK_MODE}


class ConnectUIPlugin(AirflowPlugin):
    name = "connect"
    fastapi_apps = [  # noqa: RUF012 (AirflowPlugin declares them as class lists)
        {"app": create_app(), "url_prefix": URL_PREFIX, "name": "Kafka Connect on Spark"},
    ]
    external_views = [  # noqa: RUF012
        {
            "name": "Connectors",
            "href": PAGE,
            "destination": "nav",
            "url_route": NAV_ROUTE,
            **ICONS,
        },
        {
            "name": "Connector",
            "href": PAGE
            + "?dag_id={DAG_ID}&run_id={RUN_ID}&task_id={TASK_ID}&map_index={MAP_INDEX}",
            "destination": "task_instance",
            "url_route": "connector",
            **ICONS,
        },
    ]
