"""A task's side of the sink: records buffered per topic partition and table, written as
Parquet data files of the table (pyiceberg's writer: the table's schema, partition spec and
field ids) when a chunk is cut, and handed to the committer as :class:`PartitionChunk`\\ s.

A chunk covers the offsets ``[start, end)`` of one topic partition: every record of that
range is in its files (or was routed to no table), and no record outside it. Append tables
get the rows in order; upsert tables (id columns and ``iceberg.tables.upsert-mode-enabled``)
get each touched row's last state, with the keys of every row the range touched to delete
first, and whether a truncate came (then the rows before it are gone). Records are held in
memory until their chunk is cut; an append table's rows are handed to a thread that writes
them as files each ``ROLL_ROWS`` rows meanwhile (:class:`Roll`: one at a time per buffer
while a chunk fills, and the last one of the chunk taken before may still be writing), so memory
stays bounded however long the commit interval, and the poll thread goes on consuming while
they are written.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import Any

from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import _dataframe_to_data_files
from pyiceberg.manifest import DataFile
from pyiceberg.table.metadata import TableMetadata

from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.sink import SinkRecord, TopicPartition
from airflow_provider_connect.connectors.iceberg.changes import Op, change_of, field_value
from airflow_provider_connect.connectors.iceberg.chunks import PartitionChunk, TableChunk
from airflow_provider_connect.connectors.iceberg.tables import TableHandle
from airflow_provider_connect.connectors.iceberg.values import HeldRows, RowConverter

ROLL_ROWS = 100_000
"""An append table's rows of one partition written to a data file once this many wait."""


def key_columns(key: Any, table: str) -> list[str]:
    """The id columns a record key names: its fields (a Debezium key struct, a map)."""
    if isinstance(key, Struct):
        return [f.name for f in key.schema.fields or ()]
    if isinstance(key, dict) and key:
        return [str(k) for k in key]
    raise DataException(
        f"Table {table} has no id columns for upserts: set iceberg.tables.default-id-columns "
        "or iceberg.table.<table>.id-columns, or key the records by a struct"
    )


class TableBuffer:
    """The rows of one table from one topic partition since its last chunk."""

    def __init__(self, handle: TableHandle, upsert: bool, cdc_field: str | None) -> None:
        self.handle = handle
        self.upsert = upsert
        self.cdc_field = cdc_field
        self.rows = HeldRows()  # an append table's
        self.changes: dict[tuple[Any, ...], Any] = {}  # key -> last row, None once deleted
        self.truncate = False
        self.rolls: list[Roll] = []
        self.fitted: Schema | None = None  # the last record's schema, once it fitted

    def prepare(self, record: SinkRecord) -> None:
        """What may fail before ``record`` is taken, and may be done again: the table
        created or evolved for it, rows waiting handed to a :class:`Roll`."""
        if not self.upsert:
            schema = record.value_schema
            if schema is None or schema is not self.fitted:  # a schema seen last: fitted
                self.handle.fit(schema, record.value)
                self.fitted = schema
            if len(self.rows) >= ROLL_ROWS:
                if self.rolls:
                    self.rolls[-1].wait()  # one roll at a time: memory stays bounded
                self.rolls.append(Roll(fitted(self.handle), self.rows))
                self.rows = HeldRows()
            return
        if not self.handle.id_columns:
            self.handle.id_columns = key_columns(record.key, self.handle.name)
        change = change_of(record, self.cdc_field)
        if change.op is Op.UPSERT:
            row = change.row
            self.handle.fit(row.schema if isinstance(row, Struct) else None, row)

    def take(self, record: SinkRecord) -> None:
        """Buffers ``record`` (after :meth:`prepare`); changes nothing outside memory."""
        if not self.upsert:
            self.rows.append(record.value)
            return
        change = change_of(record, self.cdc_field)
        if change.op is Op.TRUNCATE:
            self.changes.clear()
            self.truncate = True
        elif change.op is not Op.NONE:
            self.changes[self._key(change.row)] = change.row if change.op is Op.UPSERT else None

    def _key(self, row: Any) -> tuple[Any, ...]:
        key = tuple(field_value(row, c) for c in self.handle.id_columns)
        if None in key:
            raise DataException(
                f"A row for table {self.handle.name} has no value for its id columns "
                f"{self.handle.id_columns}"
            )
        return key

    def freeze(self) -> FrozenTable:
        """What is buffered, as it is now, to write elsewhere; the buffer starts empty."""
        frozen = FrozenTable(
            self.upsert,
            self.rows,
            self.changes,
            self.truncate,
            self.rolls,
            list(self.handle.id_columns),
            fitted(self.handle),
        )
        self.clear()
        return frozen

    def clear(self) -> None:
        self.rows, self.rolls, self.changes, self.truncate = HeldRows(), [], {}, False


@dataclass(frozen=True)
class FittedTable:
    """A table as rows were fitted to it, taken on the poll thread: its metadata and file IO
    as they were then (an evolution on the poll thread replaces the ``Table``'s own in place)
    and the converter made for that schema; what files are written with, on any thread."""

    metadata: TableMetadata
    io: FileIO
    converter: RowConverter


