"""Which tables a record goes to: Apache's TestSinkWriter routing cases and TestRecordUtils."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.iceberg.config import IcebergSinkConfig
from airflow_provider_connect.connectors.iceberg.routing import extract_from_record_value, route

CATALOG = {"iceberg.catalog.type": "in-memory"}
TABLE = "db.tbl"
ROUTE_FIELD = "fld"


def config(**props: str) -> IcebergSinkConfig:
    return IcebergSinkConfig({**CATALOG, **props})


def record(value: Any) -> SinkRecord:
    return SinkRecord("topic", 0, None, "key", None, value, 42)


def test_default_route() -> None:
    """testDefaultRoute: no route field, every table."""
    assert route(record({}), config(**{"iceberg.tables": f"{TABLE}, db.other"})) == (
        TABLE,
        "db.other",
    )


def test_default_route_takes_tombstones_too() -> None:
    assert route(record(None), config(**{"iceberg.tables": TABLE})) == (TABLE,)


def test_default_no_route() -> None:
    """testDefaultNoRoute: no tables, nowhere."""
    assert route(record({}), config(**{"iceberg.tables": ""})) == ()


STATIC = {
    "iceberg.tables": f"{TABLE}, db.other, db.no_regex",
    "iceberg.tables.route-field": ROUTE_FIELD,
    f"iceberg.table.{TABLE}.route-regex": "val",
    "iceberg.table.db.other.route-regex": "va.*",
}


def test_static_route() -> None:
    """testStaticRoute: the tables whose regex matches the whole value."""
    assert route(record({ROUTE_FIELD: "val"}), config(**STATIC)) == (TABLE, "db.other")
    assert route(record({ROUTE_FIELD: "value"}), config(**STATIC)) == ("db.other",)


def test_static_no_route() -> None:
    """testStaticNoRoute: no regex matches (a partial match is none)."""
    assert route(record({ROUTE_FIELD: "foobar"}), config(**STATIC)) == ()
    assert route(record({ROUTE_FIELD: "xval"}), config(**STATIC)) == ()


@pytest.mark.parametrize("value", [None, {}, {ROUTE_FIELD: None}])
def test_missing_route_value_skips_the_record(value: Any) -> None:
    assert route(record(value), config(**STATIC)) == ()


DYNAMIC = {"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "meta.table"}


def test_dynamic_route_is_the_lowercased_value() -> None:
    """testDynamicRoute: the field names the table, lowercased as Apache (Locale.ROOT)."""
    assert route(record({"meta": {"table": "DB.Orders"}}), config(**DYNAMIC)) == ("db.orders",)
    assert route(record({"meta": {"table": None}}), config(**DYNAMIC)) == ()
    assert route(record(None), config(**DYNAMIC)) == ()


def test_route_values_are_written_as_java_writes_them() -> None:
    props = {**DYNAMIC, "iceberg.tables.route-field": "n"}
    assert route(record({"n": 12}), config(**props)) == ("12",)
    assert route(record({"n": True}), config(**props)) == ("true",)


def test_route_from_a_struct() -> None:
    meta = SchemaBuilder.struct().field("table", Schema.STRING_SCHEMA).build()
    schema = SchemaBuilder.struct().field("meta", meta).build()
    value = Struct(schema).put("meta", Struct(meta).put("table", "Db.A"))
    assert route(record(value), config(**DYNAMIC)) == ("db.a",)


def test_a_value_of_another_kind_is_an_error() -> None:
    with pytest.raises(DataException, match="Cannot extract value from type: str"):
        route(record("text"), config(**DYNAMIC))


def test_extract_from_struct() -> None:
    """TestRecordUtils' struct cases: a field, a nested one, a missing one."""
    id_schema = SchemaBuilder.struct().field("key", Schema.INT64_SCHEMA).build()
    data_schema = SchemaBuilder.struct().field("id", id_schema).build()
    schema = SchemaBuilder.struct().field("data", data_schema).build()
    value = Struct(schema).put(
        "data", Struct(data_schema).put("id", Struct(id_schema).put("key", 123))
    )
    assert extract_from_record_value(value, "data.id.key") == 123
    flat = Struct(id_schema).put("key", 123)
    assert extract_from_record_value(flat, "key") == 123
    assert extract_from_record_value(flat, "") is None
    assert extract_from_record_value(flat, "xkey") is None


def test_extract_from_map() -> None:
    """TestRecordUtils' map cases."""
    assert extract_from_record_value({"data": {"id": {"key": 123}}}, "data.id.key") == 123
    assert extract_from_record_value({"key": 123}, "key") == 123
    assert extract_from_record_value({"key": 123}, "") is None
    assert extract_from_record_value({"key": 123}, "xkey") is None


def test_extract_through_a_value_of_the_wrong_kind() -> None:
    with pytest.raises(DataException, match="Expected a map type"):
        extract_from_record_value({"data": 5}, "data.id")
    schema = SchemaBuilder.struct().field("data", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="Expected a struct type"):
        extract_from_record_value(Struct(schema).put("data", 5), "data.id")
