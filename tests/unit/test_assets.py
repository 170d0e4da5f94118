"""The assets of connector configs: named as the providers of their systems name them."""

from __future__ import annotations

from typing import Any

import pytest
from airflow.sdk import Asset

from airflow_provider_connect.assets import (
    ConnectorAssets,
    connector_assets,
    connector_lineage,
    file_asset,
    params_assets,
    table_asset,
    topic_asset,
)
from airflow_provider_connect.connect.datasets import file, table
from airflow_provider_connect.connectors.postgres.config import (
    CONFIG_DEF,
    TOPIC_PREFIX,
    filters,
    type_modes,
)
from airflow_provider_connect.connectors.postgres.database import ColumnInfo, TableInfo
from airflow_provider_connect.connectors.postgres.tables import CapturedTable
from airflow_provider_connect.connectors.postgres.types import PgType
from airflow_provider_connect.operators.connector import CreateConnectorOperator

KAFKA = "broker-1:9092,broker-2:9092"


def uris(assets: list[Asset]) -> list[str]:
    return [a.uri for a in assets]


@pytest.mark.parametrize(
    ("config", "inlets", "outlets"),
    [
        (
            {"connector.class": "FileStreamSource", "file": "/data/in.txt", "topic": "lines"},
            ["file:///data/in.txt"],
            ["kafka://broker-1:9092/lines"],
        ),
        (
            {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "file": "/data/out.txt",
                "topics": "a, b",
            },
            ["kafka://broker-1:9092/a", "kafka://broker-1:9092/b"],
            ["file:///data/out.txt"],
        ),
        (
            {
                "connector.class": "JdbcSink",
                "topics": "orders",
                "connection.url": "postgresql+psycopg://loader@warehouse:5433/shop",
                "table.name.format": "raw.${topic}",
            },
            ["kafka://broker-1:9092/orders"],
            ["postgres://warehouse:5433/shop/raw/orders"],
        ),
        (
            {
                "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
                "topics": "orders",
                "connection.url": "jdbc:mysql://db/shop",
            },
            ["kafka://broker-1:9092/orders"],
            ["mysql://db:3306/shop/orders"],
        ),
        (
            {
                "connector.class": "JdbcSource",
                "connection.url": "postgresql://db/shop",
                "table.whitelist": "orders,items",
                "schema.pattern": "sales",
                "topic.prefix": "shop-",
            },
            ["postgres://db:5432/shop/sales/orders", "postgres://db:5432/shop/sales/items"],
            ["kafka://broker-1:9092/shop-orders", "kafka://broker-1:9092/shop-items"],
        ),
        (
            {
                "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
                "database.hostname": "db",
                "database.dbname": "shop",
                "topic.prefix": "cdc",
                "table.include.list": "public.orders,inventory.items,public.log_.*",
            },
            ["postgres://db:5432/shop/public/orders", "postgres://db:5432/shop/inventory/items"],
            ["kafka://broker-1:9092/cdc.public.orders", "kafka://broker-1:9092/cdc.inventory.items"],
        ),
        (
            {
                "connector.class": "MirrorSourceConnector",
                "source.bootstrap.servers": "origin:9092",
                "topics": "orders",
                "topic.rename.format": "origin.${topic}",
            },
            ["kafka://origin:9092/orders"],
            ["kafka://broker-1:9092/origin.orders"],
        ),
        (
            {"connector.class": "ParquetSinkConnector", "topics": "t", "store.url": "/lake"},
            ["kafka://broker-1:9092/t"],
            ["file:///lake/topics/t"],
        ),
        (
            {"connector.class": "com.example.ElsewhereSink", "topics": "t"},
            ["kafka://broker-1:9092/t"],
            [],
        ),
    ],
    ids=["file-source", "file-sink", "jdbc-sink-pg", "jdbc-sink-mysql", "jdbc-source",
         "debezium", "mirror", "parquet", "unknown"],
)  # fmt: skip
def test_assets_of_connector_configs(
    config: dict[str, Any], inlets: list[str], outlets: list[str]
) -> None:
    assets = connector_assets(config, KAFKA)
    assert (uris(assets.inlets), uris(assets.outlets)) == (inlets, outlets)


