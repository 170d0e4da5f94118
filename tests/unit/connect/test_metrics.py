"""Plugin metrics (KIP-877): the registry plugins get, its sensors and stats, how the runtime
hands it to tasks, converters, transformations, predicates and connectors, and how ``/metrics``
exports what they register."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from airflow_provider_connect.connect.config import ConfigDef
from airflow_provider_connect.connect.metrics import (
    Avg,
    CumulativeCount,
    CumulativeSum,
    Max,
    MetricName,
    Monitorable,
    PluginMetrics,
    Rate,
    SimplePluginMetrics,
)
from airflow_provider_connect.connect.sink import SimpleSinkTaskContext
from airflow_provider_connect.connect.source import SimpleSourceTaskContext, SourceRecord
from airflow_provider_connect.connect.testing import FakeConnectorContext, FakeOffsetReader
from airflow_provider_connect.connect.transforms import Predicate
from airflow_provider_connect.runtime.driver.connector_context import HerderConnectorContext
from airflow_provider_connect.runtime.executor.converters import task_converters
from airflow_provider_connect.runtime.executor.task_metrics import MAX_PLUGIN_METRICS, TaskMetrics
from airflow_provider_connect.runtime.executor.transformations import transformation_chain
from airflow_provider_connect.runtime.rest.metrics import AppInfo, ConnectCollector
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import MetadataStore, RunReport, State
from tests.connectors import CountingConverter, CountingTransformation


class Clock:
    """A clock the test moves (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def values_by_name(metrics: SimplePluginMetrics) -> dict[str, float]:
    return {name.name: value for name, value in metrics.values().items()}


def connector_values(contexts: list[HerderConnectorContext]) -> dict[MetricName, float]:
    """What the herder answers ``/metrics`` for connector instances of these contexts."""
    return {name: value for context in contexts for name, value in context.metrics.values().items()}


# -- names -----------------------------------------------------------------------------------
def test_a_name_is_in_the_plugins_group_with_the_plugins_tags_first() -> None:
    metrics = SimplePluginMetrics({"connector": "c", "task": "0"})

    name = metrics.metric_name("seen", "Records seen.", {"table": "orders"})

    assert (name.name, name.group, name.description) == ("seen", "plugins", "Records seen.")
    assert list(name.tags.items()) == [("connector", "c"), ("task", "0"), ("table", "orders")]
    assert metrics.metric_name("seen", "Other words.", {"table": "orders"}) == name  # as Kafka's
    assert len({name, metrics.metric_name("seen", "")}) == 2
    with pytest.raises(ValueError, match="Cannot use task as a tag name"):
        metrics.metric_name("seen", "", {"task": "1"})


def test_a_name_goes_through_its_text_form_whole_and_other_keys_are_no_names() -> None:
    name = MetricName("seen", "plugins", "Records seen.", {"connector": "c", "a b": 'x"y'})

    back = MetricName.decode(name.encode())

    assert back == name and back is not None and back.description == "Records seen."
    assert MetricName.decode("source_record_poll_total") is None
    assert MetricName.decode("[not json") is None


# -- metrics ---------------------------------------------------------------------------------
class Half:
    def measure(self, now: float) -> float:
        return now / 2


def test_gauges_and_measurables_are_read_when_sampled() -> None:
    clock = Clock()
    metrics = SimplePluginMetrics(clock=clock)
    counter = [0]
    metrics.add_metric(metrics.metric_name("count", ""), lambda: counter[0])
    metrics.add_metric(metrics.metric_name("half", ""), Half())

    counter[0] = 3
    assert values_by_name(metrics) == {"count": 3.0, "half": 500.0}
    with pytest.raises(ValueError, match="already exists"):
        metrics.add_metric(metrics.metric_name("count", ""), lambda: 0)

    metrics.remove_metric(metrics.metric_name("count", ""))
    assert values_by_name(metrics) == {"half": 500.0}
    with pytest.raises(ValueError, match="Unknown metric"):
        metrics.remove_metric(metrics.metric_name("count", ""))
    with pytest.raises(TypeError, match="callable or a Measurable"):
        metrics.add_metric(metrics.metric_name("plain", ""), 3)  # type: ignore[arg-type]
    assert values_by_name(metrics) == {"half": 500.0}  # nothing added


def test_a_read_that_fails_or_gives_no_number_leaves_its_metric_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = SimplePluginMetrics()
    metrics.add_metric(metrics.metric_name("broken", ""), lambda: 1 / 0)
    metrics.add_metric(metrics.metric_name("nan", ""), lambda: math.nan)
    metrics.add_metric(metrics.metric_name("fine", ""), lambda: 1)

    with caplog.at_level(logging.WARNING):
        assert values_by_name(metrics) == {"fine": 1.0}
        assert values_by_name(metrics) == {"fine": 1.0}

    assert [r.getMessage() for r in caplog.records] == [
        f"reading the plugin metric {metrics.metric_name('broken', '')} failed"
    ]  # once


def test_sensors_record_into_their_stats_over_kafkas_windows() -> None:
    clock = Clock()
    metrics = SimplePluginMetrics(clock=clock)
    sensor = metrics.add_sensor("latency")
    for stat in (CumulativeCount(), CumulativeSum(), Avg(), Max(), Rate()):
        sensor.add(metrics.metric_name(type(stat).__name__, ""), stat)
    assert values_by_name(metrics) == {
        "CumulativeCount": 0.0,
        "CumulativeSum": 0.0,
        "Rate": 0.0,
    }  # an average or maximum of nothing is no number

    for value in (10, 20, 30):
        sensor.record(value)
    clock.now += 10
    assert values_by_name(metrics) == {
        "CumulativeCount": 3.0,
        "CumulativeSum": 60.0,
        "Avg": 20.0,
        "Max": 30.0,
        "Rate": 60 / 40,  # 10 s elapsed, plus one whole window as Kafka counts it
    }

    clock.now += 35  # a second window begins with the next record
    sensor.record(1)
    assert values_by_name(metrics)["Avg"] == 61 / 4
    clock.now += 30  # the first window expired: only the second one counts
    values = values_by_name(metrics)
    assert (values["CumulativeCount"], values["Avg"], values["Max"]) == (4.0, 1.0, 1.0)
    assert values["Rate"] == 1 / 30  # one value in the 30 s since the second window began

    sensor.record()  # one event
    assert values_by_name(metrics)["CumulativeSum"] == 62.0


def test_a_sensor_name_is_the_plugins_own_and_goes_with_its_metrics() -> None:
    first, second = SimplePluginMetrics({"task": "0"}), SimplePluginMetrics({"task": "1"})
    sensor = first.add_sensor("polled")
    second.add_sensor("polled")  # another plugin may use the name
    sensor.add(first.metric_name("total", ""), CumulativeCount())
    with pytest.raises(ValueError, match="Sensor polled already exists"):
        first.add_sensor("polled")
    with pytest.raises(ValueError, match="already exists"):
        sensor.add(first.metric_name("total", ""), CumulativeSum())
    with pytest.raises(ValueError, match="Unknown metric"):  # a sensor's metric goes with it
        first.remove_metric(first.metric_name("total", ""))

    first.remove_sensor("polled")

    assert first.values() == {}
    with pytest.raises(ValueError, match="Unknown sensor"):
        first.remove_sensor("polled")


def test_closed_metrics_are_gone_and_take_nothing_more() -> None:
    metrics = SimplePluginMetrics()
    metrics.add_metric(metrics.metric_name("count", ""), lambda: 1)
    metrics.add_sensor("s").add(metrics.metric_name("total", ""), CumulativeCount())

    metrics.close()

    assert metrics.values() == {}
    for call in (
        lambda: metrics.metric_name("count", ""),
        lambda: metrics.add_metric(MetricName("x", "plugins"), lambda: 1),
        lambda: metrics.add_sensor("t"),
        lambda: metrics.remove_sensor("s"),
    ):
        with pytest.raises(RuntimeError, match="closed"):
            call()


# -- contexts --------------------------------------------------------------------------------
def test_contexts_answer_the_metrics_they_were_given_else_their_own() -> None:
    given = SimplePluginMetrics({"connector": "c", "task": "0"})
    source = SimpleSourceTaskContext({}, FakeOffsetReader(), metrics=given)
    assert source.plugin_metrics() is given
    sink = SimpleSinkTaskContext({})
    assert sink.plugin_metrics() is sink.plugin_metrics()
    assert isinstance(sink.plugin_metrics(), SimplePluginMetrics)
    connector = FakeConnectorContext()  # a context the runtime does not make
    assert connector.plugin_metrics() is connector.plugin_metrics()
    assert connector.plugin_metrics() is not FakeConnectorContext().plugin_metrics()


def test_a_connectors_metrics_on_the_driver_are_tagged_and_end_with_its_context() -> None:
    contexts = [HerderConnectorContext("a"), HerderConnectorContext("b")]
    for context in contexts:
        metrics = context.plugin_metrics()
        metrics.add_metric(metrics.metric_name("tables", ""), lambda: 2)

    assert {tuple(n.tags.items()): v for n, v in connector_values(contexts).items()} == {
        (("connector", "a"),): 2.0,
        (("connector", "b"),): 2.0,
    }
    contexts[0].close()
    assert [n.tags["connector"] for n in connector_values(contexts)] == ["b"]
    assert (contexts[0].closed, contexts[1].closed) == (True, False)


# -- what tasks build ------------------------------------------------------------------------
class Factory:
    """What a task run gives its plugins: metrics tagged with its connector and task."""

    def __init__(self) -> None:
        self.task_metrics = TaskMetrics(sink=False)

    def __call__(self, **tags: str) -> PluginMetrics:
        return self.task_metrics.plugin_metrics({"connector": "c", "task": "0", **tags})


class CountingPredicate(Predicate[Any], Monitorable):
    def configure(self, configs: Mapping[str, Any]) -> None:
        self.configured = True

    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        assert self.configured  # after configure
        self.tests = 0
        metrics.add_metric(metrics.metric_name("tests", ""), lambda: self.tests)

    def test(self, record: Any) -> bool:
        self.tests += 1
        return True

    def config(self) -> ConfigDef:
        return ConfigDef()


def test_monitorable_transformations_and_predicates_get_metrics_tagged_with_their_alias() -> None:
    factory = Factory()
    chain = transformation_chain(
        {
            "transforms": "count,plain",
            "transforms.count.type": "tests.connectors.CountingTransformation",
            "transforms.count.kind": "orders",
            "transforms.count.predicate": "always",
            "transforms.plain.type": "org.apache.kafka.connect.transforms.ValueToKey",
            "transforms.plain.fields": "n",
            "predicates": "always",
            "predicates.always.type": f"{__name__}.CountingPredicate",
        },
        factory,
    )
    assert isinstance(chain.stages[0].transformation, CountingTransformation)

    chain.apply(SourceRecord({}, {}, "t", value={"n": 1}), lambda *a: None, None)

    values = {
        tuple(n.tags.items()): (n.name, v)
        for m in factory.task_metrics.plugins
        for n, v in m.values().items()
    }
    assert values == {
        (("connector", "c"), ("task", "0"), ("predicate", "always")): ("tests", 1.0),
        (("connector", "c"), ("task", "0"), ("transformation", "count"), ("kind", "orders")): (
            "records-seen",
            1.0,
        ),
    }  # ValueToKey is not Monitorable: no metrics made for it


def test_monitorable_converters_get_metrics_tagged_with_their_role() -> None:
    factory = Factory()
    converters = task_converters(
        {
            "key.converter": "StringConverter",
            "value.converter": "tests.connectors.CountingConverter",
        },
        WorkerConfig({}),
        factory,
    )
    assert isinstance(converters.value, CountingConverter)

    converters.value.from_connect_values("t", None, ["a", "b"])

    (metrics,) = factory.task_metrics.plugins
    ((name, value),) = metrics.values().items()
    assert dict(name.tags) == {"connector": "c", "task": "0", "converter": "value"}
    assert (name.name, value) == ("values-converted", 2.0)


def test_a_runs_snapshot_carries_its_plugin_metrics_until_the_last_sample() -> None:
    task_metrics = TaskMetrics(sink=True)
    metrics = task_metrics.plugin_metrics({"connector": "c", "task": "0"})
    counter = [1]
    metrics.add_metric(metrics.metric_name("count", ""), lambda: counter[0])
    key = metrics.metric_name("count", "").encode()

    assert task_metrics.snapshot()[key] == 1.0
    counter[0] = 2
    task_metrics.sample_plugins_last()  # before the plugins close
    counter[0] = 3
    assert metrics.values() != {}  # a plugin's close may still use its metrics
    task_metrics.close_plugins()  # after the plugins closed

    assert task_metrics.snapshot()[key] == 2.0  # the final report's value: the last sample
    assert metrics.values() == {}
    with pytest.raises(RuntimeError):
        metrics.add_sensor("late")


def test_a_run_samples_at_most_its_cap_of_plugin_metrics_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    task_metrics = TaskMetrics(sink=False, run="c-0 (run r1)")
    first = task_metrics.plugin_metrics({"connector": "c", "task": "0"})
    second = task_metrics.plugin_metrics({"connector": "c", "task": "0", "converter": "value"})
    for i in range(MAX_PLUGIN_METRICS - 1):
        first.add_metric(first.metric_name(f"m{i}", ""), lambda: 1)
    for i in range(3):
        second.add_metric(second.metric_name(f"n{i}", ""), lambda: 2)

    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            plugin_keys = [k for k in task_metrics.snapshot() if MetricName.decode(k)]
            assert len(plugin_keys) == MAX_PLUGIN_METRICS
    decoded = [MetricName.decode(k) for k in plugin_keys]
    assert [n.name for n in decoded if n is not None][-2:] == [f"m{MAX_PLUGIN_METRICS - 2}", "n0"]
    assert [r.getMessage() for r in caplog.records] == [
        f"c-0 (run r1): its plugins registered more than {MAX_PLUGIN_METRICS} metrics; "
        f"only the first {MAX_PLUGIN_METRICS} are sampled"
    ]


# -- /metrics --------------------------------------------------------------------------------
def scrape(collector: ConnectCollector) -> tuple[str, dict[str, list[Any]]]:
    """The text ``/metrics`` serves, and the samples of each plugin metric in it."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    text = generate_latest(registry).decode()
    families = text_string_to_metric_families(text)
    return text, {f.name: f.samples for f in families if f.name.startswith("kafka_connect_plugins")}


def test_metrics_exports_the_plugins_of_tasks_and_connectors_as_labelled_gauges(
    tmp_path: Path,
) -> None:
    store = MetadataStore(f"sqlite:///{tmp_path / 'metadata.db'}", migrate=True)
    try:
        store.configs.create_connector("orders", {"connector.class": "FileStreamSource"})
        store.configs.create_connector("gone", {"connector.class": "FileStreamSource"})
        generation = store.configs.write_task_configs("orders", [{}])
        run_id = store.statuses.assign_task("orders", 0, generation, "w")
        store.statuses.put_task_status("orders", 0, run_id, State.RUNNING, "w")
        task = SimplePluginMetrics({"connector": "orders", "task": "0", "transformation": "t"})
        seen = task.metric_name("records-seen", "Records transformed.", {"table-name": "o"})
        store.statuses.heartbeat(
            "orders", 0, run_id, RunReport({"source_record_poll_total": 5, seen.encode(): 7})
        )
        contexts = [HerderConnectorContext("orders"), HerderConnectorContext("gone")]
        for context in contexts:
            metrics = context.plugin_metrics()
            metrics.add_metric(metrics.metric_name("tables", "Tables found."), lambda: 4)
        store.configs.delete_connector("gone")

        collector = ConnectCollector(store, connector_metrics=lambda: connector_values(contexts))
        text, found = scrape(collector)
        store.statuses.put_task_status("orders", 0, run_id, State.FAILED, "w", "trace")
        _, after_the_run = scrape(collector)  # its final report stays in the store
    finally:
        store.close()

    (sample,) = found["kafka_connect_plugins_records_seen"]
    assert sample.labels == {
        "connector": "orders",
        "task": "0",
        "transformation": "t",
        "table_name": "o",
    }
    assert sample.value == 7
    (sample,) = found["kafka_connect_plugins_tables"]  # none of the deleted connector
    assert (sample.labels, sample.value) == ({"connector": "orders"}, 4)
    assert "# HELP kafka_connect_plugins_records_seen Records transformed." in text
    assert "# TYPE kafka_connect_plugins_tables gauge" in text
    assert after_the_run.keys() == {"kafka_connect_plugins_tables"}  # the ended run's are gone


def test_app_info_is_tagged_with_the_client_id(tmp_path: Path) -> None:
    """KIP-1120: the runtime's app-info carries ``client-id``, its worker id."""
    store = MetadataStore(f"sqlite:///{tmp_path / 'metadata.db'}", migrate=True)
    try:
        app = AppInfo("driver-host/4242", version="1.2.3", start_time_ms=1_700_000_000_000)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(ConnectCollector(store, app_info=app))
        families = {
            f.name: f.samples
            for f in text_string_to_metric_families(generate_latest(registry).decode())
        }
        registry = CollectorRegistry(auto_describe=False)
        registry.register(ConnectCollector(store))
        without = generate_latest(registry).decode()
    finally:
        store.close()
    (info,) = families["kafka_connect_app_info"]
    assert (info.name, info.labels, info.value) == (
        "kafka_connect_app_info",
        {"client_id": "driver-host/4242", "version": "1.2.3", "commit_id": "unknown"},
        1,
    )
    (start,) = families["kafka_connect_app_info_start_time_ms"]
    assert (start.labels, start.value) == ({"client_id": "driver-host/4242"}, 1_700_000_000_000)
    assert "kafka_connect_app" not in without  # a collector told of no runtime has none
