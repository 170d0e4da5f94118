"""PostgreSQL column types as Debezium maps them (connectors/postgres/types.py): per type and
mode, the schema (type, semantic name, version, doc, parameters, optionality) and the value
parsed from PostgreSQL's text output.

The expected schemas are written out here from Debezium's Java sources (PostgresValueConverter,
JdbcValueConverters, io.debezium.time.*, io.debezium.data.*, SchemaFactory in the
debezium/debezium repository), not derived from the module under test. Expected values come
from Debezium's tests where they give one (AbstractRecordsProducerTest,
RecordsStreamProducerIT, PostgresConnectorIT: the test is named in a comment), else from
running the same Java code paths (pgjdbc 42.7.13's PGInterval and HStoreConverter, Jackson,
java.time) on the same text ("Java:" in a comment).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
from decimal import Decimal as D
from typing import Any

import pytest

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    validate_value,
)
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connectors.postgres.types import (
    ColumnMapping,
    PgType,
    TypeModes,
    UnsupportedType,
    column_mapping,
)

DEFAULT = TypeModes()


def numeric_modifier(precision: int, scale: int) -> int:
    return ((precision << 16) | (scale & 0x7FF)) + 4


def mapping(
    t: PgType | str, modes: TypeModes = DEFAULT, optional: bool = True, modifier: int = -1
) -> ColumnMapping:
    pg_type = PgType(t, modifier) if isinstance(t, str) else t
    return column_mapping(pg_type, optional, modes)


def parse(t: PgType | str, text: str, modes: TypeModes = DEFAULT, modifier: int = -1) -> Any:
    return mapping(t, modes, modifier=modifier).parse(text)


def array_of(name: str, modifier: int = -1, **element: Any) -> PgType:
    return PgType("_" + name, modifier, element=PgType(name, modifier, **element))


# -- the expected schemas, from Debezium's sources --------------------------------------------


def named(builder: SchemaBuilder, name: str, version: int = 1) -> SchemaBuilder:
    return builder.name(name).version(version)


def json_schema() -> SchemaBuilder:  # io.debezium.data.Json
    return named(SchemaBuilder.string(), "io.debezium.data.Json")


def debezium_time(kind: str, builder: SchemaBuilder) -> SchemaBuilder:  # io.debezium.time.*
    return named(builder, "io.debezium.time." + kind)


def decimal_schema(scale: int, precision: int | None) -> SchemaBuilder:
    # SpecialValueDecimal.builder(PRECISE, precision, scale) / Decimal.builder(scale) (money)
    builder = Decimal.builder(scale)
    if precision is not None:
        builder.parameter("connect.decimal.precision", str(precision))
    return builder


def variable_scale_decimal() -> SchemaBuilder:  # SchemaFactory.datatypeVariableScaleDecimalSchema
    return (
        named(SchemaBuilder.struct(), "io.debezium.data.VariableScaleDecimal")
        .doc("Variable scaled decimal")
        .field("scale", Schema.INT32_SCHEMA)
        .field("value", Schema.BYTES_SCHEMA)
    )


def bits(length: int) -> SchemaBuilder:  # SchemaFactory.datatypeBitsSchema
    return named(SchemaBuilder.bytes(), "io.debezium.data.Bits").parameter("length", str(length))


def enum(allowed: str) -> SchemaBuilder:  # SchemaFactory.datatypeEnumSchema
    return named(SchemaBuilder.string(), "io.debezium.data.Enum").parameter("allowed", allowed)


def point_schema() -> SchemaBuilder:  # io.debezium.data.geometry.Point
    return (
        named(SchemaBuilder.struct(), "io.debezium.data.geometry.Point")
        .doc("Geometry (POINT)")
        .field("x", Schema.FLOAT64_SCHEMA)
        .field("y", Schema.FLOAT64_SCHEMA)
        .field("wkb", Schema.OPTIONAL_BYTES_SCHEMA)
        .field("srid", Schema.OPTIONAL_INT32_SCHEMA)
    )


GEOMETRY = (  # io.debezium.data.geometry.Geometry: optional by its builder
    named(SchemaBuilder.struct(), "io.debezium.data.geometry.Geometry", 2)
    .doc("Geometry")
    .optional()
    .field("wkb", Schema.BYTES_SCHEMA)
    .field("srid", Schema.OPTIONAL_INT32_SCHEMA)
    .field(
        "extensions",
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).optional().build(),
    )
    .build()
)


def opt(builder: SchemaBuilder) -> Schema:
    return builder.optional().build()


def array(element: Schema) -> Schema:
    return SchemaBuilder.array(element).optional().build()


def epoch_micros(moment: dt.datetime) -> int:
    return (moment - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)


def epoch_day(day: dt.date) -> int:
    return (day - dt.date(1970, 1, 1)).days


def wkb_point(x: float, y: float) -> bytes:  # Point.buildWKBPoint: little-endian, type 1
    return b"\x01" + struct.pack("<I", 1) + struct.pack("<dd", x, y)


def wkb_line(*points: tuple[float, float]) -> bytes:  # WkbWriter.buildLineString, type 2
    return (
        b"\x01"
        + struct.pack("<II", 2, len(points))
        + b"".join(struct.pack("<dd", *p) for p in points)
    )


def wkb_polygon(*ring: tuple[float, float]) -> bytes:  # WkbWriter.buildPolygon, type 3
    return (
        b"\x01"
        + struct.pack("<III", 3, 1, len(ring))
        + b"".join(struct.pack("<dd", *p) for p in ring)
    )


# The instant of AbstractRecordsProducerTest's time_table: '2016-11-04T13:51:30.123456'.
TS = epoch_micros(dt.datetime(2016, 11, 4, 13, 51, 30, 123456))
# Year 21016 is 20000 years (50 Gregorian cycles of 146097 days) after 1016.
TS_LARGE_BASE = epoch_micros(dt.datetime(1016, 11, 4, 13, 51, 30)) + 50 * 146_097 * 86_400_000_000


# -- one case per type and mode: (type, modes, text, expected schema, expected value) ---------

CASES: list[tuple[str, PgType, TypeModes, str, Schema, Any]] = [
    # schemasAndValuesForNumericType
    ("int2", PgType("int2"), DEFAULT, "1", Schema.OPTIONAL_INT16_SCHEMA, 1),
    ("int4", PgType("int4"), DEFAULT, "123456", Schema.OPTIONAL_INT32_SCHEMA, 123456),
    ("int8", PgType("int8"), DEFAULT, "1234567890123", Schema.OPTIONAL_INT64_SCHEMA, 1234567890123),
    ("int8 min", PgType("int8"), DEFAULT, "-9223372036854775808", Schema.OPTIONAL_INT64_SCHEMA, -(2**63)),
    ("float4", PgType("float4"), DEFAULT, "3.3", Schema.OPTIONAL_FLOAT32_SCHEMA, 3.3),
    ("float8", PgType("float8"), DEFAULT, "4.44", Schema.OPTIONAL_FLOAT64_SCHEMA, 4.44),
    ("float4 int", PgType("float4"), DEFAULT, "3", Schema.OPTIONAL_FLOAT32_SCHEMA, 3.0),
    ("float8 exp", PgType("float8"), DEFAULT, "1e+300", Schema.OPTIONAL_FLOAT64_SCHEMA, 1e300),
    ("float4 +inf", PgType("float4"), DEFAULT, "Infinity", Schema.OPTIONAL_FLOAT32_SCHEMA, float("inf")),
    ("float8 -inf", PgType("float8"), DEFAULT, "-Infinity", Schema.OPTIONAL_FLOAT64_SCHEMA, float("-inf")),
    ("bool t", PgType("bool"), DEFAULT, "t", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
    ("bool f", PgType("bool"), DEFAULT, "f", Schema.OPTIONAL_BOOLEAN_SCHEMA, False),
    ("bool true (::text)", PgType("bool"), DEFAULT, "true", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
    ("oid", PgType("oid"), DEFAULT, "4000000000", Schema.OPTIONAL_INT64_SCHEMA, 4_000_000_000),
    # schemasAndValuesForBigDecimalEncodedNumericTypes: numeric(3,2), (4,0), (6,4)
    ("numeric(3,2)", PgType("numeric", numeric_modifier(3, 2)), DEFAULT, "1.10", opt(decimal_schema(2, 3)), D("1.10")),
    ("numeric(4,0)", PgType("numeric", numeric_modifier(4, 0)), DEFAULT, "10", opt(decimal_schema(0, 4)), D("10")),
    ("numeric(6,4)", PgType("numeric", numeric_modifier(6, 4)), DEFAULT, "22.2200", opt(decimal_schema(4, 6)), D("22.2200")),
    ("numeric(3,-2)", PgType("numeric", numeric_modifier(3, -2)), DEFAULT, "12300", opt(decimal_schema(-2, 3)), D("12300")),
    # ... schemasAndValuesForStringEncodedNumericTypes(+WithInfinity)
    ("numeric(3,2) string", PgType("numeric", numeric_modifier(3, 2)), TypeModes(decimal_handling="string"), "1.10", Schema.OPTIONAL_STRING_SCHEMA, "1.10"),
    ("numeric string", PgType("numeric"), TypeModes(decimal_handling="string"), "10.1111", Schema.OPTIONAL_STRING_SCHEMA, "10.1111"),
    ("numeric(6,4) string int", PgType("numeric", numeric_modifier(6, 4)), TypeModes(decimal_handling="string"), "22.0000", Schema.OPTIONAL_STRING_SCHEMA, "22.0000"),
    ("numeric string NaN", PgType("numeric"), TypeModes(decimal_handling="string"), "NaN", Schema.OPTIONAL_STRING_SCHEMA, "NAN"),
    ("numeric string +inf", PgType("numeric"), TypeModes(decimal_handling="string"), "Infinity", Schema.OPTIONAL_STRING_SCHEMA, "POSITIVE_INFINITY"),
    ("numeric string -inf", PgType("numeric"), TypeModes(decimal_handling="string"), "-Infinity", Schema.OPTIONAL_STRING_SCHEMA, "NEGATIVE_INFINITY"),
    # ... schemasAndValuesForDoubleEncodedNumericTypes
    ("numeric(3,2) double", PgType("numeric", numeric_modifier(3, 2)), TypeModes(decimal_handling="double"), "1.10", Schema.OPTIONAL_FLOAT64_SCHEMA, 1.1),
    ("numeric double", PgType("numeric"), TypeModes(decimal_handling="double"), "10.1111", Schema.OPTIONAL_FLOAT64_SCHEMA, 10.1111),
    ("numeric double +inf", PgType("numeric"), TypeModes(decimal_handling="double"), "Infinity", Schema.OPTIONAL_FLOAT64_SCHEMA, float("inf")),
    # schemaAndValuesForMoneyTypes / NegativeMoneyTypes ('($1234.11)' prints as -$1,234.11)
    ("money", PgType("money"), DEFAULT, "$1,234.11", opt(decimal_schema(2, None)), D("1234.11")),
    ("money negative", PgType("money"), DEFAULT, "-$1,234.11", opt(decimal_schema(2, None)), D("-1234.11")),
    ("money parentheses", PgType("money"), DEFAULT, "($1,234.11)", opt(decimal_schema(2, None)), D("-1234.11")),
    ("money 3 digits", PgType("money"), TypeModes(money_fraction_digits=3), "$1,234.11", opt(decimal_schema(3, None)), D("1234.110")),
    ("money half up", PgType("money"), TypeModes(money_fraction_digits=1), "$0.25", opt(decimal_schema(1, None)), D("0.3")),
    ("money double", PgType("money"), TypeModes(decimal_handling="double"), "-$1,234.11", Schema.OPTIONAL_FLOAT64_SCHEMA, -1234.11),
    ("money string", PgType("money"), TypeModes(decimal_handling="string"), "$92,233,720,368,547,758.07", Schema.OPTIONAL_STRING_SCHEMA, "92233720368547758.07"),
    # schemasAndValuesForStringTypes, ...ForArrayTypes (char(10) keeps its padding)
    ("varchar", PgType("varchar", 6), DEFAULT, "\u017e\u0161", Schema.OPTIONAL_STRING_SCHEMA, "\u017e\u0161"),
    ("bpchar", PgType("bpchar", 14), DEFAULT, "cone      ", Schema.OPTIONAL_STRING_SCHEMA, "cone      "),
    ("char", PgType("char"), DEFAULT, "a", Schema.OPTIONAL_STRING_SCHEMA, "a"),
    ("text", PgType("text"), DEFAULT, "some text", Schema.OPTIONAL_STRING_SCHEMA, "some text"),
    ("name", PgType("name"), DEFAULT, "pg_class", Schema.OPTIONAL_STRING_SCHEMA, "pg_class"),
    ("citext", PgType("citext"), DEFAULT, "Hello World", Schema.OPTIONAL_STRING_SCHEMA, "Hello World"),
    ("isbn", PgType("isbn"), DEFAULT, "0-393-04002-X", Schema.OPTIONAL_STRING_SCHEMA, "0-393-04002-X"),
    # schemasAndValuesForTextTypes
    ("json", PgType("json"), DEFAULT, '{"bar": "baz"}', opt(json_schema()), '{"bar": "baz"}'),
    ("jsonb", PgType("jsonb"), DEFAULT, '{"bar": "baz"}', opt(json_schema()), '{"bar": "baz"}'),
    ("xml", PgType("xml"), DEFAULT, "<foo>bar</foo><foo>bar</foo>", opt(named(SchemaBuilder.string(), "io.debezium.data.Xml")), "<foo>bar</foo><foo>bar</foo>"),
    ("uuid", PgType("uuid"), DEFAULT, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", opt(named(SchemaBuilder.string(), "io.debezium.data.Uuid")), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    # schemasAndValuesForNetworkAddressTypes, ...CidrAddressType, ...MacaddrType, ...Macaddr8Type
    ("inet", PgType("inet"), DEFAULT, "192.168.2.0/12", Schema.OPTIONAL_STRING_SCHEMA, "192.168.2.0/12"),
    ("cidr", PgType("cidr"), DEFAULT, "192.168.100.128/25", Schema.OPTIONAL_STRING_SCHEMA, "192.168.100.128/25"),
    ("macaddr", PgType("macaddr"), DEFAULT, "08:00:2b:01:02:03", Schema.OPTIONAL_STRING_SCHEMA, "08:00:2b:01:02:03"),
    ("macaddr8", PgType("macaddr8"), DEFAULT, "08:00:2b:01:02:03:04:05", Schema.OPTIONAL_STRING_SCHEMA, "08:00:2b:01:02:03:04:05"),
    # schemaAndValuesForRangeTypes
    ("tsrange", PgType("tsrange", kind="r"), DEFAULT, '["2019-03-31 15:30:00",infinity)', Schema.OPTIONAL_STRING_SCHEMA, '["2019-03-31 15:30:00",infinity)'),
    ("tstzrange", PgType("tstzrange", kind="r"), DEFAULT, '["2017-06-05 11:29:12.549426+00",)', Schema.OPTIONAL_STRING_SCHEMA, '["2017-06-05 11:29:12.549426+00",)'),
    ("daterange", PgType("daterange", kind="r"), DEFAULT, "[2019-03-31,2019-04-30)", Schema.OPTIONAL_STRING_SCHEMA, "[2019-03-31,2019-04-30)"),
    ("int4range", PgType("int4range", kind="r"), DEFAULT, "[1000,6000)", Schema.OPTIONAL_STRING_SCHEMA, "[1000,6000)"),
    ("numrange", PgType("numrange", kind="r"), DEFAULT, "[5.3,6.3)", Schema.OPTIONAL_STRING_SCHEMA, "[5.3,6.3)"),
    ("int8range", PgType("int8range", kind="r"), DEFAULT, "[1000000,6000000)", Schema.OPTIONAL_STRING_SCHEMA, "[1000000,6000000)"),
    # tsvector, ltree (schemasAndValuesForCustomTypes)
    ("tsvector", PgType("tsvector"), DEFAULT, "'a' 'fat':2", opt(named(SchemaBuilder.string(), "io.debezium.data.Tsvector")), "'a' 'fat':2"),
    ("ltree", PgType("ltree"), DEFAULT, "Top.Collections.Pictures.Astronomy.Galaxies", opt(named(SchemaBuilder.string(), "io.debezium.data.Ltree")), "Top.Collections.Pictures.Astronomy.Galaxies"),
    # schemaAndValueForByteaBytes / Hex / Base64 / Base64UrlSafe, ...ForUnknownColumn*
    ("bytea", PgType("bytea"), DEFAULT, "\\x010203", Schema.OPTIONAL_BYTES_SCHEMA, b"\x01\x02\x03"),
    ("bytea empty", PgType("bytea"), DEFAULT, "\\x", Schema.OPTIONAL_BYTES_SCHEMA, b""),
    ("bytea hex", PgType("bytea"), TypeModes(binary_handling="hex"), "\\x2766617427203c2d3e202763617427", Schema.OPTIONAL_STRING_SCHEMA, "2766617427203c2d3e202763617427"),
    ("bytea base64", PgType("bytea"), TypeModes(binary_handling="base64"), "\\x2766617427203c2d3e202763617427", Schema.OPTIONAL_STRING_SCHEMA, "J2ZhdCcgPC0+ICdjYXQn"),
    ("bytea base64-url-safe", PgType("bytea"), TypeModes(binary_handling="base64-url-safe"), "\\x2766617427203c2d3e202763617427", Schema.OPTIONAL_STRING_SCHEMA, "J2ZhdCcgPC0-ICdjYXQn"),
    # schemaAndValuesForBinTypes
    ("bit(1) 0", PgType("bit", 1), DEFAULT, "0", Schema.OPTIONAL_BOOLEAN_SCHEMA, False),
    ("bit(1) 1", PgType("bit", 1), DEFAULT, "1", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
    ("bit(2)", PgType("bit", 2), DEFAULT, "11", opt(bits(2)), b"\x03"),
    ("bit(7)", PgType("bit", 7), DEFAULT, "1000000", opt(bits(7)), bytes([64])),
    ("varbit(1)", PgType("varbit", 1), DEFAULT, "1", Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
    ("bit(2) zero", PgType("bit", 2), DEFAULT, "00", opt(bits(2)), b""),
    ("bit(24)", PgType("bit", 24), DEFAULT, "000000110000001000000001", opt(bits(24)), bytes([1, 2, 3])),
    ("bit(64)", PgType("bit", 64), DEFAULT, "1" + "0" * 63, opt(bits(64)), bytes([0, 0, 0, 0, 0, 0, 0, 128])),
    ("varbit", PgType("varbit"), DEFAULT, "101", opt(bits(2**31 - 1)), bytes([5])),
    ("varbit long", PgType("varbit"), DEFAULT, "111011010001000110000001000000001", opt(bits(2**31 - 1)), bytes([1, 2, 35, 218, 1])),
    # schemaAndValuesForDateTimeTypes
    ("date", PgType("date"), DEFAULT, "2016-11-04", opt(debezium_time("Date", SchemaBuilder.int32())), epoch_day(dt.date(2016, 11, 4))),
    ("date BC", PgType("date"), DEFAULT, "0001-01-01 BC", opt(debezium_time("Date", SchemaBuilder.int32())), epoch_day(dt.date(1, 1, 1)) - 366),
    ("date +infinity", PgType("date"), DEFAULT, "infinity", opt(debezium_time("Date", SchemaBuilder.int32())), -2_147_472_692),  # Java: LocalDate -5877611-06-21
    ("date -infinity", PgType("date"), DEFAULT, "-infinity", opt(debezium_time("Date", SchemaBuilder.int32())), -2_147_472_691),
    ("time", PgType("time"), DEFAULT, "13:51:30", opt(debezium_time("MicroTime", SchemaBuilder.int64())), (13 * 3600 + 51 * 60 + 30) * 1_000_000),
    ("time(3)", PgType("time", 3), DEFAULT, "13:51:30.123", opt(debezium_time("Time", SchemaBuilder.int32())), (13 * 3600 + 51 * 60 + 30) * 1000 + 123),
    ("time 24:00", PgType("time"), DEFAULT, "24:00:00", opt(debezium_time("MicroTime", SchemaBuilder.int64())), 86_400_000_000),
    ("time(3) adaptive_time_microseconds", PgType("time", 3), TypeModes(time_precision="adaptive_time_microseconds"), "13:51:30.123", opt(debezium_time("MicroTime", SchemaBuilder.int64())), (13 * 3600 + 51 * 60 + 30) * 1_000_000 + 123_000),
    ("timetz", PgType("timetz"), DEFAULT, "13:51:30.123789+02", opt(debezium_time("ZonedTime", SchemaBuilder.string())), "11:51:30.123789Z"),
    ("timetz(3)", PgType("timetz", 3), DEFAULT, "13:51:30.123+02", opt(debezium_time("ZonedTime", SchemaBuilder.string())), "11:51:30.123Z"),
    ("timetz UTC", PgType("timetz"), DEFAULT, "01:02:03.123789+00", opt(debezium_time("ZonedTime", SchemaBuilder.string())), "01:02:03.123789Z"),
    ("timetz wraps", PgType("timetz"), DEFAULT, "00:30:00+02", opt(debezium_time("ZonedTime", SchemaBuilder.string())), "22:30:00Z"),  # Java
    ("timetz minutes", PgType("timetz"), DEFAULT, "23:59:59.5-05:30", opt(debezium_time("ZonedTime", SchemaBuilder.string())), "05:29:59.5Z"),  # Java
    ("timetz 24:00", PgType("timetz"), DEFAULT, "24:00:00+00", opt(debezium_time("ZonedTime", SchemaBuilder.string())), "24:00:00Z"),  # shouldReceiveTwentyFourHourTimeWithTimeZone
    ("timestamp", PgType("timestamp"), DEFAULT, "2016-11-04 13:51:30.123456", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), TS),
    ("timestamp neg", PgType("timestamp"), DEFAULT, "1936-10-25 22:10:12.608", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), epoch_micros(dt.datetime(1936, 10, 25, 22, 10, 12, 608000))),
    ("timestamp(3)", PgType("timestamp", 3), DEFAULT, "2016-11-04 13:51:30.123", opt(debezium_time("Timestamp", SchemaBuilder.int64())), TS // 1000),
    ("timestamp(6)", PgType("timestamp", 6), DEFAULT, "2016-11-04 13:51:30.123456", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), TS),
    ("timestamp(0)", PgType("timestamp", 0), DEFAULT, "2016-11-04 13:51:30", opt(debezium_time("Timestamp", SchemaBuilder.int64())), TS // 1_000_000 * 1000),
    ("timestamp large", PgType("timestamp"), DEFAULT, "21016-11-04 13:51:30.123456", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), TS_LARGE_BASE + 123456),
    ("timestamp(3) large", PgType("timestamp", 3), DEFAULT, "21016-11-04 13:51:30.124", opt(debezium_time("Timestamp", SchemaBuilder.int64())), TS_LARGE_BASE // 1000 + 124),
    ("timestamp max", PgType("timestamp"), DEFAULT, "294247-01-01 23:59:59.999999", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), 9223371331200000000 - 1),
    ("timestamp min", PgType("timestamp"), DEFAULT, "4713-12-31 23:59:59.999999 BC", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), -210831897600000001),
    ("timestamp +infinity", PgType("timestamp"), DEFAULT, "infinity", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), 9223372036825200000),
    ("timestamp -infinity", PgType("timestamp"), DEFAULT, "-infinity", opt(debezium_time("MicroTimestamp", SchemaBuilder.int64())), -9223372036832400000),
    ("timestamp(3) +infinity", PgType("timestamp", 3), DEFAULT, "infinity", opt(debezium_time("Timestamp", SchemaBuilder.int64())), 9223372036825200),
    ("timestamptz", PgType("timestamptz"), DEFAULT, "2016-11-04 11:51:30.123456+00", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "2016-11-04T11:51:30.123456Z"),
    ("timestamptz offset", PgType("timestamptz"), DEFAULT, "2016-11-04 13:51:30.123456+02", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "2016-11-04T11:51:30.123456Z"),
    ("timestamptz pads", PgType("timestamptz"), DEFAULT, "2020-04-01 11:51:02+00", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "2020-04-01T11:51:02.000000Z"),
    ("timestamptz(3)", PgType("timestamptz", 3), DEFAULT, "2016-11-04 13:51:30.1+02", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "2016-11-04T11:51:30.100Z"),  # Java
    ("timestamptz(0)", PgType("timestamptz", 0), DEFAULT, "2016-11-04 13:51:30+05:30", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "2016-11-04T08:21:30Z"),
    ("timestamptz large", PgType("timestamptz"), DEFAULT, "21016-11-04 06:51:30.123456+00", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "+21016-11-04T06:51:30.123456Z"),
    ("timestamptz zero", PgType("timestamptz"), DEFAULT, "21016-11-04 06:51:30+00", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "+21016-11-04T06:51:30.000000Z"),
    ("timestamptz max", PgType("timestamptz"), DEFAULT, "294247-01-01 23:59:59.999999+00", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "+294247-01-01T23:59:59.999999Z"),
    ("timestamptz min", PgType("timestamptz"), DEFAULT, "4714-12-31 23:59:59.999999+00 BC", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "-4713-12-31T23:59:59.999999Z"),
    ("timestamptz +infinity", PgType("timestamptz"), DEFAULT, "infinity", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "infinity"),
    ("timestamptz -infinity", PgType("timestamptz"), DEFAULT, "-infinity", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "-infinity"),
    # time.precision.mode=connect: Kafka Connect's own logical types
    ("date connect", PgType("date"), TypeModes(time_precision="connect"), "2016-11-04", opt(Date.builder()), dt.date(2016, 11, 4)),
    ("date connect infinity", PgType("date"), TypeModes(time_precision="connect"), "infinity", opt(Date.builder()), dt.date.max),
    ("time connect", PgType("time"), TypeModes(time_precision="connect"), "13:51:30.123456", opt(Time.builder()), dt.time(13, 51, 30, 123000)),
    ("time connect 24:00", PgType("time"), TypeModes(time_precision="connect"), "24:00:00", opt(Time.builder()), dt.time(23, 59, 59, 999000)),
    ("timestamp connect", PgType("timestamp"), TypeModes(time_precision="connect"), "2016-11-04 13:51:30.123456", opt(Timestamp.builder()), dt.datetime(2016, 11, 4, 13, 51, 30, 123000, dt.timezone.utc)),
    ("timestamp connect -infinity", PgType("timestamp"), TypeModes(time_precision="connect"), "-infinity", opt(Timestamp.builder()), dt.datetime.min.replace(tzinfo=dt.timezone.utc)),
    ("timestamptz connect", PgType("timestamptz"), TypeModes(time_precision="connect"), "2016-11-04 11:51:30.123456+00", opt(debezium_time("ZonedTimestamp", SchemaBuilder.string())), "2016-11-04T11:51:30.123456Z"),
    # interval: schemaAndValuesForDateTimeTypes (MicroDuration.durationMicros(1, 2, 3, 4, 5, 6.78,
    # DAYS_PER_MONTH_AVG)), schemaAndValuesForIntervalAsString
    ("interval", PgType("interval"), DEFAULT, "P1Y2M3DT4H5M6.78S", opt(debezium_time("MicroDuration", SchemaBuilder.int64())), 37_091_106_780_000),
    ("interval whole", PgType("interval"), DEFAULT, "P1Y2M3DT4H5M6S", opt(debezium_time("MicroDuration", SchemaBuilder.int64())), 37_091_106_000_000),
    ("interval negative", PgType("interval"), DEFAULT, "P-1Y-2M3DT-4H-5M-6.78S", opt(debezium_time("MicroDuration", SchemaBuilder.int64())), -36_572_706_780_000),  # Java
    ("interval micro", PgType("interval"), DEFAULT, "PT0.000001S", opt(debezium_time("MicroDuration", SchemaBuilder.int64())), 1),  # Java
    ("interval zero", PgType("interval"), DEFAULT, "PT0S", opt(debezium_time("MicroDuration", SchemaBuilder.int64())), 0),
    ("interval string", PgType("interval"), TypeModes(interval_handling="string"), "P1Y2M3DT4H5M6.78S", opt(debezium_time("Interval", SchemaBuilder.string())), "P1Y2M3DT4H5M6.78S"),
    ("interval string negative", PgType("interval"), TypeModes(interval_handling="string"), "P-1Y-2M3DT-4H-5M-6.78S", opt(debezium_time("Interval", SchemaBuilder.string())), "P-1Y-2M3DT-4H-5M-6.78S"),  # Java
    ("interval string fraction", PgType("interval"), TypeModes(interval_handling="string"), "PT-0.5S", opt(debezium_time("Interval", SchemaBuilder.string())), "P0Y0M0DT0H0M-0.5S"),  # Java
    ("interval string day", PgType("interval"), TypeModes(interval_handling="string"), "P1D", opt(debezium_time("Interval", SchemaBuilder.string())), "P0Y0M1DT0H0M0S"),  # Java
    ("interval string zero", PgType("interval"), TypeModes(interval_handling="string"), "PT0S", opt(debezium_time("Interval", SchemaBuilder.string())), "P0Y0M0DT0H0M0S"),
    # hstore: schemaAndValueFieldFor{Json,Map}EncodedHStoreType*
    ("hstore json", PgType("hstore"), DEFAULT, '"key"=>"val"', opt(json_schema()), '{"key":"val"}'),
    ("hstore json multiple", PgType("hstore"), DEFAULT, '"key1"=>"val1", "key2"=>"val2", "key3"=>"val3"', opt(json_schema()), '{"key1":"val1","key2":"val2","key3":"val3"}'),
    ("hstore json HashMap order", PgType("hstore"), DEFAULT, '"key4"=>"val4", "key5"=>NULL', opt(json_schema()), '{"key5":null,"key4":"val4"}'),
    ("hstore json null", PgType("hstore"), DEFAULT, '"key1"=>"val1", "key2"=>NULL', opt(json_schema()), '{"key1":"val1","key2":null}'),
    ("hstore json special", PgType("hstore"), DEFAULT, '"key 2"=>" ##123 78", "key_#1"=>"val 1"', opt(json_schema()), '{"key_#1":"val 1","key 2":" ##123 78"}'),
    ("hstore json escapes", PgType("hstore"), DEFAULT, '"c"=>NULL, "a\\"b"=>"x\\\\y\x01\u00e9"', opt(json_schema()), '{"a\\"b":"x\\\\y\\u0001\u00e9","c":null}'),  # Java
    ("hstore json empty", PgType("hstore"), DEFAULT, "", opt(json_schema()), "{}"),
    ("hstore map", PgType("hstore"), TypeModes(hstore_handling="map"), '"key1"=>"val1", "key2"=>NULL', opt(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA)), {"key1": "val1", "key2": None}),
    ("hstore map special", PgType("hstore"), TypeModes(hstore_handling="map"), '"key 2"=>" ##123 78", "key_#1"=>"val 1"', opt(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA)), {"key_#1": "val 1", "key 2": " ##123 78"}),
    # vectors (pgvector)
    ("vector", PgType("vector", 3), DEFAULT, "[1,2.5,-3]", opt(named(SchemaBuilder.array(Schema.FLOAT64_SCHEMA), "io.debezium.data.DoubleVector")), [1.0, 2.5, -3.0]),
    ("halfvec", PgType("halfvec", 2), DEFAULT, "[1,2.5]", opt(named(SchemaBuilder.array(Schema.FLOAT32_SCHEMA), "io.debezium.data.FloatVector")), [1.0, 2.5]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pg_type", "modes", "text", "schema", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_type_and_mode(
    pg_type: PgType, modes: TypeModes, text: str, schema: Schema, expected: Any
) -> None:
    result = column_mapping(pg_type, True, modes)
    assert result.schema == schema
    value = result.parse(text)
    assert value == expected
    assert type(value) is type(expected)
    validate_value(result.schema, value, pg_type.name)


def test_nan() -> None:  # schemasAndValuesForNumericType: r_nan, db_nan; ...Double...: d_nan
    assert math.isnan(parse("float4", "NaN"))
    assert math.isnan(parse("float8", "NaN"))
    assert math.isnan(parse("numeric", "NaN", TypeModes(decimal_handling="double")))
    floats = mapping(array_of("float4")).parse("{1.5,NaN,-Infinity,NULL}")
    assert floats[0] == 1.5 and math.isnan(floats[1]) and floats[2:] == [float("-inf"), None]


def test_required_columns_have_required_schemas() -> None:
    assert mapping("int2", optional=False).schema == Schema.INT16_SCHEMA
    assert mapping("bytea", optional=False).schema == Schema.BYTES_SCHEMA  # bnn
    assert mapping(PgType("numeric", numeric_modifier(3, 2)), optional=False).schema == (
        decimal_schema(2, 3).build()  # d_nn
    )
    assert mapping("numeric", optional=False).schema == variable_scale_decimal().build()
    assert mapping("timestamptz", optional=False).schema == (
        debezium_time("ZonedTimestamp", SchemaBuilder.string()).build()
    )


def test_variable_scale_decimal() -> None:  # schemasAndValuesForBigDecimalEncodedNumericTypes
    result = mapping("numeric")
    schema = opt(variable_scale_decimal())
    assert result.schema == schema

    def vsd(scale: int, unscaled: bytes) -> Struct:
        return Struct(schema).put("scale", scale).put("value", unscaled)

    assert result.parse("10.1111") == vsd(4, (101111).to_bytes(3, "big", signed=True))
    assert result.parse("22.2222") == vsd(4, (222222).to_bytes(3, "big", signed=True))
    assert result.parse("10") == vsd(0, b"\x0a")
    assert result.parse("22") == vsd(0, b"\x16")
    # stripTrailingZeros, never a negative scale; BigInteger.toByteArray's minimal bytes
    assert result.parse("22.2200") == vsd(2, (2222).to_bytes(2, "big", signed=True))
    assert result.parse("100.000") == vsd(0, b"\x64")
    assert result.parse("0.000") == vsd(0, b"\x00")
    assert result.parse("-1.50") == vsd(1, b"\xf1")
    assert result.parse("-1.28") == vsd(2, b"\x80")
    assert result.parse("1.28") == vsd(2, b"\x00\x80")
    required = mapping("numeric", optional=False)
    assert required.parse("1.5").schema == required.schema


@pytest.mark.parametrize("modifier", [-1, numeric_modifier(5, 2)])
@pytest.mark.parametrize("special", ["NaN", "Infinity", "-Infinity"])
def test_precise_decimals_refuse_special_values(modifier: int, special: str) -> None:
    # SpecialValueDecimal.fromLogical: only the string and double modes can hold them
    with pytest.raises(DataException, match="decimal.handling.mode"):
        parse("numeric", special, modifier=modifier)


def test_enum() -> None:
    # RecordsStreamProducerIT; PostgresConnectorIT.shouldCreateEnumSchemaWithLogicalOrder
    test_type = PgType("test_type", kind="e", enum_values=("V1", "V2"))
    result = mapping(test_type)
    assert result.schema == opt(enum("V1,V2"))
    assert result.parse("V1") == "V1"
    logical = mapping(PgType("enum8684", kind="e", enum_values=("c", "a", "b")), optional=False)
    assert logical.schema == enum("c,a,b").build()


def test_enum_array_elements_are_required() -> None:  # shouldStreamEnumArrayAsKnownType
    test_type = PgType("test_type", kind="e", enum_values=("V1", "V2"))
    result = mapping(PgType("_test_type", element=test_type), optional=False)
    assert result.schema == SchemaBuilder.array(enum("V1,V2").build()).build()
    assert result.parse("{V1,V2}") == ["V1", "V2"]


def test_domains_map_as_their_base_type() -> None:  # schemasAndValuesForDomainAliasTypes
    def alias(base: PgType, modifier: int = -1) -> PgType:
        return PgType(base.name + "_alias", modifier, kind="d", base=base)

    double = TypeModes(decimal_handling="double")
    numeric_alias = alias(PgType("numeric", numeric_modifier(4, 2)))
    assert mapping(numeric_alias, double, optional=False).schema == Schema.FLOAT64_SCHEMA
    assert mapping(numeric_alias, double).parse("1234.12") == 1234.12
    bit_alias = mapping(alias(PgType("bit", 3)), optional=False)
    assert bit_alias.schema == bits(3).build()
    assert bit_alias.parse("101") == b"\x05"
    varbit_alias = mapping(alias(PgType("varbit", 3)), optional=False)
    assert (varbit_alias.schema, varbit_alias.parse("101")) == (bits(3).build(), b"\x05")
    interval_alias = mapping(alias(PgType("interval")), optional=False)
    assert interval_alias.schema == debezium_time("MicroDuration", SchemaBuilder.int64()).build()
    assert interval_alias.parse("P1Y2M3DT4H5M6S") == 37_091_106_000_000
    timetz_alias = mapping(alias(PgType("timetz")), optional=False)
    assert timetz_alias.parse("01:02:03.123789+00") == "01:02:03.123789Z"
    # the column's modifier wins over the domain's; a domain of a domain resolves to the root
    precise = mapping(alias(PgType("numeric"), numeric_modifier(6, 1)))
    assert precise.schema == opt(decimal_schema(1, 6))
    nested = mapping(alias(alias(PgType("timestamp", 3))))
    assert nested.schema == opt(debezium_time("Timestamp", SchemaBuilder.int64()))
    text = mapping(alias(PgType("text")), optional=False)
    assert (text.schema, text.parse("Hello World")) == (Schema.STRING_SCHEMA, "Hello World")
    labels = PgType("mood", kind="e", enum_values=("sad", "ok"))
    assert mapping(alias(labels)).schema == opt(enum("sad,ok"))


# -- arrays: schemasAndValuesForArrayTypes, ...ForTimeArrayTypes, ...ForByteaBytes ------------

ARRAYS: list[tuple[str, PgType, TypeModes, str, Schema, Any]] = [
    ("int_array", array_of("int4"), DEFAULT, "{1,2,3}", array(Schema.OPTIONAL_INT32_SCHEMA), [1, 2, 3]),
    ("bigint_array", array_of("int8"), DEFAULT, "{1550166368505037572}", array(Schema.OPTIONAL_INT64_SCHEMA), [1550166368505037572]),
    ("text_array", array_of("text"), DEFAULT, "{one,two,three}", array(Schema.OPTIONAL_STRING_SCHEMA), ["one", "two", "three"]),
    ("char_array", array_of("bpchar", 14), DEFAULT, '{"cone      ","ctwo      ","cthree    "}', array(Schema.OPTIONAL_STRING_SCHEMA), ["cone      ", "ctwo      ", "cthree    "]),
    ("varchar_array", array_of("varchar"), DEFAULT, "{vcone,vctwo,vcthree}", array(Schema.OPTIONAL_STRING_SCHEMA), ["vcone", "vctwo", "vcthree"]),
    ("date_array", array_of("date"), DEFAULT, "{2016-11-04,2016-11-05,2016-11-06}", array(opt(debezium_time("Date", SchemaBuilder.int32()))), [17109, 17110, 17111]),
    ("numeric_array", array_of("numeric", numeric_modifier(10, 2)), DEFAULT, "{1.20,3.40,5.60}", array(opt(decimal_schema(2, 10))), [D("1.20"), D("3.40"), D("5.60")]),
    ("citext_array", array_of("citext"), DEFAULT, "{four,five,six}", array(Schema.OPTIONAL_STRING_SCHEMA), ["four", "five", "six"]),
    ("inet_array", array_of("inet"), DEFAULT, "{192.168.2.0/12,192.168.1.1,192.168.0.2/1}", array(Schema.OPTIONAL_STRING_SCHEMA), ["192.168.2.0/12", "192.168.1.1", "192.168.0.2/1"]),
    ("cidr_array", array_of("cidr"), DEFAULT, "{192.168.100.128/25,192.168.0.0/25,192.168.1.0/24}", array(Schema.OPTIONAL_STRING_SCHEMA), ["192.168.100.128/25", "192.168.0.0/25", "192.168.1.0/24"]),
    ("macaddr_array", array_of("macaddr"), DEFAULT, "{08:00:2b:01:02:03,08:00:2b:01:02:03}", array(Schema.OPTIONAL_STRING_SCHEMA), ["08:00:2b:01:02:03", "08:00:2b:01:02:03"]),
    ("tsrange_array", array_of("tsrange", kind="r"), DEFAULT, '{"[\\"2019-03-31 15:30:00\\",infinity)","[\\"2019-03-31 15:30:00\\",\\"2019-04-30 15:30:00\\"]"}', array(Schema.OPTIONAL_STRING_SCHEMA), ['["2019-03-31 15:30:00",infinity)', '["2019-03-31 15:30:00","2019-04-30 15:30:00"]']),
    ("daterange_array", array_of("daterange", kind="r"), DEFAULT, '{"[2019-03-31,infinity)","[2019-03-31,2019-04-30)"}', array(Schema.OPTIONAL_STRING_SCHEMA), ["[2019-03-31,infinity)", "[2019-03-31,2019-04-30)"]),
    ("int4range_array", array_of("int4range", kind="r"), DEFAULT, '{"[1,6)","[1,4)"}', array(Schema.OPTIONAL_STRING_SCHEMA), ["[1,6)", "[1,4)"]),
    ("numerange_array", array_of("numrange", kind="r"), DEFAULT, '{"[5.3,6.3)","[10.0,20.0)"}', array(Schema.OPTIONAL_STRING_SCHEMA), ["[5.3,6.3)", "[10.0,20.0)"]),
    ("uuid_array", array_of("uuid"), DEFAULT, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,f0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", array(opt(named(SchemaBuilder.string(), "io.debezium.data.Uuid"))), ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "f0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]),
    ("json_array", array_of("json"), DEFAULT, '{"{\\"bar\\": \\"baz\\"}","{\\"foo\\": \\"qux\\"}"}', array(opt(json_schema())), ['{"bar": "baz"}', '{"foo": "qux"}']),
    ("jsonb_array", array_of("jsonb"), DEFAULT, '{"{\\"bar\\": \\"baz\\"}","{\\"foo\\": \\"qux\\"}"}', array(opt(json_schema())), ['{"bar": "baz"}', '{"foo": "qux"}']),
    ("oid_array", array_of("oid"), DEFAULT, "{3,4000000000}", array(Schema.OPTIONAL_INT64_SCHEMA), [3, 4_000_000_000]),
    ("bool_array", array_of("bool"), DEFAULT, "{t,f,NULL}", array(Schema.OPTIONAL_BOOLEAN_SCHEMA), [True, False, None]),
    ("float4_array", array_of("float4"), DEFAULT, "{1.5,NaN,-Infinity}", array(Schema.OPTIONAL_FLOAT32_SCHEMA), None),
    ("timea", array_of("time"), DEFAULT, "{00:01:02,01:02:03}", array(opt(debezium_time("MicroTime", SchemaBuilder.int64()))), [62_000_000, 3_723_000_000]),
    ("timetza", array_of("timetz"), DEFAULT, "{11:51:02+00,12:51:03+00}", array(opt(debezium_time("ZonedTime", SchemaBuilder.string()))), ["11:51:02Z", "12:51:03Z"]),
    ("timestampa", array_of("timestamp"), DEFAULT, '{"2020-04-01 00:01:02","2020-04-01 01:02:03"}', array(opt(debezium_time("MicroTimestamp", SchemaBuilder.int64()))), [epoch_micros(dt.datetime(2020, 4, 1, 0, 1, 2)), epoch_micros(dt.datetime(2020, 4, 1, 1, 2, 3))]),
    ("timestamptza", array_of("timestamptz"), DEFAULT, '{"2020-04-01 11:51:02+00","2020-04-01 12:51:03+00"}', array(opt(debezium_time("ZonedTimestamp", SchemaBuilder.string()))), ["2020-04-01T11:51:02.000000Z", "2020-04-01T12:51:03.000000Z"]),
    ("timestamp(3) array", array_of("timestamp", 3), DEFAULT, '{"2016-11-04 13:51:30.123"}', array(opt(debezium_time("Timestamp", SchemaBuilder.int64()))), [TS // 1000]),
    ("bytea_array", array_of("bytea"), DEFAULT, '{"\\\\x000102","\\\\x030405"}', array(Schema.OPTIONAL_BYTES_SCHEMA), [b"\x00\x01\x02", b"\x03\x04\x05"]),
    ("bytea_array hex", array_of("bytea"), TypeModes(binary_handling="hex"), '{"\\\\x000102","\\\\x030405"}', array(Schema.OPTIONAL_STRING_SCHEMA), ["000102", "030405"]),
    ("bytea_array base64", array_of("bytea"), TypeModes(binary_handling="base64"), '{"\\\\x000102","\\\\x030405"}', array(Schema.OPTIONAL_STRING_SCHEMA), ["AAEC", "AwQF"]),
    ("lt_array", array_of("ltree"), DEFAULT, "{Ship.Frigate,Ship.Destroyer}", array(opt(named(SchemaBuilder.string(), "io.debezium.data.Ltree"))), ["Ship.Frigate", "Ship.Destroyer"]),
    ("hsarr json", array_of("hstore"), DEFAULT, '{"\\"key4\\"=>\\"val4\\", \\"key5\\"=>NULL","\\"key6\\"=>\\"val6\\""}', array(opt(json_schema())), ['{"key5":null,"key4":"val4"}', '{"key6":"val6"}']),
    ("hsarr map", array_of("hstore"), TypeModes(hstore_handling="map"), '{"\\"key4\\"=>\\"val4\\", \\"key5\\"=>NULL","\\"key6\\"=>\\"val6\\""}', array(opt(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA))), [{"key4": "val4", "key5": None}, {"key6": "val6"}]),
    # arrays Debezium leaves out (DBZ-459), mapped as the others
    ("interval array", array_of("interval"), DEFAULT, '{P1D,"PT-1H"}', array(opt(debezium_time("MicroDuration", SchemaBuilder.int64()))), [86_400_000_000, -3_600_000_000]),
    ("money array", array_of("money"), DEFAULT, '{"$1.50","-$2.00"}', array(opt(decimal_schema(2, None))), [D("1.50"), D("-2.00")]),
    ("name array", array_of("name"), DEFAULT, "{a,b}", array(Schema.OPTIONAL_STRING_SCHEMA), ["a", "b"]),
    ("varbit array", array_of("varbit", 3), DEFAULT, "{101,NULL}", array(opt(bits(3))), [b"\x05", None]),
    ("bit array", array_of("bit", 1), DEFAULT, "{1,0}", array(Schema.OPTIONAL_BOOLEAN_SCHEMA), [True, False]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pg_type", "modes", "text", "schema", "expected"),
    [case[1:] for case in ARRAYS],
    ids=[case[0] for case in ARRAYS],
)
def test_array(pg_type: PgType, modes: TypeModes, text: str, schema: Schema, expected: Any) -> None:
    result = column_mapping(pg_type, True, modes)
    assert result.schema == schema
    value = result.parse(text)
    if expected is not None:
        assert value == expected
    validate_value(result.schema, value, pg_type.name)


def test_array_of_variable_scale_decimals() -> None:  # varnumeric_array
    schema = opt(variable_scale_decimal())
    result = mapping(array_of("numeric"))
    assert result.schema == array(schema)
    assert result.parse("{1.1,2.22,3.333}") == [
        Struct(schema).put("scale", 1).put("value", b"\x0b"),
        Struct(schema).put("scale", 2).put("value", b"\x00\xde"),
        Struct(schema).put("scale", 3).put("value", (3333).to_bytes(2, "big")),
    ]


def test_array_text_format() -> None:
    texts = mapping(array_of("text")).parse
    assert texts("{}") == []
    assert texts('{"",NULL,"NULL",null}') == ["", None, "NULL", None]
    assert texts('{"a b","x\\"y","back\\\\slash","{}",plain}') == [
        "a b",
        'x"y',
        "back\\slash",
        "{}",
        "plain",
    ]
    assert texts('{"a,b",c}') == ["a,b", "c"]
    ints = mapping(array_of("int4")).parse
    assert ints("{1,NULL,3}") == [1, None, 3]
    assert ints("[0:2]={7,8,9}") == [7, 8, 9]  # explicit lower bound
    assert ints("{{1,2},{3,4}}") == [1, 2, 3, 4]  # multidimensional: row-major, flattened
    assert ints("[0:1][1:2]={{1,NULL},{3,4}}") == [1, None, 3, 4]
    boxes = mapping(array_of("box")).parse("{(1,1),(0,0);(3,3),(2,2)}")  # box's delimiter is ;
    assert [b.get("extensions") for b in boxes] == [{"type": "box"}, {"type": "box"}]
    assert boxes[1].get("wkb") == wkb_polygon((3, 3), (3, 2), (2, 2), (2, 3), (3, 3))


def test_domain_array_maps_as_its_base_array() -> None:
    positive = PgType("positive", kind="d", base=PgType("int4"))
    result = mapping(PgType("_positive", element=positive))
    assert result.schema == array(Schema.OPTIONAL_INT32_SCHEMA)
    assert result.parse("{1,2}") == [1, 2]


# -- geometry ---------------------------------------------------------------------------------


def test_point() -> None:  # schemaAndValuesForGeomTypes: Point.createValue(schema, 1, 1)
    result = mapping("point")
    schema = opt(point_schema())
    assert result.schema == schema
    expected = Struct(schema).put("x", 1.0).put("y", 1.0).put("wkb", wkb_point(1, 1))
    assert result.parse("(1,1)") == expected
    assert result.parse("(-1.5,2e-05)").get("wkb") == wkb_point(-1.5, 2e-05)
    required = mapping("point", optional=False)
    assert required.schema == point_schema().build()
    assert required.parse("(1,1)").schema == required.schema


def test_geometric_types() -> None:  # schemasAndValuesForDomainAliasTypes: box, lseg, path, ...
    for name in ("box", "lseg", "path", "polygon"):
        assert mapping(name, optional=False).schema == GEOMETRY  # always optional
    box = mapping("box").parse("(1,1),(0,0)")  # PostgreSQL stores the upper-right corner first
    assert box == Struct(GEOMETRY).put(
        "wkb", wkb_polygon((1, 1), (1, 0), (0, 0), (0, 1), (1, 1))
    ).put("extensions", {"type": "box"})
    lseg = mapping("lseg").parse("[(0,0),(0,1)]")
    assert (lseg.get("wkb"), lseg.get("extensions")) == (wkb_line((0, 0), (0, 1)), {"type": "lseg"})
    path = mapping("path").parse("((0,0),(0,1),(0,2))")
    assert path.get("wkb") == wkb_line((0, 0), (0, 1), (0, 2))
    assert path.get("extensions") == {"type": "path", "closed": "true"}
    assert mapping("path").parse("[(0,0),(1,1)]").get("extensions")["closed"] == "false"
    polygon = mapping("polygon").parse("((0,0),(0,1),(1,0))")
    assert polygon.get("wkb") == wkb_polygon((0, 0), (0, 1), (1, 0), (0, 0))  # ring closed
    assert polygon.get("extensions") == {"type": "polygon"}

    circle_schema = (
        named(SchemaBuilder.struct(), "io.debezium.data.geometry.Circle")
        .doc("Geometry (CIRCLE)")
        .optional()
        .field("center", point_schema().build())
        .field("radius", Schema.FLOAT64_SCHEMA)
        .build()
    )
    circle = mapping("circle", optional=False)
    assert circle.schema == circle_schema
    center = (
        Struct(point_schema().build()).put("x", 10.0).put("y", 4.0).put("wkb", wkb_point(10, 4))
    )
    assert circle.parse("<(10,4),10>") == Struct(circle_schema).put("center", center).put(
        "radius", 10.0
    )

    line_schema = (
        named(SchemaBuilder.struct(), "io.debezium.data.geometry.Line")
        .doc("Geometry (LINE)")
        .optional()
        .field("a", Schema.FLOAT64_SCHEMA)
        .field("b", Schema.FLOAT64_SCHEMA)
        .field("c", Schema.FLOAT64_SCHEMA)
        .build()
    )
    line = mapping("line", optional=False)
    assert line.schema == line_schema
    assert line.parse("{-1,0,0}") == Struct(line_schema).put("a", -1.0).put("b", 0.0).put("c", 0.0)


def test_postgis() -> None:  # schemaAndValuesForPostgisTypes, ...PostgisArrayTypes
    point = "0101000020730C00001C7C613255DE6540787AA52C435C42C0"
    geometry = mapping("geometry")
    assert geometry.schema == GEOMETRY
    assert geometry.parse(point) == Struct(GEOMETRY).put("wkb", bytes.fromhex(point)).put(
        "srid", 3187
    )
    line = (
        "0105000020E610000001000000010200000002000000A779C7293A2465400B462575025A46C0"
        "C66D3480B7FC6440C3D32B65195246C0"
    )
    geography_schema = (
        named(SchemaBuilder.struct(), "io.debezium.data.geometry.Geography")
        .doc("Geography")
        .field("wkb", Schema.BYTES_SCHEMA)
        .field("srid", Schema.OPTIONAL_INT32_SCHEMA)
        .optional()
        .build()
    )
    geography = mapping("geography")
    assert geography.schema == geography_schema
    assert geography.parse(line) == Struct(geography_schema).put("wkb", bytes.fromhex(line)).put(
        "srid", 4326
    )
    empty = mapping(array_of("geometry")).parse("{010700000000000000,NULL}")
    assert empty == [Struct(GEOMETRY).put("wkb", bytes.fromhex("010700000000000000")), None]


def test_sparse_vector() -> None:
    schema = (
        named(SchemaBuilder.struct(), "io.debezium.data.SparseDoubleVector")
        .doc("Sparse double vector")
        .field("dimensions", Schema.INT16_SCHEMA)
        .field("vector", SchemaBuilder.map(Schema.INT16_SCHEMA, Schema.FLOAT64_SCHEMA).build())
        .optional()
        .build()
    )
    result = mapping("sparsevec")
    assert result.schema == schema
    assert result.parse("{1:1.5,3:2}/5") == Struct(schema).put("dimensions", 5).put(
        "vector", {1: 1.5, 3: 2.0}
    )
    assert result.parse("{}/3") == Struct(schema).put("dimensions", 3).put("vector", {})


# -- hstore order, connect mode limits, errors, modes ------------------------------------------


def test_hstore_json_follows_java_hash_map_order_past_a_resize() -> None:
    keys = sorted((f"k{i}" for i in range(14)), key=lambda k: (len(k), k))
    text = ", ".join(f'"{k}"=>"{k[1:]}"' for k in keys)
    # Java: HStoreConverter.fromString (a HashMap, resized past 12 entries), Jackson
    expected = (
        '{"k0":"0","k1":"1","k2":"2","k3":"3","k4":"4","k5":"5","k11":"11","k6":"6",'
        '"k10":"10","k7":"7","k13":"13","k8":"8","k12":"12","k9":"9"}'
    )
    written = parse("hstore", text)
    assert written == expected
    assert json.loads(written) == {k: k[1:] for k in keys}


def test_connect_mode_dates_out_of_python_range() -> None:
    connect = TypeModes(time_precision="connect")
    assert parse("date", "-infinity", connect) == dt.date.min
    assert parse("timestamp", "infinity", connect) == dt.datetime(
        9999, 12, 31, 23, 59, 59, 999000, dt.timezone.utc
    )
    assert parse("timestamp", "0044-03-15 12:00:00.5", connect) == dt.datetime(
        44, 3, 15, 12, 0, 0, 500000, dt.timezone.utc
    )
    with pytest.raises(ValueError, match="out of the range"):
        parse("date", "0044-03-15 BC", connect)
    with pytest.raises(ValueError, match="out of the range"):
        parse("timestamp", "10000-01-01 00:00:00", connect)


@pytest.mark.parametrize(
    "pg_type",
    [
        PgType("tsquery"),
        PgType("pg_lsn"),
        PgType("txid_snapshot"),
        PgType("address", kind="c"),  # composite
        PgType("floatrange", kind="r"),  # custom range
        PgType("int4multirange", kind="m"),
        PgType("_tsquery", element=PgType("tsquery")),
        PgType("orphan", kind="d"),  # a domain without its base
    ],
    ids=lambda t: t.name,
)
def test_unsupported_types(pg_type: PgType) -> None:
    # Debezium drops these columns (include.unknown.datatypes=false); the caller skips them
    with pytest.raises(UnsupportedType):
        column_mapping(pg_type, True, DEFAULT)
    assert issubclass(UnsupportedType, ValueError)


@pytest.mark.parametrize(
    ("modes", "message"),
    [
        ({"decimal_handling": "exact"}, "decimal.handling.mode"),
        ({"time_precision": "isostring"}, "time.precision.mode"),
        ({"binary_handling": "base32"}, "binary.handling.mode"),
        ({"interval_handling": "iso"}, "interval.handling.mode"),
        ({"hstore_handling": "text"}, "hstore.handling.mode"),
        ({"money_fraction_digits": -1}, "money.fraction.digits"),
    ],
)
def test_invalid_modes(modes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TypeModes(**modes)


def test_malformed_text_raises_value_error() -> None:
    with pytest.raises(ValueError, match="IntervalStyle"):
        parse("interval", "1 year 2 mons")
    with pytest.raises(ValueError, match="DateStyle"):
        parse("timestamp", "11/04/2016 13:51:30")
    with pytest.raises(ValueError):
        parse("int4", "twelve")


def test_values_survive_the_json_converter() -> None:
    """Every mapped value is Connect data the JSON converter writes and reads back."""
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"})
    for _, pg_type, modes, text, _, _ in CASES + ARRAYS:
        result = column_mapping(pg_type, True, modes)
        value = result.parse(text)
        written = converter.from_connect_data("t", result.schema, value)
        assert converter.to_connect_data("t", written).schema == result.schema
