"""Partition specs from partition-by terms: Apache's TestSchemaUtils partition cases, and
Iceberg's PartitionSpec.Builder checks."""

from __future__ import annotations

import pytest
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import (
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

from airflow_provider_connect.connectors.iceberg.partitions import (
    PartitionFieldError,
    PartitionTerm,
    parse_partition_field,
    partition_spec,
)

SCHEMA_FOR_SPEC = Schema(
    NestedField(1, "i", IntegerType(), required=True),
    NestedField(2, "s", StringType(), required=True),
    NestedField(3, "ts1", TimestamptzType(), required=True),
    NestedField(4, "ts2", TimestamptzType(), required=True),
    NestedField(5, "ts3", TimestamptzType(), required=True),
    NestedField(6, "ts4", TimestamptzType(), required=True),
    NestedField(7, "data", StructType(NestedField(8, "id", LongType())), required=False),
    NestedField(9, "items", ListType(10, StructType(NestedField(11, "n", LongType())))),
)


def test_unpartitioned() -> None:
    spec = partition_spec(SCHEMA_FOR_SPEC, [])
    assert spec.is_unpartitioned()
    assert spec == PartitionSpec()


def test_every_transform() -> None:
    """TestSchemaUtils.testCreatePartitionSpec, with Iceberg's field names and ids."""
    terms = ["year(ts1)", "month(ts2)", "day(ts3)", "hour(ts4)", "bucket(i, 4)"]
    spec = partition_spec(SCHEMA_FOR_SPEC, [*terms, "truncate(s, 10)", "s"])
    assert [(f.source_id, f.field_id, f.name, f.transform) for f in spec.fields] == [
        (3, 1000, "ts1_year", YearTransform()),
        (4, 1001, "ts2_month", MonthTransform()),
        (5, 1002, "ts3_day", DayTransform()),
        (6, 1003, "ts4_hour", HourTransform()),
        (1, 1004, "i_bucket", BucketTransform(4)),
        (2, 1005, "s_trunc", TruncateTransform(10)),
        (2, 1006, "s", IdentityTransform()),
    ]


def test_plural_time_transforms_and_nested_columns() -> None:
    spec = partition_spec(SCHEMA_FOR_SPEC, ["years(ts1)", "hours(ts4)", "data.id"])
    assert [(f.source_id, f.name, f.transform) for f in spec.fields] == [
        (3, "ts1_year", YearTransform()),
        (6, "ts4_hour", HourTransform()),
        (8, "data.id", IdentityTransform()),
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (["nope"], "Cannot find source column: nope"),
        (["day(missing)"], "Cannot find source column: missing"),
        (["items.element.n"], "Cannot find source column: items.element.n"),
        (["day(s)"], "Invalid source type string for transform: day"),
        (
            ["day(ts1)", "hour(ts1)"],
            "Cannot add redundant partition: hour(ts1) conflicts with day(ts1)",
        ),
        (["bucket(i, 4)", "bucket(i, 8)"], "Cannot use partition name more than once: i_bucket"),
        (["unknown(i)"], "Unsupported transform: unknown"),
    ],
)
def test_refused(fields: list[str], message: str) -> None:
    with pytest.raises(PartitionFieldError) as raised:
        partition_spec(SCHEMA_FOR_SPEC, fields)
    assert str(raised.value) == message


def test_a_transform_name_taken_by_a_column_is_refused() -> None:
    schema = Schema(
        NestedField(1, "s", StringType(), required=True),
        NestedField(2, "s_trunc", StringType(), required=False),
    )
    with pytest.raises(PartitionFieldError, match="name that exists in schema: s_trunc"):
        partition_spec(schema, ["truncate(s, 2)"])


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("id", PartitionTerm("identity", "id")),
        (" a.b ", PartitionTerm("identity", "a.b")),
        ("day(ts)", PartitionTerm("day", "ts")),
        ("months( ts )", PartitionTerm("month", "ts")),
        ("bucket(id, 16)", PartitionTerm("bucket", "id", 16)),
        ("truncate(name,3)", PartitionTerm("truncate", "name", 3)),
        ("f(x", PartitionTerm("identity", "f(x")),  # not a whole transform: a column, as Apache
    ],
)
def test_parse(text: str, term: PartitionTerm) -> None:
    assert parse_partition_field(text) == term


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Empty partition field"),
        ("identity(x)", "Unsupported transform: identity"),
        ("bucket(id)", "Invalid argument id, should have 2 parts"),
        ("truncate(a, 2, 3)", "Invalid argument a, 2, 3, should have 2 parts"),
        ("bucket(id, x)", "Invalid argument id, x: x is not an integer"),
        ("bucket(id, 0)", "Invalid number of buckets: 0 (must be > 0)"),
        ("truncate(s, -1)", "Invalid truncate width: -1 (must be > 0)"),
    ],
)
def test_parse_refuses(text: str, message: str) -> None:
    with pytest.raises(PartitionFieldError) as raised:
        parse_partition_field(text)
    assert str(raised.value) == message
