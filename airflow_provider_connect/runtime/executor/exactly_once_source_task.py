"""The loop of a source task when the worker's ``exactly.once.source.support`` is enabled
(KIP-618): records and the offsets that cover them commit in one Kafka transaction.

Guarantees:

* A record polled from the task becomes visible to ``read_committed`` consumers at most
  once, and, unless its transaction is aborted, exactly once: the offsets committed with it
  are what the next run starts from.
* Transactions end where ``transaction.boundary`` says: after every non-empty ``poll``
  (``poll``), every ``transaction.boundary.interval.ms`` (``interval``), or when the task
  asks through its :class:`TransactionContext` (``connector``). An open transaction is
  committed when the task pauses or stops gracefully, and aborted when the run fails. A
  commit that times out while its records cannot be delivered (the broker away, the
  network cut) is tried again until ``transaction.timeout.ms``; one that still cannot
  complete, or that the broker aborted, is given up and the run ends as a stop
  (``RunAgain``): the herder starts the task again, from the offsets committed (the
  coordinator ends the given-up transaction whole, its offsets with it).
* A transaction the task asks to abort is aborted, then the offsets of its records are
  committed in a transaction of their own, as Kafka Connect does: its records are dropped
  for good, and no later run polls them again.
* Before producing, a run checks that its generation is the latest and has a task-count
  record, and refuses to start otherwise; its transactional producer
  (``<group.id>-<connector>-<task>``) fences any earlier run of the same task, such as a
  zombie on a lost executor or a Spark retry of the same task. A fenced run produces
  nothing more and ends failed (its status is dropped once it is superseded).
* ``commit_record`` is called for a record once its offset is committed: after its
  transaction committed, or after the offsets of a transaction the task aborted were (with
  the metadata of its write, as Kafka Connect's); for a record that is not written (dropped
  by a transformation, skipped by the error handler) after the transaction that carries its
  offset committed. ``commit`` comes after each commit. Committed offsets are mirrored to
  the metadata store (for the REST API and Airflow) every ``offset.flush.interval.ms``
  (with ``transaction.boundary=interval``, at each commit) and when the task pauses or
  stops.
* A run starts from the offsets committed to the offsets topic, over those in the store
  (which hold what was committed before exactly-once was enabled).
"""

from __future__ import annotations

import logging
import time
from typing import Any, TypeGuard

from confluent_kafka import KafkaError, KafkaException

from airflow_provider_connect.connect.connector_config import (
    CONNECTOR_BOUNDARY,
    INTERVAL_BOUNDARY,
    POLL_BOUNDARY,
    TRANSACTION_BOUNDARY_INTERVAL_CONFIG,
)
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.messages import DataMessage
from airflow_provider_connect.connect.source import (
    OffsetStorageReader,
    RecordMetadata,
    SourceRecord,
    SourceRecordBatch,
    TransactionContext,
)
from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from airflow_provider_connect.runtime.executor.errors import RunAgain, StoppedWhileRetrying
from airflow_provider_connect.runtime.executor.exactly_once import (
    OffsetsTopic,
    SnapshotOffsetReader,
    WorkerTransactionContext,
    transaction_boundary,
)
from airflow_provider_connect.runtime.executor.source_task import WorkerSourceTask
from airflow_provider_connect.runtime.executor.task_base import TaskRefusedToStart
from airflow_provider_connect.runtime.kafka_names import transactional_id
from airflow_provider_connect.runtime.worker_config import transactional
from airflow_provider_connect.store import StoreUnavailable, partition_key

log = logging.getLogger(__name__)

_FENCED_CODES = (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)
_ZOMBIE_CODES = (KafkaError._FENCED, KafkaError.PRODUCER_FENCED)
"""Another producer of the same transactional id took over: this run is a zombie."""


