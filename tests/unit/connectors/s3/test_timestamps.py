"""The timestamp extractors, as Confluent's TimeBasedPartitionerTest exercises them: Struct
fields of every type, maps, nested paths, strings, and the errors of the others."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct, Timestamp
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.s3.timestamps import (
    PartitionException,
    RecordFieldTimestampExtractor,
    RecordTimestampExtractor,
    WallclockTimestampExtractor,
    extractor_class_name,
    parse_timestamp,
    timestamp_extractor,
)

MILLIS = 1_427_961_600_000  # 2015-04-02T01:00:00-07:00


def record(value_schema: Schema | None, value: Any, timestamp: int | None = 5) -> SinkRecord:
    return SinkRecord("test-topic", 12, None, None, value_schema, value, 0, timestamp)


def struct_with(name: str, schema: Schema, value: Any) -> SinkRecord:
    struct_schema = SchemaBuilder.struct().name("record").field(name, schema).build()
    return record(struct_schema, Struct(struct_schema).put(name, value))


def by_field(name: str, rec: SinkRecord) -> int | None:
    return RecordFieldTimestampExtractor(name).extract(rec, now_ms=1)


def test_wallclock_answers_the_batch_time_and_record_the_kafka_timestamp() -> None:
    assert WallclockTimestampExtractor().extract(record(None, "x"), now_ms=15_778_800_000) == (
        15_778_800_000
    )
    assert RecordTimestampExtractor().extract(record(None, "x", MILLIS), now_ms=1) == MILLIS
    assert RecordTimestampExtractor().extract(record(None, "x", None), now_ms=1) is None


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (Schema.INT32_SCHEMA, 2_147_483_647, 2_147_483_647),
        (Schema.INT64_SCHEMA, MILLIS, MILLIS),
        (Timestamp.SCHEMA, dt.datetime(2015, 4, 2, 8, tzinfo=dt.timezone.utc), MILLIS),
        (Schema.STRING_SCHEMA, "2015-04-02T01:00:00.000-07:00", MILLIS),
        (Schema.STRING_SCHEMA, "2015-04-02T01:00:00-07:00", MILLIS),
        (Schema.STRING_SCHEMA, "2015-04-02T08:00:00Z", MILLIS),
        (Schema.STRING_SCHEMA, "2015-04-02T08:00", MILLIS),
        (Schema.STRING_SCHEMA, str(MILLIS), MILLIS),
        (Schema.STRING_SCHEMA, "-12", -12),
    ],
)
def test_struct_fields(schema: Schema, value: Any, expected: int) -> None:
    assert by_field("ts", struct_with("ts", schema, value)) == expected


@pytest.mark.parametrize(
    ("name", "schema", "value"),
    [
        ("float", Schema.FLOAT32_SCHEMA, 1.5),
        ("double", Schema.FLOAT64_SCHEMA, 1.5),
        ("array", SchemaBuilder.array(Schema.INT64_SCHEMA).build(), [MILLIS]),
        ("boolean", Schema.BOOLEAN_SCHEMA, True),
    ],
)
def test_struct_fields_of_other_types_are_refused(name: str, schema: Schema, value: Any) -> None:
    with pytest.raises(
        PartitionException, match=f"^Error extracting timestamp from record field: {name}$"
    ):
        by_field(name, struct_with(name, schema, value))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2_147_483_647, 2_147_483_647),
        (MILLIS, MILLIS),
        ("2015-04-02T01:00:00.000-07:00", MILLIS),
        (dt.datetime(2015, 4, 2, 8, tzinfo=dt.timezone.utc), MILLIS),
    ],
)
def test_map_values(value: Any, expected: int) -> None:
    assert by_field("timestamp", record(None, {"timestamp": value})) == expected


def test_map_values_of_other_types_are_refused() -> None:
    with pytest.raises(
        PartitionException, match="^Error extracting timestamp from record field: array$"
    ):
        by_field("array", record(None, {"array": [MILLIS]}))


def test_nested_fields_through_structs_and_maps() -> None:
    inner = SchemaBuilder.struct().field("timestamp", Schema.INT64_SCHEMA).build()
    outer = SchemaBuilder.struct().field("nested", inner).build()
    value = Struct(outer).put("nested", Struct(inner).put("timestamp", MILLIS))
    assert by_field("nested.timestamp", record(outer, value)) == MILLIS
    header_schema = SchemaBuilder.struct().field("timestamp", Schema.STRING_SCHEMA).build()
    header = Struct(header_schema).put("timestamp", "2015-04-02T01:00:00.000-07:00")
    assert by_field("header.timestamp", record(None, {"header": header})) == MILLIS


def test_missing_or_null_fields_give_no_timestamp() -> None:
    optional = SchemaBuilder.struct().field("ts", Schema.OPTIONAL_INT64_SCHEMA).build()
    assert by_field("ts", record(optional, Struct(optional))) is None
    assert by_field("other", record(optional, Struct(optional).put("ts", 3))) is None
    assert by_field("a.b", record(None, {"a": None})) is None


def test_values_neither_struct_nor_map_cannot_be_partitioned() -> None:
    with pytest.raises(PartitionException, match=r"^Error encoding partition\.$"):
        by_field("bar", record(Schema.STRING_SCHEMA, "foo"))


@pytest.mark.parametrize("text", ["def", "abc", "2015-04-02 01:00", "2015-13-01T00:00"])
def test_strings_that_are_no_date_time(text: str) -> None:
    with pytest.raises(ValueError, match='^Invalid format: "'):
        parse_timestamp(text)


def test_digits_are_millis_before_they_are_years() -> None:
    assert parse_timestamp("2015") == 2015  # Confluent reads ^-?[0-9]{1,19}$ as a long first
    april = dt.datetime(2015, 4, 1, tzinfo=dt.timezone.utc)
    assert parse_timestamp("2015-04") == int(april.timestamp()) * 1000
    assert parse_timestamp("2015-04-02T08:00:00.123456789Z") == MILLIS + 123


def test_extractors_by_name() -> None:
    config = {"timestamp.field": "when"}
    assert isinstance(timestamp_extractor("Wallclock", config), WallclockTimestampExtractor)
    assert isinstance(timestamp_extractor("Record", config), RecordTimestampExtractor)
    field = timestamp_extractor("RecordField", config)
    assert isinstance(field, RecordFieldTimestampExtractor)
    assert field.field_name == "when"
    java = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor"
    assert isinstance(timestamp_extractor(java, config), RecordTimestampExtractor)
    assert extractor_class_name(RecordTimestampExtractor()) == java
    dotted = f"{__name__}.FixedExtractor"
    assert timestamp_extractor(dotted, config).extract(record(None, "x"), 1) == 42
    assert extractor_class_name(FixedExtractor()) == dotted


class FixedExtractor(RecordTimestampExtractor):
    """A third-party extractor: always 42."""

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return 42


def test_unknown_extractors_are_refused() -> None:
    future = (
        "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$FutureTimestampExtractor"
    )
    with pytest.raises(ConfigException, match=r"^Invalid timestamp extractor: .*Future") as e:
        timestamp_extractor(future, {})
    assert e.value.name == "timestamp.extractor"
    not_one = "datetime.datetime"
    with pytest.raises(
        ConfigException, match=f"^Class {not_one} does not implement TimestampExtractor$"
    ):
        timestamp_extractor(not_one, {})
