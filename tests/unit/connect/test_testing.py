"""The connector authors' test harness (``connect.testing``) keeps the runtime's guarantees:
``stopped()`` once and last, ``is_closing()`` only while partitions close, offsets resumed on
restart, the deleted flag passed through, errant records collected (the examples of docs/testing-connectors.md run in
test_docs_examples.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from airflow_provider_connect.connect.config import ConfigDef
from airflow_provider_connect.connect.data import Schema, SchemaAndValue
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connect.sink import (
    SimpleSinkTaskContext,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connect.source import (
    RecordMetadata,
    SimpleSourceTaskContext,
    SourceRecord,
    SourceTask,
)
from airflow_provider_connect.connect.storage import SimpleHeaderConverter, StringConverter
from airflow_provider_connect.connect.testing import (
    ConnectorHarness,
    ContractError,
    PredicateHarness,
    SinkTaskHarness,
    SourceTaskHarness,
    TransformationHarness,
    header_round_trip,
    round_trip,
    sink_records,
)
from airflow_provider_connect.connect.transforms import Predicate, Transformation
from tests.unit.connect.test_connector_api import DemoConnector, LegacyConnector

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)


class CountingTask(SourceTask):
    """Counts from its committed offset, two records a poll, up to ``limit``; notes every
    call it gets in ``calls``; ``fail`` names a call that raises."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.stops: list[bool] = []

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.calls.append("start")
        self.fail = props.get("fail")
        self.limit = int(props.get("limit", "4"))
        offset = self.context.offset_storage_reader().offset({"counter": "c"})
        self.next = 0 if offset is None else offset["next"]

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if self.fail == name:
            raise RuntimeError(f"{name} failed on purpose")

    def poll(self) -> list[SourceRecord] | None:
        self._call("poll")
        batch = range(self.next, min(self.next + 2, self.limit))
        self.next += len(batch)
        return [SourceRecord({"counter": "c"}, {"next": n + 1}, "t", value=n) for n in batch]

    def commit(self) -> None:
        self._call("commit")

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self._call("commit_record")

    def stop(self, connector_deleted: bool = False) -> None:
        self.stops.append(connector_deleted)
        self._call("stop")

    def stopped(self) -> None:
        self.calls.append("stopped")


class PlainStopSourceTask(CountingTask):
    """A task written before KIP-901: ``stop(self)``."""

    def stop(self) -> None:  # type: ignore[override]  # a plain stop(), on purpose
        self.stops.append(False)
        self.calls.append("plain stop")


def test_stopped_is_called_once_and_last() -> None:
    with SourceTaskHarness(CountingTask) as harness:
        harness.start({})
        task = harness.task
        assert [r.value for r in harness.poll()] == [0, 1, 2, 3]
        harness.commit()
        harness.stop()
        harness.stop()  # a second stop does nothing
    assert task.calls.count("stopped") == 1 and task.calls[-1] == "stopped"
    assert task.calls[-3:] == ["stop", "commit", "stopped"]  # the final commit comes before


@pytest.mark.parametrize("fail", ["poll", "commit_record", "commit", "stop"])
def test_stopped_is_called_once_and_last_when_a_call_fails(fail: str) -> None:
    harness = SourceTaskHarness(CountingTask)
    harness.start({"fail": fail})
    task = harness.task
    with pytest.raises(RuntimeError, match=f"{fail} failed on purpose"):
        harness.poll()
        harness.commit()
        harness.stop()
    assert task.calls.count("stopped") == 1 and task.calls[-1] == "stopped"
    assert task.stops == [False] and not harness.running
    harness.stop()  # stopped already
    assert task.calls.count("stopped") == 1


def test_offsets_are_committed_and_resumed_on_restart() -> None:
    harness = SourceTaskHarness(CountingTask, [({"counter": "c"}, {"next": 1})])
    harness.start({"limit": "6"})
    assert [r.value for r in harness.poll(polls=1)] == [1, 2]
    assert harness.offsets.offset({"counter": "c"}) == {"next": 1}  # not committed yet
    harness.commit()
    assert harness.offsets.offset({"counter": "c"}) == {"next": 3}
    assert [r.value for r in harness.poll(polls=1)] == [3, 4]
    harness.restart()  # stopping commits what was returned
    assert [r.value for r in harness.poll()] == [5]
    harness.stop()
    assert harness.offsets.items() == [({"counter": "c"}, {"next": 6})]
    again = SourceTaskHarness(CountingTask, harness.offsets)
    assert again.run({"limit": "7"}) and again.offsets.offset({"counter": "c"}) == {"next": 7}


