"""The connector API: lifecycle defaults, stop back-compat, task contexts, records and
headers."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.config import ConfigDef, Range, Type
from airflow_provider_connect.connect.connector import Connector, Task, call_stop
from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.header import Header, Headers
from airflow_provider_connect.connect.sink import (
    ErrantRecordReporter,
    SimpleSinkTaskContext,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connect.source import (
    ConnectorTransactionBoundaries,
    OffsetsOf,
    OffsetStorageReader,
    SimpleSourceTaskContext,
    SourceConnector,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
)
from tests.connectors import as_batch, scripted_polls


class LegacySourceTask(SourceTask):
    """A task written before stop(connector_deleted): plain stop()."""

    def __init__(self) -> None:
        self.stops: list[tuple[Any, ...]] = []

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None: ...

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:  # type: ignore[override]  # a plain stop(), on purpose
        self.stops.append(())


class CleaningSinkTask(SinkTask):
    """A task that drops what it provisioned when its connector is deleted."""

    def __init__(self) -> None:
        self.stops: list[bool] = []
        self.flushed: list[dict[TopicPartition, int]] = []

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None: ...

    def put(self, records: list[SinkRecord]) -> None: ...

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self.flushed.append(dict(current_offsets))

    def stop(self, connector_deleted: bool = False) -> None:
        self.stops.append(connector_deleted)


class KeywordOnlyTask(LegacySourceTask):
    def stop(self, *args: Any, **kwargs: Any) -> None:
        self.stops.append(args)


class DemoConnector(SourceConnector):
    def __init__(self) -> None:
        self.stops: list[bool] = []

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return LegacySourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self, is_deleted: bool = False) -> None:
        self.stops.append(is_deleted)

    def config(self) -> ConfigDef:
        return ConfigDef().define("batch.size", Type.INT, 100, Range.at_least(1))


class LegacyConnector(DemoConnector):
    def stop(self) -> None:  # type: ignore[override]  # a plain stop(), on purpose
        self.stops.append(False)


@pytest.mark.parametrize("deleted", [True, False])
def test_stop_passes_the_deleted_flag_when_the_task_takes_it(deleted: bool) -> None:
    task = CleaningSinkTask()
    call_stop(task, deleted)
    assert task.stops == [deleted]


@pytest.mark.parametrize("deleted", [True, False])
def test_plain_stop_keeps_working(deleted: bool) -> None:
    task = LegacySourceTask()
    call_stop(task, deleted)
    assert task.stops == [()]


def test_stop_with_varargs_receives_the_flag() -> None:
    task = KeywordOnlyTask()
    call_stop(task, True)
    assert task.stops == [(True,)]


def test_connector_stop_flag_and_back_compat() -> None:
    new, legacy = DemoConnector(), LegacyConnector()
    call_stop(new, True)
    call_stop(legacy, True)
    assert new.stops == [True]
    assert legacy.stops == [False]


def test_base_stop_methods_accept_the_flag() -> None:
    class Minimal(SinkTask):
        def version(self) -> str:
            return "1"

        def start(self, props: dict[str, str]) -> None: ...

        def put(self, records: list[SinkRecord]) -> None: ...

    call_stop(Minimal(), True)  # the base implementation takes the flag and does nothing


def test_abstract_methods_must_be_implemented() -> None:
    class NoPoll(SourceTask):
        def version(self) -> str:
            return "1"

        def start(self, props: dict[str, str]) -> None: ...

    with pytest.raises(TypeError, match="poll"):
        NoPoll()  # type: ignore[abstract]  # what the test expects to fail


def test_default_pre_commit_flushes_and_commits_everything() -> None:
    task = CleaningSinkTask()
    offsets = {TopicPartition("t", 0): 10}
    assert task.pre_commit(offsets) == offsets
    assert task.flushed == [offsets]


def test_connector_validate_uses_its_config_def() -> None:
    config = DemoConnector().validate({"batch.size": "0"})
    assert config.error_count == 1
    assert "Value must be at least 1" in config.config_values[0].error_messages[0]


def test_source_connector_defaults() -> None:
    connector = DemoConnector()
    assert connector.exactly_once_support({}) is None
    assert (
        connector.can_define_transaction_boundaries({})
        is ConnectorTransactionBoundaries.UNSUPPORTED
    )
    assert issubclass(SinkConnector, Connector)
    assert SinkConnector.TOPICS_CONFIG == "topics"


def test_initialize_keeps_the_context() -> None:
    task, connector = LegacySourceTask(), DemoConnector()
    sentinel: Any = object()
    task.initialize(sentinel)
    connector.initialize(sentinel)
    assert task.context is sentinel and connector.context is sentinel


def test_offset_storage_reader_offsets_keeps_order() -> None:
    class Stored(OffsetStorageReader):
        def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
            return {"pos": 5} if partition["file"] == "a" else None

    assert Stored().offsets([{"file": "b"}, {"file": "a"}]) == [
        ({"file": "b"}, None),
        ({"file": "a"}, {"pos": 5}),
    ]


def test_simple_source_task_context_gives_what_it_was_given() -> None:
    reader: Any = object()
    transactions: Any = object()
    configs = {"topic": "t"}
    context = SimpleSourceTaskContext(configs, reader)
    assert context.configs() is configs
    assert context.offset_storage_reader() is reader
    assert context.transaction_context() is None
    assert SimpleSourceTaskContext(configs, reader, transactions).transaction_context() is (
        transactions
    )


def test_simple_sink_task_context_holds_requests_for_the_driver() -> None:
    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
    context = SimpleSinkTaskContext({"topics": "t"})
    assert context.configs() == {"topics": "t"}
    assert context.errant_record_reporter() is None
    assert not context.is_closing() and not context.commit_requested

    context.assigned.update({tp0, tp1})  # the driver assigns
    assignment = context.assignment()
    assignment.clear()  # a copy: the task cannot change the assignment
    assert context.assignment() == {tp0, tp1}

    context.pause(tp0, tp1)
    context.resume(tp1)
    context.offset({tp0: 5})
    context.offset({tp1: 7})
    context.timeout(250)
    context.request_commit()
    assert context.paused == {tp0}
    assert context.requested_offsets == {tp0: 5, tp1: 7}
    assert context.timeout_ms == 250 and context.commit_requested

    context.closing = True  # the driver, around a closing pre_commit (KIP-275)
    assert context.is_closing()

    class Reporter(ErrantRecordReporter):
        def report(self, record: SinkRecord, error: Exception) -> Any:
            return None

    reporter = Reporter()
    assert SimpleSinkTaskContext({}, reporter).errant_record_reporter() is reporter
    context.reporter = reporter  # or set once the driver has made it
    assert context.errant_record_reporter() is reporter


def source_record(position: int) -> SourceRecord:
    return SourceRecord(
        {"file": "a"},
        {"pos": position},
        "topic",
        2,
        Schema.STRING_SCHEMA,
        "k",
        Schema.INT32_SCHEMA,
        7,
        1000,
        [("h", "v")],
    )


def test_records_carry_everything_and_compare_by_value() -> None:
    record = source_record(1)
    assert (record.topic, record.kafka_partition, record.key, record.value, record.timestamp) == (
        "topic",
        2,
        "k",
        7,
        1000,
    )
    assert record.headers.last_with_name("h") == Header("h", None, "v")
    assert record == source_record(1)
    assert record != source_record(2)
    sink = SinkRecord("topic", 0, None, None, None, b"x", kafka_offset=41)
    assert sink.kafka_offset == 41 and len(sink.headers) == 0


def test_headers_keep_order_and_duplicates() -> None:
    headers = Headers().add("a", 1).add("b", "x", Schema.STRING_SCHEMA).add("a", 2)
    assert [h.value for h in headers.all_with_name("a")] == [1, 2]
    assert headers.last_with_name("a").value == 2
    assert headers.last_with_name("zz") is None
    copy = headers.copy().remove("a")
    assert [h.key for h in copy] == ["b"] and len(headers) == 3
    with pytest.raises(TypeError):
        headers.add(1, "x")  # type: ignore[arg-type]  # a wrong key type, on purpose


def test_a_record_batch_reads_as_the_records_it_holds() -> None:
    """Each item of a ``SourceRecordBatch`` is the record of its columns' parts (a key when
    keys are given), by index, slice and iteration, equal to the same records in a list, and
    the same object at every read (a task may name it to its TransactionContext)."""
    string = Schema.STRING_SCHEMA
    offsets: list[dict[str, Any] | None] = [{"o": 1}, {"o": 2}, {"o": 3}]
    batch = SourceRecordBatch(
        {"p": 0}, offsets, "t", ["a", "b", "c"], string, ["k1", None, "k3"], string
    )
    records = [
        SourceRecord({"p": 0}, {"o": i}, "t", None, string, k, string, v)
        for i, k, v in [(1, "k1", "a"), (2, None, "b"), (3, "k3", "c")]
    ]
    assert len(batch) == 3 and list(batch) == records and batch == records
    assert batch[1] == records[1] and batch[-1] == records[2] and batch[1:] == records[1:]
    assert batch[1] is batch[1] and next(iter(batch)) is batch[0]  # built once, then kept
    keyless = SourceRecordBatch(None, [None], "t", [b"v"])
    assert keyless[0] == SourceRecord(None, None, "t", value=b"v")
    with pytest.raises(IndexError):
        batch[3]
    with pytest.raises(ValueError, match="one offset"):
        SourceRecordBatch(None, [None], "t", ["a", "b"])
    with pytest.raises(ValueError, match="one key"):
        SourceRecordBatch(None, [None, None], "t", ["a", "b"], keys=["k"])


def test_offsets_of_positions_are_made_when_read() -> None:
    """``OffsetsOf`` makes the offset of a position only when it is read (the runtime reads
    a batch's last one), and a batch over it reads as the same records as over a list."""
    made: list[int] = []

    def offset(end: int) -> dict[str, Any]:
        made.append(end)
        return {"position": end}

    offsets = OffsetsOf([10, 20, 30], offset)
    assert len(offsets) == 3 and made == []
    assert offsets[-1] == {"position": 30} and made == [30]
    assert offsets[:2] == [{"position": 10}, {"position": 20}]
    listed = [{"position": end} for end in (10, 20, 30)]
    lazy = SourceRecordBatch({"f": "a"}, OffsetsOf([10, 20, 30], offset), "t", ["x", "y", "z"])
    assert lazy == SourceRecordBatch({"f": "a"}, listed, "t", ["x", "y", "z"])
    with pytest.raises(ValueError, match="one offset"):
        SourceRecordBatch(None, OffsetsOf([1], offset), "t", ["a", "b"])


def test_the_test_tasks_return_batches_where_their_records_share_everything() -> None:
    """The loop tests run with ``batches=true`` on real batches: ``as_batch`` makes one of a
    poll whose records share a partition, a topic and schemas (even with a value that does
    not match its schema), and leaves a poll of interleaved partitions a list."""
    polls = scripted_polls("t")
    assert isinstance(as_batch(polls[0]), SourceRecordBatch) and as_batch(polls[0]) == polls[0]
    assert as_batch(polls[1]) is polls[1]
