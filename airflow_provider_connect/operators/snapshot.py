"""Backfills as DAG tasks: an incremental snapshot of tables captured by a change-capture
connector (Debezium's ``PostgresConnector``, ``MySqlConnector`` or ``MariaDbConnector``), asked for
as Debezium users ask for one, with an ``execute-snapshot`` row in the connector's signal
table (``signal.data.collection``). The connector reads the tables again in chunks while it
goes on streaming changes, without being stopped or recreated."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from airflow.sdk import BaseHook, Context
from airflow.sdk.exceptions import AirflowException
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL

from airflow_provider_connect.connect.signals import NoSignals, Signal
from airflow_provider_connect.connect.source import SourceConnector
from airflow_provider_connect.control.plugins import connector_class
from airflow_provider_connect.operators.connector import ConnectorOperator


class IncrementalSnapshotOperator(ConnectorOperator):
    """Inserts an ``execute-snapshot`` signal for ``data_collections`` (``schema.table``
    names or regular expressions, a list or comma-separated) into the signal table of
    connector ``connector_name``, as the connector describes it
    (``SourceConnector.snapshot_signal``); returns the signal's id and the tables to XCom.

    The signal is written with ``signal_conn_id`` (an Airflow connection to the captured
    database, whose user may insert into the signal table) when given, else as the
    connector reaches its database; a password held in a config provider (``${...}``) is
    not resolved on the Airflow side, so such a connector needs ``signal_conn_id``. The task
    fails naming the cause when the connector reads no signals or the database refuses the
    row. The snapshot itself runs in the connector; its progress is in the connector's
    source offsets (``incremental``) while it runs.
    """

    template_fields: Sequence[str] = ("connector_name", "data_collections", "signal_conn_id")

    def __init__(
        self,
        *,
        data_collections: list[str] | str,
        signal_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.data_collections = data_collections
        self.signal_conn_id = signal_conn_id

    def execute(self, context: Context) -> dict[str, Any]:
        name = self.connector_name
        config = self.with_store(lambda _: self.hook.store.configs.connector(name).config)
        tables = self.data_collections
        if isinstance(tables, str):
            tables = [t.strip() for t in tables.split(",") if t.strip()]
        if not tables:
            raise AirflowException("data_collections names no table to snapshot")
        signal_id = f"airflow-{uuid.uuid4().hex}"  # Debezium's id column is VARCHAR(42)
        signal = self._signal(name, config, list(tables), signal_id)
        schema, _, relation = signal.table.rpartition(".")
        engine = create_engine(self._database_url(signal))
        try:
            with engine.begin() as connection:
                quote = connection.dialect.identifier_preparer.quote
                target = f"{quote(schema)}.{quote(relation)}" if schema else quote(relation)
                columns = ", ".join(quote(c) for c in signal.row)
                values = ", ".join(f":{c}" for c in signal.row)
                connection.execute(
                    text(f"INSERT INTO {target} ({columns}) VALUES ({values})"), signal.row
                )
        except Exception as e:
            raise AirflowException(
                f"The signal could not be written to {signal.table}: {e}"
            ) from None
        finally:
            engine.dispose()
        self.log.info("Asked %s for an incremental snapshot of %s", name, tables)
        return {"name": name, "signal_id": signal_id, "data_collections": tables}

    @staticmethod
    def _signal(name: str, config: dict[str, str], tables: list[str], signal_id: str) -> Signal:
        """The connector's signal row; AirflowException when it reads no signals."""
        try:
            connector = connector_class(config.get("connector.class", ""))()
            if not isinstance(connector, SourceConnector):
                raise NoSignals("a sink connector reads no signals")
            return connector.snapshot_signal(config, tables, signal_id)
        except (ImportError, NoSignals) as e:
            raise AirflowException(f"Connector {name} has no signal table: {e}") from None

    def _database_url(self, signal: Signal) -> URL:
        """The signal's database, reached with ``signal_conn_id`` when given."""
        database = signal.database
        if self.signal_conn_id:
            connection = BaseHook.get_connection(self.signal_conn_id)
            database = replace(
                database,
                username=connection.login,
                password=connection.password,
                host=connection.host,
                port=connection.port,
                database=connection.schema,
                query={},
            )
        elif database.password and "${" in database.password:
            raise AirflowException(
                "The connector's database password comes from a config provider: give "
                "signal_conn_id, an Airflow connection to the captured database"
            )
        return URL.create(
            database.drivername,
            username=database.username,
            password=database.password,
            host=database.host,
            port=database.port,
            database=database.database,
            query=database.query,
        )