def test_commit_record_gets_where_each_record_went() -> None:
    harness = SourceTaskHarness(CountingTask)
    harness.run({"limit": "3"})
    metadata = [m for _, m in harness.acknowledged]
    assert [(m.topic, m.partition, m.offset) for m in metadata] == [("t", 0, n) for n in range(3)]
    assert harness.task.calls.count("commit_record") == 3


def test_poll_conditions() -> None:
    harness = SourceTaskHarness(CountingTask)
    harness.start({"limit": "100"})
    assert len(harness.poll(records=5)) == 6  # whole polls: two records each
    assert len(harness.poll(polls=2)) == 4
    assert len(harness.poll(records=1, polls=3)) == 2
    with pytest.raises(TimeoutError):
        harness.poll(records=1000, timeout=0.01)
    harness.stop()


def test_a_retriable_poll_is_polled_again() -> None:
    class Flaky(CountingTask):
        def poll(self) -> list[SourceRecord] | None:
            if not self.calls.count("flaky"):
                self.calls.append("flaky")
                raise RetriableException("briefly unavailable")
            return super().poll()

    harness = SourceTaskHarness(Flaky)
    assert [r.value for r in harness.run({}, records=2)] == [0, 1]
    assert harness.task.calls[-1] == "stopped"


@pytest.mark.parametrize("deleted", [False, True])
def test_the_deleted_flag_reaches_tasks_and_connectors(deleted: bool) -> None:
    source = SourceTaskHarness(CountingTask)
    source.run({}, connector_deleted=deleted)
    assert source.task.stops == [deleted]
    plain = SourceTaskHarness(PlainStopSourceTask)
    plain.run({}, connector_deleted=deleted)
    assert plain.task.calls[-3:] == ["plain stop", "commit", "stopped"]
    sink = SinkTaskHarness(RecordingSink)
    sink.start({}, [TP0])
    sink.stop(connector_deleted=deleted)
    assert sink.task.calls[-1] == ("stop", deleted)
    connector = ConnectorHarness(CountingConnector)
    connector.start({})
    connector.stop(is_deleted=deleted)
    connector.stop(is_deleted=not deleted)  # once per started instance
    assert connector.connector.stops == [deleted]  # type: ignore[attr-defined]  # DemoConnector
    legacy = ConnectorHarness(LegacyConnector)
    legacy.start({})
    legacy.stop(is_deleted=deleted)
    assert legacy.connector.stops == [False]  # type: ignore[attr-defined]  # DemoConnector


