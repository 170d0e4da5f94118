"""The records of the binlog change-capture task's events (Debezium's
``BinlogChangeRecordEmitter`` and its schema change events) over the core's
(:mod:`~airflow_provider_connect.connectors.change_capture.events`): one captured table's
topic, key and envelope per change event, and the schema change events of ``<topic.prefix>``,
all under the task's source partition."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import OP_READ
from airflow_provider_connect.connectors.change_capture.events import ChangeRecords
from airflow_provider_connect.connectors.mysql import envelope
from airflow_provider_connect.connectors.mysql.config import BinlogConnectorConfig
from airflow_provider_connect.connectors.mysql.offsets import BinlogOffsetContext, Position
from airflow_provider_connect.connectors.mysql.tables import CapturedTable
from airflow_provider_connect.connectors.mysql.types import Column


class ChangeEvents(ChangeRecords):
    """The core's records and rules of change events, with the captured tables of the
    binlog, the ``r`` events of snapshots and the schema change events."""

    def __init__(self, config: BinlogConnectorConfig, offsets: BinlogOffsetContext) -> None:
        super().__init__(offsets.partition, config.skipped_operations, config.tombstones_on_delete)
        self.config = config
        self.offsets = offsets
        self.source_schema = envelope.source_schema(config.flavor.source_schema_name)
        package = config.flavor.package
        self.change_key_schema = envelope.schema_change_key_schema(f"{package}.SchemaChangeKey")
        self.change_value_schema = envelope.schema_change_value_schema(
            f"{package}.SchemaChangeValue", config.flavor.source_schema_name
        )

    def captured(
        self, db: str, table: str, columns: Sequence[Column], key: Sequence[str]
    ) -> CapturedTable:
        """The captured table ``db.table`` of ``columns`` (its schemas with the
        ``transaction`` field)."""
        config = self.config
        return CapturedTable(
            db,
            table,
            columns,
            key,
            config.topic_prefix,
            config.filters,
            config.type_modes,
            True,
            self.source_schema,
        )

    def source(
        self,
        *,
        ts_ms: int,
        snapshot: str,
        db: str,
        table: str | None,
        position: Position,
        server_id: int = 0,
        gtid: str | None = None,
        row: int = 0,
        thread: int | None = None,
        query: str | None = None,
    ) -> Struct:
        """A ``source`` block at ``position`` (a snapshot's, a schema change's)."""
        return envelope.source_struct(
            self.source_schema,
            version=__version__,
            connector=self.config.flavor.name,
            name=self.config.topic_prefix,
            ts_ms=ts_ms,
            snapshot=snapshot,
            db=db,
            table=table,
            server_id=server_id,
            gtid=gtid,
            file=position.file,
            pos=position.pos,
            row=row,
            thread=thread,
            query=query,
        )

    def read(
        self,
        table: CapturedTable,
        row: tuple[Any, ...],
        marker: str,
        offset: dict[str, Any],
        position: Position,
        now_ms: int,
    ) -> SourceRecord:
        """The ``r`` event of a snapshot's ``row`` (values in column order), read at
        ``now_ms``, its ``source.snapshot`` ``marker``, at the log's ``position``."""
        source = self.source(
            ts_ms=now_ms, snapshot=marker, db=table.db, table=table.table, position=position
        )
        after = table.snapshot_row(row)
        key = table.snapshot_key(row)
        return self.change(table, offset, key, OP_READ, source, after=after, ts_ms=now_ms)

    def schema_change(
        self, database: str, ddl: str, changes: list[Struct], source: Struct, offset: dict[str, Any]
    ) -> SourceRecord:
        """The schema change event of ``ddl`` on ``database``, written to ``<topic.prefix>``
        (partition 0, as Debezium writes it)."""
        key = envelope.schema_change_key(self.change_key_schema, database)
        value = envelope.schema_change_value(
            self.change_value_schema,
            source=source,
            ts_ms=int(time.time() * 1000),
            database=database,
            ddl=ddl,
            table_changes=changes,
        )
        return SourceRecord(
            self.partition,
            offset,
            self.config.topic_prefix,
            0,
            key_schema=self.change_key_schema,
            key=key,
            value_schema=self.change_value_schema,
            value=value,
        )
