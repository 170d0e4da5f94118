"""The loop that runs a source task on an executor: poll → transform → convert → produce.

Delivery guarantees (connector config ``delivery.guarantee``):

* ``at-least-once`` (default): a batch's source offsets are written to the store only after
  ``producer.flush()`` has returned with every record produced so far acknowledged by Kafka.
  A crash between producing and committing replays the records since the last commit.
* ``at-most-once``: a batch's offsets are written before its records are produced. A crash
  while producing loses the unacknowledged records; none is ever produced twice. While the
  metadata database is unreachable such a task waits for it: its guarantee needs the offsets
  stored first.

Offsets are committed every ``offset.flush.interval.ms`` and when the task pauses or stops,
in one store transaction per commit (never per record), written by the run's store writer
(``store_writes.py``): while the metadata database is unreachable the data goes on, the
offsets are stored once it answers (what was produced meanwhile is delivered again if the
run ends before), and the task's ``commit`` comes once they are stored. A commit waits up to
``offset.flush.timeout.ms`` (when stopping: ``task.shutdown.graceful.timeout.ms``) for the
producer to deliver what it holds; when records are still undelivered then, nothing is
committed and the offsets wait for the next commit, as in Kafka Connect: the task goes on.

A record a transformation drops, or whose transformation or conversion fails under
``errors.tolerance=all`` (skipped and logged, see ``executor/errors.py``), is not produced;
its offset is committed with the others and the task's ``commit_record`` gets it with no
metadata, as in Kafka.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.messages import DataMessage
from airflow_provider_connect.connect.source import (
    OffsetStorageReader,
    RecordMetadata,
    SimpleSourceTaskContext,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
    TransactionContext,
)
from airflow_provider_connect.runtime.executor.contexts import StoreOffsetReader
from airflow_provider_connect.runtime.executor.converters import task_converters
from airflow_provider_connect.runtime.executor.errors import (
    ErrorHandler,
    Skipped,
    Stage,
    StoppedWhileRetrying,
)
from airflow_provider_connect.runtime.executor.shared_producer import ANY_PARTITION, TaskProducer
from airflow_provider_connect.runtime.executor.task_base import WorkerTask
from airflow_provider_connect.runtime.executor.transformations import TransformationStage
from airflow_provider_connect.runtime.worker_config import TASKS_PER_SLOT
from airflow_provider_connect.store import partition_key

log = logging.getLogger(__name__)

RECORD_REFUSALS = frozenset(
    {KafkaError.MSG_SIZE_TOO_LARGE, KafkaError._UNKNOWN_PARTITION, KafkaError._UNKNOWN_TOPIC}
)
"""What ``produce`` refuses a record for, rather than for the producer's state: records that
``errors.tolerance=all`` may skip (KIP-779)."""

DELIVERY_GUARANTEE = "delivery.guarantee"
STORE_WAIT_S = 0.05
"""How long a commit waits for its offsets to be stored before the loop goes on (the task's
``commit`` then comes at a later commit); not at all while the database is unreachable."""
AT_LEAST_ONCE = "at-least-once"
AT_MOST_ONCE = "at-most-once"
TOPIC_CREATION_PREFIX = "topic.creation.default."
PRODUCE_TIME = 0  # produce's timestamp for "now"


class PollShape(NamedTuple):
    """What every record of a poll shares, when they share it."""

    topic: str
    key_schema: Schema | None
    value_schema: Schema | None
    keyless: bool  # every key and key schema null
    plain: bool  # no record sets a partition, a timestamp or headers
    headerless: bool  # no record sets headers

    @classmethod
    def of(cls, records: list[SourceRecord]) -> PollShape | None:
        """The shape of ``records`` (at least one); None unless they share a topic, a key
        schema and a value schema (the same objects)."""
        first = records[0]
        topic, key_schema, value_schema = first.topic, first.key_schema, first.value_schema
        keyless = placed = headerless = True
        for record in records:
            if (
                record.value_schema is not value_schema
                or record.key_schema is not key_schema
                or record.topic != topic
            ):
                return None
            if record.key is not None:
                keyless = False
            if record.kafka_partition is not None or record.timestamp is not None:
                placed = False
            if record._headers:
                headerless = False
        return cls(
            topic,
            key_schema,
            value_schema,
            keyless and key_schema is None,
            placed and headerless,
            headerless,
        )


class WorkerSourceTask(WorkerTask):
    """Runs one source task until it is told to stop; see the module docstring."""

    task: SourceTask

    def _setup(self) -> None:
        self.converters = task_converters(
            self.spec.connector_config, self.worker, self.plugin_metrics
        )
        self.errors = ErrorHandler(
            self.spec.connector_config,
            self.spec.connector,
            self.spec.task_id,
            wait=self.heartbeat.stopping.wait,
            metrics=self.metrics,
        )
        self.produced = 0  # records handed to the producer; written once a flush confirms them
        self.dropped = 0  # records a transformation dropped or the error handler skipped
        self.at_most_once = (
            self.spec.connector_config.get(DELIVERY_GUARANTEE, AT_LEAST_ONCE) == AT_MOST_ONCE
        )
        self.wants_acks = type(self.task).commit_record is not SourceTask.commit_record
        self.delivery_error: KafkaError | None = None
        self.undelivered: list[KafkaError] = []  # tolerated failures not yet logged
        self.producer = self._new_producer()
        self.metrics.gauges["source_record_active_count"] = self._records_in_flight
        self.topics = TopicCreator(self.worker.client_config("admin."), self.spec.connector_config)
        self.pending: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self.task.initialize(
            SimpleSourceTaskContext(
                self.spec.task_config,
                self._offset_reader(),
                self._transaction_context(),
                self.plugin_metrics(),
            )
        )

    shares_producer = True
    """Whether the run takes its slot host's producer of its config, when it has a host
    (a transactional task never does), with a ``tasks.per.slot``-th of its queue for its
    records in flight (``shared_producer.py``)."""

    def _new_producer(self) -> Any:
        config = self._producer_config()
        if self.host is not None and self.shares_producer:
            return self.host.producers.client(config, self.worker[TASKS_PER_SLOT])
        return Producer(config)

    def _producer_config(self) -> dict[str, Any]:
        """The worker's and the connector's producer settings; failed deliveries are reported
        to ``_on_delivery``, successful ones only per record where acknowledged."""
        return {
            "linger.ms": "5",
            **self.worker.client_config("producer."),
            **self.overrides("producer.override."),
            "on_delivery": self._on_delivery,
            "delivery.report.only.error": not self.wants_acks,
        }

    def _offset_reader(self) -> OffsetStorageReader:
        return StoreOffsetReader(self.offsets, self.spec.connector)

    def _transaction_context(self) -> TransactionContext | None:
        return None

    def _on_stop(self, deleted: bool) -> None:
        self.stop_task(deleted)  # may run while poll() does (KIP-419): it should return soon

    def _loop(self) -> None:
        next_commit = time.monotonic() + self.flush_interval_s
        while not self.heartbeat.stopping.is_set():
            if self.heartbeat.paused.is_set():
                self._pause_until_resumed()
                continue
            self._step()
            if time.monotonic() >= next_commit:
                self._on_commit_interval()
                next_commit = time.monotonic() + self.flush_interval_s

    def _step(self) -> None:
        """One turn of the loop: a poll, its records dispatched, delivery reports served."""
        started = time.monotonic()
        try:
            records = self.task.poll()
        except RetriableException:
            log.warning("%s: poll failed and will be retried", self.name, exc_info=True)
            records = None
        if records:
            self.metrics.batch("poll", len(records), time.monotonic() - started)
            self._dispatch(records)
        self._raise_delivery_error()
        self.producer.poll(0)

    def _finish(self, deleted: bool) -> None:
        self.stop_task(deleted)  # no-op when the heartbeat stopped it already
        try:
            self.commit_offsets(self.flush_timeout_s, store_wait_s=self.flush_timeout_s)
        finally:
            if isinstance(self.producer, TaskProducer):  # a shared producer delivers on
                self.producer.detach()
            self.task.stopped()  # KIP-419: last, after every poll, commit and commit_record

    def _dispatch(self, records: list[SourceRecord] | SourceRecordBatch) -> None:
        """Transforms, converts and produces ``records``, then keeps their offsets for the
        next commit. A poll's records that share a topic and schemas (the usual case) are
        converted together, one converter call per part; delivery reports come per record
        only for tasks that take ``commit_record``, otherwise only for errors (the
        producer's own callback). A record whose conversion fails goes through the error
        handler alone, so the usual path costs nothing extra (transformations and
        converters are pure: running them again is safe). A :class:`SourceRecordBatch` is
        produced from its columns, its records never built, unless transformations or
        ``commit_record`` need them."""
        if isinstance(records, SourceRecordBatch) and (self.chain.stages or self.wants_acks):
            records = list(records)
        if self.at_most_once:
            self._remember_offsets(records)
            if not self._stored_before_sending():
                return
        dropped_before = self.dropped
        if isinstance(records, SourceRecordBatch):
            self._produce_batch(records)
        elif self.chain.stages:
            kept, origins = self._transformed(records)
            if kept:
                self._produce_all(kept, origins)
        else:
            self._produce_all(records, records)
        self.produced += len(records) - (self.dropped - dropped_before)  # drops are rare
        if not self.at_most_once:
            self._remember_offsets(records)

    def _transformed(
        self, records: list[SourceRecord]
    ) -> tuple[list[SourceRecord], Sequence[SourceRecord]]:
        """The records the chain keeps, each beside the record it was polled as (what
        ``commit_record`` and the error handler get); dropped ones are done with here."""
        kept, origins, dropped = self.chain.apply_all(records, self._transform_failed, records)
        for polled in dropped:
            self._dropped(polled)
        return kept, origins

    def _produce_all(self, records: list[SourceRecord], origins: Sequence[SourceRecord]) -> None:
        """Produces ``records`` (``origins``: each as it was polled, what ``commit_record``
        and the error handler get). Records that share a topic and schemas are converted
        together; when none of them sets headers and the task takes no ``commit_record``,
        they are produced in a loop of ``produce`` calls alone (with only topic, value and
        key when none sets a partition or a timestamp either, and no key when every key is
        null)."""
        batch = PollShape.of(records)
        together = self._converted_together(records, batch) if batch is not None else None
        if batch is None or together is None:
            for record, polled in zip(records, origins, strict=True):
                self._produce_one(record, polled, None)
            return
        keys, values = together
        if not batch.headerless or self.wants_acks:
            for record, polled, key, value in zip(records, origins, keys, values, strict=True):
                self._produce_one(record, polled, (key, value))
            return
        self._ensure_topic(batch.topic)
        self._produce_converted(batch, records, keys, values)

    def _produce_batch(self, batch: SourceRecordBatch) -> None:
        """Produces ``batch`` from its columns, as :meth:`_produce_converted` does a poll of
        one shape; when its conversion fails, each record in turn through the error
        handler."""
        keyless = batch.keys is None and batch.key_schema is None
        shape = PollShape(batch.topic, batch.key_schema, batch.value_schema, keyless, True, True)
        keys = batch.keys if batch.keys is not None or keyless else [None] * len(batch)
        together = self._converted_columns(shape, keys, batch.values)
        if together is None:
            for record in batch:
                self._produce_one(record, record, None)
            return
        self._ensure_topic(batch.topic)
        self._produce_converted(shape, batch, *together)

    def _produce_converted(
        self,
        batch: PollShape,
        records: Sequence[SourceRecord],
        keys: list[bytes | None],
        values: list[bytes | None],
    ) -> None:
        """Produces the converted ``keys`` and ``values`` of headerless ``records`` of one
        topic in a loop of ``produce`` calls, as lean as ``batch`` allows."""
        topic, produce = batch.topic, self.producer.produce
        if batch.plain and batch.keyless:  # no zip, no key argument: 15-20 ns a record less
            for value in values:
                try:
                    produce(topic, value)
                except BufferError:
                    self._produce_record(topic, value, None, {})
                except KafkaException as e:
                    self._refused(e, None)
            return
        if batch.plain:
            for key, value in zip(keys, values, strict=True):
                try:
                    produce(topic, value, key)
                except BufferError:  # the local queue is full: let deliveries drain
                    self._produce_record(topic, value, key, {})
                except KafkaException as e:
                    self._refused(e, None)
            return
        for record, key, value in zip(records, keys, values, strict=True):
            partition, timestamp = record.kafka_partition, record.timestamp
            partition = ANY_PARTITION if partition is None else partition
            timestamp = PRODUCE_TIME if timestamp is None else timestamp
            try:
                produce(topic, value, key, partition, timestamp=timestamp)
            except BufferError:
                self._produce_record(
                    topic, value, key, {"partition": partition, "timestamp": timestamp}
                )
            except KafkaException as e:
                self._refused(e, None)

    def _produce_one(
        self,
        record: SourceRecord,
        polled: SourceRecord,
        converted: tuple[bytes | None, bytes | None] | None,
    ) -> None:
        """Produces ``record`` with its key and value as ``converted`` (None: converted
        here) and what else it sets; a failure goes through the error handler."""
        acknowledger = self._acknowledger if self.wants_acks else None
        try:
            key, value = self._key_and_value(record) if converted is None else converted
            options = self._produce_options(record, polled, acknowledger)
        except Exception:
            handled = self._converted(record, polled, acknowledger)
            if handled is None:
                self._dropped(polled)
                return
            key, value, options = handled
        self._ensure_topic(record.topic)
        self._produce_record(record.topic, value, key, options, polled)

    def _ensure_topic(self, topic: str) -> None:
        if topic not in self.topics.known:
            self.topics.ensure(topic)
            self.writes.active_topics([topic])

    def _converted_together(
        self, records: list[SourceRecord], batch: PollShape
    ) -> tuple[list[bytes | None], list[bytes | None]] | None:
        """The keys and values of ``records``, of one topic and schemas (see
        :meth:`_converted_columns`)."""
        keys = None if batch.keyless else [r.key for r in records]
        return self._converted_columns(batch, keys, [r.value for r in records])

    def _converted_columns(
        self, batch: PollShape, keys: list[Any] | None, values: list[Any]
    ) -> tuple[list[bytes | None], list[bytes | None]] | None:
        """``keys`` and ``values`` (of one topic and schemas) converted: one
        ``from_connect_values`` call per part (none for keys when every key is null: then
        ``keys`` is not read). None when a conversion raised: the records are then converted
        one by one, through the error handler."""
        assert keys is not None or batch.keyless
        try:
            converted_keys: list[bytes | None] = (
                [None] * len(values)
                if keys is None
                else self.converters.key.from_connect_values(batch.topic, batch.key_schema, keys)
            )
            converted = self.converters.value.from_connect_values(
                batch.topic, batch.value_schema, values
            )
        except Exception:
            return None
        return converted_keys, converted

    def _key_and_value(self, record: SourceRecord) -> tuple[bytes | None, bytes | None]:
        key = record.key
        if key is not None or record.key_schema is not None:
            key = self.converters.key.from_connect_data(record.topic, record.key_schema, key)
        value = self.converters.value.from_connect_data(
            record.topic, record.value_schema, record.value
        )
        return key, value

    def _produce_options(
        self, record: SourceRecord, polled: SourceRecord, acknowledger: Any
    ) -> dict[str, Any]:
        """``produce`` keyword arguments for what a record sets beyond its key and value;
        ``polled`` is the record as the task returned it (what ``commit_record`` gets)."""
        options: dict[str, Any] = {}
        if record.kafka_partition is not None:
            options["partition"] = record.kafka_partition
        if record.timestamp is not None:
            options["timestamp"] = record.timestamp
        if record._headers:
            options["headers"] = self._header_bytes(record)
        if acknowledger is not None:
            options["on_delivery"] = acknowledger(polled)
        return options

    def _header_bytes(self, record: SourceRecord) -> list[tuple[str, bytes | None]]:
        convert = self.converters.header.from_connect_header
        return [(h.key, convert(record.topic, h.key, h.schema, h.value)) for h in record.headers]

    def _transform_failed(
        self, stage: TransformationStage[SourceRecord], record: SourceRecord, polled: SourceRecord
    ) -> SourceRecord | None:
        """A stage that raised, run again through the error handler; None when tolerated."""
        try:
            return self.errors.execute(
                Stage.TRANSFORMATION, polled, type(stage.transformation), stage.apply, record
            )
        except Skipped:
            return None

    def _converted(
        self, record: SourceRecord, polled: SourceRecord, acknowledger: Any
    ) -> tuple[bytes | None, bytes | None, dict[str, Any]] | None:
        """The record's key, value and ``produce`` options converted through the error
        handler (retries, stage names, tolerance); None when its failure is tolerated."""
        key_converter, value_converter, header_converter = self.converters
        topic, run = record.topic, self.errors.execute
        try:
            key = None
            if record.key is not None or record.key_schema is not None:
                key = run(
                    Stage.KEY_CONVERTER,
                    polled,
                    type(key_converter),
                    key_converter.from_connect_data,
                    topic,
                    record.key_schema,
                    record.key,
                )
            value = run(
                Stage.VALUE_CONVERTER,
                polled,
                type(value_converter),
                value_converter.from_connect_data,
                topic,
                record.value_schema,
                record.value,
            )
            options = run(
                Stage.HEADER_CONVERTER,
                polled,
                type(header_converter),
                self._produce_options,
                record,
                polled,
                acknowledger,
            )
        except Skipped:
            return None
        return key, value, options

    def _dropped(self, polled: SourceRecord | None) -> None:
        """A record that is not produced (dropped by a transformation, or tolerated): its
        offset commits with the others, and ``commit_record`` gets it (as polled, when
        known) with no metadata."""
        self.dropped += 1
        if self.wants_acks and polled is not None:
            self._commit_dropped(polled)

    def _commit_dropped(self, polled: SourceRecord) -> None:
        """Reports a record that is not produced to ``commit_record``, with no metadata: at
        once, as Kafka Connect does (the exactly-once loop: once its offset commits)."""
        self.task.commit_record(polled, None)

    def _refused(self, error: KafkaException, polled: SourceRecord | None) -> None:
        """A record the producer refused to send: one it refuses for itself (larger than
        ``message.max.bytes``, to a topic or partition that does not exist) is, as a failed
        delivery, skipped and counted under ``errors.tolerance=all`` (KIP-779), and fails
        the task at once otherwise; any other refusal (the producer itself failed) fails
        the task whatever the tolerance."""
        refusal = error.args[0] if error.args else None
        if not isinstance(refusal, KafkaError) or refusal.code() not in RECORD_REFUSALS:
            raise ConnectException(f"Producing to Kafka failed: {refusal}") from error
        self._on_delivery(refusal, None)
        self._raise_delivery_error()
        self._dropped(polled)

    def _produce_record(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        options: dict[str, Any],
        polled: SourceRecord | None = None,
    ) -> None:
        """One ``produce``; while the producer's local queue is full, deliveries drain,
        until the task is asked to stop (then :class:`StoppedWhileRetrying`: the poll's
        offsets are not kept, so its records come again in the next run, except under
        at-most-once, which stored them first). A refused record goes to ``_refused``."""
        for attempt in itertools.count():
            try:
                self.producer.produce(topic, value, key, **options)
                return
            except BufferError:
                if attempt == 0:
                    log.debug("%s: the producer's queue is full: deliveries drain", self.name)
                if self.heartbeat.stopping.is_set():
                    raise StoppedWhileRetrying(
                        f"producing to {topic}: the producer's queue is full"
                    ) from None
                self.producer.poll(0.1)
            except KafkaException as e:
                self._refused(e, polled)
                return

    def _on_commit_interval(self) -> None:
        """Called every ``offset.flush.interval.ms``."""
        self.commit_offsets(self.offset_flush_timeout_s)

    def _remember_offsets(self, records: list[SourceRecord] | SourceRecordBatch) -> None:
        """Keeps the latest offset per source partition. Walks back from the last record,
        so that a run of records sharing one partition object (the usual case) costs one
        lookup, for its last record; a batch's is its last offset."""
        pending = self.pending
        if isinstance(records, SourceRecordBatch):
            partition = records.source_partition
            if partition is not None and records.source_offsets:
                pending[partition_key(partition)] = (partition, records.source_offsets[-1])
            return
        seen: set[str] = set()
        last: dict[str, Any] | None = None
        for record in reversed(records):
            partition = record.source_partition
            if partition is last or partition is None:
                continue
            last, key = partition, partition_key(partition)
            if key not in seen:
                seen.add(key)
                pending[key] = (partition, record.source_offset)

    def _on_delivery(self, error: KafkaError | None, _message: object) -> None:
        """A delivery report of a failed record: it fails the task at the next check, or,
        under ``errors.tolerance=all``, is counted as a tolerated error and skipped (its
        offset commits with the others), as Kafka Connect does since KIP-779."""
        if error is None:
            return
        if self.tolerates_delivery_failures and self.errors.tolerate_all:
            self.metrics.error(failed=False)
            self.undelivered.append(error)
        elif self.delivery_error is None:
            self.delivery_error = error

    def _acknowledger(self, record: SourceRecord) -> Any:
        def acknowledge(error: KafkaError | None, message: DataMessage) -> None:
            if error is not None:
                self._on_delivery(error, message)
                if self.tolerates_delivery_failures and self.errors.tolerate_all:
                    self.task.commit_record(record, None)  # skipped, as Kafka's task does
                return
            timestamp = message.timestamp()[1]
            metadata = RecordMetadata(
                message.topic(), message.partition(), message.offset(), timestamp
            )
            self.task.commit_record(record, metadata)

        return acknowledge

    tolerates_delivery_failures = True
    """Whether ``errors.tolerance=all`` covers records Kafka did not take (not for
    transactional tasks, whose transaction fails with them)."""

    def _raise_delivery_error(self) -> None:
        if self.delivery_error is not None:
            raise ConnectException(f"Producing to Kafka failed: {self.delivery_error}")

    def commit_offsets(self, timeout_s: float, store_wait_s: float = STORE_WAIT_S) -> None:
        """Flushes the producer for up to ``timeout_s``; when everything produced so far is
        acknowledged, hands the offsets of those records to the store writer, and calls the
        task's ``commit`` once they are stored: within ``store_wait_s`` (not at all while the
        database is unreachable), or at a later commit. Raises when a delivery failed."""
        started = time.monotonic()
        remaining = self.producer.flush(timeout_s)
        try:
            self._raise_delivery_error()
        except ConnectException:
            self.metrics.commit(False, time.monotonic() - started)
            raise
        if remaining:
            self.metrics.commit(False, time.monotonic() - started)
            log.warning(
                "%s: %d records not yet acknowledged after %.1f s; their offsets are "
                "committed at the next attempt",
                self.name,
                remaining,
                timeout_s,
            )
            return
        self.metrics.values["source_record_write_total"] = self.produced
        self._log_undelivered()
        if not self.at_most_once:
            self._commit_pending()
        stored = self.writes.flush(0 if self.writes.failing else store_wait_s)
        self.metrics.commit(not self.writes.failing, time.monotonic() - started)
        if stored:
            self.task.commit()

    def _log_undelivered(self) -> None:
        """Says, once a commit, how many records were skipped since the last one because
        Kafka did not take them (``errors.tolerance=all``)."""
        if self.undelivered:
            undelivered, self.undelivered = self.undelivered, []  # appended to meanwhile
            log.warning(
                "%s: %d records could not be delivered to Kafka and are skipped "
                "(errors.tolerance=all), the last: %s",
                self.name,
                len(undelivered),
                undelivered[-1],
            )

    def _commit_pending(self) -> None:
        if self.pending:
            batch, self.pending = list(self.pending.values()), {}
            self.writes.source_offsets(batch)

    def _stored_before_sending(self) -> bool:
        """At-most-once: waits until the offsets of the records about to be produced are
        stored (however long the database is away, as the guarantee needs); False when the
        run is told to stop meanwhile (the records are not produced)."""
        self._commit_pending()
        while not self.writes.flush(self.heartbeat.interval_s):
            if self.heartbeat.stopping.is_set():
                return False
        return True

    def _pause_until_resumed(self) -> None:
        self.commit_offsets(self.offset_flush_timeout_s)
        self.report_paused()
        self.metrics.pause()
        while self.heartbeat.paused.is_set() and not self.heartbeat.stopping.wait(
            self.heartbeat.interval_s
        ):
            pass
        self.metrics.resume()
        if not self.heartbeat.stopping.is_set():
            self.report_running()

    def _records_in_flight(self) -> float:
        """Records produced and not yet acknowledged (0 once the producer is closed)."""
        producer = getattr(self, "producer", None)
        return len(producer) if producer is not None else 0

    def _close_clients(self) -> None:
        try:
            self.producer.flush(self.flush_timeout_s)
        except Exception:  # a shared producer's delivery report failing this late
            log.exception("%s: a delivery report failed while closing", self.name)
        if isinstance(self.producer, TaskProducer):
            self.producer.release()
        # Drop the clients now rather than whenever this object is collected: librdkafka
        # handles keep threads and connections until they are freed.
        del self.producer, self.topics


class TopicCreator:
    """Creates a source's topics before their first record when the connector configures
    ``topic.creation.default.partitions`` and ``.replication.factor`` (KIP-158)."""

    def __init__(self, admin_config: dict[str, str], connector_config: dict[str, str]) -> None:
        self.partitions = int(connector_config.get(TOPIC_CREATION_PREFIX + "partitions", "0") or 0)
        self.replication = int(
            connector_config.get(TOPIC_CREATION_PREFIX + "replication.factor", "-1") or -1
        )
        self.enabled = self.partitions != 0
        self.admin = AdminClient({**admin_config}) if self.enabled else None
        self.known: set[str] = set()

    def ensure(self, topic: str) -> None:
        """Creates ``topic`` if creation is configured and it is missing; remembers it."""
        if not self.enabled:
            self.known.add(topic)
            return
        assert self.admin is not None
        if topic not in self.admin.list_topics(timeout=10).topics:
            futures = self.admin.create_topics([NewTopic(topic, self.partitions, self.replication)])
            try:
                futures[topic].result(timeout=30)
            except Exception as e:  # created meanwhile by another task: fine
                if "TOPIC_ALREADY_EXISTS" not in str(e):
                    raise
        self.known.add(topic)
