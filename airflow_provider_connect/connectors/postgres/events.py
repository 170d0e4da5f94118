"""The records of the PostgreSQL change-capture task's change events (Debezium's
``PostgresChangeRecordEmitter``) over the core's
(:mod:`~airflow_provider_connect.connectors.change_capture.events`): one captured table's
topic, key and envelope per event, under the task's source partition."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import OP_READ
from airflow_provider_connect.connectors.change_capture.events import ChangeRecords
from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.database import TableInfo
from airflow_provider_connect.connectors.postgres.envelope import source_struct
from airflow_provider_connect.connectors.postgres.offsets import PostgresOffsetContext
from airflow_provider_connect.connectors.postgres.tables import CapturedTable


class ChangeEvents(ChangeRecords):
    """The core's records and rules of change events, with PostgreSQL's captured tables and
    the ``r`` events of snapshots."""

    def __init__(self, config: PostgresConnectorConfig, offsets: PostgresOffsetContext) -> None:
        super().__init__(offsets.partition, config.skipped_operations, config.tombstones_on_delete)
        self.config = config
        self.offsets = offsets

    def captured(self, info: TableInfo) -> CapturedTable:
        """The captured table ``info`` (its schemas with the ``transaction`` field)."""
        config = self.config
        return CapturedTable(
            info,
            config.topic_prefix,
            config.filters,
            config.type_modes,
            True,
            config.unavailable_value_placeholder,
            __version__,
            config.dbname,
        )

    def read(
        self,
        table: CapturedTable,
        row: tuple[Any, ...],
        marker: str,
        offset: dict[str, Any],
        now_ms: int,
    ) -> SourceRecord:
        """The ``r`` event of a snapshot's ``row``, read at ``now_ms`` (ms since the epoch),
        its ``source.snapshot`` ``marker``: at the stream's position, in no transaction."""
        source = self._source(table, now_ms * 1000, marker)
        return self.change(
            table, offset, table.key(row), OP_READ, source, after=table.row(row), ts_ms=now_ms
        )

    def _source(self, table: CapturedTable, ts_us: int, marker: str) -> Struct:
        """The ``source`` block of a snapshot's event (streamed events take the table's
        :class:`~.envelope.StreamedSource`)."""
        return source_struct(
            version=__version__,
            name=self.config.topic_prefix,
            ts_ms=ts_us // 1000,
            ts_us=ts_us,
            snapshot=marker,
            db=self.config.dbname,
            schema=table.info.schema,
            table=table.info.name,
            tx_id=None,
            lsn=self.offsets.position.lsn_commit,
        )
