"""Kafka's FileStream connectors: lines of a file into a topic, records of topics into a file.

Same names and configs as Kafka's ``FileStreamSourceConnector`` (``file``, ``topic``,
``batch.size``) and ``FileStreamSinkConnector`` (``file``, ``topics``). The source also takes
``files``, a list read by up to ``tasks.max`` tasks (each file by one task). Source offsets are
``{"filename": path}`` → ``{"position": byte offset after the line}``, so a restart resumes
exactly after the last committed line. The source reads whole lines only: a line still being
written is read once its newline arrives. The sink appends ``str(value)`` (``null`` for null, as Java prints it) and a newline per
record and fsyncs on ``flush``, so committed offsets never run ahead of the file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import (
    Config,
    ConfigDef,
    Importance,
    KafkaTopicName,
    NonEmptyString,
    Range,
    Type,
)
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.datasets import ConnectorData, files, listed, topics
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    OffsetsOf,
    SourceConnector,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
)

FILE_CONFIG = "file"
FILES_CONFIG = "files"
TOPIC_CONFIG = "topic"
BATCH_SIZE_CONFIG = "batch.size"
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
IDLE_WAIT_S = 1.0
"""How long a poll that found no complete line waits before it returns (``stop`` ends the
wait), as Kafka's ``FileStreamSourceTask`` waits a second: an idle tail costs a wake-up a
second, not twenty, which is what lets a thousand of them share a few processes."""


SOURCE_CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        Type.STRING,
        None,
        importance=Importance.HIGH,
        documentation="Source filename.",
    )
    .define(
        FILES_CONFIG,
        Type.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Source filenames, instead of file: spread over up to tasks.max tasks.",
    )
    .define(
        TOPIC_CONFIG,
        Type.STRING,
        importance=Importance.HIGH,
        documentation="The topic to publish data to.",
        validator=KafkaTopicName(),
    )
    .define(
        BATCH_SIZE_CONFIG,
        Type.INT,
        2000,
        Range.at_least(1),
        Importance.LOW,
        "The maximum number of records the source task can read from the file each time it is polled.",
    )
)
SINK_CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    Type.STRING,
    importance=Importance.HIGH,
    documentation="Destination filename.",
    validator=NonEmptyString(),
)


class _FileStreamConnector:
    """What both FileStream connectors share: version, config and task class."""

    CONFIG_DEF: ConfigDef
    TASK_CLASS: type[Task]

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)
        self.CONFIG_DEF.parse(props)

    def task_class(self) -> type[Task]:
        return self.TASK_CLASS

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF


def source_files(parsed: dict[str, Any]) -> list[str]:
    """The files a source config names: ``file``, or the ``files`` list."""
    return [parsed[FILE_CONFIG]] if parsed[FILE_CONFIG] else list(parsed[FILES_CONFIG])


def _position_offset(end: int) -> dict[str, Any]:
    """The offset of the record of a line ending at byte ``end`` (newline included)."""
    return {POSITION_FIELD: end}


class _LineReader:
    """Whole lines of one file, from a byte position on."""

    BYTES_PER_LINE = 128  # read at once per line asked for; longer lines take more reads

    def __init__(self, path: str, position: int) -> None:
        self.path = path
        self.partition = {FILENAME_FIELD: path}
        self.position = position
        self.fd: int | None = None

    def read(self, topic: str, limit: int) -> SourceRecordBatch | None:
        """Up to ``limit`` records of the lines complete now, None when none is (or the file
        does not exist).
        A line ends at ``\n`` (a ``\r`` before it is dropped); the lines of one read are
        decoded together (``\n`` never occurs inside a UTF-8 sequence), and each record's
        offset is the byte position after its line."""
        data = self._whole_lines(limit * self.BYTES_PER_LINE)
        if not data:
            return None
        text = data.decode("utf-8", errors="replace")
        values = text.split("\n", limit)
        values.pop()  # after the last newline: nothing, or the lines past the limit
        # Each line's byte size: its text's length when all is ASCII (the usual case).
        lines = values if text.isascii() else data.split(b"\n", limit)[: len(values)]
        end = self.position
        ends = [(end := end + len(line) + 1) for line in lines]
        if "\r" in text:
            values = [v.rstrip("\r") for v in values]
        self.position = ends[-1]
        offsets = OffsetsOf(ends, _position_offset)
        return SourceRecordBatch(self.partition, offsets, topic, values, Schema.STRING_SCHEMA)

    def _whole_lines(self, size: int) -> bytes:
        """About ``size`` bytes from the position on, cut after their last newline; a first
        line longer than that is read on in reads of doubling size. Empty when no line is
        complete yet."""
        if self.fd is None:
            if not os.path.exists(self.path):
                return b""
            self.fd = os.open(self.path, os.O_RDONLY)
        chunks: list[bytes] = []
        offset = self.position
        while True:
            chunk = os.pread(self.fd, size, offset)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                chunks.append(chunk[: newline + 1])
                return b"".join(chunks)
            if len(chunk) < size:  # the end of the file, in an unfinished line (or none)
                return b""
            chunks.append(chunk)
            offset += size
            size *= 2

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class FileStreamSourceTask(SourceTask):
    """Reads its files in turn, up to ``batch.size`` lines per poll."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        parsed = SOURCE_CONFIG_DEF.parse(props)
        self.topic: str = parsed[TOPIC_CONFIG]
        self.batch_size: int = parsed[BATCH_SIZE_CONFIG]
        reader = self.context.offset_storage_reader()
        self.readers = []
        for path in source_files(parsed):
            offset = reader.offset({FILENAME_FIELD: path})
            self.readers.append(_LineReader(path, int(offset[POSITION_FIELD]) if offset else 0))
        self.stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        """Up to ``batch.size`` lines, from the files in turn: one file's as a batch, several
        files' as a list."""
        batches: list[SourceRecordBatch] = []
        wanted = self.batch_size
        for reader in self.readers:
            batch = reader.read(self.topic, wanted)
            if batch:
                batches.append(batch)
                wanted -= len(batch)
                if wanted <= 0:
                    break
        if not batches:
            self.stopping.wait(IDLE_WAIT_S)
        return SourceRecordBatch.poll_of(batches)

    def stop(self, connector_deleted: bool = False) -> None:
        self.stopping.set()

    def stopped(self) -> None:
        for reader in self.readers:
            reader.close()


