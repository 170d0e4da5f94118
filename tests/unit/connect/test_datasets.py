"""A connector outside the built-ins gets its operators' assets and lineage by describing
its data (``Connector.datasets``), with no table of connectors to add it to."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.assets import connector_assets
from airflow_provider_connect.connect.datasets import (
    PREFIX,
    TOPIC,
    ConnectorData,
    listed,
    object_prefix,
    topics,
)
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.operators.connector import CreateConnectorOperator
from tests.connectors import NeverStarted

KAFKA = "broker-1:9092,broker-2:9092"
CLASS = f"{__name__}.ObjectStoreSinkConnector"


class ObjectStoreSinkConnector(NeverStarted, SinkConnector):
    """A third party's sink: each topic under its own prefix of ``bucket.url``."""

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        names = listed(config.get("topics"))
        bucket = config.get("bucket.url", "").rstrip("/")
        prefixes = (object_prefix(f"{bucket}/{t}") for t in names)
        return ConnectorData(topics(cluster, names), [p for p in prefixes if p is not None])


def config() -> dict[str, str]:
    return {"connector.class": CLASS, "topics": "orders,refunds", "bucket.url": "s3://lake/raw"}


def test_a_connector_of_its_own_gets_assets_and_lineage_by_describing_its_data() -> None:
    create = CreateConnectorOperator(
        task_id="create", connector_name="c", config=config(), bootstrap_servers=KAFKA
    )
    assert [a.uri for a in create.inlets] == [
        "kafka://broker-1:9092/orders",
        "kafka://broker-1:9092/refunds",
    ]
    assert [a.uri for a in create.outlets] == ["s3://lake/raw/orders", "s3://lake/raw/refunds"]
    lineage = create.get_openlineage_facets_on_start()
    assert [(d.namespace, d.name) for d in lineage.inputs] == [
        ("kafka://broker-1:9092", "orders"),
        ("kafka://broker-1:9092", "refunds"),
    ]
    assert [(d.namespace, d.name) for d in lineage.outputs] == [
        ("s3://lake", "raw/orders"),
        ("s3://lake", "raw/refunds"),
    ]


def test_its_datasets_say_their_kind() -> None:
    data = ObjectStoreSinkConnector().datasets(config(), "broker-1:9092")
    assert [d.kind for d in data.reads] == [TOPIC, TOPIC]
    assert [d.kind for d in data.writes] == [PREFIX, PREFIX]


def test_a_template_in_what_it_reads_leaves_its_assets_to_the_dag() -> None:
    templated = {**config(), "bucket.url": "s3://{{ params.bucket }}/raw"}
    assert connector_assets(templated, KAFKA).outlets == []
    assert connector_assets(templated, KAFKA).inlets == []
