"""Kafka's FileStream connectors: lines of a file into a topic, records of topics into a file.

Same names and configs as Kafka's ``FileStreamSourceConnector`` (``file``, ``topic``,
``batch.size``) and ``FileStreamSinkConnector`` (``file``, ``topics``). Source offsets are
``{"filename": path}`` → ``{"position": byte offset after the line}``, so a restart resumes
exactly after the last committed line. The source reads whole lines only: a line still being
written is read once its newline arrives. The sink appends ``str(value)`` (``null`` for null, as Java prints it) and a newline per
record and fsyncs on ``flush``, so committed offsets never run ahead of the file.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    NonEmptyString,
    Range,
    Type,
)
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
BATCH_SIZE_CONFIG = "batch.size"
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
IDLE_WAIT_S = 0.05


SOURCE_CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        Type.STRING,
        importance=Importance.HIGH,
        documentation="Source filename.",
        validator=NonEmptyString(),
    )
    .define(
        TOPIC_CONFIG,
        Type.STRING,
        importance=Importance.HIGH,
        documentation="The topic to publish data to.",
        validator=NonEmptyString(),
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


class FileStreamSourceTask(SourceTask):
    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        parsed = SOURCE_CONFIG_DEF.parse(props)
        self.path: str = parsed[FILE_CONFIG]
        self.topic: str = parsed[TOPIC_CONFIG]
        self.batch_size: int = parsed[BATCH_SIZE_CONFIG]
        self.partition = {FILENAME_FIELD: self.path}
        offset = self.context.offset_storage_reader().offset(self.partition)
        self.position: int = int(offset[POSITION_FIELD]) if offset else 0
        self.stopping = threading.Event()
        self.stream: Any = None

    def poll(self) -> list[SourceRecord] | None:
        if self.stream is None:
            if not os.path.exists(self.path):
                self.stopping.wait(IDLE_WAIT_S)
                return None
            self.stream = open(self.path, "rb")  # noqa: SIM115  closed in stopped()
            self.stream.seek(self.position)
        records: list[SourceRecord] = []
        lines = self.stream.readlines(self.batch_size * 256)
        for line in lines:
            if not line.endswith(b"\n") or len(records) >= self.batch_size:
                break  # an unfinished line (read it whole later) or a full batch
            self.position += len(line)
            records.append(
                SourceRecord(
                    self.partition,
                    {POSITION_FIELD: self.position},
                    self.topic,
                    None,
                    None,
                    None,
                    Schema.STRING_SCHEMA,
                    line[:-1].decode("utf-8", errors="replace").rstrip("\r"),
                )
            )
        if len(records) < len(lines):
            self.stream.seek(self.position)  # the file object read past what was emitted
        if not records:
            self.stopping.wait(IDLE_WAIT_S)
        return records

    def stop(self, connector_deleted: bool = False) -> None:
        self.stopping.set()

    def stopped(self) -> None:
        if self.stream is not None:
            self.stream.close()


class FileStreamSinkTask(SinkTask):
    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        path = SINK_CONFIG_DEF.parse(props)[FILE_CONFIG]
        try:
            self.stream = open(path, "a", encoding="utf-8")  # noqa: SIM115  closed in stop()
        except OSError as e:
            raise ConnectException(
                f"Couldn't find or create file '{path}' for FileStreamSinkTask"
            ) from e

    def put(self, records: list[SinkRecord]) -> None:
        self.stream.write("".join("null\n" if r.value is None else f"{r.value}\n" for r in records))

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self.stream.flush()
        os.fsync(self.stream.fileno())

    def stop(self, connector_deleted: bool = False) -> None:
        if not self.stream.closed:
            self.stream.close()


class FileStreamSourceConnector(_FileStreamConnector, SourceConnector):
    """Reads lines from a file into a topic with one task."""

    CONFIG_DEF = SOURCE_CONFIG_DEF
    TASK_CLASS = FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        keys = (FILE_CONFIG, TOPIC_CONFIG, BATCH_SIZE_CONFIG)
        return [{k: self.props[k] for k in keys if k in self.props}]

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED  # offsets are byte positions: replays are exact


class FileStreamSinkConnector(_FileStreamConnector, SinkConnector):
    """Writes the values of records from topics to a file, one line each, with one task."""

    CONFIG_DEF = SINK_CONFIG_DEF
    TASK_CLASS = FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{FILE_CONFIG: self.props[FILE_CONFIG]}]
