"""Test what you write against the connector API, in-process, as the runtime would drive it.

Harnesses run a connector, a task, a transformation or a converter through its lifecycle
with the runtime's own task contexts (``SimpleSourceTaskContext``, ``SimpleSinkTaskContext``
of the connector API), in the order and with the guarantees of the runtime: no broker, no
Spark, no metadata database, no Airflow (this module imports nothing of the project outside
:mod:`airflow_provider_connect.connect`). Use them from any test framework::

    with SourceTaskHarness(MySourceTask) as harness:
        harness.start({"topic": "t"})
        records = harness.poll(records=10)

* :class:`SourceTaskHarness`: ``poll`` until a condition, ``commit_record`` per record,
  offsets committed as the runtime commits them and served back on a restart, ``stopped()``
  exactly once, last (KIP-419).
* :class:`SinkTaskHarness`: ``open``/``put``/``commit``/``close``/``stop`` with
  ``context.is_closing()`` true only while partitions close (KIP-275), the task's requests
  (``offset``, ``pause``, ``request_commit``) applied after ``put`` and reported records
  collected.
* :class:`InMemoryChannels`: a sink connector's coordination channel, fenced as the
  runtime's (``open`` a new run of a task, ``new_generation``), for a ``SinkTaskHarness``
  or used directly.
* :class:`ConnectorHarness`: ``validate``, ``start``, ``task_configs``, ``stop(is_deleted)``.
* :class:`TransformationHarness` and :class:`PredicateHarness`: configure, apply or test,
  close.
* :func:`round_trip` and :func:`header_round_trip`: a converter's bytes and back.

Every harness stops what it started with the deleted flag you give (KIP-883, KIP-901) through
:func:`~airflow_provider_connect.connect.connector.call_stop`, as the runtime does, so a
``stop(self)`` without the flag works too. When the code under test breaks a rule of the
connector API that the runtime relies on, the harness raises :class:`ContractError`.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Generic, TypeVar

import orjson

from airflow_provider_connect.connect.channel import ChannelMessage, FencedException, TaskChannel
from airflow_provider_connect.connect.connector import (
    Connector,
    ConnectorContext,
    ConnectRecord,
    Task,
    call_stop,
)
from airflow_provider_connect.connect.data.schema import Schema, SchemaAndValue
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.sink import (
    ErrantRecordReporter,
    SimpleSinkTaskContext,
    SinkRecord,
    SinkTask,
    TimestampType,
    TopicPartition,
)
from airflow_provider_connect.connect.source import (
    OffsetStorageReader,
    RecordMetadata,
    SimpleSourceTaskContext,
    SourceRecord,
    SourceTask,
    TransactionContext,
)
from airflow_provider_connect.connect.storage import Converter, HeaderConverter
from airflow_provider_connect.connect.transforms import Predicate, Transformation

__all__ = [
    "ConnectorHarness",
    "ContractError",
    "FakeConnectorContext",
    "FakeErrantRecordReporter",
    "FakeOffsetReader",
    "FakeTransactionContext",
    "InMemoryChannels",
    "InMemoryTaskChannel",
    "PredicateHarness",
    "SinkTaskHarness",
    "SourceTaskHarness",
    "TransformationHarness",
    "header_round_trip",
    "round_trip",
    "sink_records",
]

C = TypeVar("C", bound="Connector | Task")
R = TypeVar("R", bound=ConnectRecord)
V = TypeVar("V")
_Self = TypeVar("_Self", bound="_Scoped")
Partition = dict[str, Any]
Offset = dict[str, Any]


class ContractError(AssertionError):
    """The code under test broke a rule of the connector API that the runtime relies on
    (a transformation changed the record it was given, a connector returned more task
    configs than asked for, a source offset is not JSON, …)."""


# -- contexts --------------------------------------------------------------------------------
# The task contexts are the runtime's (connect.source.SimpleSourceTaskContext,
# connect.sink.SimpleSinkTaskContext); these stand in for what the runtime fills them with
# (the store's offsets, the transactional producer, the dead-letter queue).


class FakeOffsetReader(OffsetStorageReader):
    """Committed source offsets in memory, keyed as the runtime's store keys them (the
    partition's JSON with sorted keys). Offsets go in and come out through JSON, as they do
    through the store, so a task reads what it would read after a real restart."""

    def __init__(self, offsets: Iterable[tuple[Partition, Offset | None]] = ()) -> None:
        self._offsets: dict[str, tuple[Partition, Offset | None]] = {}
        self.commit(offsets)

    def offset(self, partition: Partition) -> Offset | None:
        entry = self._offsets.get(_partition_key(partition))
        return None if entry is None else _through_json(entry[1], "offset")

    def commit(self, offsets: Iterable[tuple[Partition, Offset | None]]) -> None:
        """Stores each partition's offset, replacing the one it had."""
        for partition, offset in offsets:
            stored = _through_json(partition, "partition"), _through_json(offset, "offset")
            self._offsets[_partition_key(partition)] = stored

    def items(self) -> list[tuple[Partition, Offset | None]]:
        """Every ``(partition, offset)`` committed, ordered by partition key."""
        return [self._offsets[key] for key in sorted(self._offsets)]