def test_a_change_capture_asset_names_the_topic_the_connector_writes_to() -> None:
    """Tables whose names a topic cannot hold (``$``, a non-ASCII letter): the outlets are
    the topics the connector's task writes each captured table to, not ``prefix.schema.table``
    as written; a regular expression naming no one table, or a table without its schema
    (which matches none), gives no asset."""
    config = {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": "db",
        "database.dbname": "shop",
        "database.user": "cdc",
        "topic.prefix": "cdc",
        "table.include.list": r"public.ordres\$2026,ventes.café,public.orders,public.log_.*,items",
    }
    parsed = CONFIG_DEF.parse(config)
    captures = filters(parsed)
    tables = [("public", "ordres$2026"), ("ventes", "café"), ("public", "orders")]
    captured = [
        CapturedTable(
            TableInfo(oid, schema, name, (ColumnInfo("id", PgType("int4"), False, True),)),
            parsed[TOPIC_PREFIX],
            captures,
            type_modes(parsed),
            True,
            "",
            "0",
            "shop",
        )
        for oid, (schema, name) in enumerate(tables)
        if captures.table(schema, name)
    ]
    assert [(c.info.schema, c.info.name) for c in captured] == tables
    assets = connector_assets(config, KAFKA)
    assert uris(assets.outlets) == [f"kafka://broker-1:9092/{c.topic}" for c in captured]
    assert uris(assets.inlets) == [
        "postgres://db:5432/shop/public/ordres$2026",
        "postgres://db:5432/shop/ventes/café",
        "postgres://db:5432/shop/public/orders",
    ]
    assert not captures.table("public", "items")  # "items" names no table: no asset either


def test_uris_are_the_providers_own() -> None:
    # As airflow.providers.postgres/mysql/apache.kafka/common.io's create_asset write them.
    assert table_asset("postgresql://h:1/d", "s.t") == Asset(uri="postgres://h:1/d/s/t")
    assert table_asset("mysql://h/d", "t") == Asset(uri="mysql://h:3306/d/t")
    assert file_asset("/a/b") == Asset(uri="file:///a/b")
    assert table_asset("sqlite:////tmp/x.db", "t") == Asset(uri="sqlite:///tmp/x.db/t")
    assert table_asset("postgresql:///local", "t") is None  # no host: not an asset
    assert table_asset("postgresql://h/d", "t", schema="sales") == Asset(
        uri="postgres://h:5432/d/sales/t"
    )


def test_what_the_config_leaves_open_is_left_out() -> None:
    templated = {
        "connector.class": "FileStreamSource",
        "file": "{{ params.file }}",
        "topic": "lines",
    }
    assert uris(connector_assets(templated, KAFKA).inlets) == []
    pattern = {"connector.class": "FileStreamSink", "file": "/o", "topics.regex": "lines-.*"}
    assert uris(connector_assets(pattern, KAFKA).inlets) == []
    # Topics need a cluster: the config's own override names one, else there are none.
    sink = {"connector.class": "FileStreamSink", "file": "/o", "topics": "t"}
    assert connector_assets(sink).inlets == []
    overridden = {**sink, "consumer.override.bootstrap.servers": "other:9093"}
    assert uris(connector_assets(overridden).inlets) == ["kafka://other:9093/t"]


@pytest.mark.parametrize(
    "config",
    [
        {"connector.class": "JdbcSink", "topics": "t", "connection.url": "postgresql://h:abc/d"},
        {"connector.class": "JdbcSink", "topics": "t", "connection.url": "mysql://h"},
        {
            "connector.class": "JdbcSink",
            "topics": "t",
            "connection.url": "jdbc:sqlserver://h:1;db=d",
        },
        {"connector.class": "JdbcSink", "topics": "t", "connection.url": "sqlite:///relative.db"},
        {"connector.class": "FileStreamSink", "topics": "t", "file": "relative/out.txt"},
    ],
    ids=["port", "mysql-without-database", "sqlserver", "sqlite-relative", "file-relative"],
)
def test_what_cannot_be_named_gives_no_asset(config: dict[str, str]) -> None:
    assets = connector_assets(config, KAFKA)
    assert (uris(assets.inlets), uris(assets.outlets)) == (["kafka://broker-1:9092/t"], [])


@pytest.mark.parametrize(
    "config",
    [
        {"connector.class": "JdbcSource", "connection.url": "postgresql://h/d",
         "table.whitelist": "a", "topic.prefix": "{{ params.prefix }}"},
        {"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
         "database.hostname": "${env:PGHOST}", "topic.prefix": "p", "table.include.list": "s.t"},
        {"connector.class": "JdbcSink", "topics": "t",
         "connection.url": "postgresql://u:${file:/secrets:pw}@h/d"},
    ],
    ids=["template", "env-placeholder", "file-placeholder"],
)  # fmt: skip
def test_a_config_that_only_rendering_resolves_gives_no_assets(config: dict[str, str]) -> None:
    assert connector_assets(config, KAFKA) == ConnectorAssets()


