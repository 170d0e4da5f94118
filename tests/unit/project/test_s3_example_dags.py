"""The S3 example DAGs (dags/topic_to_s3.py): ``topic_to_s3`` lands a topic with the S3
sink; ``s3_landing_report`` is scheduled on the objects it lands, through the sink's
commits."""

from __future__ import annotations

import pytest
from airflow.dag_processing.dagbag import DagBag

from airflow_provider_connect.assets import connector_assets
from tests.unit.project.test_example_dags import bag

__all__ = ["bag"]  # test_example_dags's fixture: the DAGs of dags/, parsed


@pytest.fixture(autouse=True)
def kafka_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster the operators name topics on, read when the DAGs are parsed."""
    monkeypatch.setenv("AIRFLOW__CONNECT__KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")


def test_topic_to_s3_creates_the_sink_then_waits_until_it_landed_the_topic(bag: DagBag) -> None:
    dag = bag.dags["topic_to_s3"]
    assert [t.task_id for t in dag.topological_sort()] == ["sink", "healthy", "landed"]
    config = dag.get_task("sink").config
    assert config["connector.class"] == "io.confluent.connect.s3.S3SinkConnector"
    assert config["s3.bucket.name"] == "{{ params.bucket }}"
    assert all(dag.get_task(t).retries == 2 for t in ("healthy", "landed"))


def test_no_credential_is_a_param_or_in_the_sink_config(bag: DagBag) -> None:
    """A param's value is kept plain in the run's conf and shown in the UI: the sink takes
    the AWS default chain of the runtime's machines."""
    dag = bag.dags["topic_to_s3"]
    assert not [k for k in dag.params if k.startswith("aws")]
    config = dag.get_task("sink").config
    assert "aws.access.key.id" not in config and "aws.secret.access.key" not in config


def test_the_sink_task_declares_the_objects_and_the_topic_of_the_params_defaults(
    bag: DagBag,
) -> None:
    dag = bag.dags["topic_to_s3"]
    sink = dag.get_task("sink")
    defaults = {k: dag.params[k] for k in ("topic", "bucket", "topics_dir")}
    assert [a.uri for a in sink.outlets] == [
        f"s3://{defaults['bucket']}/{defaults['topics_dir']}/{defaults['topic']}"
    ]
    assert [a.uri for a in sink.inlets] == [f"kafka://127.0.0.1:9092/{defaults['topic']}"]


def test_the_report_runs_on_the_sinks_commits_of_the_objects_it_lands(bag: DagBag) -> None:
    landing, report = bag.dags["topic_to_s3"], bag.dags["s3_landing_report"]
    (asset,) = report.timetable.asset_condition.objects  # type: ignore[attr-defined]
    (watcher,) = asset.watchers
    assert watcher.trigger.serialize()[1]["connector_name"] == landing.params["name"]
    # The asset the S3 sink names for a config of the params' defaults, with its watcher
    # on the sink task too (Airflow keeps the watchers of the file parsed last).
    config = {
        "connector.class": "S3SinkConnector",
        "topics": landing.params["topic"],
        "s3.bucket.name": landing.params["bucket"],
    }
    (objects,) = connector_assets(config).outlets
    (outlet,) = landing.get_task("sink").outlets
    assert asset.uri == objects.uri == outlet.uri and outlet.watchers == asset.watchers
    assert report.is_paused_upon_creation is False