class RecordingSink(SinkTask):
    """Notes each call with what ``context.is_closing()`` said during it; ``poison`` values
    are reported as errant, ``retry`` values raise RetriableException once."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.written: list[Any] = []

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.retried = False

    def open(self, partitions: list[TopicPartition]) -> None:
        self.calls.append(("open", self.context.is_closing()))

    def put(self, records: list[SinkRecord]) -> None:
        self.calls.append(("put", self.context.is_closing()))
        if any(r.value == "retry" for r in records) and not self.retried:
            self.retried = True
            raise RetriableException("briefly unavailable")
        for record in records:
            if record.value == "poison":
                reporter = self.context.errant_record_reporter()
                assert reporter is not None
                reporter.report(record, ValueError("cannot write poison"))
            else:
                self.written.append(record.value)

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self.calls.append(("flush", self.context.is_closing()))

    def close(self, partitions: list[TopicPartition]) -> None:
        self.calls.append(("close", self.context.is_closing()))

    def stop(self, connector_deleted: bool = False) -> None:
        self.calls.append(("stop", connector_deleted))


def test_is_closing_only_while_partitions_close() -> None:
    harness = SinkTaskHarness(RecordingSink)
    harness.start({}, [TP0, TP1])
    harness.put(sink_records("t", 0, ["a", "b"]))
    assert harness.commit() == {TP0: 2}
    harness.put(sink_records("t", 1, ["c"]))
    harness.close(TP1)
    assert harness.committed == {TP0: 2, TP1: 1}
    harness.stop()
    assert harness.task.calls == [
        ("open", False),
        ("put", False),
        ("flush", False),  # a periodic commit
        ("put", False),
        ("flush", True),  # TP1 closes
        ("close", False),
        ("flush", True),  # TP0 closes as the task stops
        ("close", False),
        ("stop", False),
    ]


def test_errant_records_are_collected() -> None:
    harness = SinkTaskHarness(RecordingSink, errors_tolerance="all")
    harness.start({}, [TP0])
    harness.put(sink_records("t", 0, ["a", "poison", "b"]))
    assert harness.task.written == ["a", "b"]
    ((record, error),) = harness.reporter.reported
    assert (record.value, record.kafka_offset, str(error)) == ("poison", 1, "cannot write poison")
    assert harness.commit() == {TP0: 3}  # the reported record is done with
    harness.stop()


def test_an_errant_record_fails_the_task_without_tolerance() -> None:
    harness = SinkTaskHarness(RecordingSink)
    harness.start({}, [TP0])
    with pytest.raises(ConnectException, match="Tolerance exceeded"):
        harness.put(sink_records("t", 0, ["poison"]))
    assert [r.value for r, _ in harness.reporter.reported] == ["poison"]
    assert not harness.running and harness.task.calls[-1] == ("stop", False)
    assert harness.committed == {}


def test_the_harnesses_give_the_runtimes_task_contexts() -> None:
    """One implementation: the contexts a task gets under test are those its runtime loop
    gives it."""
    from airflow_provider_connect.runtime.executor import sink_task, source_task

    assert sink_task.SimpleSinkTaskContext is SimpleSinkTaskContext
    assert source_task.SimpleSourceTaskContext is SimpleSourceTaskContext
    with SinkTaskHarness(RecordingSink) as sink:
        sink.start({"topics": "t"}, [TP0])
        assert type(sink.context) is SimpleSinkTaskContext
        assert sink.context.configs() == {"topics": "t"}
        assert sink.context.errant_record_reporter() is sink.reporter
    with SourceTaskHarness(CountingTask) as source:
        source.start({})
        assert type(source.context) is SimpleSourceTaskContext
        assert source.context.offset_storage_reader() is source.offsets


def test_sink_requests_apply_after_put_and_offsets_carry_over() -> None:
    class Seeking(RecordingSink):
        def open(self, partitions: list[TopicPartition]) -> None:
            self.context.offset({tp: 10 for tp in partitions})  # offsets kept with the data

        def put(self, records: list[SinkRecord]) -> None:
            super().put(records)
            if any(r.value == "pause" for r in records):
                self.context.pause(TP0)
            self.context.request_commit()

    harness = SinkTaskHarness(Seeking)
    harness.start({}, [TP0])
    assert harness.position(TP0) == 10
    with pytest.raises(RetriableException):
        harness.put(sink_records("t", 0, ["retry"], offset=10))
    assert harness.position(TP0) == 10 and harness.committed == {}
    harness.put(sink_records("t", 0, ["retry", "pause"], offset=10))
    assert harness.committed == {TP0: 12}  # request_commit ran pre_commit
    assert harness.context.paused == {TP0}
    with pytest.raises(RuntimeError, match="paused"):
        harness.put(sink_records("t", 0, ["more"], offset=12))
    with pytest.raises(RuntimeError, match="not assigned"):
        harness.put(sink_records("t", 1, ["x"]))
    harness.stop()
    resumed = SinkTaskHarness(RecordingSink, committed=harness.committed)
    resumed.start({}, [TP0])
    assert resumed.position(TP0) == 12
    resumed.stop()


class CountingConnector(DemoConnector):
    """Asks for a reconfiguration as it starts; gives ``tasks`` task configs (of ints);
    with ``fail``, reports an error first."""

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self.context.request_task_reconfiguration()

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        if self.props.get("fail"):
            self.context.raise_error(RuntimeError("the source is gone"))
        return [{"task": i} for i in range(int(self.props.get("tasks", max_tasks)))]


def test_connector_harness() -> None:
    harness = ConnectorHarness(CountingConnector)
    assert harness.validate({"batch.size": "0"}) == {
        "batch.size": ["Invalid value 0 for configuration batch.size: Value must be at least 1"]
    }
    assert harness.validate({"batch.size": "5"}) == {}
    harness.start({"tasks": "3", "fail": "yes"})
    with pytest.raises(ContractError, match="strings"):
        harness.task_configs(3)
    assert not harness.running  # the connector failed: it was stopped
    assert harness.context.reconfiguration_requests == 1
    assert [str(e) for e in harness.context.errors] == ["the source is gone"]
    harness.start({"tasks": "3"})
    with pytest.raises(ContractError, match="3 task configs for max_tasks=2"):
        harness.task_configs(2)


def test_a_connector_whose_start_fails_is_stopped_as_the_herder_stops_it() -> None:
    stops: list[bool] = []

    class FailingStart(DemoConnector):
        def start(self, props: dict[str, str]) -> None:
            raise RuntimeError("no source system")

        def stop(self, is_deleted: bool = False) -> None:
            stops.append(is_deleted)

    harness = ConnectorHarness(FailingStart)
    with pytest.raises(RuntimeError, match="no source system"):
        harness.start({})
    assert stops == [False] and not harness.running


class Upper(Transformation[Any]):
    def configure(self, configs: Any) -> None:
        self.field = configs["field"]
        self.closes = 0

    def apply(self, record: Any) -> Any:
        if record.value is None:
            return None
        value = {**record.value, self.field: record.value[self.field].upper()}
        return record.new_record(
            record.topic, record.kafka_partition, None, record.key, None, value, record.timestamp
        )

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        self.closes += 1


class InPlace(Upper):
    def apply(self, record: Any) -> Any:
        record.value[self.field] = record.value[self.field].upper()
        return record


class TopicIs(Predicate[Any]):
    def configure(self, configs: Any) -> None:
        self.topic = configs["topic"]

    def test(self, record: Any) -> bool:
        return bool(record.topic == self.topic)

    def config(self) -> ConfigDef:
        return ConfigDef()


def test_transformation_harness() -> None:
    records = [SinkRecord(t, 0, None, None, None, {"f": "x"}, 0) for t in ("a", "b")]
    with TransformationHarness(Upper, {"field": "f"}) as upper:
        assert [r.value for r in upper.apply_all(records)] == [{"f": "X"}, {"f": "X"}]
        assert upper.apply(SinkRecord("a", 0, None, None, None, None, 0)) is None  # dropped
    assert upper.transformation.closes == 1  # type: ignore[attr-defined]  # Upper
    upper.close()
    assert upper.transformation.closes == 1  # type: ignore[attr-defined]  # Upper
    with pytest.raises(RuntimeError, match="closed"):
        upper.apply(records[0])
    only_a = PredicateHarness(TopicIs, {"topic": "a"})
    staged = TransformationHarness(Upper, {"field": "f"}, predicate=only_a, negate=True)
    assert [r.value for r in staged.apply_all(records)] == [{"f": "x"}, {"f": "X"}]
    assert staged.apply(records[0]) is records[0]
    with pytest.raises(ContractError, match="changed"):
        TransformationHarness(InPlace, {"field": "f"}).apply(records[0])


def test_converter_round_trips() -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    assert round_trip(converter, Schema.INT32_SCHEMA, 42) == SchemaAndValue(Schema.INT32_SCHEMA, 42)
    assert round_trip(StringConverter(), None, "é").value == "é"
    assert header_round_trip(SimpleHeaderConverter(), None, 42) == SchemaAndValue(
        Schema.INT8_SCHEMA, 42
    )

    class Disagreeing(StringConverter):
        def from_connect_values(self, topic: str, schema: Any, values: list[Any]) -> Any:
            return [b"other" for _ in values]

    with pytest.raises(ContractError, match="from_connect_values"):
        round_trip(Disagreeing(), None, "x")


def test_the_harness_loads_nothing_of_the_project_outside_the_connector_api() -> None:
    probe = (
        "import json, sys; import airflow_provider_connect.connect.testing; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    project = [m for m in loaded if m.startswith("airflow_provider_connect.")]
    assert project and all(m.startswith("airflow_provider_connect.connect") for m in project)
    forbidden = ("airflow", "pyspark", "confluent_kafka", "kafka", "sqlalchemy")
    assert [m for m in loaded if m.split(".")[0] in forbidden] == []
