"""The records of the PostgreSQL change-capture task's change events (Debezium's
``PostgresChangeRecordEmitter``) over the core's
(:mod:`~airflow_provider_connect.connectors.change_capture.events`): one captured table's
topic, key and envelope per event, under the task's source partition; and those of logical
decoding messages (``LogicalDecodingMessageMonitor``)."""

from __future__ import annotations

import time
from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    OP_MESSAGE,
    OP_READ,
    OPERATION,
    SNAPSHOT_FALSE,
    SOURCE,
    TIMESTAMP,
    TRANSACTION,
)
from airflow_provider_connect.connectors.change_capture.events import ChangeRecords
from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.database import TableInfo
from airflow_provider_connect.connectors.postgres.envelope import (
    MESSAGE,
    MESSAGE_CONTENT,
    MESSAGE_KEY_SCHEMA,
    MESSAGE_PREFIX,
    MESSAGE_TOPIC_SUFFIX,
    message_value_schema,
    source_sequence,
    source_struct,
)
from airflow_provider_connect.connectors.postgres.offsets import PostgresOffsetContext
from airflow_provider_connect.connectors.postgres.pgoutput import LogicalMessage
from airflow_provider_connect.connectors.postgres.tables import CapturedTable
from airflow_provider_connect.connectors.postgres.types import PgType, column_mapping


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


class LogicalDecodingMessages:
    """The records of logical decoding messages (``pg_logical_emit_message``), as Debezium's
    ``LogicalDecodingMessageMonitor`` writes them: on ``<topic.prefix>.message``, keyed by
    the message's prefix, the value an ``m`` event with the ``source`` block (no schema nor
    table), the ``transaction`` block of a transactional message and the ``message`` block,
    its content as ``binary.handling.mode`` says (bytes, base64, base64-url-safe or hex)."""

    def __init__(self, config: PostgresConnectorConfig, partition: dict[str, Any]) -> None:
        self.config = config
        self.partition = partition
        self.topic = config.topic_prefix + MESSAGE_TOPIC_SUFFIX
        content = column_mapping(PgType("bytea"), True, config.type_modes)
        self._content = content.parse
        self.value_schema = message_value_schema(content.schema)
        block = self.value_schema.field(MESSAGE)
        assert block is not None
        self._block_schema = block.schema

    def included(self, prefix: str) -> bool:
        """Whether messages of ``prefix`` are emitted (``message.prefix.*.list``)."""
        return self.config.message_filter(prefix)

    def record(
        self,
        message: LogicalMessage,
        offset: dict[str, Any],
        ts_us: int,
        tx_id: int | None,
        lsn: int,
        last_commit_lsn: int | None,
        transaction: Struct | None,
    ) -> SourceRecord:
        """The record of ``message``, streamed at ``lsn``: in the transaction ``tx_id``
        committed at ``ts_us`` (µs since the epoch) with its ``transaction`` block, or,
        non-transactional, with no transaction and ``ts_us`` the time it was read."""
        source = source_struct(
            version=__version__,
            name=self.config.topic_prefix,
            ts_ms=ts_us // 1000,
            ts_us=ts_us,
            snapshot=SNAPSHOT_FALSE,
            db=self.config.dbname,
            schema="",
            table="",
            tx_id=tx_id,
            lsn=lsn,
            sequence=source_sequence(last_commit_lsn, lsn),
        )
        block = Struct.of(
            self._block_schema,
            {
                MESSAGE_PREFIX: message.prefix,
                MESSAGE_CONTENT: self._content("\\x" + message.content.hex()),
            },
        )
        value = Struct.of(
            self.value_schema,
            {
                OPERATION: OP_MESSAGE,
                TIMESTAMP: int(time.time() * 1000),
                SOURCE: source,
                TRANSACTION: transaction,
                MESSAGE: block,
            },
        )
        return SourceRecord(
            self.partition,
            offset,
            self.topic,
            key_schema=MESSAGE_KEY_SCHEMA,
            key=Struct.of(MESSAGE_KEY_SCHEMA, {MESSAGE_PREFIX: message.prefix}),
            value_schema=self.value_schema,
            value=value,
        )