def fitted(handle: TableHandle) -> FittedTable | None:
    """The handle's table as it is now; None before a row made or found it."""
    if handle.table is None or handle.converter is None:
        return None
    return FittedTable(handle.table.metadata, handle.table.io, handle.converter)


def write_files(table: FittedTable | None, rows: HeldRows | list[Any]) -> list[DataFile]:
    """``rows`` as data files of ``table`` (pyiceberg's writer: its schema, field ids,
    partition spec and target file size)."""
    if not rows:
        return []
    assert table is not None  # a row was fitted: the table exists
    arrow = table.converter.to_arrow(rows)
    return list(_dataframe_to_data_files(table.metadata, arrow, table.io, uuid.uuid4()))


class Roll:
    """Rows of an append table written as data files on a thread of its own, started at once,
    with the table as they were fitted to it. :meth:`files` gives the files, or raises what
    stopped the writing: the chunk that holds the roll is then not sent, and its records are
    read again (rolls of the same chunk after a failed one are written all the same, and left
    as orphans)."""

    def __init__(self, table: FittedTable | None, rows: HeldRows):
        self._files: list[DataFile] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._write, args=(table, rows), name="iceberg-roll", daemon=True
        )
        self._thread.start()

    def _write(self, table: FittedTable | None, rows: HeldRows) -> None:
        try:
            self._files = write_files(table, rows)
        except BaseException as e:  # raised where the chunk is written
            self._error = e

    def wait(self) -> None:
        """Returns once the files are written or the writing failed."""
        self._thread.join()

    def files(self) -> list[DataFile]:
        """The files written, once they are; raises what stopped the writing."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._files


@dataclass
class FrozenTable:
    """One table's share of a chunk, taken from its buffer with the table as its rows were
    fitted to it; its files are written by :meth:`write`, on any thread."""

    upsert: bool
    rows: HeldRows
    changes: dict[tuple[Any, ...], Any]
    truncate: bool
    rolls: list[Roll]
    id_columns: list[str]
    table: FittedTable | None

    def write(self) -> TableChunk:
        if self.upsert:
            rows = [r for r in self.changes.values() if r is not None]
            return TableChunk(
                write_files(self.table, rows),
                list(self.changes),
                self.truncate,
                self.id_columns,
            )
        rolled = [file for roll in self.rolls for file in roll.files()]
        return TableChunk(rolled + write_files(self.table, self.rows))


@dataclass
class FrozenPartition:
    """A chunk of one partition, taken at a tick, its files still to write."""

    tp: TopicPartition
    start: int
    end: int
    tables: dict[str, FrozenTable]

    def write(self) -> PartitionChunk:
        """Writes the tables' files: the chunk to send."""
        tables = {name: frozen.write() for name, frozen in self.tables.items()}
        return PartitionChunk(self.tp.topic, self.tp.partition, self.start, self.end, tables)


class PartitionWriter:
    """One assigned topic partition: its tables' buffers and the offsets they cover."""

    def __init__(self, tp: TopicPartition, start: int | None) -> None:
        self.tp = tp
        self.start = start  # None until the first record (the consumer's own position)
        self.end = start
        self.buffers: dict[str, TableBuffer] = {}

    def add(self, record: SinkRecord, tables: list[TableBuffer]) -> None:
        """Buffers ``record`` for each of its tables (none: it only moves the end). All or
        nothing: a failure (the catalog or the storage away) leaves the record untaken,
        so a ``put`` of the same records again takes each once."""
        for buffer in tables:
            buffer.prepare(record)
        for buffer in tables:
            buffer.take(record)
        if self.start is None:
            self.start = record.original_kafka_offset
        self.end = record.original_kafka_offset + 1

    def add_all(self, records: list[SinkRecord], tables: list[TableBuffer]) -> None:
        """As :meth:`add` for each of ``records`` in turn (this partition's, in offset order,
        each past :attr:`end`): a failure leaves that record and those after it untaken. Into
        one table (the usual case), each record is prepared and taken without a loop over
        tables, and the offsets are set once."""
        if len(tables) != 1:
            for record in records:
                self.add(record, tables)
            return
        prepare, take = tables[0].prepare, tables[0].take
        end = self.end
        try:
            for record in records:
                prepare(record)
                take(record)
                end = record.original_kafka_offset + 1
        finally:
            if end != self.end:
                if self.start is None:
                    self.start = records[0].original_kafka_offset
                self.end = end

    def freeze(self) -> FrozenPartition | None:
        """The records since the last chunk, taken out (the next chunk starts at their end);
        None before any record or position."""
        if self.start is None or self.end is None:
            return None
        tables = {name: b.freeze() for name, b in self.buffers.items()}
        frozen = FrozenPartition(self.tp, self.start, self.end, tables)
        self.start = self.end
        return frozen

    def rewind(self, position: int) -> None:
        """Forgets what is buffered (files written for it are left as orphans) and starts
        again at ``position``."""
        for buffer in self.buffers.values():
            buffer.clear()
        self.start = self.end = position
