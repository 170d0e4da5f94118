"""The signals the PostgreSQL connector reads: rows of its ``signal.data.collection`` table
in the captured database (Debezium's source signal channel)."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.signals import NoSignals, Signal, SignalDatabase
from airflow_provider_connect.connectors.change_capture.signals import snapshot_request
from airflow_provider_connect.connectors.postgres import config as keys
from airflow_provider_connect.connectors.postgres.config import CONFIG_DEF, connection_parameters


def snapshot_signal(
    config: Mapping[str, str], data_collections: list[str], signal_id: str
) -> Signal:
    """The ``execute-snapshot`` row of an incremental snapshot of ``data_collections``,
    for the signal table in the connector's database (as its own connections reach it)."""
    parsed = CONFIG_DEF.parse(dict(config))
    table = parsed[keys.SIGNAL_DATA_COLLECTION]
    if not table:
        raise NoSignals(f"set {keys.SIGNAL_DATA_COLLECTION} in its config")
    database = connection_parameters(parsed, "airflow-provider-connect")
    return Signal(
        SignalDatabase(
            drivername="postgresql+psycopg",
            host=database["host"],
            port=database["port"],
            username=database["user"],
            password=database["password"] or None,
            database=database["dbname"],
            query={"sslmode": database["sslmode"]},
        ),
        table,
        snapshot_request(data_collections, signal_id),
    )
