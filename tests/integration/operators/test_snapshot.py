"""The incremental-snapshot operator only asks the connector where its signals go and what
the row says (``SourceConnector.snapshot_signal``): a connector outside the built-ins, reading
signals from a SQLite table, gets its ``execute-snapshot`` row written there."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowException

from airflow_provider_connect.connect.signals import NoSignals, Signal, SignalDatabase
from airflow_provider_connect.connect.source import SourceConnector
from airflow_provider_connect.operators.snapshot import IncrementalSnapshotOperator
from airflow_provider_connect.store import MetadataStore
from tests.connectors import NeverStarted

CLASS = f"{__name__}.SqliteSignalledSourceConnector"


class SqliteSignalledSourceConnector(NeverStarted, SourceConnector):
    """A third party's source whose signals are rows of ``signals`` in ``database.file``,
    with columns of its own."""

    def snapshot_signal(
        self, config: Mapping[str, str], data_collections: list[str], signal_id: str
    ) -> Signal:
        if not config.get("database.file"):
            raise NoSignals("set database.file in its config")
        database = SignalDatabase("sqlite", None, None, None, None, config["database.file"])
        row = {"signal_id": signal_id, "kind": "snapshot", "tables": ";".join(data_collections)}
        return Signal(database, "signals", row)


def test_the_operator_writes_the_row_the_connector_describes(
    store: MetadataStore, connection: str, tmp_path: Path
) -> None:
    path = tmp_path / "source.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE signals (signal_id TEXT, kind TEXT, tables TEXT)")
    store.configs.put_connector_config(
        "own", {"connector.class": CLASS, "database.file": str(path)}
    )
    result = IncrementalSnapshotOperator(
        task_id="backfill", connector_name="own", data_collections="a.orders, a.refunds"
    ).execute(context={})
    with sqlite3.connect(path) as db:
        written = db.execute("SELECT signal_id, kind, tables FROM signals").fetchall()
    assert written == [(result["signal_id"], "snapshot", "a.orders;a.refunds")]

    store.configs.put_connector_config("unsignalled", {"connector.class": CLASS})
    with pytest.raises(AirflowException, match="has no signal table: set database.file"):
        IncrementalSnapshotOperator(
            task_id="backfill", connector_name="unsignalled", data_collections="a.orders"
        ).execute(context={})
