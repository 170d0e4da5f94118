"""The loop that runs a sink task on an executor: consume → convert → put → commit.

Delivery: at-least-once. Consumer offsets are committed (synchronously) only for what
``pre_commit`` returns, which by default is everything ``put`` has accepted, after ``flush``.
A crash replays the records since the last commit. Commits happen every
``offset.flush.interval.ms``, on ``context.request_commit()``, and when partitions close
(rebalance, reconfiguration, stop, delete) with ``context.is_closing()`` true. Each commit
also records, in one store write by the run's store writer (never waited on: the data goes on
while the metadata database is away), the committed and end offset of every assigned
partition (the progress that ``ConnectorOffsetSensor`` watches) and the records the commit
passed (``Delivered``: consumed records, those a transform dropped or the error tolerance
skipped included, never the offsets of transaction markers; a progress write that reached
the database but whose answer was lost is written again, and its records count twice).

A subscribed topic that does not exist is logged (a WARNING, once) and reported with the
task's heartbeat (``waiting_on``: ``topic orders does not exist``) until it exists: librdkafka
says so once, at subscribe, and would notice the topic created later only at its next
metadata refresh (``topic.metadata.refresh.interval.ms``, 5 minutes by default), so the task
asks the broker every ``MISSING_TOPIC_CHECK_S`` meanwhile; the answer refreshes the
consumer's metadata too, and its group assigns the new topic's partitions within seconds.

A ``put`` that raises ``RetriableException`` is retried as Kafka's WorkerSinkTask does: every
assigned partition is paused, the loop keeps polling (so the consumer stays in its group
however long the retries take), and the same records (with any that arrive meanwhile) are
put again after ``context.timeout()``. A stop during the wait ends the run cleanly; the
records not yet put are not committed, so the next run gets them.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any, cast

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer
from confluent_kafka import TopicPartition as KafkaPartition

from airflow_provider_connect.connect.connector_config import (
    DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
)
from airflow_provider_connect.connect.data.schema import SchemaAndValue
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.header import Header, Headers
from airflow_provider_connect.connect.messages import DataMessage
from airflow_provider_connect.connect.sink import (
    SimpleSinkTaskContext,
    SinkRecord,
    SinkTask,
    TimestampType,
    TopicPartition,
)
from airflow_provider_connect.runtime.executor.contexts import StoreTaskChannel
from airflow_provider_connect.runtime.executor.converters import task_converters
from airflow_provider_connect.runtime.executor.delivered import (
    Delivered,
    add_offset,
    extend_spans,
)
from airflow_provider_connect.runtime.executor.errors import (
    ErrorHandler,
    Skipped,
    Stage,
    WorkerErrantRecordReporter,
)
from airflow_provider_connect.runtime.executor.source_task import (
    TOPIC_CREATION_PREFIX,
    TopicCreator,
)
from airflow_provider_connect.runtime.executor.task_base import WorkerTask
from airflow_provider_connect.runtime.executor.transformations import TransformationStage
from airflow_provider_connect.runtime.kafka_names import consumer_group
from airflow_provider_connect.store import ChannelRun

log = logging.getLogger(__name__)

# Kafka's consumer key for the most records one poll returns (hence one put): librdkafka
# has no such key, so the loop takes it out of the client config and applies it itself.
MAX_POLL_RECORDS = "max.poll.records"
BATCH_SIZE = 1000  # its default here
POLL_TIMEOUT_S = 0.2
MISSING_TOPIC_CHECK_S = 5.0  # how often to ask whether a missing subscribed topic exists now
METADATA_TIMEOUT_S = 2.0  # the longest one such question may hold the loop
REBALANCE_ERRORS = frozenset(
    {
        KafkaError.UNKNOWN_MEMBER_ID,
        KafkaError.ILLEGAL_GENERATION,
        KafkaError.REBALANCE_IN_PROGRESS,
        KafkaError._ASSIGNMENT_LOST,
    }
)
"""A commit refused because the group moved on without this member (its session timed out,
a rebalance began): Kafka Connect's CommitFailedException, which does not fail the task."""
# confluent-kafka's timestamp types (TIMESTAMP_NOT_AVAILABLE, _CREATE_TIME, _LOG_APPEND_TIME)
_TIMESTAMP_TYPES = (
    TimestampType.NO_TIMESTAMP_TYPE,
    TimestampType.CREATE_TIME,
    TimestampType.LOG_APPEND_TIME,
)


