"""Connectors for tests that record every lifecycle call they receive to a JSON-lines file
(``events.file``), so tests can check the calls across processes (Spark executors)."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from airflow_provider_connect.connect.config import ConfigDef, Type
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.errors import RetriableException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.metrics import (
    CumulativeCount,
    Monitorable,
    PluginMetrics,
    Rate,
)
from airflow_provider_connect.connect.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connect.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
)
from airflow_provider_connect.connect.storage import StringConverter
from airflow_provider_connect.connect.transforms import Transformation

EVENTS = "events.file"


def record_event(path: str, event: str, **details: Any) -> None:
    line = json.dumps(
        {"event": event, "pid": os.getpid(), "thread": threading.current_thread().name, **details}
    )
    with open(path, "a") as f:
        f.write(line + "\n")


def read_events(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    return [json.loads(line) for line in p.read_text().splitlines()] if p.exists() else []


class _Recording:
    events: str

    def _record(self, event: str, **details: Any) -> None:
        record_event(self.events, event, **details)


class RecordingSourceConnector(SourceConnector, _Recording):
    """Emits ``count`` numbered records per task (``topic``), then idles; ``fail.after``
    makes task 0 fail after that many records (``fail.on.start``: in ``start``, before it
    ever runs); ``fail.on.stop`` makes a deleted task's
    stop raise. ``start.gate``: the connector's ``start`` returns only once that file
    exists (a connector call that holds up the herder). This module imports nothing of the
    repository beyond the project and the tests package: the Airflow API server of the UI
    tests loads it from a folder that holds the tests package alone."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        self.events = props[EVENTS]
        deadline = time.monotonic() + 300
        while "start.gate" in props and not os.path.exists(props["start.gate"]):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{props['start.gate']} never appeared")
            time.sleep(0.02)  # polls the gate the test opens
        self._record("connector.start")
        self.watching = threading.Event()
        if "tasks.file" in props:  # the "source system": how many partitions it has now
            threading.Thread(
                target=self._watch, args=(Path(props["tasks.file"]),), daemon=True
            ).start()

    def _watch(self, path: Path) -> None:
        seen = path.read_text()
        while not self.watching.wait(0.05):
            if path.read_text() != seen:
                seen = path.read_text()
                self.context.request_task_reconfiguration()

    def task_class(self) -> type[Task]:
        return RecordingSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if "tasks.file" in self.props:
            max_tasks = min(max_tasks, int(Path(self.props["tasks.file"]).read_text()))
        return [{**self.props, "task": str(i)} for i in range(max_tasks)]

    def stop(self, is_deleted: bool = False) -> None:
        self.watching.set()
        self._record("connector.stop", deleted=is_deleted)

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(EVENTS, Type.STRING)
            .define("topic", Type.STRING)
            .define("secret", Type.PASSWORD, None, documentation="A credential, never shown.")
            # a password whose name Airflow's masker would not guess
            .define("sasl.jaas.config", Type.PASSWORD, None, documentation="Also never shown.")
        )


class RecordingSourceTask(SourceTask, _Recording):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.events = props[EVENTS]
        self.task = int(props.get("task", "0"))
        self.topic = props["topic"]
        self.count = int(props.get("count", "10"))
        self.fail_after = int(props.get("fail.after", "-1"))
        self.fail_on_stop = props.get("fail.on.stop") == "true"
        self.record_acks = props.get("record.acks") == "true"
        self.batches = props.get(BATCHES) == "true"
        if props.get("fail.on.start") == "true":  # never RUNNING: fails before the loop
            raise RuntimeError(f"task {self.task} failed on purpose at start")
        offset = self.context.offset_storage_reader().offset({"task": self.task})
        self.next = offset["next"] if offset else 0
        self.stopping = threading.Event()
        self._record("task.start", task=self.task, resume_from=self.next)

    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        if self.fail_after >= 0 and self.task == 0 and self.next >= self.fail_after:
            raise RuntimeError(f"task {self.task} failed on purpose at record {self.next}")
        if self.next >= self.count:
            self.stopping.wait(0.05)
            return None
        batch = range(self.next, min(self.next + 3, self.count))
        self.next = batch[-1] + 1
        records = [
            SourceRecord(
                {"task": self.task},
                {"next": i + 1},
                self.topic,
                value_schema=Schema.STRING_SCHEMA,
                value=f"{self.task}-{i}",
            )
            for i in batch
        ]
        return as_batch(records) if self.batches else records

    def commit(self) -> None:
        pass

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        if self.record_acks:
            self._record("ack", value=record.value, offset=metadata.offset)

    def stop(self, connector_deleted: bool = False) -> None:
        self._record("task.stop", task=self.task, deleted=connector_deleted)
        self.stopping.set()
        if connector_deleted and self.fail_on_stop:
            raise RuntimeError("could not drop the audit table")

    def stopped(self) -> None:
        self._record("task.stopped", task=self.task)


