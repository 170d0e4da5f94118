"""The table ``file_to_table``'s sink writes with its defaults, as the example DAGs name it:
``file_to_table``'s sink task writes it, ``lines_report`` is scheduled on it.

It carries the watcher that reports the sink's commits (``ConnectorCommitTrigger``, at most
one event every 30 s). Airflow keeps an asset's watchers as the DAG file parsed last
declares them: every DAG that names the table names its watcher too, or its parsing would
remove the watcher, and the next parsing of ``lines_report`` add it again.
"""

from __future__ import annotations

import os

from airflow.sdk import Asset, AssetWatcher

from airflow_provider_connect.assets import table_asset
from airflow_provider_connect.triggers.commits import ConnectorCommitTrigger

CONNECTOR = "lines-sink"  # file_to_table's sink with its defaults
DATABASE_URL = f"sqlite:///{os.environ.get('CONNECT_EXAMPLES_DIR', '/tmp')}/connect-lines.db"
TABLE = "lines"

_table = table_asset(DATABASE_URL, TABLE)
assert _table is not None
committed_lines = Asset(
    name=_table.name,  # the name and URI of the asset table_asset names
    uri=_table.uri,
    watchers=[
        AssetWatcher(
            name="lines_sink_commits",
            trigger=ConnectorCommitTrigger(
                connector_name=CONNECTOR, poll_interval=2, min_interval=30
            ),
        )
    ],
)
