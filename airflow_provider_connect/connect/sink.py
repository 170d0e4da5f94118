"""Sink connectors and tasks, as ``org.apache.kafka.connect.sink``.

A sink task receives records the runtime consumed from Kafka (consumer group
``connect-<connector name>``) and writes them to an external system. The runtime commits
the consumer offsets that ``pre_commit`` returns, so a task that writes synchronously in
``put``/``flush`` gets at-least-once delivery, and a task that stores offsets with its data
and seeks to them on ``open`` can get exactly-once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from concurrent.futures import Future
from enum import Enum
from typing import Any, NamedTuple

from airflow_provider_connect.connect.channel import TaskChannel
from airflow_provider_connect.connect.connector import Connector, ConnectRecord, Task
from airflow_provider_connect.connect.data.schema import Schema
from airflow_provider_connect.connect.header import Header, Headers
from airflow_provider_connect.connect.metrics import (
    PluginMetrics,
    own_plugin_metrics,
)


class TopicPartition(NamedTuple):
    """A Kafka topic partition."""

    topic: str
    partition: int


class TimestampType(Enum):
    """What a consumed record's timestamp means."""

    NO_TIMESTAMP_TYPE = "NoTimestampType"
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


class SinkRecord(ConnectRecord):
    """A record consumed from Kafka, with its offset in its topic partition.

    ``original_topic``, ``original_kafka_partition`` and ``original_kafka_offset`` say where
    it was consumed, whatever transformations changed since (KIP-793); they default to the
    record's own topic, partition and offset.
    """

    __slots__ = (
        "kafka_offset",
        "original_kafka_offset",
        "original_kafka_partition",
        "original_topic",
        "timestamp_type",
    )
    kafka_partition: int  # always known for a consumed record

    def __init__(
        self,
        topic: str,
        partition: int,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        kafka_offset: int,
        timestamp: int | None = None,
        timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE,
        headers: Headers | Iterable[Header | tuple[str, Any]] | None = None,
        original_topic: str | None = None,
        original_kafka_partition: int | None = None,
        original_kafka_offset: int | None = None,
    ) -> None:
        # ConnectRecord's assignments, made here rather than through a call to its
        # constructor: the sink loop builds every consumed record through this one.
        self.topic, self.kafka_partition, self.timestamp = topic, partition, timestamp
        self.key_schema, self.key = key_schema, key
        self.value_schema, self.value = value_schema, value
        self._headers = (
            headers if headers is None or isinstance(headers, Headers) else Headers(headers)
        )
        self.kafka_offset, self.timestamp_type = kafka_offset, timestamp_type
        self.original_topic = topic if original_topic is None else original_topic
        self.original_kafka_partition = (
            partition if original_kafka_partition is None else original_kafka_partition
        )
        self.original_kafka_offset = (
            kafka_offset if original_kafka_offset is None else original_kafka_offset
        )

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
        headers: Headers | Iterable[Header | tuple[str, Any]] | None = None,
    ) -> SinkRecord:
        """As :meth:`ConnectRecord.new_record`, keeping the Kafka offset, the timestamp type
        and where the record was consumed (a sink record's partition is always known: None
        keeps this one's)."""
        return SinkRecord(
            topic,
            self.kafka_partition if kafka_partition is None else kafka_partition,
            key_schema,
            key,
            value_schema,
            value,
            self.kafka_offset,
            timestamp,
            self.timestamp_type,
            self._headers_for_copy(headers),
            self.original_topic,
            self.original_kafka_partition,
            self.original_kafka_offset,
        )

    def _core(self) -> tuple[Any, ...]:
        return (*super()._core(), self.kafka_offset, self.timestamp_type)


class ErrantRecordReporter(ABC):
    """Reports records a sink task could not write, under ``errors.tolerance`` (to the log
    and the dead-letter queue). Implemented by the runtime."""

    @abstractmethod
    def report(self, record: SinkRecord, error: Exception) -> Future[None]:
        """Reports ``record`` as failed with ``error``; the future completes when the report
        is stored. Raises when the tolerance is exceeded (``errors.tolerance=none``)."""


class SinkTaskContext(ABC):
    """What a sink task can ask of the runtime. Implemented by :class:`SimpleSinkTaskContext`,
    the one the runtime and the test harness give.

    Requests (``offset``, ``timeout``, ``pause``, ``resume``, ``request_commit``) are
    applied by the runtime after the current ``put`` returns.
    """

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's configuration."""

    @abstractmethod
    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        """Asks the consumer to seek: each partition's next record will be the one at the
        given offset. Used by sinks that store offsets with their data, usually in ``open``."""

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """How long to wait before retrying a ``put`` that raised a RetriableException."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]:
        """The topic partitions currently assigned to this task."""

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stops fetching from these partitions until ``resume``."""

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Resumes fetching from paused partitions."""

    @abstractmethod
    def request_commit(self) -> None:
        """Asks for an offset commit (``pre_commit``, then commit) as soon as possible."""

    @abstractmethod
    def is_closing(self) -> bool:
        """True while ``pre_commit``/``flush`` run as part of closing partitions
        (reconfiguration, rebalance, shutdown, delete) so the task should commit all it has;
        false at all other times (KIP-275)."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for records ``put`` cannot write, or None when none is configured."""
        return None

    def plugin_metrics(self) -> PluginMetrics:
        """The task's metrics (KIP-877), tagged ``connector`` and ``task``; the same object at
        every call, usable from any thread from ``initialize`` until ``stop`` returns. The
        runtime samples them at every heartbeat and once more when the run ends, then
        removes them. A context made elsewhere (a test's) answers an untagged
        :class:`~airflow_provider_connect.connect.metrics.SimplePluginMetrics` of its own."""
        return own_plugin_metrics(self)

    def channel(self) -> TaskChannel | None:
        """The connector's coordination channel as this task run sees it (a project
        extension, Kafka Connect has none): durable messages between the connector's tasks,
        fenced by task run and generation (see :mod:`airflow_provider_connect.connect.channel`).
        None where the runtime offers none."""
        return None