def test_params_give_a_templated_config_the_assets_of_their_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = {
        "connector.class": "FileStreamSource",
        "file": "{{ params.folder }}/in.txt",
        "topic": "{{params.topic}}",
    }
    params = {"folder": "/data", "topic": "lines"}
    assets = params_assets(config, params, KAFKA)
    assert uris(assets.inlets) == ["file:///data/in.txt"]
    assert uris(assets.outlets) == ["kafka://broker-1:9092/lines"]
    # on the operators' cluster by default, as topic_asset
    monkeypatch.setenv("AIRFLOW__CONNECT__KAFKA_BOOTSTRAP_SERVERS", "other:9093")
    assert uris(params_assets(config, params).outlets) == ["kafka://other:9093/lines"]
    assert uris([topic_asset("lines")]) == ["kafka://other:9093/lines"]  # type: ignore[list-item]
    # a param without a value, or another template, stays unknown
    assert params_assets(config, {"topic": "lines", "folder": None}) == ConnectorAssets()
    xcom = {**config, "file": "{{ ti.xcom_pull(task_ids='day') }}"}
    assert params_assets(xcom, params, KAFKA) == ConnectorAssets()


def test_a_topic_has_no_asset_without_a_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW__CONNECT__KAFKA_BOOTSTRAP_SERVERS", raising=False)
    assert topic_asset("lines") is None


def test_a_connectors_own_cluster_names_its_topics() -> None:
    config = {
        "connector.class": "FileStreamSink",
        "file": "/o",
        "topics": "t",
        "consumer.override.bootstrap.servers": "SASL_SSL://other:9093,more:9093",
    }
    assert uris(connector_assets(config, KAFKA).inlets) == ["kafka://other:9093/t"]


def test_operators_declare_the_assets_of_their_config() -> None:
    config = {"connector.class": "FileStreamSource", "file": "/data/in.txt", "topic": "lines"}
    create = CreateConnectorOperator(
        task_id="create", connector_name="c", config=config, bootstrap_servers=KAFKA
    )
    assert uris(create.inlets) == ["file:///data/in.txt"]
    assert uris(create.outlets) == ["kafka://broker-1:9092/lines"]
    declared = CreateConnectorOperator(
        task_id="declared",
        connector_name="c",
        config=config,
        bootstrap_servers=KAFKA,
        outlets=[Asset(uri="kafka://elsewhere:9092/x")],
    )
    assert declared.inlets == [] and uris(declared.outlets) == ["kafka://elsewhere:9092/x"]


def test_lineage_names_are_the_providers_own() -> None:
    # As the providers' convert_asset_to_openlineage name them.
    config = {
        "connector.class": "JdbcSink",
        "topics": "orders",
        "connection.url": "postgresql://warehouse:5432/shop",
        "table.name.format": "raw.${topic}",
    }
    lineage = connector_lineage(config, KAFKA)
    assert [(d.namespace, d.name) for d in lineage.inputs] == [("kafka://broker-1:9092", "orders")]
    assert [(d.namespace, d.name) for d in lineage.outputs] == [
        ("postgres://warehouse:5432", "shop.raw.orders")
    ]
    for dataset, named in [
        (file("/data/in.txt"), ("file", "/data/in.txt")),
        (table("mysql://db/shop", "orders"), ("mysql://db:3306", "shop.orders")),
        (table("sqlite:////tmp/x.db", "lines"), ("sqlite:///tmp/x.db", "lines")),
    ]:
        assert dataset is not None and (dataset.namespace, dataset.name) == named


def test_operators_give_the_lineage_of_their_rendered_config() -> None:
    create = CreateConnectorOperator(
        task_id="create",
        connector_name="c",
        config={"connector.class": "FileStreamSource", "file": "{{ params.file }}", "topic": "t"},
        bootstrap_servers=KAFKA,
    )
    assert create.inlets == []  # a template: unknown when the DAG is parsed
    create.config = {"connector.class": "FileStreamSource", "file": "/in.txt", "topic": "t"}
    for lineage in (
        create.get_openlineage_facets_on_start(),
        create.get_openlineage_facets_on_complete(None),
        create.get_openlineage_facets_on_failure(None),
    ):
        assert [(d.namespace, d.name) for d in lineage.inputs] == [("file", "/in.txt")]
        assert [(d.namespace, d.name) for d in lineage.outputs] == [("kafka://broker-1:9092", "t")]