class WorkerSinkTask(WorkerTask):
    """Runs one sink task until it is told to stop; see the module docstring."""

    task: SinkTask
    is_sink = True

    def _setup(self) -> None:
        self.converters = task_converters(
            self.spec.connector_config, self.worker, self.plugin_metrics
        )
        run = ChannelRun(
            self.spec.connector, self.spec.task_id, self.spec.generation, self.spec.run_id
        )
        self.context = SimpleSinkTaskContext(
            self.spec.task_config,
            metrics=self.plugin_metrics(),
            channel=StoreTaskChannel(self.channels, run),
        )
        client = {
            "group.id": consumer_group(self.spec.connector, self.spec.connector_config),
            "auto.offset.reset": "earliest",
            "fetch.queue.backoff.ms": "0",
            **self.worker.client_config("consumer."),
            **self.overrides("consumer.override."),
            "enable.auto.commit": "false",
        }
        self.max_poll_records = int(client.pop(MAX_POLL_RECORDS, BATCH_SIZE))
        # cooperative-sticky: a rebalance callback assigns incrementally
        self.cooperative = "cooperative" in str(client.get("partition.assignment.strategy", ""))
        self.consumer = Consumer(client)
        self.errors = ErrorHandler(
            self.spec.connector_config,
            self.spec.connector,
            self.spec.task_id,
            wait=self.heartbeat.stopping.wait,
            dlq_producer=self._dlq_producer,
            metrics=self.metrics,
        )
        self.batch: list[DataMessage] = []  # the messages of the put to come (or to retry)
        self.batch_index: dict[tuple[str, int, int], DataMessage] | None = None
        self.records: list[SinkRecord] = []  # the batch, converted
        # the batch's offsets per (topic, partition), as spans of consecutive offsets
        self.spans: dict[tuple[str, int], list[list[int]]] = {}
        self.delivered: Delivered[TopicPartition] = Delivered()  # put, not yet committed
        self.retry_at: float | None = None  # set while paused for redelivery
        self.context.reporter = WorkerErrantRecordReporter(
            self.errors, self._message_of, type(self.task)
        )
        self.current: dict[TopicPartition, int] = {}  # next offset to read, after put
        self.all_paused = False
        # the paused partitions as last told to the consumer; None once the assignment changed
        self.pauses_applied: frozenset[TopicPartition] | None = None
        self.subscribed = False
        # subscribed topics that do not exist (replaced whole: the heartbeat thread reads it)
        self.missing_topics: frozenset[str] = frozenset()
        self.next_topic_check = 0.0
        self.finished = False  # set once the task's partitions are closed for good
        self.task.initialize(self.context)

    def _subscribe(self) -> None:
        config = {**self.spec.connector_config, **self.spec.task_config}
        topics = [t.strip() for t in config.get("topics", "").split(",") if t.strip()]
        regex = config.get("topics.regex", "").strip()
        if regex:
            re.compile(regex)
            topics = ["^" + regex.removeprefix("^")]
        if not topics:
            raise ConnectException("Must configure one of topics or topics.regex")
        self.consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke)
        self.subscribed = True

    def _loop(self) -> None:
        self._subscribe()
        next_commit = time.monotonic() + self.flush_interval_s
        while not self.heartbeat.stopping.is_set():
            self._step()
            if self.context.commit_requested or time.monotonic() >= next_commit:
                self.context.commit_requested = False
                self.commit(sorted(self.context.assigned))
                next_commit = time.monotonic() + self.flush_interval_s

    def _step(self) -> int:
        """One turn of the loop: a consume, its messages batched, the batch put when due,
        the task's requests applied; returns how many messages it read."""
        self._follow_target_state()
        messages = cast(
            list[DataMessage],
            [
                m
                for m in self.consumer.consume(self.max_poll_records, POLL_TIMEOUT_S)
                if m.error() is None or self._is_data(m)  # a message: no call for it
            ],
        )
        if messages:
            self.metrics.add("sink_record_read_total", len(messages))
            self._add_to_batch(messages)
        if self.missing_topics and time.monotonic() >= self.next_topic_check:
            self._check_missing_topics()
        if (self.batch or not self.all_paused) and (
            self.retry_at is None or time.monotonic() >= self.retry_at
        ):
            self._deliver()  # an empty put too, as Kafka Connect: time-based flushes
        self._apply_requests()
        return len(messages)

    def _is_data(self, message: Message) -> bool:
        error = message.error()
        if error is None:
            return True
        if error.fatal():
            raise ConnectException(f"Consuming from Kafka failed: {error}")
        topic = message.topic()
        if error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART and topic:
            self._topic_missing(topic)
        else:
            log.debug("%s: consumer event %s", self.name, error)
        return False

    def _topic_missing(self, topic: str) -> None:
        """A subscribed topic does not exist (librdkafka's "Subscribed topic not available"
        event): warned about once, reported with the heartbeat until it exists."""
        if topic in self.missing_topics:
            return
        self.missing_topics |= {topic}
        self.next_topic_check = time.monotonic() + MISSING_TOPIC_CHECK_S
        log.warning(
            "%s: subscribed topic %s does not exist; the task consumes nothing from it until "
            "it is created",
            self.name,
            topic,
        )

    def _topic_found(self, topic: str, how: str) -> None:
        if topic in self.missing_topics:
            self.missing_topics -= {topic}
            log.info("%s: topic %s exists now (%s)", self.name, topic, how)

    def _check_missing_topics(self) -> None:
        """Asks the broker whether each missing topic exists now; a topic that does leaves
        ``missing_topics``, and the consumer, whose metadata the answer refreshed, joins its
        partitions to the group's assignment."""
        self.next_topic_check = time.monotonic() + MISSING_TOPIC_CHECK_S
        for topic in sorted(self.missing_topics):
            try:
                found = self.consumer.list_topics(topic, timeout=METADATA_TIMEOUT_S).topics
            except KafkaException:
                continue  # the broker did not answer: ask again at the next check
            metadata = found.get(topic)
            if metadata is not None and metadata.error is None and metadata.partitions:
                self._topic_found(topic, "the group assigns its partitions next")

    def waiting_on(self) -> str | None:
        missing = sorted(self.missing_topics)
        if not missing:
            return None
        if len(missing) == 1:
            return f"topic {missing[0]} does not exist"
        return f"topics {', '.join(missing)} do not exist"

    def _records(
        self, messages: list[DataMessage]
    ) -> tuple[list[SinkRecord], dict[tuple[str, int], list[list[int]]]]:
        """The messages as SinkRecords (through the transformation chain, when there is
        one), and the offsets of each (topic, partition) among them as spans (tolerated
        failures and dropped records included: their offsets are committed all the same, as
        in Kafka). Converted together when they can be (:meth:`_converted_together`), else
        one by one in the loop; only a message whose conversion raised goes through the error
        handler (:meth:`_handled`), so the usual path costs nothing extra. Converters are pure:
        converting again is safe."""
        key_data = self.converters.key.to_connect_data
        value_data = self.converters.value.to_connect_data
        key_headers = self.converters.key.reads_headers
        value_headers = self.converters.value.reads_headers
        together = self._converted_together(messages)
        parts = None if together is None else zip(*together, strict=True)
        records: list[SinkRecord] = []
        tolerated: set[int] = set()  # the ids of the messages the error handler skipped
        spans: dict[tuple[str, int], list[list[int]]] = {}
        # The last span of the previous message's partition: the next offset of the same
        # partition extends it in place (add_offset's usual case, without the lookup).
        last: list[int] = [-1, -1]
        last_topic, last_partition = None, -1
        for message in messages:
            topic, partition, offset = message.topic(), message.partition(), message.offset()
            if offset == last[1] and partition == last_partition and topic == last_topic:
                last[1] = offset + 1
            else:
                span = spans.get((topic, partition))
                if span is None:
                    span = spans[(topic, partition)] = [[offset, offset + 1]]
                else:
                    add_offset(span, offset)
                last, last_topic, last_partition = span[-1], topic, partition
            try:
                if parts is not None:  # converted together
                    (key_schema, key), (value_schema, value) = next(parts)
                else:
                    key_schema, key = (
                        key_data(topic, message.key(), _raw_headers(message))
                        if key_headers
                        else key_data(topic, message.key())
                    )
                    value_schema, value = (
                        value_data(topic, message.value(), _raw_headers(message))
                        if value_headers
                        else value_data(topic, message.value())
                    )
                headers = self._headers(message) if message.headers() else None
            except Exception:
                converted = self._handled(message)
                if converted is None:
                    tolerated.add(id(message))
                    continue
                record = converted
            else:
                record = _sink_record(
                    message, topic, partition, offset, key_schema, key, value_schema, value, headers
                )
            records.append(record)
        if self.chain.stages:
            origins = [m for m in messages if id(m) not in tolerated] if tolerated else messages
            records = self.chain.apply_all(records, self._transform_failed, origins)[0]
        return records, spans

    def _converted_together(
        self, messages: list[DataMessage]
    ) -> tuple[list[SchemaAndValue], list[SchemaAndValue]] | None:
        """The keys' and the values' Connect data of ``messages``, each converter called once
        (``to_connect_values``), when they are all of one topic and neither converter reads
        headers; None otherwise, or when a conversion failed: then each message is converted
        alone, and the one that fails goes through the error handler."""
        key, value = self.converters.key, self.converters.value
        if not messages or key.reads_headers or value.reads_headers:
            return None
        topic = messages[0].topic()
        if any(m.topic() != topic for m in messages):
            return None
        try:
            keys = key.to_connect_values(topic, [m.key() for m in messages])
            values = value.to_connect_values(topic, [m.value() for m in messages])
        except Exception:
            return None
        if len(keys) != len(messages) or len(values) != len(messages):
            return None  # a converter that does not keep to its contract: each alone
        return keys, values

    def _transform_failed(
        self, stage: TransformationStage[SinkRecord], record: SinkRecord, message: DataMessage
    ) -> SinkRecord | None:
        """A stage that raised, run again through the error handler; None when tolerated
        (the message as consumed is in the dead-letter queue then)."""
        try:
            return self.errors.execute(
                Stage.TRANSFORMATION, message, type(stage.transformation), stage.apply, record
            )
        except Skipped:
            return None

    def _handled(self, message: DataMessage) -> SinkRecord | None:
        """The message converted through the error handler (retries, stage names,
        tolerance); None when its failure is tolerated (``errors.tolerance=all``)."""

        def run(stage: Stage, converter: Any, operation: Callable[..., Any], *args: Any) -> Any:
            return self.errors.execute(stage, message, type(converter), operation, *args)

        topic, (key_converter, value_converter, header_converter) = message.topic(), self.converters
        try:
            key_schema, key = run(
                Stage.KEY_CONVERTER,
                key_converter,
                key_converter.to_connect_data,
                *_converter_args(key_converter, topic, message.key(), message),
            )
            value_schema, value = run(
                Stage.VALUE_CONVERTER,
                value_converter,
                value_converter.to_connect_data,
                *_converter_args(value_converter, topic, message.value(), message),
            )
            headers = run(Stage.HEADER_CONVERTER, header_converter, self._headers, message)
        except Skipped:
            return None
        return _sink_record(
            message,
            topic,
            message.partition(),
            message.offset(),
            key_schema,
            key,
            value_schema,
            value,
            headers,
        )

    def _headers(self, message: DataMessage) -> Headers | None:
        raw_headers = message.headers()
        if not raw_headers:
            return None
        headers = Headers()
        for header_key, data in raw_headers:
            schema, value = self.converters.header.to_connect_header(
                message.topic(), header_key, data
            )
            headers.add(header_key, value, schema)
        return headers

    def _add_to_batch(self, messages: list[DataMessage]) -> None:
        """Converts the messages onto the batch of the next put."""
        records, spans = self._records(messages)
        self.batch.extend(messages)
        self.batch_index = None
        self.records.extend(records)
        for key, more in spans.items():
            extend_spans(self.spans.setdefault(key, []), more)

    def _deliver(self) -> None:
        """Puts the batch, empty when the poll brought nothing (called then at each poll
        while the task is not paused, as Kafka Connect does, so that a task can flush on
        time without new records). When ``put`` raises RetriableException, pauses every partition
        and schedules the same batch again after ``context.timeout`` (the poll cadence
        without one); once it is accepted, advances the offsets to commit past every
        message, tolerated ones included, and resumes the partitions."""
        started = time.monotonic()
        try:
            self.task.put(list(self.records))
        except RetriableException:
            log.warning("%s: put failed and will be retried", self.name, exc_info=True)
            timeout_ms = self.context.timeout_ms or POLL_TIMEOUT_S * 1000
            self.retry_at = time.monotonic() + timeout_ms / 1000
            self._apply_pauses()
            return
        self.metrics.batch("put", len(self.records), time.monotonic() - started)
        for (topic, partition), spans in self.spans.items():
            tp = TopicPartition(topic, partition)
            self.current[tp] = spans[-1][1]
            self.delivered.put(tp, spans)
        self.batch, self.batch_index, self.records, self.spans = [], None, [], {}
        if self.retry_at is not None:
            self.retry_at = None
            self._apply_pauses()

    def _message_of(self, record: SinkRecord) -> DataMessage:
        """The consumed message of a record of the current put (for the errant-record
        reporter); the index is built on the first report of a batch only."""
        if self.batch_index is None:
            self.batch_index = {(m.topic(), m.partition(), m.offset()): m for m in self.batch}
        return self.batch_index[
            (record.original_topic, record.original_kafka_partition, record.original_kafka_offset)
        ]

    def _follow_target_state(self) -> None:
        paused = self.heartbeat.paused.is_set()
        if paused == self.all_paused:
            return
        self.all_paused = paused
        self._apply_pauses()
        if paused:
            self.report_paused()
            self.metrics.pause()
        else:
            self.metrics.resume()
            self.report_running()

    def _apply_requests(self) -> None:
        requested, self.context.requested_offsets = self.context.requested_offsets, {}
        # a batch kept for a retried put holds records read before the seek: the task asked
        # for the partition from ``offset``, so they are not put again
        self._drop_from_batch(set(requested) & self.context.assigned)
        for tp, offset in requested.items():
            if tp in self.context.assigned:
                self.consumer.seek(KafkaPartition(tp.topic, tp.partition, offset))
                self.current.pop(tp, None)
                self.delivered.rewind(tp, offset)
        self._apply_pauses()

    @property
    def _all_paused(self) -> bool:
        """Whether every partition must be paused: the connector is PAUSED, or a batch
        waits for redelivery."""
        return self.all_paused or self.retry_at is not None

    def _apply_pauses(self) -> None:
        """Pauses and resumes the assigned partitions as the target state, a pending
        redelivery and the task's own ``context.pause``/``resume`` say."""
        assigned = self.context.assigned
        paused = frozenset(tp for tp in assigned if self._paused(tp))
        if paused == self.pauses_applied:
            return  # as the consumer has them (the assignment is the same): no call
        if paused:
            self.consumer.pause([_kafka(tp) for tp in paused])
        if running := assigned - paused:
            self.consumer.resume([_kafka(tp) for tp in running])
        self.pauses_applied = paused

    def commit(self, partitions: list[TopicPartition], *, closing: bool = False) -> None:
        """Runs ``pre_commit`` for these partitions, commits what it returns, and records
        the partitions' progress in the store (one write), with the records committed."""
        offsets = {tp: self.current[tp] for tp in partitions if tp in self.current}
        committable: dict[TopicPartition, int] = {}
        if offsets or closing:
            self.context.closing = closing
            try:
                committable = self.task.pre_commit(offsets) or {}
            finally:
                self.context.closing = False
        if committable:
            started = time.monotonic()
            try:
                self.errors.flush()  # dead-letter records are in Kafka before offsets pass them
                self.consumer.commit(
                    offsets=[_kafka(tp, o) for tp, o in committable.items()], asynchronous=False
                )
            except KafkaException as e:
                self.metrics.commit(False, time.monotonic() - started)
                if not _commit_may_fail(e.args[0]):
                    raise
                log.warning(
                    "%s: committing offsets failed (%s); the consumer rejoins its group if it "
                    "left it, and what followed the last committed offsets is delivered again",
                    self.name,
                    e.args[0].str(),
                )
                committable = {}  # nothing was committed: the progress keeps what was
            except Exception:
                self.metrics.commit(False, time.monotonic() - started)
                raise
            else:
                self.metrics.commit(True, time.monotonic() - started)
                self.metrics.add("offset_commit_completion_total")
        self.writes.sink_progress(
            [
                (
                    tp.topic,
                    tp.partition,
                    self._progress(tp, committable, closing),
                    self._end_offset(tp),
                    self.delivered.commit(tp, committable[tp]) if tp in committable else 0,
                )
                for tp in partitions
            ],
        )

    def _progress(
        self, tp: TopicPartition, committable: dict[TopicPartition, int], closing: bool
    ) -> int | None:
        """The committed offset as progress: the consumer's position when the batch is empty
        and everything it returned of ``tp`` was committed, since what lies between is no
        data (the markers of transactions, aborted records), so a sink of a topic written
        transactionally is caught up at its end offset, and a sink that resumed its group at
        the end is caught up before it consumes anything; otherwise what was committed. Never
        for a closing commit, whose batch may be empty because records were dropped."""
        committed = committable.get(tp)
        if closing or self.batch or committed != self.current.get(tp):
            return committed
        # everything the consumer returned of tp (all of it, or nothing yet: the group's
        # committed offset is where it resumed) was committed
        (position,) = self.consumer.position([_kafka(tp)])
        if position.offset < 0:  # not fetched from yet
            return committed
        return position.offset if committed is None else max(committed, position.offset)

    def _end_offset(self, tp: TopicPartition) -> int | None:
        """The partition's end offset as the consumer last saw it (no broker round trip)."""
        try:
            _, high = self.consumer.get_watermark_offsets(_kafka(tp), cached=True)
        except KafkaException:
            return None
        return high if high >= 0 else None

    def _on_assign(self, consumer: Consumer, partitions: list[KafkaPartition]) -> None:
        tps = [TopicPartition(p.topic, p.partition) for p in partitions]
        new_topics = {tp.topic for tp in tps} - {tp.topic for tp in self.context.assigned}
        self.writes.active_topics(sorted(new_topics))
        for topic in sorted(new_topics):
            self._topic_found(topic, "its partitions are assigned")
        self.context.assigned.update(tps)
        self.pauses_applied = None  # newly assigned partitions come unpaused
        self.metrics.values["partition_count"] = len(self.context.assigned)
        self.task.open(tps)
        requested = {
            tp: self.context.requested_offsets.pop(tp)
            for tp in tps
            if tp in self.context.requested_offsets
        }
        paused = [p for p, tp in zip(partitions, tps, strict=True) if self._paused(tp)]
        if requested or paused:
            # assigned here, not by the client after this callback: a pause of partitions
            # not yet assigned does nothing, and they would be fetched and put
            assign = consumer.incremental_assign if self.cooperative else consumer.assign
            assign(
                [
                    _kafka(tp, requested.get(tp, p.offset))
                    for tp, p in zip(tps, partitions, strict=True)
                ]
            )
        if paused:
            consumer.pause(paused)

    def _paused(self, tp: TopicPartition) -> bool:
        return self._all_paused or tp in self.context.paused

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaPartition]) -> None:
        if self.finished:  # closing the consumer revokes again; the task is done with them
            return
        self._close_partitions([TopicPartition(p.topic, p.partition) for p in partitions])

    def _close_partitions(self, tps: list[TopicPartition]) -> None:
        """Final ``pre_commit`` (closing) and commit, then ``close``, for these partitions;
        the task's pauses of them are forgotten, as Kafka Connect does. Records of theirs
        still waiting to be put leave the batch (as in Kafka): their offsets were not
        committed, so whoever gets the partitions next reads them again."""
        if not tps:
            return
        self._drop_from_batch(set(tps))
        try:
            self.commit(tps, closing=True)
        finally:
            self.task.close(tps)
            for tp in tps:
                self.current.pop(tp, None)
                self.delivered.drop(tp)
            self.context.assigned.difference_update(tps)
            self.context.paused.difference_update(tps)  # a new assignment comes unpaused
            self.pauses_applied = None
            self.metrics.values["partition_count"] = len(self.context.assigned)

    def _drop_from_batch(self, tps: set[TopicPartition]) -> None:
        if not self.batch:
            return
        keep = [m for m in self.batch if TopicPartition(m.topic(), m.partition()) not in tps]
        if len(keep) == len(self.batch):
            return
        self.batch, self.batch_index = keep, None
        self.records = [
            r for r in self.records if (r.original_topic, r.original_kafka_partition) not in tps
        ]
        self.spans = {k: s for k, s in self.spans.items() if TopicPartition(*k) not in tps}

    def _finish(self, deleted: bool) -> None:
        try:
            self._close_partitions(sorted(self.context.assigned))
        finally:
            self.finished = True
            self.stop_task(deleted)  # after the partitions are closed, as in Kafka Connect

    def _dlq_producer(self) -> Producer:
        """The dead-letter queue's producer, its topic created first when missing."""
        topic = self.errors.dlq_topic
        replication = self.spec.connector_config.get(DLQ_TOPIC_REPLICATION_FACTOR_CONFIG, "3")
        TopicCreator(
            self.worker.client_config("admin."),
            {
                TOPIC_CREATION_PREFIX + "partitions": "1",
                TOPIC_CREATION_PREFIX + "replication.factor": replication,
            },
        ).ensure(topic)
        return Producer(
            {**self.worker.client_config("producer."), **self.overrides("producer.override.")}
        )

    def _close_clients(self) -> None:
        if self.subscribed:
            self.consumer.unsubscribe()
        self.consumer.close()


