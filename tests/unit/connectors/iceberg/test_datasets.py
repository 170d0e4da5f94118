"""The Iceberg sink's datasets: its topics, and its tables named by the location the catalog
gives them, as OpenLineage names a table stored in files (checked against real pyiceberg SQL
catalogs on SQLite)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from airflow_provider_connect.connect.datasets import (
    LAKEHOUSE_TABLE,
    TOPIC,
    Dataset,
    iceberg_table,
)
from airflow_provider_connect.connectors.iceberg.datasets import iceberg_datasets

SCHEMA = pa.schema([pa.field("id", pa.int64())])


def created_at(catalog: SqlCatalog, table: str) -> str:
    """The location a real SQL catalog gives ``table`` when it creates it."""
    catalog.create_namespace_if_not_exists(table.rpartition(".")[0])
    return catalog.create_table(table, SCHEMA).location()


@pytest.mark.parametrize("table", ["replica.orders", "lake.raw.orders"])
@pytest.mark.parametrize("scheme", ["file://", ""])
def test_a_sql_catalogs_table_is_named_by_the_location_it_is_created_at(
    tmp_path: Path, table: str, scheme: str
) -> None:
    props = {"uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"{scheme}{tmp_path}/wh/"}
    location = created_at(SqlCatalog("iceberg", **props), table)
    dataset = iceberg_table({"type": "sql", **props}, table)
    path = location.removeprefix("file://")
    assert dataset == Dataset(LAKEHOUSE_TABLE, "file", path, f"file://{path}")
    assert iceberg_table(props, table) == dataset  # the type pyiceberg infers from the uri


@pytest.mark.parametrize(
    ("props", "namespace", "name"),
    [
        ({"type": "sql", "warehouse": "s3://lake/wh"}, "s3://lake", "wh/sales/orders"),
        ({"type": "sql", "warehouse": "s3a://lake/"}, "s3://lake", "sales/orders"),
        ({"type": "glue", "warehouse": "s3://lake/wh"}, "s3://lake", "wh/sales.db/orders"),
        ({"type": "hive", "warehouse": "gs://lake/wh"}, "gs://lake", "wh/sales.db/orders"),
        (
            {"uri": "thrift://hms:9083", "warehouse": "hdfs://nn:8020/wh"},
            "hdfs://nn:8020",
            "/wh/sales.db/orders",
        ),
    ],
)
def test_object_stores_and_hive_style_layouts(
    props: dict[str, str], namespace: str, name: str
) -> None:
    """OpenLineage's object-store names drop the key's leading slash (and read ``s3a`` as
    ``s3``); other file systems keep the path whole."""
    dataset = iceberg_table(props, "sales.orders")
    assert dataset is not None
    assert (dataset.namespace, dataset.name) == (namespace, name)
    assert dataset.uri == f"{namespace}/{name.lstrip('/')}"


@pytest.mark.parametrize(
    ("props", "table"),
    [
        ({"type": "rest", "uri": "http://catalog:8181", "warehouse": "s3://lake"}, "a.t"),
        ({"uri": "https://catalog/ws", "warehouse": "s3://lake"}, "a.t"),
        ({"type": "bigquery", "warehouse": "gs://lake"}, "a.t"),
        ({"type": "sql", "uri": "sqlite:///c.db"}, "a.t"),  # no warehouse
        ({"type": "sql", "warehouse": "relative/wh"}, "a.t"),
        ({"type": "sql", "warehouse": "/wh"}, "orders"),  # no namespace
        ({"type": "sql", "warehouse": "/wh"}, "a.or ders"),
        ({"type": "hive", "warehouse": "/wh"}, "a.b.t"),  # Hive namespaces have one level
        ({"warehouse": "/wh"}, "a.t"),  # no type, no uri: pyiceberg would refuse it
        ({"type": "sql", "warehouse": "file://host/wh"}, "a.t"),  # another machine's
    ],
)
def test_what_the_config_leaves_open_is_not_named(props: dict[str, str], table: str) -> None:
    assert iceberg_table(props, table) is None


def sink(**more: str) -> dict[str, str]:
    return {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics": "shop.public.orders, shop.public.refunds",
        "iceberg.tables": "replica.orders,replica.refunds",
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": "sqlite:////data/catalog.db",
        "iceberg.catalog.warehouse": "file:///data/wh",
        **more,
    }


def test_the_sink_reads_its_topics_and_writes_its_tables() -> None:
    data = iceberg_datasets(sink(), "broker:9092")
    assert [(d.kind, d.uri) for d in data.reads] == [
        (TOPIC, "kafka://broker:9092/shop.public.orders"),
        (TOPIC, "kafka://broker:9092/shop.public.refunds"),
    ]
    assert [(d.kind, d.namespace, d.name) for d in data.writes] == [
        (LAKEHOUSE_TABLE, "file", "/data/wh/replica/orders"),
        (LAKEHOUSE_TABLE, "file", "/data/wh/replica/refunds"),
    ]


def test_dynamic_routing_names_no_table() -> None:
    config = sink(**{"iceberg.tables.dynamic-enabled": "True", "iceberg.tables": ""})
    data = iceberg_datasets(config, "broker:9092")
    assert len(data.reads) == 2 and data.writes == []


def test_a_topic_pattern_and_an_unknown_cluster_name_no_topic() -> None:
    config = sink(**{"topics": "", "topics.regex": "shop\\..*"})
    assert iceberg_datasets(config, "broker:9092").reads == []
    assert iceberg_datasets(sink(), None).reads == []


class Unreadable(dict[str, str]):
    """A config whose credentials a config provider resolves only where the sink starts:
    reading one fails, as reading a placeholder does when the DAG is parsed."""

    def get(self, key: str, default: Any = None) -> Any:
        if "secret" in key or "credential" in key:
            raise AssertionError(f"{key} read")
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        return self.get(key)  # type: ignore[no-any-return]


def test_only_the_catalog_properties_of_a_location_are_read() -> None:
    config = Unreadable(
        sink(
            **{
                "iceberg.catalog.s3.secret-access-key": "${env:SECRET}",
                "iceberg.catalog.credential": "${env:TOKEN}",
            }
        )
    )
    assert len(iceberg_datasets(config, None).writes) == 2


def test_naming_the_sinks_data_imports_no_pyiceberg() -> None:
    """DAGs name the sink's data when Airflow parses them, where pyiceberg need not be."""
    code = (
        "import sys\n"
        "import airflow_provider_connect.connectors.iceberg.datasets as d\n"
        "d.iceberg_datasets({'iceberg.tables': 'a.t', 'iceberg.catalog.type': 'sql',"
        " 'iceberg.catalog.warehouse': '/wh'}, None)\n"
        "assert not [m for m in sys.modules if m.startswith('pyiceberg')], 'pyiceberg imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
