"""The partitioners and their configuration, mirroring Confluent's partitioner tests
(DefaultPartitionerTest, FieldPartitionerTest, TimeBasedPartitionerTest, Daily/Hourly
PartitionerTest, FieldPartitionerValidatorTest, PartitionerConfigTest)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.s3.partitioners import (
    PARTITIONER_CONFIG_DEF,
    PartitionException,
    partitioner_from_config,
    validate_partitioner,
)
from airflow_provider_connect.connectors.s3.path_format import zone_for_id

PACKAGE = "io.confluent.connect.storage.partitioner."
LA = "America/Los_Angeles"
PATH_FORMAT = "'year'=YYYY/'month'=M/'day'=d/'hour'=H/"


def record_schema() -> Schema:
    """The record schema of Confluent's partitioner tests, its string optional here."""
    builder = SchemaBuilder.struct().name("record")
    fields = (
        "boolean:BOOLEAN int:INT32 long:INT64 float:FLOAT32 double:FLOAT64 string:OPTIONAL_STRING"
    )
    for field in fields.split():
        name, kind = field.split(":")
        builder.field(name, getattr(Schema, f"{kind}_SCHEMA"))
    return builder.build()


SCHEMA = record_schema()


def la_millis(*fields: int) -> int:
    moment = dt.datetime(*fields, tzinfo=zone_for_id(LA).tzinfo)  # type: ignore[misc]
    return int(moment.timestamp() * 1000)


APRIL_2_1AM = la_millis(2015, 4, 2, 1, 0)


def struct(**values: Any) -> Struct:
    base = {"boolean": True, "int": 12, "long": 12, "float": 12.2, "double": 12.2, "string": "def"}
    return Struct.of(SCHEMA, {**base, **values})


def sink_record(
    value: Any, schema: Schema | None = SCHEMA, timestamp: int | None = None
) -> SinkRecord:
    return SinkRecord("test-topic", 12, Schema.STRING_SCHEMA, "key", schema, value, 0, timestamp)


def time_based(**overrides: Any) -> dict[str, Any]:
    """TimeBasedPartitionerTest's configuration: hourly buckets in LA, Record timestamps."""
    return {
        "partitioner.class": PACKAGE + "TimeBasedPartitioner",
        "partition.duration.ms": str(3_600_000),
        "path.format": PATH_FORMAT,
        "locale": "en_US",
        "timezone": LA,
        "timestamp.extractor": "Record",
        **overrides,
    }


# -- DefaultPartitioner ---------------------------------------------------------------------
def test_default_partitioner_encodes_the_kafka_partition() -> None:
    partitioner = partitioner_from_config({}, "/")
    encoded = partitioner.encode_partition(sink_record(struct()), now_ms=0)
    assert encoded == "partition=12"
    assert partitioner.partitioned_path("test-topic", encoded) == "test-topic/partition=12"
    assert not partitioner.time_based
    assert partitioner.timestamp(sink_record(struct(), timestamp=5), now_ms=0) is None
    short = partitioner_from_config({"partitioner.class": "DefaultPartitioner"}, "_")
    assert short.partitioned_path("t", "partition=0") == "t_partition=0"


# -- FieldPartitioner -----------------------------------------------------------------------
def field_partitioner(names: str, delim: str = "/") -> Any:
    props = {"partitioner.class": PACKAGE + "FieldPartitioner", "partition.field.name": names}
    return partitioner_from_config(props, delim)


@pytest.mark.parametrize(
    ("names", "value", "expected"),
    [
        ("boolean", struct(boolean=False), "boolean=false"),
        ("int", struct(int=16), "int=16"),
        ("long", struct(long=-7), "long=-7"),
        ("string", struct(string="abc"), "string=abc"),
        ("string", struct(string="a/b"), "string=a/b"),
        ("string", struct(string=None), "string=null"),
        ("int,boolean", struct(int=16), "int=16/boolean=true"),
    ],
)
def test_field_partitioner(names: str, value: Struct, expected: str) -> None:
    partitioner = field_partitioner(names)
    assert partitioner.encode_partition(sink_record(value), now_ms=0) == expected
    assert partitioner.partitioned_path("test-topic", expected) == f"test-topic/{expected}"


def test_field_partitioner_joins_fields_with_the_directory_delimiter() -> None:
    encoded = field_partitioner("string,int", "|").encode_partition(sink_record(struct()), 0)
    assert encoded == "string=def|int=12"