def _partition_key(partition: Partition) -> str:
    return orjson.dumps(partition, option=orjson.OPT_SORT_KEYS).decode()


def _through_json(value: V, what: str) -> V:
    try:
        copied: V = orjson.loads(orjson.dumps(value))
    except TypeError as e:
        raise ContractError(f"a source {what} must be JSON: {value!r} is not ({e})") from e
    return copied


class FakeTransactionContext(TransactionContext):
    """Records a task's transaction requests (``transaction.boundary=connector``) in
    ``requests``: ``("commit" | "abort", record or None)`` in the order made."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, SourceRecord | None]] = []

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        self.requests.append(("commit", record))

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        self.requests.append(("abort", record))


class FakeErrantRecordReporter(ErrantRecordReporter):
    """Collects reported records in ``reported`` as ``(record, error)``. Under
    ``errors.tolerance`` ``none`` (the runtime's default) a report also raises
    :class:`~airflow_provider_connect.connect.errors.ConnectException`, failing the ``put``
    as the runtime does; under ``all`` it returns a completed future."""

    def __init__(self, tolerance: str = "none") -> None:
        if tolerance not in ("none", "all"):
            raise ValueError(f"errors.tolerance is none or all, not {tolerance!r}")
        self.tolerance = tolerance
        self.reported: list[tuple[SinkRecord, Exception]] = []

    def report(self, record: SinkRecord, error: Exception) -> Future[None]:
        self.reported.append((record, error))
        if self.tolerance == "none":
            raise ConnectException(
                f"Tolerance exceeded in error handler: {record.topic}-{record.kafka_partition} "
                f"at offset {record.kafka_offset}: {error}"
            ) from error
        done: Future[None] = Future()
        done.set_result(None)
        return done


class FakeConnectorContext(ConnectorContext):
    """Counts ``request_task_reconfiguration()`` calls in ``reconfiguration_requests`` and
    keeps the errors given to ``raise_error`` in ``errors``; any thread may call either."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reconfiguration_requests = 0
        self.errors: list[Exception] = []

    def request_task_reconfiguration(self) -> None:
        with self._lock:
            self.reconfiguration_requests += 1

    def raise_error(self, error: Exception) -> None:
        with self._lock:
            self.errors.append(error)


class InMemoryChannels:
    """One connector's coordination channel in memory, shared by its tasks' runs, with the
    runtime's fencing: :meth:`open` starts a run of a task at the current generation (the
    task's earlier run is superseded from then on) and answers its channel;
    :meth:`new_generation` supersedes every run, as a reconfiguration does. Any thread may
    call anything."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.generation = 1
        self._runs: dict[int, int] = {}  # each task's current run
        self._messages: dict[int, ChannelMessage] = {}
        self._last_id = 0

    def open(self, task_id: int) -> InMemoryTaskChannel:
        """A new run of task ``task_id``: its channel, current until the next ``open`` of
        the task or :meth:`new_generation`."""
        with self._lock:
            run = self._runs[task_id] = self._runs.get(task_id, 0) + 1
            return InMemoryTaskChannel(self, task_id, self.generation, run)

    def new_generation(self) -> int:
        """Starts the next generation (every open channel is fenced); returns its number."""
        with self._lock:
            self.generation += 1
            return self.generation

    def _current(self, channel: InMemoryTaskChannel) -> bool:
        return (
            channel.generation == self.generation and self._runs.get(channel.task_id) == channel.run
        )

    def _check(self, channel: InMemoryTaskChannel) -> None:
        if not self._current(channel):
            raise FencedException(
                f"Run {channel.run} of task {channel.task_id} (generation "
                f"{channel.generation}) is no longer the task's current run"
            )

    def _send(self, channel: InMemoryTaskChannel, kind: str, payload: bytes) -> int:
        with self._lock:
            self._check(channel)
            self._last_id += 1
            self._messages[self._last_id] = ChannelMessage(
                self._last_id, channel.task_id, channel.generation, kind, bytes(payload)
            )
            return self._last_id

    def _list(self, kinds: Collection[str] | None) -> list[ChannelMessage]:
        with self._lock:
            return [m for m in self._messages.values() if kinds is None or m.kind in kinds]

    def _remove(self, channel: InMemoryTaskChannel, ids: Collection[int]) -> None:
        with self._lock:
            self._check(channel)
            for id_ in ids:
                self._messages.pop(id_, None)

    def _check_current(self, channel: InMemoryTaskChannel) -> None:
        with self._lock:
            self._check(channel)


class InMemoryTaskChannel(TaskChannel):
    """One task run's view of :class:`InMemoryChannels` (made by its ``open``), with the
    guarantees of the runtime's channel."""

    def __init__(self, channels: InMemoryChannels, task_id: int, generation: int, run: int):
        self.channels = channels
        self.task_id = task_id
        self.generation = generation
        self.run = run

    def send(self, kind: str, payload: bytes) -> int:
        return self.channels._send(self, kind, payload)

    def messages(self, kinds: Collection[str] | None = None) -> list[ChannelMessage]:
        return self.channels._list(kinds)

    def remove(self, ids: Collection[int]) -> None:
        self.channels._remove(self, ids)

    def check_current(self) -> None:
        self.channels._check_current(self)


# -- lifecycles ------------------------------------------------------------------------------


class _Scoped:
    """A harness used in a ``with`` block: leaving it ends what the harness runs."""

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._end()

    def _end(self) -> None:
        raise NotImplementedError


class _Lifecycle(_Scoped, Generic[C]):
    """A connector's or task's lifecycle: a new instance per ``start`` (as the runtime makes
    one per run), one ``stop`` per started instance, a failure of any call stopping it."""

    stops_failed_start = False
    """Whether an instance whose ``start`` raised is stopped: the herder stops such a
    connector; a task loop never stops a task that did not start."""

    def __init__(self, component_class: Callable[[], C]) -> None:
        self.component_class = component_class
        self.props: dict[str, str] = {}
        self._instance: C | None = None
        self._running = False

    @property
    def running(self) -> bool:
        """Whether an instance is started and not yet stopped."""
        return self._running

    def start(self, props: Mapping[str, str]) -> C:
        """Starts a new instance with ``props``; returns it."""
        if self._running:
            raise RuntimeError("already started: stop it (or restart) first")
        instance = self.component_class()
        self._initialize(instance, dict(props))
        try:
            instance.start(dict(props))
        except Exception:
            if self.stops_failed_start:
                with contextlib.suppress(Exception):
                    self._finish(instance, False)
            raise
        self._instance, self._running, self.props = instance, True, dict(props)
        return instance

    def _initialize(self, instance: C, props: dict[str, str]) -> None:
        raise NotImplementedError

    def _stop(self, deleted: bool) -> None:
        if self._running:
            self._running = False
            self._finish(self._started(), deleted)

    def _finish(self, instance: C, deleted: bool) -> None:
        call_stop(instance, deleted)

    def _started(self) -> C:
        if self._instance is None:
            raise RuntimeError("nothing started yet: call start first")
        return self._instance

    def _call(self, operation: Callable[[], V], *, retriable: bool = False) -> V:
        """Runs one call of the running instance. Any exception (but a RetriableException
        where ``retriable``) fails it: it is stopped as the runtime stops a failed one, and
        the exception is raised (an error while stopping is dropped: the failure wins)."""
        if not self._running:
            raise RuntimeError("not running: call start first")
        try:
            return operation()
        except Exception as e:
            if not (retriable and isinstance(e, RetriableException)):
                self._running = False
                with contextlib.suppress(Exception):
                    self._finish(self._started(), False)
            raise

    def restart(self, props: Mapping[str, str] | None = None) -> C:
        """Stops the instance (not deleted), then starts a new one with ``props`` (else the
        same props), as a reconfiguration or a runtime restart does."""
        self._stop(False)
        return self.start(self.props if props is None else props)

    def _end(self) -> None:
        self._stop(False)


class SourceTaskHarness(_Lifecycle[SourceTask]):
    """Runs a source task as the runtime's loop does, without a broker.

    * :meth:`start` makes a new task, initializes it with a
      :class:`~airflow_provider_connect.connect.source.SimpleSourceTaskContext` (the
      runtime's) whose reader is :attr:`offsets` (the offsets given, then those committed)
      and starts it.
    * Each record a ``poll`` returns is "produced" at once: ``commit_record(record,
      metadata)`` is called with its topic, partition (0 when the record sets none), offset
      (counted per topic partition) and timestamp, in order. A ``poll`` that raises
      RetriableException is retried, as the runtime does.
    * :meth:`commit` stores the last offset returned per source partition in
      :attr:`offsets`, then calls the task's ``commit()``, as an offset flush does.
    * :meth:`stop` calls ``stop(connector_deleted)``, commits as above, then ``stopped()``.
      ``stopped()`` is called exactly once per started task, last: after every ``poll``,
      ``commit`` and ``commit_record`` returned, whether the task stopped, failed (a
      ``poll``, ``commit_record`` or ``commit`` raised: it is stopped, then the error is
      raised) or its ``stop`` raised (raised after ``stopped()``).
    * :meth:`restart` (or a new harness given these :attr:`offsets`) starts a new task that
      reads the committed offsets, as after a runtime restart.

    Leaving a ``with`` block stops a running task (not deleted).
    """

    def __init__(
        self,
        task_class: Callable[[], SourceTask],
        offsets: FakeOffsetReader | Iterable[tuple[Partition, Offset | None]] = (),
        *,
        transactions: bool = False,
    ) -> None:
        super().__init__(task_class)
        self.offsets = (
            offsets if isinstance(offsets, FakeOffsetReader) else FakeOffsetReader(offsets)
        )
        self.transactions = transactions
        self.context = SimpleSourceTaskContext({}, self.offsets)
        self.acknowledged: list[tuple[SourceRecord, RecordMetadata]] = []
        self._log_ends: dict[tuple[str, int], int] = {}
        self._pending: dict[str, tuple[Partition, Offset | None]] = {}

    @property
    def task(self) -> SourceTask:
        """The task last started."""
        return self._started()

    def _initialize(self, instance: SourceTask, props: dict[str, str]) -> None:
        transactions = FakeTransactionContext() if self.transactions else None
        self.context = SimpleSourceTaskContext(props, self.offsets, transactions)
        instance.initialize(self.context)

    def poll(
        self, *, records: int | None = None, polls: int | None = None, timeout: float = 10.0
    ) -> list[SourceRecord]:
        """Polls until ``records`` records came back or ``polls`` polls were made, whichever
        first; with neither, until a poll returns no records. Returns the records of these
        polls. Raises TimeoutError when the condition is not met within ``timeout`` seconds."""
        returned: list[SourceRecord] = []
        made = 0
        deadline = time.monotonic() + timeout
        while (records is None or len(returned) < records) and (polls is None or made < polls):
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{made} polls returned {len(returned)} records in {timeout} s; "
                    f"wanted records={records}, polls={polls}"
                )
            made += 1
            batch = self._call(self._poll_once)
            if batch is None and records is None and polls is None:
                break
            returned += batch or ()
        return returned

    def _poll_once(self) -> list[SourceRecord] | None:
        try:
            polled = self.task.poll()
        except RetriableException:
            return []
        batch = list(polled) if polled else None  # a SourceRecordBatch read as records
        for record in batch or ():
            self._produce(record)
        return batch or None

    def _produce(self, record: SourceRecord) -> None:
        partition = 0 if record.kafka_partition is None else record.kafka_partition
        offset = self._log_ends.get((record.topic, partition), 0)
        self._log_ends[record.topic, partition] = offset + 1
        timestamp = int(time.time() * 1000) if record.timestamp is None else record.timestamp
        metadata = RecordMetadata(record.topic, partition, offset, timestamp)
        self.task.commit_record(record, metadata)
        self.acknowledged.append((record, metadata))
        if record.source_partition is not None:
            key = _partition_key(record.source_partition)
            self._pending[key] = (record.source_partition, record.source_offset)

    def commit(self) -> None:
        """Commits the offsets of the records returned so far, then calls ``commit()``."""
        self._call(lambda: self._commit(self.task))

    def _commit(self, task: SourceTask) -> None:
        pending, self._pending = list(self._pending.values()), {}
        self.offsets.commit(pending)
        task.commit()

    def stop(self, connector_deleted: bool = False) -> None:
        """Stops the task (``stop(connector_deleted)``, final commit, ``stopped()``); does
        nothing when it is not running."""
        self._stop(connector_deleted)

    def _finish(self, instance: SourceTask, deleted: bool) -> None:
        stop_error: Exception | None = None
        try:
            call_stop(instance, deleted)
        except Exception as e:  # the runtime still commits and calls stopped()
            stop_error = e
        try:
            self._commit(instance)
        finally:
            instance.stopped()
        if stop_error is not None:
            raise stop_error

    def run(
        self,
        props: Mapping[str, str],
        *,
        records: int | None = None,
        polls: int | None = None,
        connector_deleted: bool = False,
    ) -> list[SourceRecord]:
        """Starts a task, polls as :meth:`poll` does, stops it; returns the records."""
        self.start(props)
        try:
            return self.poll(records=records, polls=polls)
        finally:
            self.stop(connector_deleted)