class RecordingSinkConnector(SinkConnector, _Recording):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        self.events = props[EVENTS]
        self._record("connector.start")

    def task_class(self) -> type[Task]:
        return RecordingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self, is_deleted: bool = False) -> None:
        self._record("connector.stop", deleted=is_deleted)

    def config(self) -> ConfigDef:
        return ConfigDef().define(EVENTS, Type.STRING)


class RecordingSinkTask(SinkTask, _Recording):
    """Records put values, pre_commit calls with is_closing() and the empty puts so far,
    open/close and stop.
    ``fail.puts`` makes that many puts raise RetriableException, ``fail.puts.for.ms`` every
    put for that long after the first; ``retry.timeout.ms`` is the task's
    ``context.timeout()``. ``pause.on.value``: a record of that value pauses its partition
    (``context.pause``) until the file ``resume.file`` names exists (checked at each
    pre_commit, then ``context.resume``)."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.events = props[EVENTS]
        self.pause_on = props.get("pause.on.value")
        self.resume_file = props.get("resume.file")
        self.retriable_failures = int(props.get("fail.puts", "0"))
        self.failing_for_s = int(props.get("fail.puts.for.ms", "0")) / 1000
        self.first_put: float | None = None
        self.empty_puts = 0  # told with each pre_commit
        if "retry.timeout.ms" in props:
            self.context.timeout(int(props["retry.timeout.ms"]))
        self.poison = props.get("poison.value")  # reported as errant, never written
        self._record("task.start")

    def put(self, records: list[SinkRecord]) -> None:
        if not records:
            self.empty_puts += 1
        if records and self.first_put is None:
            self.first_put = time.monotonic()
        failing = self.first_put is not None and (
            time.monotonic() - self.first_put < self.failing_for_s
        )
        if records and (self.retriable_failures > 0 or failing):
            self.retriable_failures -= 1
            self._record("put.retriable", at=time.time())
            raise RetriableException("the destination is briefly unavailable")
        if self.poison is not None:
            reporter = self.context.errant_record_reporter()
            for record in (r for r in records if r.value == self.poison):
                error = ValueError(f"cannot write {record.value!r}")
                if reporter is None:  # errors.tolerance=none
                    raise error
                reporter.report(record, error)
            records = [r for r in records if r.value != self.poison]
        if records:
            self._record("put", values=[r.value for r in records])
        for record in (r for r in records if r.value == self.pause_on):
            self.context.pause(TopicPartition(record.topic, record.kafka_partition))

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        if self.resume_file is not None and os.path.exists(self.resume_file):
            self.context.resume(*current_offsets)
        self._record(
            "pre_commit",
            closing=self.context.is_closing(),
            empty_puts=self.empty_puts,
            offsets={f"{tp.topic}-{tp.partition}": o for tp, o in current_offsets.items()},
        )
        return current_offsets

    def open(self, partitions: list[TopicPartition]) -> None:
        self._record("open", partitions=[list(p) for p in partitions])

    def close(self, partitions: list[TopicPartition]) -> None:
        self._record(
            "close", partitions=[list(p) for p in partitions], closing_now=self.context.is_closing()
        )

    def stop(self, connector_deleted: bool = False) -> None:
        self._record("task.stop", deleted=connector_deleted)


class ChannelSinkConnector(RecordingSinkConnector):
    """A recording sink whose tasks use the coordination channel."""

    def task_class(self) -> type[Task]:
        return ChannelSinkTask


class ChannelSinkTask(RecordingSinkTask):
    """Sends each put value to the connector's channel (kind ``value``), and records the
    channel's payloads as ``stop`` sees them."""

    def put(self, records: list[SinkRecord]) -> None:
        super().put(records)
        channel = self.context.channel()
        assert channel is not None
        for record in records:
            channel.send("value", str(record.value).encode())

    def stop(self, connector_deleted: bool = False) -> None:
        channel = self.context.channel()
        assert channel is not None
        payloads = [m.payload.decode() for m in channel.messages()]
        self._record("task.stop", deleted=connector_deleted, channel=payloads)


