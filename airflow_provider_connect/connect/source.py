"""Source connectors and tasks, as ``org.apache.kafka.connect.source``.

A source task pulls records from an external system; the runtime converts them and
produces them to Kafka, tracks the source offsets they carry and commits those offsets
once the records they cover are durably in Kafka (at-least-once), or in the same Kafka
transaction as the records (exactly-once, KIP-618).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple, overload

from airflow_provider_connect.connect.connector import Connector, ConnectRecord, Task
from airflow_provider_connect.connect.data.schema import Schema
from airflow_provider_connect.connect.header import Header, Headers
from airflow_provider_connect.connect.metrics import (
    PluginMetrics,
    own_plugin_metrics,
)
from airflow_provider_connect.connect.signals import (
    NoSignals,
    SignalChannels,
)

_new_source_record = object.__new__


class SourceRecord(ConnectRecord):
    """A record from a source system, with where it came from.

    ``source_partition`` names the input stream the record belongs to (a table, a file) and
    ``source_offset`` the position after it; both are JSON-able dicts. The runtime stores
    the latest offset per partition and hands it back through the task's
    :class:`OffsetStorageReader` after a restart.
    """

    __slots__ = ("source_offset", "source_partition")

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        topic: str,
        partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | Iterable[Header | tuple[str, Any]] | None = None,
    ) -> None:
        # ConnectRecord's assignments, made here rather than through a call to its
        # constructor: a source task builds every record through this one, and the call
        # was a third of the construction's cost.
        self.source_partition, self.source_offset = source_partition, source_offset
        self.topic, self.kafka_partition, self.timestamp = topic, partition, timestamp
        self.key_schema, self.key = key_schema, key
        self.value_schema, self.value = value_schema, value
        self._headers = (
            headers if headers is None or isinstance(headers, Headers) else Headers(headers)
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
    ) -> SourceRecord:
        """As :meth:`ConnectRecord.new_record`, keeping the source partition and offset."""
        record = _new_source_record(SourceRecord)  # the constructor's checks, skipped: a copy
        record.topic = topic
        record.kafka_partition = kafka_partition
        record.key_schema = key_schema
        record.key = key
        record.value_schema = value_schema
        record.value = value
        record.timestamp = timestamp
        record._headers = (  # no call for the usual copy, of a record without headers
            None if headers is None and not self._headers else self._headers_for_copy(headers)
        )
        record.source_partition = self.source_partition
        record.source_offset = self.source_offset
        return record

    def _core(self) -> tuple[Any, ...]:
        return (*super()._core(), self.source_partition, self.source_offset)


class OffsetsOf(Sequence["dict[str, Any] | None"]):
    """A batch's offsets made from its rows' positions when read: item ``i`` is
    ``offset(positions[i])``, a new dict at each read. What a :class:`SourceRecordBatch`
    takes as its ``source_offsets`` when each offset is one value of its row: the runtime
    reads only the last offset of a batch it produces, so the others are never made unless
    the batch's records are built (then each once)."""

    __slots__ = ("_offset", "_positions")

    def __init__(
        self, positions: Sequence[Any], offset: Callable[[Any], dict[str, Any] | None]
    ) -> None:
        self._positions, self._offset = positions, offset

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any] | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any] | None]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[Any] | None:
        if isinstance(index, slice):
            return [self._offset(p) for p in self._positions[index]]
        return self._offset(self._positions[index])

    def __repr__(self) -> str:
        return f"OffsetsOf({len(self._positions)} positions)"