ADDRESS = SchemaBuilder.struct().field("city", Schema.STRING_SCHEMA).optional().build()
USER = SchemaBuilder.struct().field("address", ADDRESS).optional().build()
NESTED = SchemaBuilder.struct().field("user", USER).build()


def test_field_partitioner_nested_fields_keep_their_dotted_names() -> None:
    address = Struct(ADDRESS).put("city", "NYC")
    value = Struct(NESTED).put("user", Struct(USER).put("address", address))
    partitioner = field_partitioner("user.address.city")
    assert partitioner.encode_partition(sink_record(value, NESTED), 0) == "user.address.city=NYC"
    missing = Struct(NESTED).put("user", Struct(USER))
    assert partitioner.encode_partition(sink_record(missing, NESTED), 0) == "user.address.city=null"


def test_field_partitioner_refuses_fields_the_schema_lacks() -> None:
    with pytest.raises(DataException, match=r"^Field 'user\.zip' is not present in the schema\.$"):
        field_partitioner("user.zip").encode_partition(sink_record(Struct(NESTED), NESTED), 0)


@pytest.mark.parametrize(
    ("names", "value", "schema"),
    [
        ("float", struct(), SCHEMA),
        ("double", struct(), SCHEMA),
        ("int", {"int": 12}, None),
        ("int", "not a struct", Schema.STRING_SCHEMA),
    ],
)
def test_field_partitioner_unsupported_values(
    names: str, value: Any, schema: Schema | None
) -> None:
    with pytest.raises(PartitionException, match=r"^Error encoding partition\.$"):
        field_partitioner(names).encode_partition(sink_record(value, schema), 0)


# -- TimeBasedPartitioner -------------------------------------------------------------------
def test_two_hour_buckets_in_los_angeles() -> None:
    props = time_based(**{"partition.duration.ms": str(7_200_000)})
    partitioner = partitioner_from_config(props, "/")
    record = sink_record(struct(), timestamp=APRIL_2_1AM)
    encoded = partitioner.encode_partition(record, now_ms=0)
    assert encoded == "year=2015/month=4/day=2/hour=0"
    assert partitioner.partitioned_path("topic", encoded) == "topic/year=2015/month=4/day=2/hour=0"
    assert partitioner.time_based
    assert partitioner.timestamp(record, now_ms=0) == APRIL_2_1AM


def test_a_trailing_directory_delimiter_is_dropped_from_the_path_format() -> None:
    partitioner = partitioner_from_config(time_based(**{"path.format": "'year='YYYY/"}), "/")
    assert partitioner.encode_partition(sink_record(struct(), timestamp=APRIL_2_1AM), 0) == (
        "year=2015"
    )


def test_wallclock_uses_the_batch_time() -> None:
    partitioner = partitioner_from_config(time_based(**{"timestamp.extractor": "Wallclock"}), "/")
    now = 15_778_800_000  # 1970-07-02T15:00Z, 08:00 in LA (PDT)
    record = sink_record(struct(), timestamp=APRIL_2_1AM)
    assert partitioner.encode_partition(record, now) == "year=1970/month=7/day=2/hour=8"
    assert partitioner.timestamp(record, now) == now


def test_record_field_timestamps() -> None:
    schema = SchemaBuilder.struct().field("timestamp", Schema.STRING_SCHEMA).build()
    value = Struct(schema).put("timestamp", "2015-04-02T01:00:00.000-07:00")
    props = time_based(**{"timestamp.extractor": "RecordField"})
    partitioner = partitioner_from_config(props, "/")
    assert partitioner.encode_partition(sink_record(value, schema), 0) == (
        "year=2015/month=4/day=2/hour=1"
    )
    epoch = la_millis(1970, 1, 1, 0, 0)
    int_schema = SchemaBuilder.struct().field("timestamp", Schema.INT32_SCHEMA).build()
    value = Struct(int_schema).put("timestamp", epoch)
    assert partitioner.encode_partition(sink_record(value, int_schema), 0) == (
        "year=1970/month=1/day=1/hour=0"
    )


def test_a_missing_timestamp_cannot_be_partitioned() -> None:
    """The message names the extractor and the record's topic, partition and offset, not the
    record (its key and value may be data nobody should read in a status or a log)."""
    partitioner = partitioner_from_config(time_based(), "/")
    record = sink_record("secret-value", Schema.STRING_SCHEMA, timestamp=None)
    message = (
        "^"
        + re.escape(
            "Unable to determine timestamp using timestamp.extractor "
            "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor"
            " for record: topic=test-topic, partition=12, offset=0"
        )
        + "$"
    )
    with pytest.raises(PartitionException, match=message):
        partitioner.encode_partition(record, 0)
    with pytest.raises(PartitionException, match=message):
        partitioner.timestamp(record, 0)