class ExactlyOnceWorkerSourceTask(WorkerSourceTask):
    """Runs one source task transactionally; see the module docstring."""

    tolerates_delivery_failures = False

    shares_producer = False  # a transaction is one task's

    def _setup(self) -> None:
        self._ensure_current()
        config = self.spec.connector_config
        self.boundary = transaction_boundary(config)
        self.unmirrored: dict[str, tuple[dict[str, Any], Any]] = {}
        if self.boundary == INTERVAL_BOUNDARY and config.get(TRANSACTION_BOUNDARY_INTERVAL_CONFIG):
            self.flush_interval_s = int(config[TRANSACTION_BOUNDARY_INTERVAL_CONFIG]) / 1000
        self.in_transaction = False
        self.transaction_lost = False  # given up (``_give_up_transaction``): not flushed
        self.acks: list[tuple[SourceRecord, RecordMetadata | None]] = []
        self.log_reader = CommittedLogReader(self.worker.client_config("consumer."))
        self.offsets_topic = OffsetsTopic(self.worker, self.spec.connector, config)
        self.offsets_topic.ensure(self.log_reader)
        super()._setup()
        timeout_ms = self._producer_config().get("transaction.timeout.ms", 60_000)
        self.transaction_timeout_s = int(timeout_ms) / 1000  # librdkafka's default: 60 s
        self.producer.init_transactions(self.flush_timeout_s * 6)  # fences earlier runs
        try:
            self._ensure_current()
        except TaskRefusedToStart:
            self._close_clients()
            raise
        # The store holds offsets committed before exactly-once was enabled, and mirrors of
        # committed transactions (never ahead of them): the offsets topic overrides it.
        self.snapshot.entries = {
            partition_key(p): (p, o) for p, o in self.offsets.source_offsets(self.spec.connector)
        }
        from_topic = self.offsets_topic.read(self.log_reader)
        self.snapshot.entries.update(from_topic)
        self.offsets.commit_source_offsets(self.spec.connector, from_topic.values())
        self.at_most_once = False

    def _ensure_current(self) -> None:
        """KIP-618: start only as the latest generation, after its task-count record."""
        generation, _ = self.configs.task_configs(self.spec.connector)
        count = self.configs.task_count(self.spec.connector)
        if generation != self.spec.generation:
            raise TaskRefusedToStart(
                f"its generation {self.spec.generation} is stale (latest: {generation})"
            )
        if count is None or count[0] < generation:
            raise TaskRefusedToStart(
                f"generation {generation} has no task-count record yet; "
                "the herder writes it after fencing the previous generation"
            )

    def _producer_config(self) -> dict[str, Any]:
        return transactional(
            super()._producer_config(),
            transactional_id(self.worker, self.spec.connector, self.spec.task_id),
        )

    def _offset_reader(self) -> OffsetStorageReader:
        self.snapshot = SnapshotOffsetReader()
        return self.snapshot

    def _transaction_context(self) -> TransactionContext | None:
        self.transactions = WorkerTransactionContext()
        return self.transactions if self.boundary == CONNECTOR_BOUNDARY else None

    # -- transactions ----------------------------------------------------------------------
    def _dispatch(self, records: list[SourceRecord] | SourceRecordBatch) -> None:
        requests = self.transactions.record_requests
        if requests:  # connector-defined boundaries after given records (a batch's records
            records = list(records)  # are the same objects at every read)
            start = 0
            for i, record in enumerate(records):
                commit = requests.pop(id(record), None)
                if commit is not None:
                    self._produce(records[start : i + 1])
                    self._end_requested(commit)
                    start = i + 1
            records = records[start:]
        if records:
            self._produce(records)
        if self.boundary == POLL_BOUNDARY:
            self._end_transaction()
        elif self.boundary == CONNECTOR_BOUNDARY:
            request = self.transactions.take_batch_request()
            if request is not None:
                self._end_requested(request)

    def _begin(self) -> None:
        """Begins a transaction unless one is open."""
        if not self.in_transaction:
            self.producer.begin_transaction()
            self.in_transaction = True

    def _produce(self, records: list[SourceRecord] | SourceRecordBatch) -> None:
        self._begin()
        try:
            super()._dispatch(records)
        except StoppedWhileRetrying:
            # Part of the poll is in the transaction, without its offsets: the transaction
            # goes, and the next run polls its records again.
            self._give_up_transaction(abort=True)
            raise

    def _end_requested(self, commit: bool) -> None:
        """Ends the open transaction as the task asked (``transaction.boundary=connector``):
        committed; or aborted, then its offsets committed in a transaction of their own, so
        that its records are dropped for good (Kafka Connect's behaviour)."""
        if not commit and self.in_transaction:
            # Delivered first: an abort fails what is still queued, and a failed delivery
            # fails the task.
            self.producer.flush(self.flush_timeout_s * 6)
            self._abort()
            log.info("%s: transaction aborted by the task", self.name)
        self._end_transaction()

    def _abort(self) -> None:
        """Aborts the open transaction; its offsets and acknowledgements stay pending."""
        self.producer.abort_transaction(self.flush_timeout_s)
        self.in_transaction = False
        self.produced = int(self.metrics.values["source_record_write_total"])

    def _end_transaction(self) -> None:
        """Commits the open transaction with the offsets of its records, then reports the
        records to ``commit_record`` and calls ``commit``. A commit with no transaction
        open but offsets pending (those of a transaction the task aborted) commits them in
        a transaction of their own. A commit that cannot complete (the broker away past the
        transaction's timeout, or it aborted the transaction) gives the transaction up
        (:meth:`_give_up_transaction`) and ends the run: :class:`RunAgain`, or
        :class:`StoppedWhileRetrying` when the task is stopping."""
        if not self.in_transaction and not self.pending:
            return
        self._begin()
        pending, self.pending = self.pending, {}
        for partition, offset in pending.values():
            self.producer.produce(**self.offsets_topic.record(partition, offset))
        started = time.monotonic()
        try:
            self._commit_transaction(started)
        except KafkaException as e:
            self.metrics.commit(False, time.monotonic() - started)
            error = e.args[0] if e.args else None
            if self._outlived(error):
                self._give_up_transaction(abort=error.txn_requires_abort())
                if self.heartbeat.stopping.is_set():
                    raise StoppedWhileRetrying(f"committing a transaction ({error.str()})") from e
                raise RunAgain(f"its transaction could not be committed ({error.str()})") from e
            raise self._commit_failure(e) from e
        self.metrics.commit(True, time.monotonic() - started)
        self.metrics.values["source_record_write_total"] = self.produced
        self.in_transaction = False
        self.producer.poll(0)  # deliveries not yet reported
        acks, self.acks = self.acks, []
        self.snapshot.entries.update(pending)
        self.unmirrored.update(pending)  # written to the store at the next commit interval
        for record, metadata in acks:
            self.task.commit_record(record, metadata)
        self.task.commit()

    def _outlived(self, error: object) -> TypeGuard[KafkaError]:
        """Whether a commit's ``error`` leaves the task able to go on in a new run (the
        commit timed out, or the transaction must be aborted, as after the broker aborted it
        past its timeout): not when this producer was fenced by another
        (``PRODUCER_FENCED``) or a newer generation was written, which make this run a
        zombie."""
        if not isinstance(error, KafkaError):
            return False
        if error.code() in _ZOMBIE_CODES or self._superseded():
            return False
        return bool(error.txn_requires_abort() or error.retriable())

    def _give_up_transaction(self, *, abort: bool) -> None:
        """Leaves the open transaction: aborted when ``abort`` (an abort that fails is
        logged), else as it is, its outcome unknown here (the broker is away; the next
        run's ``init_transactions`` fences this producer, and the coordinator ends the
        transaction whole: committed with its offsets, or aborted without them). Either way
        nothing of it is committed by this run from now on, and its producer is not flushed
        at the run's end."""
        if abort:
            try:
                self._abort()
            except KafkaException:
                log.warning("%s: aborting the transaction failed", self.name, exc_info=True)
        self.in_transaction, self.transaction_lost = False, True
        self.pending, self.acks = {}, []
        self.produced = int(self.metrics.values["source_record_write_total"])

    def _commit_transaction(self, started: float) -> None:
        """``commit_transaction``, called again while it times out with a retriable error
        (its records not yet delivered: the broker is away, the network cut) until the
        transaction's own timeout (``transaction.timeout.ms``, past which the broker aborts
        it) has passed since ``started`` or the task is asked to stop."""
        timeout_s = self.flush_timeout_s * 6
        deadline = started + self.transaction_timeout_s
        while True:
            try:
                self.producer.commit_transaction(timeout_s)
                return
            except KafkaException as e:
                error = e.args[0] if e.args else None
                retriable = isinstance(error, KafkaError) and error.retriable()
                if (
                    not retriable
                    or time.monotonic() >= deadline
                    or self.heartbeat.stopping.is_set()
                ):
                    raise
                log.warning(
                    "%s: committing the transaction is slow (%s); trying again", self.name, e
                )

    def _commit_failure(self, error: KafkaException) -> Exception:
        """The error a failed commit ends the run with: said plainly when the producer was
        fenced, or when the commit failed otherwise (a broker may drop the connection of a
        fenced producer rather than answer) after a newer generation was written."""
        code = error.args[0].code() if error.args else None
        if code in _FENCED_CODES or self._superseded():
            return ConnectException(
                "This task's transactional producer was fenced out: a newer run of the task "
                "has started (this one is a zombie); its open transaction was aborted"
            )
        return error

    def _superseded(self) -> bool:
        """Whether a newer generation of the connector's tasks was written (False when the
        store cannot say)."""
        try:
            return self.configs.task_configs(self.spec.connector)[0] != self.spec.generation
        except StoreUnavailable:
            return False

    def _mirror(self) -> None:
        """Writes the offsets committed since the last mirror to the store (one write)."""
        offsets, self.unmirrored = self.unmirrored, {}
        self.writes.source_offsets(offsets.values())

    def _commit_dropped(self, polled: SourceRecord) -> None:
        self.acks.append((polled, None))  # reported once its offset commits

    def _acknowledger(self, record: SourceRecord) -> Any:
        def acknowledge(error: KafkaError | None, message: DataMessage) -> None:
            if error is not None:
                self._on_delivery(error, message)
                return
            metadata = RecordMetadata(
                message.topic(), message.partition(), message.offset(), message.timestamp()[1]
            )
            self.acks.append((record, metadata))  # reported once the transaction commits

        return acknowledge

    def _on_commit_interval(self) -> None:
        if self.boundary == INTERVAL_BOUNDARY:
            self._end_transaction()
        if self.unmirrored:
            self._mirror()

    def commit_offsets(self, timeout_s: float, store_wait_s: float = 0) -> None:
        """Ends the open transaction: committed (whole, however long that takes), or
        aborted within ``timeout_s`` when the run failed. The offsets are in the
        transaction; their copy in the store is the store writer's to write, so nothing
        waits for it here (``store_wait_s``)."""
        if self.failure is None:
            self._end_transaction()
            self._mirror()
        elif self.in_transaction:
            try:
                self.producer.abort_transaction(timeout_s)
            except KafkaException:
                log.warning("%s: aborting the transaction failed", self.name, exc_info=True)

    def _close_clients(self) -> None:
        self.log_reader.close()
        if self.failure is not None or self.transaction_lost:
            # Its open transaction is aborted or given up, so nothing is left to deliver; and
            # flushing a fenced producer can raise from inside the client library.
            del self.producer, self.topics
            return
        super()._close_clients()