def sink_records(
    topic: str,
    partition: int,
    values: Iterable[Any],
    *,
    offset: int = 0,
    key: Any = None,
    key_schema: Schema | None = None,
    value_schema: Schema | None = None,
    timestamp: int | None = None,
) -> list[SinkRecord]:
    """Consumed records of ``values`` at consecutive offsets of ``topic``-``partition`` from
    ``offset``, all with ``key`` and the schemas given."""
    kind = TimestampType.NO_TIMESTAMP_TYPE if timestamp is None else TimestampType.CREATE_TIME
    return [
        SinkRecord(topic, partition, key_schema, key, value_schema, v, offset + i, timestamp, kind)
        for i, v in enumerate(values)
    ]


class SinkTaskHarness(_Lifecycle[SinkTask]):
    """Runs a sink task as the runtime's loop does, without a broker.

    * :meth:`start` makes a new task, initializes it with a
      :class:`~airflow_provider_connect.connect.sink.SimpleSinkTaskContext` (the runtime's;
      its errant record reporter is :attr:`reporter`), starts it and opens ``partitions``.
    * :meth:`open` adds partitions to ``context.assignment()`` before calling ``open``.
    * :meth:`put` passes records of assigned, unpaused partitions. Once ``put`` returns, the
      next offset of each partition advances past its records, and the task's requests are
      applied: ``context.offset`` resets :meth:`position`, ``request_commit`` runs
      :meth:`commit`. A RetriableException is raised to you with nothing advanced (the
      runtime puts the same records again after ``context.timeout``); any other exception
      fails the task: it is stopped, then the error is raised.
    * :meth:`commit` calls ``pre_commit`` with the next offsets of the records put and keeps
      what it returns in :attr:`committed`.
    * :meth:`close` runs the partitions' final ``pre_commit`` with ``context.is_closing()``
      true, then ``close``. ``is_closing()`` is true only during that ``pre_commit`` (and
      the ``flush`` the default one calls).
    * :meth:`stop` closes every assigned partition, then calls ``stop(connector_deleted)``
      exactly once.
    * A new harness given these :attr:`committed` offsets (or :meth:`restart`) starts where
      the last commit left off.

    ``errors_tolerance`` is the connector's ``errors.tolerance``: ``none`` (the runtime's
    default) fails a ``put`` that reports a record, ``all`` lets it go on; both collect
    the reports in ``reporter.reported``.

    With ``channels``, each :meth:`start` (and :meth:`restart`) is a new run of task ``task_id`` (superseding the
    one before, as the runtime's restarts do) whose ``context.channel()`` is
    ``channels.open(task_id)``; without, ``context.channel()`` is None.
    """

    def __init__(
        self,
        task_class: Callable[[], SinkTask],
        *,
        committed: Mapping[TopicPartition, int] | None = None,
        errors_tolerance: str = "none",
        channels: InMemoryChannels | None = None,
        task_id: int = 0,
    ) -> None:
        super().__init__(task_class)
        self.committed: dict[TopicPartition, int] = dict(committed or {})
        self.reporter = FakeErrantRecordReporter(errors_tolerance)
        self.channels = channels
        self.task_id = task_id
        self.context = SimpleSinkTaskContext({}, self.reporter)
        self._current: dict[TopicPartition, int] = {}  # next offset per partition, after put
        self._positions: dict[TopicPartition, int] = {}  # where the consumer reads next

    @property
    def task(self) -> SinkTask:
        """The task last started."""
        return self._started()

    def start(
        self, props: Mapping[str, str], partitions: Iterable[TopicPartition] = ()
    ) -> SinkTask:
        """Starts a new task with ``props`` and opens ``partitions``; returns the task."""
        task = super().start(props)
        if partitions := list(partitions):
            self.open(*partitions)
        return task

    def _initialize(self, instance: SinkTask, props: dict[str, str]) -> None:
        channel = None if self.channels is None else self.channels.open(self.task_id)
        self.context = SimpleSinkTaskContext(props, self.reporter, channel=channel)
        instance.initialize(self.context)

    def open(self, *partitions: TopicPartition) -> None:
        """Assigns these partitions and calls ``open`` with those newly assigned."""
        new = [tp for tp in partitions if tp not in self.context.assigned]
        self.context.assigned.update(new)
        self._call(lambda: self.task.open(new))
        self._apply_requests()

    def position(self, partition: TopicPartition) -> int:
        """The offset of the next record the runtime would consume from ``partition``: after
        the records put, else where the task asked to start (``context.offset``), else the
        committed offset, else 0."""
        return self._positions.get(partition, self.committed.get(partition, 0))

    def put(self, records: Iterable[SinkRecord]) -> None:
        """Puts ``records``, then applies the task's requests (see the class)."""
        batch = list(records)
        for record in batch:
            tp = TopicPartition(record.original_topic, record.original_kafka_partition)
            if tp not in self.context.assigned:
                raise RuntimeError(f"{tp} is not assigned: open it before putting its records")
            if tp in self.context.paused:
                raise RuntimeError(f"{tp} is paused: the runtime delivers none of its records")
        self._call(lambda: self.task.put(list(batch)), retriable=True)
        for record in batch:
            tp = TopicPartition(record.original_topic, record.original_kafka_partition)
            self._current[tp] = self._positions[tp] = record.original_kafka_offset + 1
        self._apply_requests()

    def _apply_requests(self) -> None:
        requested, self.context.requested_offsets = self.context.requested_offsets, {}
        for tp, offset in requested.items():
            if tp in self.context.assigned:
                self._positions[tp] = offset
                self._current.pop(tp, None)
        if self.context.commit_requested:
            self.context.commit_requested = False
            self.commit()

    def commit(self) -> dict[TopicPartition, int]:
        """Runs ``pre_commit`` for the assigned partitions with records put since they
        opened or were reset; returns the offsets it gave (kept in :attr:`committed`)."""
        return self._call(lambda: self._commit(self.task, sorted(self.context.assigned)))

    def _commit(
        self, task: SinkTask, partitions: list[TopicPartition], *, closing: bool = False
    ) -> dict[TopicPartition, int]:
        offsets = {tp: self._current[tp] for tp in partitions if tp in self._current}
        if not offsets and not closing:
            return {}
        self.context.closing = closing
        try:
            committable = task.pre_commit(offsets) or {}
        finally:
            self.context.closing = False
        self.committed.update(committable)
        return dict(committable)

    def close(self, *partitions: TopicPartition) -> None:
        """Revokes these partitions: final ``pre_commit`` (closing), then ``close``."""
        self._call(lambda: self._close(self.task, list(partitions)))

    def _close(self, task: SinkTask, partitions: list[TopicPartition]) -> None:
        partitions = [tp for tp in partitions if tp in self.context.assigned]
        if not partitions:
            return
        try:
            self._commit(task, partitions, closing=True)
        finally:
            task.close(partitions)
            for tp in partitions:
                self._current.pop(tp, None)
                self._positions.pop(tp, None)
            self.context.assigned.difference_update(partitions)
            self.context.paused.difference_update(partitions)

    def stop(self, connector_deleted: bool = False) -> None:
        """Closes every assigned partition, then calls ``stop(connector_deleted)``; does
        nothing when the task is not running."""
        self._stop(connector_deleted)

    def _finish(self, instance: SinkTask, deleted: bool) -> None:
        try:
            self._close(instance, sorted(self.context.assigned))
        finally:
            call_stop(instance, deleted)

    def restart(self, props: Mapping[str, str] | None = None) -> SinkTask:
        """As :meth:`_Lifecycle.restart`, then opens the partitions the task had: the new
        task reads from the committed offsets."""
        partitions = sorted(self.context.assigned)
        task = super().restart(props)
        self.open(*partitions)
        return task