def _converter_args(converter: Any, topic: str, data: Any, message: DataMessage) -> tuple[Any, ...]:
    """The arguments of ``converter.to_connect_data`` for a part of ``message``: the
    headers only for a converter that reads them."""
    if converter.reads_headers:
        return topic, data, _raw_headers(message)
    return topic, data


def _raw_headers(message: DataMessage) -> Headers | None:
    """The message's headers as consumed (the bytes, no schema), for converters that read
    them (``Converter.reads_headers``)."""
    raw = message.headers()
    return Headers(Header(k, None, v) for k, v in raw) if raw else None


def _sink_record(
    message: DataMessage,
    topic: str,
    partition: int,
    offset: int,
    key_schema: Any,
    key: Any,
    value_schema: Any,
    value: Any,
    headers: Headers | None,
) -> SinkRecord:
    """The SinkRecord of a consumed message from its converted parts (and its timestamp)."""
    timestamp_type, timestamp = message.timestamp()
    return SinkRecord(
        topic,
        partition,
        key_schema,
        key,
        value_schema,
        value,
        offset,
        timestamp if timestamp_type else None,
        _TIMESTAMP_TYPES[timestamp_type],
        headers,
    )


def _commit_may_fail(error: KafkaError) -> bool:
    """Whether a failed offset commit leaves the task running, as in Kafka Connect: the
    group rebalanced without it, or the error is retriable (the coordinator moved or timed
    out); the offsets are committed again at the next commit."""
    return error.code() in REBALANCE_ERRORS or (error.retriable() and not error.fatal())


def _kafka(tp: TopicPartition, offset: int | None = None) -> KafkaPartition:
    if offset is None:
        return KafkaPartition(tp.topic, tp.partition)
    return KafkaPartition(tp.topic, tp.partition, offset)
