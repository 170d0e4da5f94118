"""Plugin metrics (KIP-877) on a running runtime: what a source task, its transformation and
its value converter register shows at ``/metrics`` labelled with their tags, and moves while
the task runs, with what the connector registers on the driver. All of it is gone once the
connector is deleted, and the driver has closed the connector's metrics."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.runtime import Connect
from tests.connectors import METERED_SOURCE
from tests.integration.runtime.rest.test_metrics import scrape
from tests_common.broker import free_port
from tests_common.kafka import new_topic
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

TASK = {"connector": "metered", "task": "0"}


def plugin_samples(url: str) -> dict[str, Any]:
    """Each ``kafka_connect_plugins_*`` metric's sample (one each here), by the rest of its
    name."""
    return {
        name.removeprefix("kafka_connect_plugins_"): sample
        for name, (sample, *_) in scrape(url).items()
        if name.startswith("kafka_connect_plugins_")
    }


def test_plugin_metrics_show_while_the_connector_runs_and_go_with_it(
    worker_props: dict[str, str], spark: object, bootstrap: str
) -> None:
    port = free_port()
    connect = Connect("plugin-metrics", {**worker_props, "listeners": f"http://127.0.0.1:{port}"})
    connect.start(rest=True)
    url = f"http://127.0.0.1:{port}"
    try:
        connect.add_connector(
            "metered",
            {
                "connector.class": METERED_SOURCE,
                "topic": new_topic(bootstrap),
                "key.converter": "StringConverter",
                "value.converter": "tests.connectors.CountingConverter",
                "transforms": "count",
                "transforms.count.type": "tests.connectors.CountingTransformation",
                "transforms.count.kind": "lines",
            },
        )

        first = wait_until(
            lambda: plugin_samples(url).get("records_polled_total"), 30, "the task's metric"
        )
        assert first.labels == {**TASK, "source": "sequence"}
        found = wait_until(
            lambda: (s := plugin_samples(url))["records_polled_total"].value > first.value and s,
            10,
            "the task's metric moves",
        )
        assert found.keys() == {
            "records_polled_total",
            "records_polled_rate",
            "records_seen",
            "values_converted",
            "task_config_requests",
        }  # the key converter is not Monitorable
        assert found["task_config_requests"].labels == {"connector": "metered"}
        assert found["task_config_requests"].value == 1
        assert found["records_polled_rate"].labels == TASK
        assert found["records_polled_rate"].value > 0
        assert found["records_seen"].labels == {**TASK, "transformation": "count", "kind": "lines"}
        assert found["values_converted"].labels == {**TASK, "converter": "value"}
        assert found["records_seen"].value > 0 and found["values_converted"].value > 0

        assert connect.herder is not None
        connector = connect.herder.managed["metered"].context  # the connector instance's
        connect.delete_connector("metered")

        wait_until(lambda: not plugin_samples(url), 10, "the metrics are gone")
        wait_until(lambda: connector.closed, 10, "the driver closed the connector's metrics")
        assert connector.metrics.values() == {} and connect.herder.plugin_metrics() == {}
    finally:
        connect.stop()
