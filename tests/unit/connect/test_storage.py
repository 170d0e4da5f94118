"""The String, ByteArray and SimpleHeader converters."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaAndValue
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.storage import (
    ByteArrayConverter,
    SimpleHeaderConverter,
    StringConverter,
)


def test_string_converter_round_trip_and_encoding() -> None:
    utf8 = StringConverter()
    utf8.configure({}, False)
    assert utf8.from_connect_data("t", Schema.STRING_SCHEMA, "héllo") == "héllo".encode()
    assert utf8.from_connect_data("t", None, 12) == b"12"
    assert utf8.from_connect_data("t", None, None) is None
    assert utf8.to_connect_data("t", "héllo".encode()) == (Schema.OPTIONAL_STRING_SCHEMA, "héllo")
    assert utf8.to_connect_data("t", None) == (Schema.OPTIONAL_STRING_SCHEMA, None)
    latin = StringConverter()
    latin.configure({"converter.encoding": "ISO-8859-1"})
    assert latin.from_connect_data("t", None, "é") == b"\xe9"
    with pytest.raises(DataException, match="Failed to deserialize string"):
        utf8.to_connect_data("t", b"\xe9")
    with pytest.raises(DataException, match="Unsupported encoding"):
        StringConverter().configure({"converter.encoding": "klingon"})


def test_byte_array_converter_passes_bytes_through() -> None:
    c = ByteArrayConverter()
    assert c.from_connect_data("t", Schema.BYTES_SCHEMA, bytearray(b"ab")) == b"ab"
    assert c.to_connect_data("t", b"ab") == (Schema.OPTIONAL_BYTES_SCHEMA, b"ab")
    assert c.from_connect_data("t", None, None) is None
    with pytest.raises(DataException, match="Invalid schema type for ByteArrayConverter: STRING"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, b"x")
    with pytest.raises(DataException, match="not compatible with objects of type str"):
        c.from_connect_data("t", None, "x")


@pytest.mark.parametrize(
    ("value", "wire", "read_back"),
    [
        ("text", b"text", SchemaAndValue(Schema.STRING_SCHEMA, "text")),
        (True, b"true", SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)),
        (12, b"12", SchemaAndValue(Schema.INT8_SCHEMA, 12)),
        (40000, b"40000", SchemaAndValue(Schema.INT32_SCHEMA, 40000)),
        (2**40, b"1099511627776", SchemaAndValue(Schema.INT64_SCHEMA, 2**40)),
        (1.5, b"1.5", SchemaAndValue(Schema.FLOAT64_SCHEMA, 1.5)),
        ([1, "a"], b'[1,"a"]', SchemaAndValue(None, [1, "a"])),
        ({"k": 1}, b'{"k":1}', SchemaAndValue(None, {"k": 1})),
        ("12 monkeys", b"12 monkeys", SchemaAndValue(Schema.STRING_SCHEMA, "12 monkeys")),
        ("[not json", b"[not json", SchemaAndValue(Schema.STRING_SCHEMA, "[not json")),
    ],
)
def test_simple_header_converter_infers_types(
    value: object, wire: bytes, read_back: SchemaAndValue
) -> None:
    c = SimpleHeaderConverter()
    assert c.from_connect_header("t", "h", None, value) == wire
    assert c.to_connect_header("t", "h", wire) == read_back


def test_simple_header_converter_nulls_and_binary() -> None:
    c = SimpleHeaderConverter()
    assert c.from_connect_header("t", "h", None, None) is None
    assert c.to_connect_header("t", "h", None) == SchemaAndValue.NULL
    assert c.to_connect_header("t", "h", b"\xff\xfe") == (Schema.BYTES_SCHEMA, b"\xff\xfe")
    with pytest.raises(DataException, match="cannot convert object"):
        c.from_connect_header("t", "h", None, object())