def test_a_missing_timestamp_field_is_named() -> None:
    partitioner = partitioner_from_config(
        time_based(**{"timestamp.extractor": "RecordField", "timestamp.field": "ts"}), "/"
    )
    record = sink_record(struct(string="secret-value"))
    with pytest.raises(PartitionException) as e:
        partitioner.timestamp(record, 0)
    assert str(e.value) == (
        "Unable to determine timestamp using timestamp.extractor "
        "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordFieldTimestampExtractor"
        " (timestamp.field ts) for record: topic=test-topic, partition=12, offset=0"
    )
    assert "secret-value" not in str(e.value)


def test_buckets_before_1970_are_floored_as_java_divides() -> None:
    # Java's division truncates toward zero: before the epoch the "bucket" is the next one up
    partitioner = partitioner_from_config(time_based(timezone="UTC"), "/")
    half_past_eleven = -30 * 60_000  # 1969-12-31T23:30Z
    assert partitioner.encode_partition(sink_record(struct(), timestamp=half_past_eleven), 0) == (
        "year=1970/month=1/day=1/hour=0"
    )


HOURLY_SANTIAGO = {
    "partitioner.class": PACKAGE + "HourlyPartitioner",
    "locale": "en",
    "timezone": "America/Santiago",
    "timestamp.extractor": "Record",
}


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        (1_715_224_653_000, "year=2024/month=05/day=08/hour=23"),
        (1_706_411_853_000, "year=2024/month=01/day=28/hour=00"),
    ],
)
def test_hourly_partitioner_in_santiago(timestamp: int, expected: str) -> None:
    partitioner = partitioner_from_config(HOURLY_SANTIAGO, "/")
    assert partitioner.encode_partition(sink_record(struct(), timestamp=timestamp), 0) == expected


def test_daily_and_hourly_ignore_duration_and_path_format_and_use_the_delimiter() -> None:
    props = {
        "locale": "en",
        "timezone": LA,
        "timestamp.extractor": "Record",
        "partition.duration.ms": "60000",
        "path.format": "'minute'=mm",
    }
    record = sink_record(struct(), timestamp=la_millis(2015, 4, 2, 13, 45))
    daily = partitioner_from_config({**props, "partitioner.class": "DailyPartitioner"}, "_")
    assert daily.encode_partition(record, 0) == "year=2015_month=04_day=02"
    hourly = partitioner_from_config(
        {**props, "partitioner.class": PACKAGE + "HourlyPartitioner"}, "/"
    )
    assert hourly.encode_partition(record, 0) == "year=2015/month=04/day=02/hour=13"


def test_daily_buckets_follow_local_midnight_across_dst() -> None:
    props = {**HOURLY_SANTIAGO, "partitioner.class": "DailyPartitioner", "timezone": LA}
    daily = partitioner_from_config(props, "/")
    after_spring_forward = la_millis(2015, 3, 8, 23, 30)
    assert daily.encode_partition(sink_record(struct(), timestamp=after_spring_forward), 0) == (
        "year=2015/month=03/day=08"
    )


# -- configuration errors -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("overrides", "key", "message"),
    [
        ({"partition.duration.ms": "-1"}, "partition.duration.ms",
         "Invalid value -1 for configuration partition.duration.ms: Partition duration needs to be a positive."),
        ({"partition.duration.ms": "0"}, "partition.duration.ms",
         "Invalid value 0 for configuration partition.duration.ms: Partition duration needs to be a positive."),
        ({"path.format": ""}, "path.format",
         "Invalid value  for configuration path.format: Path format cannot be empty."),
        ({"path.format": "/"}, "path.format",
         "Invalid value / for configuration path.format: Path format cannot be empty."),
        ({"path.format": "year='YYYY'/month='MM'"}, "path.format",
         "Invalid value year='YYYY'/month='MM' for configuration path.format: Illegal pattern component: r"),
        ({"locale": ""}, "locale", "Invalid value  for configuration locale: Locale cannot be empty."),
        ({"timezone": ""}, "timezone",
         "Invalid value  for configuration timezone: Timezone cannot be empty."),
        ({"path.format": "MMM", "locale": "fr"}, "locale",
         "Invalid value fr for configuration locale: Only English locales can print the text fields of path.format"),
        ({"timestamp.extractor": "Future"}, "timestamp.extractor", "Invalid timestamp extractor: Future"),
    ],
)  # fmt: skip
def test_time_based_configuration_errors(overrides: dict[str, str], key: str, message: str) -> None:
    props = time_based(**overrides)
    with pytest.raises(ConfigException) as raised:
        partitioner_from_config(props, "/")
    assert (str(raised.value), raised.value.name) == (message, key)
    assert validate_partitioner(props) == {key: [message]}