class ConnectorHarness(_Lifecycle[Connector]):
    """Runs a connector as the runtime's herder does: ``initialize`` with a
    :class:`FakeConnectorContext`, ``start``, ``task_configs`` (checked: at most
    ``max_tasks`` configs of string keys and values), then ``stop(is_deleted)`` exactly once
    per started instance. A failing ``start`` or ``task_configs`` fails the connector: it is
    stopped, then the error is raised."""

    stops_failed_start = True

    def __init__(self, connector_class: Callable[[], Connector]) -> None:
        super().__init__(connector_class)
        self.context = FakeConnectorContext()

    @property
    def connector(self) -> Connector:
        """The connector last started."""
        return self._started()

    def validate(self, config: Mapping[str, str]) -> dict[str, list[str]]:
        """The errors of ``config`` per key (keys without errors left out), from
        ``validate`` on a new instance, never started, as the runtime validates."""
        result = self.component_class().validate(dict(config))
        return {v.name: list(v.error_messages) for v in result.config_values if v.error_messages}

    def _initialize(self, instance: Connector, props: dict[str, str]) -> None:
        self.context = FakeConnectorContext()
        instance.initialize(self.context)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """The connector's task configs for ``max_tasks``."""
        return self._call(lambda: self._task_configs(self.connector, max_tasks))

    @staticmethod
    def _task_configs(connector: Connector, max_tasks: int) -> list[dict[str, str]]:
        configs = connector.task_configs(max_tasks)
        if len(configs) > max_tasks:
            raise ContractError(f"{len(configs)} task configs for max_tasks={max_tasks}")
        for config in configs:
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in config.items()):
                raise ContractError(f"a task config maps strings to strings: {config!r}")
        return configs

    def stop(self, is_deleted: bool = False) -> None:
        """Calls ``stop(is_deleted)``; does nothing when the connector is not running."""
        self._stop(is_deleted)


