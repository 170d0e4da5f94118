"""The signals the binlog connectors read: rows of their ``signal.data.collection`` table
(``<database>.<table>``) on the captured server (Debezium's source signal channel)."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.signals import NoSignals, Signal, SignalDatabase
from airflow_provider_connect.connectors.change_capture.config import SIGNAL_DATA_COLLECTION
from airflow_provider_connect.connectors.change_capture.signals import snapshot_request
from airflow_provider_connect.connectors.mysql.config import CONFIG_DEFS, connection_parameters
from airflow_provider_connect.connectors.mysql.flavors import Flavor


def snapshot_signal(
    flavor: Flavor, config: Mapping[str, str], data_collections: list[str], signal_id: str
) -> Signal:
    """The ``execute-snapshot`` row of an incremental snapshot of ``data_collections``,
    for the signal table on the connector's server (as its own connections reach it)."""
    parsed = CONFIG_DEFS[flavor.name].parse(dict(config))
    table = parsed[SIGNAL_DATA_COLLECTION]
    if not table:
        raise NoSignals(f"set {SIGNAL_DATA_COLLECTION} in its config")
    database, _, name = table.partition(".")
    server = connection_parameters(parsed, "disabled")
    return Signal(
        SignalDatabase(
            drivername="mysql+pymysql",
            host=server["host"],
            port=server["port"],
            username=server["user"],
            password=server["password"] or None,
            database=database,
            query={"charset": "utf8mb4"},
        ),
        name,
        snapshot_request(data_collections, signal_id),
    )
