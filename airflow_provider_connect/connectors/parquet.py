"""Parquet export sink: records of topics into Parquet files on a local path or any fsspec
URL (``s3://``, ``gs://``, ``hdfs://``, … with the matching fsspec package), exactly once on
file systems, and on object stores where a copy publishes an object whole and a listing
shows every object written (S3 and GCS); for object stores prefer the S3 sink
(:mod:`airflow_provider_connect.connectors.s3`), which needs neither renames nor listings.

Layout, as Confluent's HDFS and S3 sinks: ``{store.url}/{topics.dir}/{topic}/partition={p}/
{topic}+{p}+{first offset}+{last offset}.parquet`` (offsets zero-padded to 20 digits). A
file holds ``flush.size`` records, or fewer when ``rotate.interval.ms`` has passed since its
first record arrived (checked at every offset commit).

Exactly once, as the HDFS example of KIP-26 describes: a file is written to a temporary name
and renamed into place, so a file is either complete or absent, and its name records the
offsets it holds. ``open()`` lists the committed files of each partition, removes leftover
temporary files and seeks the consumer to the offset after the highest one, so a record is
never written twice and never skipped, whatever fails and when. Consumer offsets are
committed only up to the files written.

Values must be structs with a schema (other values go to a column ``value``); a record whose
schema differs from the open file's closes that file first.
"""

from __future__ import annotations

import posixpath
import re
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    NonEmptyString,
    Range,
    Type,
    ValidString,
)
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.data import Type as SchemaType
from airflow_provider_connect.connect.data.logical import Date, Decimal, Time, Timestamp
from airflow_provider_connect.connect.datasets import ConnectorData, files, listed, topics
from airflow_provider_connect.connect.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)

STORE_URL = "store.url"
TOPICS_DIR = "topics.dir"
FLUSH_SIZE = "flush.size"
ROTATE_INTERVAL_MS = "rotate.interval.ms"
CODEC = "parquet.codec"
TEMP_DIR = "_tmp"

CONFIG_DEF = (
    ConfigDef()
    .define(
        STORE_URL,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="Where files go: a local path or an fsspec URL.",
    )
    .define(
        TOPICS_DIR,
        Type.STRING,
        "topics",
        NonEmptyString(),
        Importance.MEDIUM,
        "The directory under store.url that holds one directory per topic.",
    )
    .define(
        FLUSH_SIZE,
        Type.INT,
        validator=Range.at_least(1),
        importance=Importance.HIGH,
        documentation="Records per file.",
    )
    .define(
        ROTATE_INTERVAL_MS,
        Type.LONG,
        -1,
        Range.at_least(-1),
        Importance.MEDIUM,
        "Close a file this long after its first record arrived, even if smaller than "
        "flush.size (-1: never).",
    )
    .define(
        CODEC,
        Type.STRING,
        "snappy",
        ValidString("none", "snappy", "gzip", "zstd", "lz4", "brotli"),
        Importance.LOW,
        "The Parquet compression codec.",
    )
)

_PRIMITIVES = {
    SchemaType.INT8: pa.int8(),
    SchemaType.INT16: pa.int16(),
    SchemaType.INT32: pa.int32(),
    SchemaType.INT64: pa.int64(),
    SchemaType.FLOAT32: pa.float32(),
    SchemaType.FLOAT64: pa.float64(),
    SchemaType.BOOLEAN: pa.bool_(),
    SchemaType.STRING: pa.string(),
    SchemaType.BYTES: pa.binary(),
}


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of a Connect schema (logical types included)."""
    params = schema.parameters or {}
    if schema.name == Decimal.LOGICAL_NAME:
        precision = int(params.get("connect.decimal.precision", "38"))
        return pa.decimal128(precision, int(params[Decimal.SCALE_FIELD]))
    if schema.name == Date.LOGICAL_NAME:
        return pa.date32()
    if schema.name == Time.LOGICAL_NAME:
        return pa.time64("us")
    if schema.name == Timestamp.LOGICAL_NAME:
        return pa.timestamp("ms", tz="UTC")
    if schema.type is SchemaType.STRUCT:
        return pa.struct([arrow_field(f.name, f.schema) for f in schema.fields or []])
    if schema.type is SchemaType.ARRAY:
        assert schema.value_schema is not None
        return pa.list_(arrow_type(schema.value_schema))
    if schema.type is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return pa.map_(arrow_type(schema.key_schema), arrow_type(schema.value_schema))
    return _PRIMITIVES[schema.type]


def arrow_field(name: str, schema: Schema) -> pa.Field:
    return pa.field(name, arrow_type(schema), nullable=schema.optional)


def _python(value: Any) -> Any:
    """A Connect value as Arrow takes it from Python (structs as dicts, maps as pairs)."""
    if isinstance(value, Struct):
        return {f.name: _python(value.get(f.name)) for f in value.schema.fields or []}
    if isinstance(value, dict):
        return [(k, _python(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_python(v) for v in value]
    return value


class _OpenFile:
    """The records of one topic partition not yet in a file."""

    def __init__(self, schema: Schema | None) -> None:
        self.schema = schema
        self.rows: list[dict[str, Any]] = []
        self.first_offset = -1
        self.last_offset = -1
        self.opened_at = time.monotonic()


class ParquetSinkConnector(SinkConnector):
    """Hands its config to every task."""

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return ParquetSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self, is_deleted: bool = False) -> None:
        """Nothing held: the files stay, as the data the connector exported."""

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Reads its topics, writes a folder per topic (``<store.url>/<topics.dir>/<topic>``)
        of a local store; a store of another file system is left out (no provider names
        its fsspec URLs)."""
        names = listed(config.get(self.TOPICS_CONFIG))
        store = (config.get(STORE_URL) or "").removeprefix("file://").rstrip("/")
        folder = (config.get(TOPICS_DIR) or "topics").strip("/")
        local = "://" not in store
        return ConnectorData(
            topics(cluster, names), files(f"{store}/{folder}/{t}" for t in names) if local else []
        )