class SourceRecordBatch(Sequence[SourceRecord]):
    """Records of one source partition, one topic and one key and value schema, held in
    columns: what a task's ``poll`` may return instead of a list when its records share
    those (a file's lines, a table's rows). Its items are the :class:`SourceRecord` of those
    parts, all built when one is first read, and the same objects at every read after (so a
    task may name them to its ``TransactionContext``).

    The runtime produces a batch without building its records: its values (and keys) go to
    the converters as they are, and only the last offset is kept for the commit. A batch is
    read record by record, as a list would be, where the records themselves are needed:
    by transformations, by a task that takes ``commit_record``, and by the error handler
    when a conversion fails. ``source_offsets`` holds one offset per value, as each record
    would carry it (a list, or an :class:`OffsetsOf` that makes each when read); ``keys``
    is None when every key is null.
    """

    __slots__ = (
        "_records",
        "key_schema",
        "keys",
        "source_offsets",
        "source_partition",
        "topic",
        "value_schema",
        "values",
    )

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offsets: Sequence[dict[str, Any] | None],
        topic: str,
        values: list[Any],
        value_schema: Schema | None = None,
        keys: list[Any] | None = None,
        key_schema: Schema | None = None,
    ) -> None:
        if len(source_offsets) != len(values) or (keys is not None and len(keys) != len(values)):
            raise ValueError("a batch needs one offset (and one key, when keys are given) a value")
        self.source_partition, self.source_offsets = source_partition, source_offsets
        self.topic, self.values, self.value_schema = topic, values, value_schema
        self.keys, self.key_schema = keys, key_schema
        self._records: list[SourceRecord] | None = None

    @staticmethod
    def poll_of(batches: list[SourceRecordBatch]) -> list[SourceRecord] | SourceRecordBatch:
        """What a poll returns for ``batches`` (of several partitions or topics): the batch
        when there is one, else the records of all of them in order (none: an empty list)."""
        if len(batches) == 1:
            return batches[0]
        return [record for batch in batches for record in batch]

    def __len__(self) -> int:
        return len(self.values)

    @overload
    def __getitem__(self, index: int) -> SourceRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[SourceRecord]: ...

    def __getitem__(self, index: int | slice) -> SourceRecord | list[SourceRecord]:
        return self._built()[index]

    def __iter__(self) -> Iterator[SourceRecord]:
        return iter(self._built())

    def _built(self) -> list[SourceRecord]:
        """The records, built at the first read."""
        if self._records is None:
            self._records = [self._record(i) for i in range(len(self.values))]
        return self._records

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # unhashable: compared by its records

    def _record(self, i: int) -> SourceRecord:
        """The ``i``-th record, made from the columns."""
        record = _new_source_record(SourceRecord)  # the constructor's checks, skipped
        record.source_partition, record.source_offset = (
            self.source_partition,
            self.source_offsets[i],
        )
        record.topic, record.kafka_partition, record.timestamp = self.topic, None, None
        record.key_schema = self.key_schema
        record.key = None if self.keys is None else self.keys[i]
        record.value_schema, record.value = self.value_schema, self.values[i]
        record._headers = None
        return record

    def __repr__(self) -> str:
        return f"SourceRecordBatch(topic={self.topic!r}, records={len(self.values)})"