def test_daily_and_hourly_still_need_locale_and_timezone() -> None:
    for name in ("DailyPartitioner", "HourlyPartitioner"):
        props = {"partitioner.class": name, "locale": "en"}
        assert validate_partitioner(props) == {
            "timezone": ["Invalid value  for configuration timezone: Timezone cannot be empty."]
        }


def test_field_partitioner_needs_field_names() -> None:
    message = "Partition field name cannot be null or empty when using FieldPartitioner."
    props = {"partitioner.class": "FieldPartitioner"}
    assert validate_partitioner(props) == {"partition.field.name": [message]}
    with pytest.raises(ConfigException, match=re.escape(message)):
        partitioner_from_config(props, "/")


def test_valid_configurations_validate_without_errors() -> None:
    assert validate_partitioner({}) == {}
    assert validate_partitioner(time_based()) == {}
    assert validate_partitioner({**HOURLY_SANTIAGO, "directory.delim": "_"}) == {}
    assert (
        validate_partitioner(
            {"partitioner.class": "FieldPartitioner", "partition.field.name": "a.b"}
        )
        == {}
    )


def errors(props: dict[str, str]) -> dict[str, list[str]]:
    """The definition's own errors, by key."""
    return {
        v.name: v.error_messages for v in PARTITIONER_CONFIG_DEF.validate(props) if v.error_messages
    }


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"partition.field.name": "a,,b"}, {"partition.field.name": [
            "Invalid value [a, , b] for configuration partition.field.name: Field name cannot be null or empty"]}),
        ({"partition.field.name": "a..b"}, {"partition.field.name": [
            "Invalid value [a..b] for configuration partition.field.name: "
            "Field name cannot contain an empty or whitespace-only path segment"]}),
        ({"timezone": "LLL"}, {"timezone": [
            "Invalid value LLL for configuration timezone: The datetime zone id 'LLL' is not recognised"]}),
        ({"partitioner.class": "com.example.MyPartitioner"}, {"partitioner.class": [
            "Invalid value com.example.MyPartitioner for configuration partitioner.class: "
            "Class com.example.MyPartitioner could not be found."]}),
    ],
)  # fmt: skip
def test_definition_errors(props: dict[str, str], expected: dict[str, list[str]]) -> None:
    assert errors(props) == expected
    assert validate_partitioner(props) == {}  # left to the definition's own report


def test_definition_defaults_and_visibility() -> None:
    values = {v.name: v for v in PARTITIONER_CONFIG_DEF.validate({})}
    assert {name: v.value for name, v in values.items()} == {
        "partitioner.class": PACKAGE + "DefaultPartitioner",
        "partition.field.name": [],
        "partition.duration.ms": -1,
        "path.format": "",
        "locale": "",
        "timezone": "",
        "timestamp.extractor": "Wallclock",
        "timestamp.field": "timestamp",
    }
    assert values["partitioner.class"].recommended_values == [
        PACKAGE + n
        for n in (
            "DefaultPartitioner",
            "HourlyPartitioner",
            "DailyPartitioner",
            "TimeBasedPartitioner",
            "FieldPartitioner",
        )
    ]

    def visible(partitioner: str) -> set[str]:
        shown = PARTITIONER_CONFIG_DEF.validate({"partitioner.class": partitioner})
        return {v.name for v in shown if v.visible} - {
            "partitioner.class",
            "timestamp.extractor",
            "timestamp.field",
        }

    assert visible("TimeBasedPartitioner") == {
        "partition.duration.ms",
        "path.format",
        "locale",
        "timezone",
    }
    assert visible(PACKAGE + "DailyPartitioner") == {"locale", "timezone"}
    assert visible("HourlyPartitioner") == {"locale", "timezone"}
    assert visible("FieldPartitioner") == {"partition.field.name"}
    assert visible("DefaultPartitioner") == set()
