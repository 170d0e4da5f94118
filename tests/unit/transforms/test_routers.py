"""TimestampRouter and RegexRouter, with the cases of Kafka's tests, and Java's pattern and
replacement syntax."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.java_text import SimpleDateFormat
from airflow_provider_connect.transforms.routers import RegexRouter, TimestampRouter


def test_timestamp_router_default_configuration() -> None:
    xform = TransformationHarness(TimestampRouter, {})
    record = SourceRecord(None, None, "test", 0, timestamp=1483425001864)
    assert xform.apply(record).topic == "test-20170103"


def test_timestamp_router_formats_and_needs_a_timestamp() -> None:
    xform = TransformationHarness(
        TimestampRouter,
        {"topic.format": "${timestamp}_${topic}", "timestamp.format": "yyyy-MM-dd'T'HH"},
    )
    assert (
        xform.apply(SourceRecord(None, None, "t", timestamp=1483425001864)).topic
        == "2017-01-03T06_t"
    )
    with pytest.raises(DataException, match="Timestamp missing on record"):
        xform.apply(SourceRecord(None, None, "t"))
    with pytest.raises(ConfigException, match="Illegal pattern character 'q'"):
        TransformationHarness(TimestampRouter, {"timestamp.format": "yyyyq"})


def route(regex: str, replacement: str, topic: str) -> str:
    router = TransformationHarness(RegexRouter, {"regex": regex, "replacement": replacement})
    return router.apply(SinkRecord(topic, 0, None, None, None, None, 0)).topic


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("foo", "bar", "foo", "bar"),  # static replacement
        ("foo", "bar", "orig", "orig"),  # does not match
        ("(.*)", "$1", "orig", "orig"),  # identity
        ("(.*)", "prefix-$1", "orig", "prefix-orig"),
        ("(.*)", "$1-suffix", "orig", "orig-suffix"),
        (r"(.*)-(\d\d\d\d\d\d\d\d)", "$1", "index-20160117", "index"),  # slice
        ("(?<name>.*)-x", "${name}", "kept-x", "kept"),  # Java's named groups
        ("(.*)", r"\$$1", "cost", "$cost"),  # an escaped dollar
        ("foo", "bar", "foobar", "foobar"),  # matches the whole topic only
    ],
)
def test_regex_router(regex: str, replacement: str, topic: str, expected: str) -> None:
    assert route(regex, replacement, topic) == expected


def test_regex_router_bad_configs() -> None:
    with pytest.raises(ConfigException, match="Invalid regex"):
        TransformationHarness(RegexRouter, {"regex": "(", "replacement": "x"})
    with pytest.raises(ConfigException, match='Missing required configuration "replacement"'):
        TransformationHarness(RegexRouter, {"regex": "x"})
    with pytest.raises(ConfigException, match="Illegal group reference"):
        TransformationHarness(RegexRouter, {"regex": "x", "replacement": "$x"})


def test_simple_date_format_round_trips() -> None:
    moment = dt.datetime(2017, 1, 3, 6, 30, 1, 864000, dt.timezone.utc)
    for pattern, text in [
        ("yyyy-MM-dd HH:mm:ss.SSS", "2017-01-03 06:30:01.864"),
        ("dd MMM yyyy hh:mm a", "03 Jan 2017 06:30 AM"),
        ("EEE, d MMMM yy", "Tue, 3 January 17"),
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "2017-01-03T06:30:01Z"),
    ]:
        assert SimpleDateFormat(pattern, "f").format(moment) == text
    parsed = SimpleDateFormat("yyyy-MM-dd HH:mm:ss.SSS", "f").parse("2017-01-03 06:30:01.864")
    assert parsed == moment
    assert SimpleDateFormat("yyyy-MM-dd HH:mmZ", "f").parse(
        "2017-01-03 08:30+0200"
    ) == moment.replace(second=0, microsecond=0)