FILE_NAME = re.compile(
    r"^(?P<topic>.+)\+(?P<partition>\d+)\+(?P<first>\d{20})\+(?P<last>\d{20})\.parquet$"
)


class ParquetSinkTask(SinkTask):
    """Buffers records per partition and writes each full file atomically; see the module
    docstring."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.parsed = CONFIG_DEF.parse(props)
        self.fs, root = fsspec.core.url_to_fs(self.parsed[STORE_URL])
        self.root = posixpath.join(root, self.parsed[TOPICS_DIR])
        self.open_files: dict[TopicPartition, _OpenFile] = {}
        self.written: dict[TopicPartition, int] = {}  # next offset after the last file

    def _dir(self, tp: TopicPartition) -> str:
        return posixpath.join(self.root, tp.topic, f"partition={tp.partition}")

    def open(self, partitions: list[TopicPartition]) -> None:
        """Resumes every partition after its last committed file; drops temporary files."""
        resume: dict[TopicPartition, int] = {}
        for tp in partitions:
            directory = self._dir(tp)
            self.fs.makedirs(posixpath.join(directory, TEMP_DIR), exist_ok=True)
            for leftover in self.fs.ls(posixpath.join(directory, TEMP_DIR), detail=False):
                self.fs.rm(leftover)
            ends = [
                int(match["last"])
                for name in self.fs.ls(directory, detail=False)
                if (match := FILE_NAME.match(posixpath.basename(name)))
            ]
            if ends:
                resume[tp] = self.written[tp] = max(ends) + 1
        self.context.offset(resume)

    def put(self, records: list[SinkRecord]) -> None:
        for record in records:
            tp = TopicPartition(record.topic, record.kafka_partition)
            buffer = self.open_files.get(tp)
            if buffer is not None and buffer.rows and buffer.schema != record.value_schema:
                self._write(tp)  # the schema changed: close the file first
                buffer = None
            if buffer is None:
                buffer = self.open_files[tp] = _OpenFile(record.value_schema)
            if not buffer.rows:
                buffer.first_offset = record.kafka_offset
                buffer.opened_at = time.monotonic()
            buffer.rows.append(self._row(record))
            buffer.last_offset = record.kafka_offset
            if len(buffer.rows) >= self.parsed[FLUSH_SIZE]:
                self._write(tp)

    def _row(self, record: SinkRecord) -> dict[str, Any]:
        if isinstance(record.value, Struct):
            return {
                f.name: _python(record.value.get(f.name)) for f in record.value.schema.fields or []
            }
        return {"value": _python(record.value)}

    def _write(self, tp: TopicPartition) -> None:
        """Writes the partition's records to a temporary file and renames it into place."""
        buffer = self.open_files.pop(tp)
        if not buffer.rows:
            return
        schema = buffer.schema
        if schema is not None and schema.type is SchemaType.STRUCT:
            arrow_schema = pa.schema([arrow_field(f.name, f.schema) for f in schema.fields or []])
        elif schema is not None:
            arrow_schema = pa.schema([arrow_field("value", schema)])
        else:
            arrow_schema = None
        table = pa.Table.from_pylist(buffer.rows, schema=arrow_schema)
        directory = self._dir(tp)
        name = f"{tp.topic}+{tp.partition}+{buffer.first_offset:020d}+{buffer.last_offset:020d}.parquet"
        temporary = posixpath.join(directory, TEMP_DIR, f"{uuid.uuid4().hex}.parquet")
        codec = self.parsed[CODEC]
        with self.fs.open(temporary, "wb") as f:
            pq.write_table(table, f, compression=None if codec == "none" else codec)
        self.fs.mv(temporary, posixpath.join(directory, name))
        self.written[tp] = buffer.last_offset + 1

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Closes files past ``rotate.interval.ms``; commits only what is in files."""
        interval = self.parsed[ROTATE_INTERVAL_MS]
        if interval >= 0:
            now = time.monotonic()
            for tp in [tp for tp, b in self.open_files.items() if b.rows]:
                if (now - self.open_files[tp].opened_at) * 1000 >= interval:
                    self._write(tp)
        return {tp: o for tp, o in self.written.items() if tp in current_offsets}

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        """Drops the unwritten records of revoked partitions: the next owner reads them
        again from the last file."""
        for tp in partitions:
            self.open_files.pop(tp, None)
            self.written.pop(tp, None)

    def stop(self, connector_deleted: bool = False) -> None:
        self.open_files.clear()
