"""The S3 sink describes what it writes as Airflow's Amazon provider names S3 assets
(``s3://<bucket>/<key>``) and OpenLineage names S3 datasets (namespace ``s3://<bucket>``,
name the key), so that its operators' assets and lineage follow."""

from __future__ import annotations

import pytest

from airflow_provider_connect.assets import connector_assets, connector_lineage

CONFIG = {
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "topics": "orders, refunds",
    "s3.bucket.name": "landing",
    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
    "flush.size": "100",
}


@pytest.mark.parametrize(
    "connector_class", ["io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector"]
)
def test_reads_its_topics_and_writes_a_prefix_per_topic(connector_class: str) -> None:
    assets = connector_assets({**CONFIG, "connector.class": connector_class}, "kafka:9092")
    assert [a.uri for a in assets.inlets] == [
        "kafka://kafka:9092/orders",
        "kafka://kafka:9092/refunds",
    ]
    assert [a.uri for a in assets.outlets] == [
        "s3://landing/topics/orders",
        "s3://landing/topics/refunds",
    ]


def test_the_lineage_names_the_bucket_and_the_key_prefix() -> None:
    lineage = connector_lineage({**CONFIG, "topics.dir": "/raw/kafka/"}, "kafka:9092")
    assert [(d.namespace, d.name) for d in lineage.outputs] == [
        ("s3://landing", "raw/kafka/orders"),
        ("s3://landing", "raw/kafka/refunds"),
    ]
    assert [(d.namespace, d.name) for d in lineage.inputs] == [
        ("kafka://kafka:9092", "orders"),
        ("kafka://kafka:9092", "refunds"),
    ]


def test_a_blank_topics_dir_puts_the_topics_at_the_buckets_root() -> None:
    (orders, _) = connector_assets({**CONFIG, "topics.dir": ""}).outlets
    assert orders.uri == "s3://landing/orders"


def test_the_topics_dir_and_the_topic_are_joined_with_the_directory_delim() -> None:
    """As the object keys are: ``<topics.dir><directory.delim><topic><directory.delim>…``."""
    (orders, _) = connector_assets({**CONFIG, "directory.delim": "_"}).outlets
    assert orders.uri == "s3://landing/topics_orders"


def test_a_templated_bucket_names_no_objects() -> None:
    assert connector_assets({**CONFIG, "s3.bucket.name": "{{ params.bucket }}"}).outlets == []
