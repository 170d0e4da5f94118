"""The Airflow plugin of the provider, registered twice over: through the provider info's
``plugins`` and through the ``airflow.plugins`` entry point (Airflow loads it once, by name).

* Every Airflow 3 version that loads plugins mounts the Connectors page and its API at
  ``/connect`` (``fastapi_apps``).
* Airflow 3.1+ also shows it: a "Connectors" entry in the navigation, and a "Connector" tab
  on task instances that opens the connector of the task (``external_views``; the tab shows
  on every task instance, and a task of another provider's operator finds no connector).
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from airflow_provider_connect.ui.app import create_app
from airflow_provider_connect.ui.settings import URL_PREFIX

PAGE = URL_PREFIX.lstrip("/") + "/"
"""The page, relative to Airflow's base URL (the UI resolves external views against it)."""
ICON = PAGE + "static/connectors.svg"


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
            "url_route": "connectors",
            "icon": ICON,
        },
        {
            "name": "Connector",
            "href": PAGE
            + "?dag_id={DAG_ID}&run_id={RUN_ID}&task_id={TASK_ID}&map_index={MAP_INDEX}",
            "destination": "task_instance",
            "url_route": "connector",
            "icon": ICON,
        },
    ]