RECORDING_SOURCE = "tests.connectors.RecordingSourceConnector"
PLAIN = {"value.converter": "StringConverter", "key.converter": "StringConverter"}


def recording_source(
    events: str | Path, topic: str, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """A RecordingSourceConnector config with string converters, plus ``extra`` keys."""
    return {
        "connector.class": RECORDING_SOURCE,
        EVENTS: str(events),
        "topic": topic,
        **PLAIN,
        **(extra or {}),
    }


SEQUENCE_SOURCE = "tests.connectors.SequenceSourceConnector"


class SequenceSourceConnector(SourceConnector):
    """Counts 0, 1, 2, … in each of ``sequence.partitions`` source partitions (``s0``, ``s1``,
    …), spread over the tasks; values are ``<partition>:<n>``, keys the partition name.
    ``sequence.limit`` ends each count (-1: never); ``transaction.every`` makes tasks commit
    connector-defined transactions after every so many records, ``transaction.abort.every``
    abort them; ``hang.while`` makes each poll block, deaf to ``stop()``, while that file
    exists."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        partitions = [f"s{i}" for i in range(int(self.props.get("sequence.partitions", "1")))]
        tasks = min(max_tasks, len(partitions))
        return [{**self.props, "assigned": ",".join(partitions[t::tasks])} for t in range(tasks)]

    def config(self) -> ConfigDef:
        return ConfigDef().define("topic", Type.STRING)

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(
        self, connector_config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


class SequenceSourceTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.limit = int(props.get("sequence.limit", "-1"))
        self.batch = int(props.get("batch.size", "100"))
        self.delay_s = int(props.get("poll.delay.ms", "0")) / 1000
        self.every = int(props.get("transaction.every", "0"))
        self.abort_every = int(props.get("transaction.abort.every", "0"))
        self.hang_while = props.get("hang.while")
        reader = self.context.offset_storage_reader()
        self.next = {}
        for name in props["assigned"].split(","):
            offset = reader.offset({"sequence": name})
            self.next[name] = 0 if offset is None else offset["next"]
        self.stopping = threading.Event()
        self.returned = 0

    def poll(self) -> list[SourceRecord] | None:
        while self.hang_while and os.path.exists(self.hang_while):
            time.sleep(0.05)  # a poll that ignores stop() while the test's file exists
        if self.stopping.wait(self.delay_s):
            return None
        records = []
        for name, start in self.next.items():
            end = start + self.batch if self.limit < 0 else min(start + self.batch, self.limit)
            records += [
                SourceRecord(
                    {"sequence": name},
                    {"next": n + 1},
                    self.topic,
                    None,
                    None,
                    name,
                    None,
                    f"{name}:{n}",
                )
                for n in range(start, end)
            ]
            self.next[name] = end
        if not records:
            self.stopping.wait(0.05)
        if self.every or self.abort_every:  # transactions end after every so many records
            transactions = self.context.transaction_context()
            for record in records:
                self.returned += 1
                if self.every and self.returned % self.every == 0:
                    transactions.commit_transaction(record)
                if self.abort_every and self.returned % self.abort_every == 0:
                    transactions.abort_transaction(record)
        return records

    def stop(self, connector_deleted: bool = False) -> None:
        self.stopping.set()


class AcknowledgedSequenceSourceConnector(SequenceSourceConnector):
    """SequenceSourceConnector whose tasks record their starts and acknowledgements in
    ``events.file`` (AcknowledgedSequenceSourceTask)."""

    def task_class(self) -> type[Task]:
        return AcknowledgedSequenceSourceTask


class AcknowledgedSequenceSourceTask(SequenceSourceTask):
    """Records its starts (with the offsets it resumes from) and each ``commit_record`` in
    ``events.file``: the record's value, whether it came with metadata, and the offset of
    its sequence that the offset reader holds then (on an exactly-once worker, the
    committed one)."""

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self.events = props[EVENTS]
        record_event(self.events, "task.start", next=self.next)

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        offset = self.context.offset_storage_reader().offset(record.source_partition)
        record_event(
            self.events,
            "ack",
            value=record.value,
            written=metadata is not None,
            committed=None if offset is None else offset["next"],
        )


BATCHES = "batches"
"""A source test task's key: ``true`` returns its polls as ``SourceRecordBatch`` where their
records share a partition, a topic and schemas (and set nothing else)."""


def as_batch(records: list[SourceRecord]) -> list[SourceRecord] | SourceRecordBatch:
    """``records`` as a batch when they share a partition, a topic and schemas and set no
    partition, timestamp or header; else as they are."""
    first = records[0]
    shared = all(
        r.source_partition == first.source_partition
        and r.topic == first.topic
        and r.key_schema is first.key_schema
        and r.value_schema is first.value_schema
        and r.kafka_partition is None
        and r.timestamp is None
        and not r._headers
        for r in records
    )
    if not shared:
        return records
    keys = None if all(r.key is None for r in records) else [r.key for r in records]
    return SourceRecordBatch(
        first.source_partition,
        [r.source_offset for r in records],
        first.topic,
        [r.value for r in records],
        first.value_schema,
        keys,
        first.key_schema,
    )


def scripted_polls(topic: str) -> list[list[SourceRecord]]:
    """The polls of ``ScriptedSourceTask``, to ``topic``."""
    string = Schema.STRING_SCHEMA
    return [
        # records of one topic and schema, the third not matching it
        [
            SourceRecord({"p": "a"}, {"o": i}, topic, None, None, None, string, v)
            for i, v in enumerate(["a1", "a2", 42, "a4", "a5"], 1)
        ],
        # keyed records of two source partitions, interleaved
        [
            SourceRecord({"p": p}, {"o": o}, topic, None, string, k, string, v)
            for p, o, k, v in [("a", 6, "k6", "a6"), ("b", 1, "k1", "b1"), ("a", 7, "k7", "a7")]
        ],
        # records of different schemas, one with a timestamp and a header
        [
            SourceRecord({"p": "b"}, {"o": 2}, topic, value_schema=string, value="b2"),
            SourceRecord({"p": "a"}, {"o": 8}, topic, value_schema=Schema.INT32_SCHEMA, value=8),
            SourceRecord(
                {"p": "a"},
                {"o": 9},
                topic,
                value_schema=string,
                value="a9",
                timestamp=1234,
                headers=[("h", "v")],
            ),
        ],
        # records of one topic and schema with timestamps (but the last), the first placed
        [
            SourceRecord({"p": "b"}, {"o": o}, topic, p, None, None, string, v, timestamp=t)
            for o, p, v, t in [(3, 0, "b3", 1001), (4, None, "b4", 1002), (5, None, "b5", None)]
        ],
        # keyless records of one topic and schema that set nothing else
        [
            SourceRecord({"p": "b"}, {"o": o}, topic, None, None, None, string, v)
            for o, v in [(6, "b6"), (7, "b7")]
        ],
    ]


class ScriptedSourceTask(SourceTask):
    """Returns the polls of ``scripted_polls`` in turn (to the config's ``topic``), then
    nothing."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.polls = iter(scripted_polls(props["topic"]))
        self.batches = props.get(BATCHES) == "true"
        self.stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        records = next(self.polls, None)
        if records is None:
            self.stopping.wait(0.05)
            return None
        return as_batch(records) if self.batches else records

    def stop(self, connector_deleted: bool = False) -> None:
        self.stopping.set()


CHATTY_SOURCE = "tests.connectors.ChattySourceConnector"
CHATTY_LOGGER = "chatty.logger"


class ChattySourceConnector(SourceConnector):
    """One task that moves no data and logs on the logger named ``chatty.logger``: at DEBUG
    at every poll (``poll <n>``), at INFO after every 20 (``polled <n> times``); it polls
    every 50 ms."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return ChattySourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def config(self) -> ConfigDef:
        return ConfigDef().define(CHATTY_LOGGER, Type.STRING)


class ChattySourceTask(SourceTask):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.log = logging.getLogger(props[CHATTY_LOGGER])
        self.polls = 0
        self.stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        self.polls += 1
        self.log.debug("poll %d", self.polls)
        if self.polls % 20 == 0:
            self.log.info("polled %d times", self.polls)
        self.stopping.wait(0.05)
        return None

    def stop(self, connector_deleted: bool = False) -> None:
        self.stopping.set()


METERED_SOURCE = "tests.connectors.MeteredSourceConnector"


class MeteredSourceConnector(SourceConnector):
    """Plugin metrics (KIP-877) of every kind. The connector's gauge ``task-config-requests``
    counts its ``task_configs`` calls; its one task polls ``batch.size`` (10) numbered
    strings to ``topic`` every ``poll.delay.ms`` (100) and records each in its sensor
    ``polled``: ``records-polled-total`` (tag ``source=sequence``) and
    ``records-polled-rate``."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        self.requests = 0
        metrics = self.context.plugin_metrics()
        name = metrics.metric_name("task-config-requests", "Calls of task_configs.")
        metrics.add_metric(name, lambda: self.requests)

    def task_class(self) -> type[Task]:
        return MeteredSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        self.requests += 1
        return [dict(self.props)]

    def config(self) -> ConfigDef:
        return ConfigDef().define("topic", Type.STRING)


class MeteredSourceTask(SourceTask):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.batch = int(props.get("batch.size", "10"))
        self.delay_s = int(props.get("poll.delay.ms", "100")) / 1000
        self.next = 0
        self.stopping = threading.Event()
        metrics = self.context.plugin_metrics()
        self.polled = metrics.add_sensor("polled")
        tags = {"source": "sequence"}
        total = metrics.metric_name("records-polled-total", "Records polled.", tags)
        self.polled.add(total, CumulativeCount())
        rate = metrics.metric_name("records-polled-rate", "Records polled a second.")
        self.polled.add(rate, Rate())

    def poll(self) -> list[SourceRecord] | None:
        if self.stopping.wait(self.delay_s):
            return None
        first, self.next = self.next, self.next + self.batch
        for _ in range(self.batch):
            self.polled.record()
        return [
            SourceRecord({"metered": 0}, {"next": n + 1}, self.topic, value=str(n))
            for n in range(first, self.next)
        ]

    def stop(self, connector_deleted: bool = False) -> None:
        self.stopping.set()


class CountingTransformation(Transformation[Any], Monitorable):
    """Passes every record through, counting them in the gauge ``records-seen`` (tag
    ``kind``: its config ``kind``, ``all`` by default)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.kind = configs.get("kind", "all")
        self.seen = 0

    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        name = metrics.metric_name("records-seen", "Records transformed.", {"kind": self.kind})
        metrics.add_metric(name, lambda: self.seen)

    def apply(self, record: Any) -> Any:
        self.seen += 1
        return record

    def config(self) -> ConfigDef:
        return ConfigDef().define("kind", Type.STRING, "all")


class CountingConverter(StringConverter, Monitorable):
    """A ``StringConverter`` that counts the values it writes in the gauge
    ``values-converted``."""

    def __init__(self) -> None:
        super().__init__()
        self.converted = 0

    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        name = metrics.metric_name("values-converted", "Values written.")
        metrics.add_metric(name, lambda: self.converted)

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        self.converted += 1
        return super().from_connect_data(topic, schema, value, headers)


class RecordingConverter(StringConverter):
    """A ``StringConverter`` that records ``converter.configure`` and ``converter.close``
    (with ``is_key``) in the file its ``events.file`` config names."""

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        super().configure(configs, is_key)
        self.events, self.is_key = str(configs[EVENTS]), is_key
        record_event(self.events, "converter.configure", is_key=is_key)

    def close(self) -> None:
        record_event(self.events, "converter.close", is_key=self.is_key)


class UnavailableForValueConverter(StringConverter):
    """A ``StringConverter`` whose store is unavailable (RetriableException) for the value
    its ``unavailable.for`` config names, recording ``converter.unavailable`` in the file
    its ``events.file`` config names each time."""

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        super().configure(configs, is_key)
        self.events, self.unavailable_for = str(configs[EVENTS]), configs["unavailable.for"]

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value == self.unavailable_for:
            record_event(self.events, "converter.unavailable")
            raise RetriableException(f"the store for {value} is unavailable")
        return super().from_connect_data(topic, schema, value, headers)


TOO_MANY_TASKS_SOURCE = "tests.connectors.TooManyTasksSourceConnector"


class TooManyTasksSourceConnector(SequenceSourceConnector):
    """A ``SequenceSourceConnector`` that ignores ``tasks.max`` (the bug KIP-1004 fails):
    one task per source partition (``sequence.partitions``), however many that is."""

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        partitions = int(self.props.get("sequence.partitions", "1"))
        return [{**self.props, "assigned": f"s{i}"} for i in range(partitions)]


class NeverStarted:
    """The connector methods of a connector class that is only asked to describe itself
    (its data, its signals) and never started: mix in before the connector base class."""

    def version(self) -> str:
        return "1.0"

    def config(self) -> ConfigDef:
        raise NotImplementedError

    def start(self, props: dict[str, str]) -> None:
        raise NotImplementedError

    def task_class(self) -> type[Task]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        raise NotImplementedError