class SimpleSinkTaskContext(SinkTaskContext):
    """The sink task context the runtime gives a task, and the test harness too: it holds
    the task's requests until whoever drives the task (the runtime's loop, the harness)
    applies them after ``put`` returns.

    The driver reads and resets the plain attributes (the sink loop reads them once per
    batch): ``assigned`` (the partitions it assigned; ``assignment()`` answers a copy),
    ``paused`` (asked by ``pause``/``resume``), ``requested_offsets`` (``offset``),
    ``timeout_ms`` (``timeout``), ``commit_requested`` (``request_commit``) and
    ``reporter`` (what ``errant_record_reporter()`` answers). ``closing`` is what
    ``is_closing()`` answers: the driver sets it only while ``pre_commit``/``flush`` run as
    part of closing partitions, so it is false at all other times (KIP-275).
    ``plugin_metrics()`` answers ``metrics`` (untagged ones of its own when none are given),
    ``channel()`` answers ``channel``.
    """

    def __init__(
        self,
        configs: dict[str, str],
        reporter: ErrantRecordReporter | None = None,
        metrics: PluginMetrics | None = None,
        channel: TaskChannel | None = None,
    ) -> None:
        self._configs = configs
        self._metrics = metrics
        self._channel = channel
        self.assigned: set[TopicPartition] = set()
        self.paused: set[TopicPartition] = set()
        self.requested_offsets: dict[TopicPartition, int] = {}
        self.timeout_ms = 0
        self.commit_requested = False
        self.closing = False
        self.reporter = reporter

    def configs(self) -> dict[str, str]:
        return self._configs

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter

    def plugin_metrics(self) -> PluginMetrics:
        return own_plugin_metrics(self) if self._metrics is None else self._metrics

    def channel(self) -> TaskChannel | None:
        return self._channel

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        self.requested_offsets.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def request_commit(self) -> None:
        self.commit_requested = True

    def is_closing(self) -> bool:
        return self.closing


class SinkTask(Task):
    """Writes records consumed from Kafka to an external system.

    Lifecycle guarantees, all on the task's one thread:

    * ``initialize`` exactly once, then ``start`` exactly once.
    * ``open(partitions)`` when partitions are assigned, before any of their records.
    * ``put(records)`` repeatedly with the next records of open partitions.
    * ``pre_commit(offsets)`` every ``offset.flush.interval.ms``, on request, and before
      partitions close (then with ``context.is_closing()`` true); the offsets it returns
      are committed.
    * ``close(partitions)`` when partitions are revoked or the task stops, after their
      final ``pre_commit``; no more records of them follow.
    * ``stop`` exactly once, last, after the final ``close``. A ``put`` in progress is not
      interrupted: the runtime stops the task once ``put`` has returned.
    """

    TOPICS_CONFIG = "topics"
    TOPICS_REGEX_CONFIG = "topics.regex"

    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        """Called once, before ``start``; keeps the context as ``self.context``."""
        self.context = context

    @abstractmethod
    def put(self, records: list[SinkRecord]) -> None:
        """Writes (or buffers) the records. Called with an empty list at each poll that
        brought nothing while the task is not paused (as Kafka Connect), so a task can flush
        on time without new records. Raise
        :class:`~airflow_provider_connect.connect.errors.RetriableException` to have the
        same records put again after ``context.timeout``."""

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Makes everything put so far durable. ``current_offsets`` are the next offsets to
        consume per partition. Called by the default :meth:`pre_commit`."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The offsets that are safe to commit (the next offset to read per partition).

        By default flushes and returns ``current_offsets``. A task that writes
        asynchronously returns only what is durable; returning an empty dict commits
        nothing. ``context.is_closing()`` tells whether the partitions close next.
        """
        self.flush(current_offsets)
        return current_offsets

    def open(self, partitions: list[TopicPartition]) -> None:
        """The task was assigned these partitions; set up writers, seek if it keeps its own
        offsets (``context.offset``)."""

    def close(self, partitions: list[TopicPartition]) -> None:
        """These partitions are revoked: release their writers. Their final ``pre_commit``
        has already run."""


class SinkConnector(Connector):
    """A connector whose tasks are :class:`SinkTask` subclasses; its config names the
    topics to consume with ``topics`` or ``topics.regex``."""

    TOPICS_CONFIG = SinkTask.TOPICS_CONFIG