class FileStreamSinkTask(SinkTask):
    """Appends each put's lines to the file in one unbuffered append, so that the tasks of
    one connector, which share the file, never interleave within a put."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        path = SINK_CONFIG_DEF.parse(props)[FILE_CONFIG]
        try:
            self.stream = open(path, "ab", buffering=0)  # noqa: SIM115  closed in stop()
        except OSError as e:
            raise ConnectException(
                f"Couldn't find or create file '{path}' for FileStreamSinkTask"
            ) from e

    def put(self, records: list[SinkRecord]) -> None:
        text = "".join("null\n" if r.value is None else f"{r.value}\n" for r in records)
        data = memoryview(text.encode("utf-8"))
        while data:  # a regular file takes it whole; a short write is continued
            data = data[self.stream.write(data) :]

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        os.fsync(self.stream.fileno())

    def stop(self, connector_deleted: bool = False) -> None:
        if not self.stream.closed:
            self.stream.close()


class FileStreamSourceConnector(_FileStreamConnector, SourceConnector):
    """Reads lines from a file (one task) or from files (up to ``tasks.max`` tasks) into a
    topic."""

    CONFIG_DEF = SOURCE_CONFIG_DEF
    TASK_CLASS = FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        keys = (FILE_CONFIG, TOPIC_CONFIG, BATCH_SIZE_CONFIG)
        common = {k: self.props[k] for k in keys if k in self.props}
        parsed = SOURCE_CONFIG_DEF.parse(self.props)
        if parsed[FILE_CONFIG]:
            return [common]
        files = source_files(parsed)
        count = min(max_tasks, len(files))
        return [{**common, FILES_CONFIG: ",".join(files[i::count])} for i in range(count)]

    def validate(self, connector_config: dict[str, str]) -> Config:
        """One of ``file`` and ``files``, never both (Kafka's ``file`` falls back to standard
        input; neither key has a default to miss, so the error names both, as a sink's
        ``topics`` and ``topics.regex``)."""
        result = super().validate(connector_config)
        values = {v.name: v for v in result.config_values}
        has_file = bool(connector_config.get(FILE_CONFIG))
        has_files = bool(str(connector_config.get(FILES_CONFIG, "")).strip())
        if not has_file and not has_files:
            message = f"Must configure one of {FILE_CONFIG} or {FILES_CONFIG}"
            values[FILE_CONFIG].add_error_message(message)
            values[FILES_CONFIG].add_error_message(message)
        elif has_file and has_files:
            message = f"Only one of {FILE_CONFIG} and {FILES_CONFIG} may be set."
            values[FILE_CONFIG].add_error_message(message)
            values[FILES_CONFIG].add_error_message(message)
        return result

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED  # offsets are byte positions: replays are exact

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Reads its files (the absolute ones), writes its topic."""
        paths = listed(config.get(FILES_CONFIG)) or listed(config.get(FILE_CONFIG))
        return ConnectorData(files(paths), topics(cluster, listed(config.get(TOPIC_CONFIG))))


class FileStreamSinkConnector(_FileStreamConnector, SinkConnector):
    """Writes the values of records from topics to a file, one line each. As in Kafka, each
    of the ``tasks.max`` tasks gets the same config: they share the consumer group's
    partitions and append to the same file."""

    CONFIG_DEF = SINK_CONFIG_DEF
    TASK_CLASS = FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{FILE_CONFIG: self.props[FILE_CONFIG]} for _ in range(max_tasks)]

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Reads its topics, writes its file (when absolute)."""
        return ConnectorData(
            topics(cluster, listed(config.get(self.TOPICS_CONFIG))),
            files(listed(config.get(FILE_CONFIG))),
        )
