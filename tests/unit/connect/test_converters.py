"""The KIP-959 converters (Integer, Long, Short, Float, Double, Boolean), with the cases of
Kafka's ``NumberConverterTest`` (and its subclasses) and ``BooleanConverterTest`` ported,
and the byte vectors Kafka's serializers write."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_provider_connect.connect import plugins
from airflow_provider_connect.connect.converters import (
    BooleanConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    NumberConverter,
    ShortConverter,
)
from airflow_provider_connect.connect.data import Schema, SchemaAndValue
from airflow_provider_connect.connect.data.schema import INTEGER_RANGES
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.control.plugins import all_plugins, plugin_info

TOPIC = "topic"
HEADER = "header"

# Kafka's samples of each converter's test (MIN_VALUE, 1234, MAX_VALUE; Float.MIN_VALUE and
# Double.MIN_VALUE are the smallest subnormals), with the bytes Kafka's serializers write.
SAMPLES: dict[type[NumberConverter], list[tuple[int | float, str]]] = {
    ShortConverter: [(-(2**15), "8000"), (1234, "04d2"), (2**15 - 1, "7fff")],
    IntegerConverter: [(-(2**31), "80000000"), (1234, "000004d2"), (2**31 - 1, "7fffffff")],
    LongConverter: [
        (-(2**63), "8000000000000000"),
        (1234, "00000000000004d2"),
        (2**63 - 1, "7fffffffffffffff"),
    ],
    FloatConverter: [
        (1.401298464324817e-45, "00000001"),
        (1234.31005859375, "449a49ec"),  # 1234.31f
        (3.4028234663852886e38, "7f7fffff"),
    ],
    DoubleConverter: [
        (5e-324, "0000000000000001"),
        (1234.31, "4093493d70a3d70a"),
        (1.7976931348623157e308, "7fefffffffffffff"),
    ],
}
SCHEMAS: dict[type[NumberConverter], Schema] = {
    ShortConverter: Schema.OPTIONAL_INT16_SCHEMA,
    IntegerConverter: Schema.OPTIONAL_INT32_SCHEMA,
    LongConverter: Schema.OPTIONAL_INT64_SCHEMA,
    FloatConverter: Schema.OPTIONAL_FLOAT32_SCHEMA,
    DoubleConverter: Schema.OPTIONAL_FLOAT64_SCHEMA,
}
# What Kafka's converters and deserializers say of bytes of the wrong length.
SIZE_ERRORS: dict[type[NumberConverter], str] = {
    ShortConverter: (
        "Failed to deserialize short: Size of data received by ShortDeserializer is not 2"
    ),
    IntegerConverter: (
        "Failed to deserialize integer: Size of data received by IntegerDeserializer is not 4"
    ),
    LongConverter: (
        "Failed to deserialize long: Size of data received by LongDeserializer is not 8"
    ),
    FloatConverter: "Failed to deserialize float: Size of data received by Deserializer is not 4",
    DoubleConverter: (
        "Failed to deserialize double: Size of data received by Deserializer is not 8"
    ),
}
NUMBER_CONVERTERS = list(SCHEMAS)


def configured(cls: type[NumberConverter]) -> NumberConverter:
    converter = cls()
    converter.configure({}, False)
    return converter


@pytest.mark.parametrize("cls", NUMBER_CONVERTERS)
def test_converting_samples_to_and_from_bytes(cls: type[NumberConverter]) -> None:
    converter, schema = configured(cls), SCHEMAS[cls]
    for sample, wire in SAMPLES[cls]:
        expected = bytes.fromhex(wire)
        assert converter.from_connect_data(TOPIC, schema, sample) == expected
        assert converter.to_connect_data(TOPIC, expected) == SchemaAndValue(schema, sample)
        assert converter.from_connect_header(TOPIC, HEADER, schema, sample) == expected
        assert converter.to_connect_header(TOPIC, HEADER, expected) == (schema, sample)


@pytest.mark.parametrize("cls", NUMBER_CONVERTERS)
def test_deserializing_data_or_header_with_too_many_or_too_few_bytes(
    cls: type[NumberConverter],
) -> None:
    converter = configured(cls)
    for data in (bytes(10), bytes(1), b""):
        with pytest.raises(DataException) as raised:
            converter.to_connect_data(TOPIC, data)
        assert str(raised.value) == SIZE_ERRORS[cls]
        with pytest.raises(DataException, match="^Failed to deserialize"):
            converter.to_connect_header(TOPIC, HEADER, data)


@pytest.mark.parametrize("cls", NUMBER_CONVERTERS)
@pytest.mark.parametrize("value", ["not a valid number", True, b"\x00\x00\x00\x01", [1]])
def test_serializing_an_incorrect_type_as_data_or_header(
    cls: type[NumberConverter], value: object
) -> None:
    converter, schema = configured(cls), SCHEMAS[cls]
    message = f"Failed to serialize to {cls.TYPE_NAME} (was {type(value).__name__})"
    with pytest.raises(DataException) as raised:
        converter.from_connect_data(TOPIC, schema, value)
    assert str(raised.value) == message
    with pytest.raises(DataException, match=r"^Failed to serialize to \w+ \(was"):
        converter.from_connect_header(TOPIC, HEADER, schema, value)


@pytest.mark.parametrize("cls", [ShortConverter, IntegerConverter, LongConverter])
def test_integer_converters_take_ints_of_their_range_only(cls: type[NumberConverter]) -> None:
    converter = configured(cls)
    low, high = INTEGER_RANGES[cls.SCHEMA.type]
    with pytest.raises(DataException, match=r"^Failed to serialize to \w+ \(was float\)$"):
        converter.from_connect_data(TOPIC, None, 1.0)
    for value in (low - 1, high + 1):
        with pytest.raises(DataException) as raised:
            converter.from_connect_data(TOPIC, None, value)
        assert str(raised.value) == (
            f"Failed to serialize to {cls.TYPE_NAME}: "
            f"{value} is out of range for {cls.SCHEMA.type.name}"
        )


def test_float_converters_take_ints_and_round_to_their_width() -> None:
    assert configured(DoubleConverter).from_connect_data(TOPIC, None, 3) == struct.pack(">d", 3)
    floats = configured(FloatConverter)
    assert floats.from_connect_data(TOPIC, None, 1234.31) == bytes.fromhex("449a49ec")
    assert floats.to_connect_data(TOPIC, bytes.fromhex("449a49ec")).value == 1234.31005859375
    with pytest.raises(DataException, match=r"^Failed to serialize to float: 1e\+300 is out of"):
        floats.from_connect_data(TOPIC, None, 1e300)
    with pytest.raises(DataException, match="^Failed to serialize to double: .* out of range"):
        configured(DoubleConverter).from_connect_data(TOPIC, None, 10**400)


@pytest.mark.parametrize(
    ("cls", "fmt", "java_nan"),
    [(FloatConverter, ">f", "7fc00000"), (DoubleConverter, ">d", "7ff8000000000000")],
)
def test_float_converters_carry_infinities_and_nan(
    cls: type[NumberConverter], fmt: str, java_nan: str
) -> None:
    converter = configured(cls)
    for value in (math.inf, -math.inf, -0.0):
        wire = converter.from_connect_data(TOPIC, None, value)
        assert wire == struct.pack(fmt, value)
        assert str(converter.to_connect_data(TOPIC, wire).value) == str(value)
    nan = converter.from_connect_data(TOPIC, None, math.nan)
    assert nan == bytes.fromhex(java_nan)  # Float.NaN, Double.NaN
    assert math.isnan(converter.to_connect_data(TOPIC, nan).value)


@pytest.mark.parametrize("cls", NUMBER_CONVERTERS)
def test_null_to_bytes_and_bytes_null_to_number(cls: type[NumberConverter]) -> None:
    converter, schema = configured(cls), SCHEMAS[cls]
    assert converter.from_connect_data(TOPIC, schema, None) is None
    assert converter.from_connect_header(TOPIC, HEADER, schema, None) is None
    assert converter.to_connect_data(TOPIC, None) == SchemaAndValue(schema, None)
    assert converter.to_connect_header(TOPIC, HEADER, None) == SchemaAndValue(schema, None)


@pytest.mark.parametrize("cls", NUMBER_CONVERTERS)
def test_the_schema_given_is_not_looked_at_as_in_kafka(cls: type[NumberConverter]) -> None:
    sample, wire = SAMPLES[cls][1]
    assert configured(cls).from_connect_data(TOPIC, Schema.STRING_SCHEMA, sample) == bytes.fromhex(
        wire
    )


@given(st.data())
def test_every_integer_of_a_type_round_trips_as_kafka_writes_it(data: st.DataObject) -> None:
    for cls, fmt in ((ShortConverter, ">h"), (IntegerConverter, ">i"), (LongConverter, ">q")):
        value = data.draw(st.integers(*INTEGER_RANGES[cls.SCHEMA.type]))
        wire = cls().from_connect_data(TOPIC, None, value)
        assert wire == struct.pack(fmt, value) == value.to_bytes(struct.calcsize(fmt), signed=True)
        assert cls().to_connect_data(TOPIC, wire) == (cls.SCHEMA, value)


@given(st.floats(width=32), st.floats())
def test_every_float_round_trips(float32: float, float64: float) -> None:
    for cls, value in ((FloatConverter, float32), (DoubleConverter, float64)):
        wire = cls().from_connect_data(TOPIC, None, value)
        assert wire is not None
        read = cls().to_connect_data(TOPIC, wire).value
        assert read == value or (math.isnan(read) and math.isnan(value))


@pytest.mark.parametrize("cls", [*NUMBER_CONVERTERS, BooleanConverter])
def test_configs_are_kafkas_converter_configs(
    cls: type[NumberConverter] | type[BooleanConverter],
) -> None:
    assert cls().config().names() == ["converter.type"]
    header_converter = cls()
    header_converter.configure({"converter.type": "header"})  # as a header converter
    key_converter = cls()
    key_converter.configure({"converter.type": "key"}, True)


TRUE, FALSE = b"\x01", b"\x00"


def test_boolean_from_connect() -> None:
    converter = BooleanConverter()
    converter.configure({}, False)
    assert converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True) == TRUE
    assert converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, False) == FALSE
    assert converter.from_connect_data(TOPIC, None, True) == TRUE
    assert converter.from_connect_header(TOPIC, HEADER, Schema.BOOLEAN_SCHEMA, False) == FALSE


def test_boolean_from_connect_bad_schema() -> None:
    with pytest.raises(DataException) as raised:
        BooleanConverter().from_connect_data(TOPIC, Schema.INT32_SCHEMA, False)
    assert str(raised.value) == "Invalid schema type for BooleanConverter: INT32"
    with pytest.raises(DataException, match="^Invalid schema type for BooleanConverter: STRING"):
        BooleanConverter().from_connect_data(TOPIC, Schema.OPTIONAL_STRING_SCHEMA, None)


@pytest.mark.parametrize("value", ["true", 1, 0.0, b"\x01"])
def test_boolean_from_connect_invalid_value(value: object) -> None:
    with pytest.raises(DataException) as raised:
        BooleanConverter().from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, value)
    assert str(raised.value) == (
        f"BooleanConverter is not compatible with objects of type {type(value).__name__}"
    )
    with pytest.raises(DataException, match="^BooleanConverter is not compatible"):
        BooleanConverter().from_connect_header(TOPIC, HEADER, None, value)


def test_boolean_from_connect_null() -> None:
    assert BooleanConverter().from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, None) is None
    assert BooleanConverter().from_connect_data(TOPIC, None, None) is None


def test_boolean_to_connect() -> None:
    converter = BooleanConverter()
    assert converter.to_connect_data(TOPIC, TRUE) == (Schema.OPTIONAL_BOOLEAN_SCHEMA, True)
    assert converter.to_connect_data(TOPIC, FALSE) == (Schema.OPTIONAL_BOOLEAN_SCHEMA, False)
    assert converter.to_connect_data(TOPIC, None) == (Schema.OPTIONAL_BOOLEAN_SCHEMA, None)
    assert converter.to_connect_header(TOPIC, HEADER, TRUE) == (
        Schema.OPTIONAL_BOOLEAN_SCHEMA,
        True,
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "Size of data received by BooleanDeserializer is not 1"),
        (b"\x01\x00", "Size of data received by BooleanDeserializer is not 1"),
        (b"\x02", "Unexpected byte received by BooleanDeserializer: 2"),
        (b"\x7f", "Unexpected byte received by BooleanDeserializer: 127"),
        (b"\xff", "Unexpected byte received by BooleanDeserializer: -1"),  # a Java byte
    ],
)
def test_boolean_to_connect_malformed(data: bytes, message: str) -> None:
    with pytest.raises(DataException) as raised:
        BooleanConverter().to_connect_data(TOPIC, data)
    assert str(raised.value) == f"Failed to deserialize boolean: {message}"
    with pytest.raises(DataException, match="^Failed to deserialize boolean: "):
        BooleanConverter().to_connect_header(TOPIC, HEADER, data)


KIP_959 = [
    BooleanConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
]


def test_registered_under_their_kafka_class_names() -> None:
    for cls in KIP_959:
        assert plugins.load_class(f"org.apache.kafka.connect.converters.{cls.__name__}") is cls
        assert plugins.load_class(cls.__name__) is cls
        assert (cls, "converter") in all_plugins()
        assert plugin_info(cls)["type"] == "converter"
