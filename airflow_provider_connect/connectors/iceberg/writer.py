"""A task's side of the sink: records buffered per topic partition and table, written as
Parquet data files of the table (pyiceberg's writer: the table's schema, partition spec and
field ids) when a chunk is cut, and handed to the committer as :class:`PartitionChunk`\\ s.

A chunk covers the offsets ``[start, end)`` of one topic partition: every record of that
range is in its files (or was routed to no table), and no record outside it. Append tables
get the rows in order; upsert tables (id columns and ``iceberg.tables.upsert-mode-enabled``)
get each touched row's last state, with the keys of every row the range touched to delete
first, and whether a truncate came (then the rows before it are gone). Records are held in
memory until their chunk is cut; an append table's rows are written to a file each
``ROLL_ROWS`` rows meanwhile, so memory stays bounded however long the commit interval.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from pyiceberg.io.pyarrow import _dataframe_to_data_files
from pyiceberg.manifest import DataFile

from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.sink import SinkRecord, TopicPartition
from airflow_provider_connect.connectors.iceberg.changes import Op, change_of, field_value
from airflow_provider_connect.connectors.iceberg.chunks import PartitionChunk, TableChunk
from airflow_provider_connect.connectors.iceberg.tables import TableHandle

ROLL_ROWS = 100_000
"""An append table's rows of one partition written to a data file once this many wait."""


class TableBuffer:
    """The rows of one table from one topic partition since its last chunk."""

    def __init__(self, handle: TableHandle, upsert: bool, cdc_field: str | None) -> None:
        self.handle = handle
        self.upsert = upsert and bool(handle.id_columns)
        self.cdc_field = cdc_field
        self.rows: list[Any] = []
        self.changes: dict[tuple[Any, ...], Any] = {}  # key -> last row, None once deleted
        self.truncate = False
        self.files: list[DataFile] = []

    def add(self, record: SinkRecord) -> None:
        if not self.upsert:
            self.handle.fit(record.value_schema, record.value)
            self.rows.append(record.value)
            if len(self.rows) >= ROLL_ROWS:
                self.files.extend(self._write(self.rows))
                self.rows = []
            return
        change = change_of(record, self.cdc_field)
        if change.op is Op.TRUNCATE:
            self.changes.clear()
            self.truncate = True
        elif change.op is Op.UPSERT:
            row = change.row
            self.handle.fit(row.schema if hasattr(row, "schema") else None, row)
            self.changes[self._key(row)] = row
        elif change.op is Op.DELETE:
            self.changes[self._key(change.row)] = None

    def _key(self, row: Any) -> tuple[Any, ...]:
        key = tuple(field_value(row, c) for c in self.handle.id_columns)
        if None in key:
            raise DataException(
                f"A row for table {self.handle.name} has no value for its id columns "
                f"{self.handle.id_columns}"
            )
        return key

    def chunk(self) -> TableChunk:
        """Writes what is buffered and empties the buffer."""
        if self.upsert:
            rows = [r for r in self.changes.values() if r is not None]
            chunk = TableChunk(
                self._write(rows),
                list(self.changes),
                self.truncate,
                list(self.handle.id_columns),
            )
            self.changes, self.truncate = {}, False
            return chunk
        files = self.files + self._write(self.rows)
        self.rows, self.files = [], []
        return TableChunk(files)

    def _write(self, rows: list[Any]) -> list[DataFile]:
        if not rows:
            return []
        table = self.handle.table
        assert table is not None  # fit created it
        arrow = self.handle.converter.to_arrow(rows)
        return list(_dataframe_to_data_files(table.metadata, arrow, table.io, uuid.uuid4()))

    def discard(self) -> list[DataFile]:
        """Empties the buffer; returns the files written already (to delete)."""
        files, self.files, self.rows, self.changes = self.files, [], [], {}
        return files


class PartitionWriter:
    """One assigned topic partition: its tables' buffers and the offsets they cover."""

    def __init__(self, tp: TopicPartition, start: int | None) -> None:
        self.tp = tp
        self.start = start  # None until the first record (the consumer's own position)
        self.end = start
        self.buffers: dict[str, TableBuffer] = {}

    def add(self, record: SinkRecord, tables: Iterable[TableBuffer]) -> None:
        """Buffers ``record`` for each of its tables (none: it only moves the end)."""
        if self.start is None:
            self.start = record.kafka_offset
        for buffer in tables:
            buffer.add(record)
        self.end = record.kafka_offset + 1

    def chunk(self) -> PartitionChunk | None:
        """The chunk of the records since the last one; None before any record or position."""
        if self.start is None or self.end is None:
            return None
        chunk = PartitionChunk(
            self.tp.topic,
            self.tp.partition,
            self.start,
            self.end,
            {name: b.chunk() for name, b in self.buffers.items()},
        )
        self.start = self.end
        return chunk

    def rewind(self, position: int) -> list[DataFile]:
        """Forgets what is buffered and starts again at ``position``; returns the files
        written already."""
        files = [f for b in self.buffers.values() for f in b.discard()]
        self.start = self.end = position
        return files