class RecordMetadata(NamedTuple):
    """Where Kafka stored a produced record."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None


class OffsetStorageReader(ABC):
    """Reads the committed offsets of source partitions. Implemented by the runtime."""

    @abstractmethod
    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        """The last committed offset of ``partition``, or None if there is none."""

    def offsets(
        self, partitions: Iterable[dict[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """``(partition, offset)`` for each partition, in the order given (dicts are not
        hashable, so this is a list of pairs rather than Java's map)."""
        return [(p, self.offset(p)) for p in partitions]


class TransactionContext(ABC):
    """Lets a task define transaction boundaries when ``transaction.boundary=connector``
    (KIP-618). Implemented by the runtime; obtained from
    :meth:`SourceTaskContext.transaction_context`.

    Requests take effect after the runtime has dispatched the records returned by the
    current ``poll``; with a record, right after that record.
    """

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commits the transaction after the current batch, or after ``record``."""

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Aborts the transaction after the current batch, or after ``record``: its records
        and offsets are discarded, and the records will be polled again only if the task
        re-reads them from the committed offsets."""


class SourceTaskContext(ABC):
    """What a source task can ask of the runtime. Implemented by
    :class:`SimpleSourceTaskContext`, the one the runtime and the test harness give."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's configuration."""

    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reads committed source offsets, to resume where the last run stopped."""

    def transaction_context(self) -> TransactionContext | None:
        """The transaction context when the connector defines transaction boundaries
        (exactly-once with ``transaction.boundary=connector``), else None."""
        return None

    def plugin_metrics(self) -> PluginMetrics:
        """The task's metrics (KIP-877), tagged ``connector`` and ``task``; the same object at
        every call, usable from any thread from ``initialize`` until ``stopped`` returns.
        The runtime samples them at every heartbeat and once more when the run ends, then
        removes them. A context made elsewhere (a test's) answers an untagged
        :class:`~airflow_provider_connect.connect.metrics.SimplePluginMetrics` of its own."""
        return own_plugin_metrics(self)


class SimpleSourceTaskContext(SourceTaskContext):
    """The source task context the runtime gives a task, and the test harness too: the
    task's configs, the offset reader the driver of the task gives (the runtime's reads
    the metadata store or the offsets topic), when the connector defines transaction
    boundaries, a transaction context, and the task's plugin metrics (untagged ones of its
    own when none are given)."""

    def __init__(
        self,
        configs: dict[str, str],
        reader: OffsetStorageReader,
        transactions: TransactionContext | None = None,
        metrics: PluginMetrics | None = None,
    ) -> None:
        self._configs = configs
        self._reader = reader
        self._transactions = transactions
        self._metrics = metrics

    def configs(self) -> dict[str, str]:
        return self._configs

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    def transaction_context(self) -> TransactionContext | None:
        return self._transactions

    def plugin_metrics(self) -> PluginMetrics:
        return own_plugin_metrics(self) if self._metrics is None else self._metrics


class SourceTask(Task):
    """Pulls records from a source system.

    Lifecycle guarantees (KIP-419 states):

    * ``initialize`` exactly once, then ``start`` exactly once, on the task's thread.
    * ``poll`` is called repeatedly on the task's thread, never concurrently with itself.
    * ``commit_record`` is called at most once per record ``poll`` returned, possibly on
      another thread and concurrently with ``poll``: see :meth:`commit_record`.
    * ``commit`` is called after source offsets were committed, possibly on another thread.
    * ``stop`` may be called more than once and concurrently with ``poll``: it should make a
      blocking ``poll`` return soon. ``poll``, ``commit`` and ``commit_record`` may still be
      called after ``stop``.
    * :meth:`stopped` is called exactly once, last, after every ``poll``, ``commit`` and
      ``commit_record`` has returned and no more will come: release resources there.
    """

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        """Called once, before ``start``; keeps the context as ``self.context``."""
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        """New records, or None/empty when there are none now: a list, or a
        :class:`SourceRecordBatch` when they share a partition, a topic and schemas (the
        cheaper form to produce). May block briefly, but
        should return when ``stop`` is called. Raise
        :class:`~airflow_provider_connect.connect.errors.RetriableException` for a
        transient failure."""

    def commit(self) -> None:
        """Called after the runtime committed the offsets of what ``poll`` returned, for
        systems that acknowledge reads. Optional."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Called for a record ``poll`` returned (``record`` as it was polled, before any
        transformation), at most once per record, as Kafka Connect's
        ``SourceTask.commitRecord``:

        * with ``metadata`` (where it went) once Kafka acknowledged it; on an exactly-once
          worker, once its offset committed: after the transaction that holds it committed,
          or, for a transaction the task aborted through its ``TransactionContext``, after
          that transaction's offsets were committed (its records are dropped for good);
        * with ``metadata`` None for a record that was not written and whose offset commits
          with the others (on an exactly-once worker, once it has): dropped by a
          transformation (such as ``Filter``), or skipped under ``errors.tolerance=all``
          because its transformation or conversion failed, or (not on an exactly-once
          worker, whose transaction fails with it) because Kafka refused or failed to take
          it (KIP-779).

        A record whose failure fails the task gets no call, nor does one whose offset is
        never committed (a transaction open when the run failed or was stopped while
        retrying: the next run polls it again). Calls come from the producer's
        delivery thread or the task's own, possibly concurrently with ``poll``, never after
        :meth:`stopped`. Optional: the runtime commits the offsets itself; this is for
        systems that acknowledge each record."""

    def stopped(self) -> None:
        """The guaranteed last call (KIP-419): every ``poll``, ``commit`` and
        ``commit_record`` has returned and no more will come. Release resources here."""


class ExactlyOnceSupport(Enum):
    """Whether a source connector can run with exactly-once delivery (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(Enum):
    """Whether a source connector can define its own transaction boundaries (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class SourceConnector(Connector):
    """A connector whose tasks are :class:`SourceTask` subclasses."""

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        """Whether this connector, with this configuration, can run exactly-once.

        Asked before the connector starts when ``exactly.once.support=required``; None means
        unknown, and such a connector is refused where exactly-once is required.
        """
        return None

    def can_define_transaction_boundaries(
        self, connector_config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        """Whether this connector, with this configuration, can define transaction boundaries
        (``transaction.boundary=connector``); asked before it starts."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def signal_channels(self, config: Mapping[str, str]) -> SignalChannels:
        """The channels through which a running connector with ``config`` reads signals
        (Debezium's ``execute-snapshot``, ``stop-snapshot``, ...), and how each is reached;
        called on an instance that is neither initialized nor started. Raises
        :class:`~airflow_provider_connect.connect.signals.NoSignals` (the default) when the
        connector, so configured, reads no signals."""
        raise NoSignals("the connector reads no signals")