# -- transformations and converters ----------------------------------------------------------


class _Plugin(_Scoped):
    """A configured plugin's ``close``, once; nothing may be asked of it after."""

    def __init__(self) -> None:
        self.closed = False

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("closed: nothing comes after close")

    def _close(self, plugin: Transformation[Any] | Predicate[Any]) -> None:
        if not self.closed:
            self.closed = True
            plugin.close()

    def _unchanged(self, record: R, call: Callable[[R], V]) -> V:
        """``call(record)``, checking that it left ``record`` as it was."""
        self._check_open()
        before = copy.deepcopy(record)
        result = call(record)
        if record != before:
            raise ContractError(f"the record given was changed: {before!r} became {record!r}")
        return result

    def _end(self) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError


class PredicateHarness(_Plugin):
    """A predicate configured once with ``config`` (its ``predicates.<alias>.`` keys); each
    :meth:`test` checks that the predicate left the record unchanged."""

    def __init__(
        self, predicate_class: Callable[[], Predicate[Any]], config: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        self.predicate = predicate_class()
        self.predicate.configure(dict(config or {}))

    def test(self, record: ConnectRecord) -> bool:
        """Whether the predicate matches ``record``."""
        return self._unchanged(record, self.predicate.test)

    def close(self) -> None:
        """Closes the predicate, once."""
        self._close(self.predicate)


class TransformationHarness(_Plugin):
    """A transformation configured once with ``config`` (its ``transforms.<alias>.`` keys),
    applied as one stage of the runtime's chain: with a ``predicate``, only to the records
    it matches (with ``negate``, those it does not). Each :meth:`apply` checks that the
    transformation left the record it was given unchanged (it must build a new one)."""

    def __init__(
        self,
        transformation_class: Callable[[], Transformation[Any]],
        config: Mapping[str, Any] | None = None,
        *,
        predicate: PredicateHarness | None = None,
        negate: bool = False,
    ) -> None:
        super().__init__()
        self.transformation = transformation_class()
        self.transformation.configure(dict(config or {}))
        self.predicate = predicate
        self.negate = negate

    def apply(self, record: R) -> R | None:
        """What the stage passes on for ``record``: the transformed record, ``record``
        itself when the predicate says the stage does not apply, or None when dropped."""
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        result: R | None = self._unchanged(record, self.transformation.apply)
        return result

    def apply_all(self, records: Iterable[R]) -> list[R]:
        """The records the stage passes on, in order (the dropped ones left out)."""
        return [out for out in map(self.apply, records) if out is not None]

    def close(self) -> None:
        """Closes the transformation and its predicate, once."""
        self._close(self.transformation)
        if self.predicate is not None:
            self.predicate.close()


def round_trip(
    converter: Converter,
    schema: Schema | None,
    value: Any,
    *,
    topic: str = "topic",
    headers: Headers | None = None,
) -> SchemaAndValue:
    """``value`` (of ``schema``) converted to bytes and back by a configured ``converter``,
    as a source task's record part is produced and a sink task's consumed. Checks that
    ``from_connect_values`` (how the runtime converts a poll's records together) gives the
    same bytes as ``from_connect_data``."""
    data = converter.from_connect_data(topic, schema, value, headers)
    if headers is None:
        together = converter.from_connect_values(topic, schema, [value])
        if together != [data]:
            raise ContractError(
                f"from_connect_values gave {together!r}, from_connect_data {data!r}"
            )
    return converter.to_connect_data(topic, data, headers)


def header_round_trip(
    converter: HeaderConverter,
    schema: Schema | None,
    value: Any,
    *,
    topic: str = "topic",
    key: str = "header",
) -> SchemaAndValue:
    """A header value (of ``schema``) converted to bytes and back by a configured
    ``converter``."""
    data = converter.from_connect_header(topic, key, schema, value)
    return converter.to_connect_header(topic, key, data)
