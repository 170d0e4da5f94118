"""The Iceberg table ``postgres_to_iceberg``'s sink writes with its defaults, as the example
DAGs name it: ``postgres_to_iceberg``'s sink task writes it, ``iceberg_replica_report`` is
scheduled on it.

The table is named by its location (no Airflow provider names Iceberg assets; OpenLineage
names such a table by where it is stored): ``file://<examples>/connect-iceberg-warehouse/
replica/orders``, in a pyiceberg SQL catalog on SQLite, ``connect-iceberg-catalog.db``. It
carries the watcher that reports the sink's commits (``ConnectorCommitTrigger``, at most one
event every 30 s). Airflow keeps an asset's watchers as the DAG file parsed last declares
them: every DAG that names the table names its watcher too.
"""

from __future__ import annotations

import os

from airflow.sdk import Asset, AssetWatcher

from airflow_provider_connect.connectors.iceberg.datasets import iceberg_datasets
from airflow_provider_connect.triggers.commits import ConnectorCommitTrigger

EXAMPLES = os.environ.get("CONNECT_EXAMPLES_DIR", "/tmp")
NAME = "orders-lake"  # postgres_to_iceberg's connectors: NAME-capture, NAME-replica
CONNECTOR = f"{NAME}-replica"
CATALOG = {
    "type": "sql",
    "uri": f"sqlite:///{EXAMPLES}/connect-iceberg-catalog.db",
    "warehouse": f"file://{EXAMPLES}/connect-iceberg-warehouse",
}
"""The catalog's pyiceberg properties (the sink's ``iceberg.catalog.*``)."""
TABLE = "replica.orders"

(_table,) = iceberg_datasets(
    {"iceberg.tables": TABLE, **{f"iceberg.catalog.{k}": v for k, v in CATALOG.items()}}, None
).writes
replica_orders = Asset(
    uri=_table.uri,
    watchers=[
        AssetWatcher(
            name="orders_lake_replica_commits",
            trigger=ConnectorCommitTrigger(
                connector_name=CONNECTOR, poll_interval=2, min_interval=30
            ),
        )
    ],
)
