"""TimestampConverter, with the cases of Kafka's TimestampConverterTest."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from airflow_provider_connect.connect.data import (
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.timestamp_converter import (
    TimestampConverterKey,
    TimestampConverterValue,
)

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
DATE = dt.date(1970, 1, 2)
TIME = dt.time(0, 0, 1, 234000)
DATE_PLUS_TIME = dt.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
DATE_PLUS_TIME_UNIX = 86_401_234
STRING_FORMAT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"


def value_xform(**props: str) -> TransformationHarness:
    return TransformationHarness(TimestampConverterValue, props)


def convert(value: Any, schema: Schema | None = None, **props: str) -> SourceRecord:
    return value_xform(**props).apply(
        SourceRecord(None, None, "topic", 0, value_schema=schema, value=value)
    )


@pytest.mark.parametrize(
    "props",
    [
        {},
        {"target.type": "invalid"},
        {"target.type": "string"},
        {"target.type": "unix", "unix.precision": "invalid"},
    ],
)
def test_bad_configs(props: dict[str, str]) -> None:
    with pytest.raises(ConfigException):
        value_xform(**props)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("Timestamp", DATE_PLUS_TIME),
        ("Date", DATE),
        ("Time", TIME),
        ("unix", DATE_PLUS_TIME_UNIX),
        ("string", DATE_PLUS_TIME_STRING),
    ],
)
def test_schemaless_timestamp_to_each_type(target: str, expected: Any) -> None:
    out = convert(DATE_PLUS_TIME, None, **{"target.type": target, "format": STRING_FORMAT})
    assert out.value_schema is None and out.value == expected


@pytest.mark.parametrize(
    ("value", "schema"),
    [
        (DATE_PLUS_TIME, Timestamp.SCHEMA),
        (DATE_PLUS_TIME_UNIX, Schema.INT64_SCHEMA),
        (DATE_PLUS_TIME_STRING, Schema.STRING_SCHEMA),
    ],
)
def test_with_schema_each_source_to_timestamp(value: Any, schema: Schema) -> None:
    out = convert(value, schema, **{"target.type": "Timestamp", "format": STRING_FORMAT})
    assert (out.value_schema, out.value) == (Timestamp.SCHEMA, DATE_PLUS_TIME)


def test_with_schema_date_and_time_sources() -> None:
    date = convert(DATE, Date.SCHEMA, **{"target.type": "unix"})
    assert (date.value_schema, date.value) == (Schema.INT64_SCHEMA, 86_400_000)
    time = convert(TIME, Time.SCHEMA, **{"target.type": "Timestamp"})
    assert time.value == EPOCH + dt.timedelta(milliseconds=1234)
    optional = convert(None, Timestamp.builder().optional().build(), **{"target.type": "Date"})
    assert optional.value is None and optional.value_schema == Date.builder().optional().build()


@pytest.mark.parametrize(
    ("precision", "unix"),
    [
        ("seconds", 86_401),
        ("milliseconds", 86_401_234),
        ("microseconds", 86_401_234_000),
        ("nanoseconds", 86_401_234_000_000),
    ],
)
def test_unix_precisions(precision: str, unix: int) -> None:
    assert (
        convert(DATE_PLUS_TIME, None, **{"target.type": "unix", "unix.precision": precision}).value
        == unix
    )
    back = convert(
        unix + (123 if precision in ("microseconds", "nanoseconds") else 0),
        None,
        **{"target.type": "Timestamp", "unix.precision": precision},
    )
    expected = DATE_PLUS_TIME if precision != "seconds" else DATE_PLUS_TIME.replace(microsecond=0)
    assert back.value == expected


def test_field_with_schema_and_defaults() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("ts", Schema.INT64_SCHEMA)
        .field("other", Schema.STRING_SCHEMA)
        .build()
    )
    value = Struct(schema).put("ts", DATE_PLUS_TIME_UNIX).put("other", "test")
    out = convert(value, schema, **{"field": "ts", "target.type": "Timestamp"})
    assert out.value_schema.field("ts").schema == Timestamp.SCHEMA  # type: ignore[union-attr]  # a struct
    assert (out.value.get("ts"), out.value.get("other")) == (DATE_PLUS_TIME, "test")


def test_field_schemaless_and_key() -> None:
    out = convert(
        {"ts": DATE_PLUS_TIME_UNIX, "other": "test"},
        None,
        **{"field": "ts", "target.type": "string", "format": STRING_FORMAT},
    )
    assert out.value == {"ts": DATE_PLUS_TIME_STRING, "other": "test"}
    key = TransformationHarness(TimestampConverterKey, {"target.type": "Date"})
    assert key.apply(SourceRecord(None, None, "t", 0, None, DATE_PLUS_TIME)).key == DATE


@pytest.mark.parametrize(("replace", "expected"), [("false", None), ("true", EPOCH)])
def test_unset_optional_field_with_default(replace: str, expected: dt.datetime | None) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("ts", Timestamp.builder().optional().default_value(EPOCH).build())
        .build()
    )
    out = convert(
        Struct(schema).put("ts", None),
        schema,
        **{"field": "ts", "target.type": "Timestamp", "replace.null.with.default": replace},
    )
    assert out.value.get_without_default("ts") == expected


def test_errors() -> None:
    with pytest.raises(DataException, match=r"does not match pattern \(yyyy\)"):
        convert("not a year", None, **{"target.type": "unix", "format": "yyyy"})
    with pytest.raises(
        DataException, match="TimestampConverter does not support float objects as timestamps"
    ):
        convert(1.5, None, **{"target.type": "unix"})
    with pytest.raises(DataException, match="Expected Unix timestamp to be a Long, but found str"):
        convert("x", Schema.INT64_SCHEMA, **{"target.type": "Timestamp"})
