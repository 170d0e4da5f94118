"""The S3 example DAGs run for real with ``dag.test()``: ``topic_to_s3`` lands a topic in a
bucket of moto's S3 server (or ``S3_ENDPOINT_URL``) through a live runtime, the test broker
and Spark; ``s3_landing_report`` then lists the objects landed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.project.test_dags import airflow_db, load_dag, task_states
from tests_common.kafka import new_topic, produce
from tests_common.s3 import S3Endpoint

pytestmark = pytest.mark.integration

__all__ = ["airflow_db"]  # the fixture, used here by name


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Endpoint]:
    with S3Endpoint() as endpoint:
        yield endpoint


def test_topic_to_s3_lands_every_record_once_and_the_report_lists_the_objects(
    airflow_db: None,
    connection: str,
    connect: object,
    bootstrap: str,
    spark: Any,
    s3: S3Endpoint,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The DAGs' credentials are the AWS default chain: here, the environment of this
    # process (the connector's start, the report) and of the Spark Python workers that run
    # the sink's task (started with the Spark context's environment; the JVM's was fixed
    # when the session started).
    for name, value in (
        ("AWS_ACCESS_KEY_ID", s3.access_key),
        ("AWS_SECRET_ACCESS_KEY", s3.secret_key),
    ):
        monkeypatch.setenv(name, value)
        monkeypatch.setitem(spark.sparkContext.environment, name, value)
    topic, bucket = new_topic(bootstrap), s3.new_bucket()
    lines = [f"line {i}" for i in range(300)]
    # One record per batch: the test broker reports end offsets too low otherwise, and
    # "landed" would pass before the last objects are committed.
    # JsonConverter's envelopes, as the demo topic holds them.
    values = [json.dumps({"schema": {"type": "string"}, "payload": line}) for line in lines]
    produce(bootstrap, topic, [v.encode() for v in values], one_per_batch=True)
    where = {"bucket": bucket, "store_url": s3.url, "region": s3.region, "topics_dir": "landing"}
    dag_run = load_dag("topic_to_s3").test(
        run_conf={
            "name": "to-s3",
            "topic": topic,
            "flush_size": 100,
            **where,
        }
    )
    assert str(dag_run.state) == "success", task_states(dag_run)
    objects = s3.objects(bucket)
    assert sorted(objects) == [
        f"landing/{topic}/partition=0/{topic}+0+{start:010d}.json" for start in (0, 100, 200)
    ]
    landed = [json.loads(line) for body in objects.values() for line in body.splitlines()]
    assert sorted(landed) == sorted(lines)  # every record, once

    report_run = load_dag("s3_landing_report").test(run_conf={"topic": topic, **where})
    assert str(report_run.state) == "success", task_states(report_run)
    (report,) = report_run.get_task_instances()
    result = report.xcom_pull(task_ids="report")
    assert result == {"events": 0, "records": 0, "objects": sorted(objects)}
