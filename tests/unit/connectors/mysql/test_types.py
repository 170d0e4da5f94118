"""MySQL / MariaDB column types as Debezium's binlog connectors map them
(connectors/mysql/types.py): per type and mode, the schema (type, semantic name, version,
parameters, optionality, default) and the Connect value of the values PyMySQL returns from a
snapshot query and of those pymysqlreplication decodes from the binlog.

The input values are recorded: PyMySQL 1.1's default conversions and mysql-replication
1.0.17's decoders on MariaDB 10.11 (a session with time_zone '+00:00'). The expected schemas
and values are written out from Debezium's sources (BinlogValueConverters,
JdbcValueConverters, BinlogDefaultValueConverter, io.debezium.time.*, io.debezium.data.*) and
its documentation's type tables, not derived from the module under test.
"""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal as D
from types import SimpleNamespace
from typing import Any

import pytest

from airflow_provider_connect.connect.data import (
    Date,
    Schema,
    Struct,
    Time,
    Timestamp,
    validate_value,
)
from airflow_provider_connect.connectors.mysql.types import (
    Column,
    TypeModes,
    UnsupportedType,
    column_mapping,
    nullable_columns,
)

INFO_KEYS = (
    "column_name",
    "data_type",
    "column_type",
    "is_nullable",
    "column_default",
    "extra",
    "character_set_name",
    "numeric_precision",
    "numeric_scale",
    "datetime_precision",
    "character_maximum_length",
    "column_comment",
)


def info(
    name: str,
    data_type: str,
    column_type: str,
    nullable: str = "YES",
    default: str | None = "NULL",
    *,
    charset: str | None = None,
    precision: int | None = None,
    scale: int | None = None,
    fsp: int | None = None,
    length: int | None = None,
    extra: str = "",
    comment: str = "",
) -> dict[str, Any]:
    """An information_schema.COLUMNS row as MariaDB 10.11 gives it (lower-case keys)."""
    values = (
        name,
        data_type,
        column_type,
        nullable,
        default,
        extra,
        charset,
        precision,
        scale,
        fsp,
        length,
        comment,
    )
    return dict(zip(INFO_KEYS, values, strict=True))


def column(column_type: str, nullable: bool = True, default: str | None = None) -> Column:
    """A column of ``column_type`` (``int unsigned``, ``decimal(10,2)``, ``enum('a','b')``)."""
    base = column_type.split("(")[0].split(" ")[0]
    inside = (
        column_type[column_type.index("(") + 1 : column_type.index(")")]
        if "(" in column_type
        else ""
    )
    numbers = [int(n) for n in inside.split(",")] if inside and inside[0].isdigit() else []
    return Column.of_information_schema(
        info(
            "c",
            base,
            column_type,
            "YES" if nullable else "NO",
            "NULL" if default is None else default,
            precision=(numbers[0] if base in ("decimal", "bit") else None)
            if numbers
            else (10 if base == "decimal" else None),
            scale=(numbers[1] if len(numbers) > 1 else 0)
            if base in ("decimal", "float") and numbers
            else None,
            fsp=(numbers[0] if numbers else 0)
            if base in ("time", "datetime", "timestamp")
            else None,
            length=numbers[0]
            if numbers and base in ("char", "varchar", "binary", "varbinary")
            else None,
        )
    )


def check(
    col: Column,
    modes: TypeModes,
    snapshot: Any,
    binlog: Any,
    expected: Any,
) -> Schema:
    """Both paths' values give ``expected``, a valid value of the column's schema."""
    mapping = column_mapping(col, modes)
    from_snapshot = mapping.from_snapshot(snapshot)
    from_binlog = mapping.from_binlog(binlog)
    assert from_snapshot == expected
    assert from_binlog == expected
    assert type(from_snapshot) is type(from_binlog)
    if expected is not None:
        validate_value(mapping.schema, expected, col.name)
    return mapping.schema


DEFAULT = TypeModes()


# -- integers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column_type", "schema", "snapshot", "binlog", "expected"),
    [
        ("tinyint(4)", Schema.INT8_SCHEMA, -128, -128, -128),
        ("tinyint(1)", Schema.INT8_SCHEMA, 1, 1, 1),  # BOOLEAN as SHOW CREATE TABLE gives it
        ("tinyint(3) unsigned", Schema.INT16_SCHEMA, 255, 255, 255),
        ("smallint(6)", Schema.INT16_SCHEMA, -32768, -32768, -32768),
        ("smallint(5) unsigned", Schema.INT32_SCHEMA, 65535, 65535, 65535),
        ("mediumint(9)", Schema.INT32_SCHEMA, -8388608, -8388608, -8388608),
        ("mediumint(8) unsigned", Schema.INT32_SCHEMA, 16777215, 16777215, 16777215),
        ("int(11)", Schema.INT32_SCHEMA, -2147483648, -2147483648, -2147483648),
        ("int(10) unsigned", Schema.INT64_SCHEMA, 4294967295, 4294967295, 4294967295),
        ("bigint(20)", Schema.INT64_SCHEMA, -(2**63), -(2**63), -(2**63)),
        # long mode: Java's long of the unsigned value (BinlogUnsignedIntegerIT)
        ("bigint(20) unsigned", Schema.INT64_SCHEMA, 2**64 - 1, 2**64 - 1, -1),
        ("bigint(20) unsigned", Schema.INT64_SCHEMA, 2**63, 2**63, -(2**63)),
        ("bigint(20) unsigned", Schema.INT64_SCHEMA, 2**63 - 1, 2**63 - 1, 2**63 - 1),
    ],
)
def test_integers(
    column_type: str, schema: Schema, snapshot: Any, binlog: Any, expected: Any
) -> None:
    result = check(column(column_type, nullable=False), DEFAULT, snapshot, binlog, expected)
    assert result == schema


def test_bigint_unsigned_precise() -> None:
    modes = TypeModes(bigint_unsigned="precise")
    schema = check(column("bigint(20) unsigned"), modes, 2**64 - 1, 2**64 - 1, D(2**64 - 1))
    assert schema.name == "org.apache.kafka.connect.data.Decimal"
    assert schema.type.name == "BYTES"
    assert schema.parameters == {"scale": "0", "connect.decimal.precision": "20"}
    assert schema.optional


# -- floating point and decimals ---------------------------------------------------------------


def test_float_is_single_precision_on_both_paths() -> None:
    # PyMySQL parses the text '3.14'; the binlog has the 4-byte float, widened.
    widened = struct.unpack("<f", struct.pack("<f", 3.14))[0]
    schema = check(column("float"), DEFAULT, 3.14, widened, widened)
    assert schema == Schema.OPTIONAL_FLOAT32_SCHEMA


def test_float_with_scale_is_float64_of_the_stored_float() -> None:
    widened = struct.unpack("<f", struct.pack("<f", 3.14))[0]
    schema = check(column("float(7,4)"), DEFAULT, 3.14, widened, widened)
    assert schema == Schema.OPTIONAL_FLOAT64_SCHEMA


def test_double() -> None:
    schema = check(column("double"), DEFAULT, 0.1, 0.1, 0.1)
    assert schema == Schema.OPTIONAL_FLOAT64_SCHEMA


@pytest.mark.parametrize(
    ("mode", "expected", "schema_type", "parameters"),
    [
        ("precise", D("-12345678.90"), "BYTES", {"scale": "2", "connect.decimal.precision": "10"}),
        ("double", -12345678.9, "FLOAT64", None),
        ("string", "-12345678.90", "STRING", None),
    ],
)
def test_decimal_modes(mode: str, expected: Any, schema_type: str, parameters: Any) -> None:
    value = D("-12345678.90")  # PyMySQL and pymysqlreplication both give the column's scale
    schema = check(
        column("decimal(10,2)"), TypeModes(decimal_handling=mode), value, value, expected
    )
    assert schema.type.name == schema_type
    assert schema.parameters == parameters
    if mode == "precise":
        assert schema.name == "org.apache.kafka.connect.data.Decimal"
        assert schema.version == 1


# -- strings, binaries, bits -------------------------------------------------------------------


def test_strings() -> None:
    for column_type in ("char(5)", "varchar(10)", "tinytext", "text", "mediumtext", "longtext"):
        schema = check(column(column_type), DEFAULT, "héllo 😀", "héllo 😀", "héllo 😀")
        assert schema == Schema.OPTIONAL_STRING_SCHEMA


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("bytes", b"ab\x00\x00"),
        ("base64", "YWIAAA=="),
        ("base64-url-safe", "YWIAAA=="),
        ("hex", "61620000"),
    ],
)
def test_binary_padded_on_both_paths(mode: str, expected: Any) -> None:
    # The server returns BINARY(4) padded; the binlog drops the trailing zero bytes (DBZ-254).
    schema = check(
        column("binary(4)"), TypeModes(binary_handling=mode), b"ab\x00\x00", b"ab", expected
    )
    assert schema == (
        Schema.OPTIONAL_BYTES_SCHEMA if mode == "bytes" else Schema.OPTIONAL_STRING_SCHEMA
    )


def test_base64_url_safe_alphabet() -> None:
    modes = TypeModes(binary_handling="base64-url-safe")
    check(column("varbinary(4)"), modes, b"\xfb\xff", b"\xfb\xff", "-_8=")
    check(
        column("varbinary(4)"),
        TypeModes(binary_handling="base64"),
        b"\xfb\xff",
        b"\xfb\xff",
        "+/8=",
    )


def test_blobs_are_not_padded() -> None:
    for column_type in ("varbinary(8)", "tinyblob", "blob", "mediumblob", "longblob"):
        check(column(column_type), DEFAULT, b"ab\x00", b"ab\x00", b"ab\x00")


def test_bit_one_is_boolean() -> None:
    schema = check(column("bit(1)"), DEFAULT, b"\x01", "1", True)
    check(column("bit(1)"), DEFAULT, b"\x00", "0", False)
    assert schema == Schema.OPTIONAL_BOOLEAN_SCHEMA


def test_bits_little_endian_padded() -> None:
    # PyMySQL: big-endian bytes; pymysqlreplication: '0'/'1' text, most significant first.
    schema = check(column("bit(10)"), DEFAULT, b"\x02\x01", "1000000001", b"\x01\x02")
    check(column("bit(10)"), DEFAULT, b"\x00\x01", "0000000001", b"\x01\x00")
    check(column("bit(64)"), DEFAULT, b"\xff" * 8, "1" * 64, b"\xff" * 8)
    assert schema.name == "io.debezium.data.Bits"
    assert schema.version == 1
    assert schema.parameters == {"length": "10"}
    assert schema.type.name == "BYTES"


# -- enums, sets, json, uuid, geometry ---------------------------------------------------------


def test_enum() -> None:
    col = column("enum('x','it''s','a,b')")
    assert col.enum_values == ("x", "it's", "a,b")
    schema = check(col, DEFAULT, "it's", "it's", "it's")
    check(col, DEFAULT, "", "", "")  # an invalid value stored as index 0
    assert schema.name == "io.debezium.data.Enum"
    assert schema.version == 1
    assert schema.parameters == {"allowed": "x,it's,a\\,b"}


def test_set_in_definition_order() -> None:
    col = column("set('a','b','c')")
    schema = check(col, DEFAULT, "a,c", {"c", "a"}, "a,c")
    assert schema.name == "io.debezium.data.EnumSet"
    assert schema.parameters == {"allowed": "a,b,c"}


def test_json_mysql_compact_on_both_paths() -> None:
    col = Column.of_information_schema(info("j", "json", "json"))
    assert col.json
    binlog = {b"a": [1, 2.5, b"x\xc3\xa9"], b"b": None, b"c": True}
    expected = '{"a":[1,2.5,"xé"],"b":null,"c":true}'
    schema = check(col, DEFAULT, '{"a": [1, 2.5, "xé"], "b": null, "c": true}', binlog, expected)
    assert schema.name == "io.debezium.data.Json"
    assert schema.version == 1


def test_mariadb_json_is_checked_longtext() -> None:
    plain = Column.of_information_schema(info("j", "longtext", "longtext", charset="utf8mb4"))
    assert not plain.json
    schema = check(plain, DEFAULT, '{"a": 1}', '{"a": 1}', '{"a": 1}')
    assert schema == Schema.OPTIONAL_STRING_SCHEMA
    # database.py's json key: a json_valid(j) CHECK, as MariaDB's JSON type declares
    checked = Column.of_information_schema({**info("j", "longtext", "longtext"), "json": True})
    assert checked.json
    schema = check(checked, DEFAULT, '{"a": 1}', '{"a": 1}', '{"a": 1}')  # the stored text
    assert schema.name == "io.debezium.data.Json"
    assert column_mapping(Column(**{**checked.__dict__, "optional": False}), DEFAULT).absent == "{}"


def test_mariadb_uuid() -> None:
    col = Column.of_information_schema(info("u", "uuid", "uuid"))
    text = "123e4567-e89b-12d3-a456-426655440000"
    # recorded: the binlog's BINARY(16) without its trailing zero bytes
    binlog = b"\x12>Eg\xe8\x9b\x12\xd3\xa4VBfUD"
    schema = check(col, DEFAULT, text, binlog, text)
    assert schema.name == "io.debezium.data.Uuid"


def test_point_and_geometry() -> None:
    wkb = struct.pack("<BIdd", 1, 1, 1.5, -2.0)
    stored = struct.pack("<i", 4326) + wkb  # MySQL's internal form: SRID, then WKB
    point = column_mapping(Column.of_information_schema(info("p", "point", "point")), DEFAULT)
    for convert in (point.from_snapshot, point.from_binlog):
        value = convert(stored)
        assert isinstance(value, Struct)
        assert [value.get(f) for f in ("x", "y", "wkb", "srid")] == [1.5, -2.0, wkb, 4326]
    assert point.schema.name == "io.debezium.data.geometry.Point"
    geometry = column_mapping(
        Column.of_information_schema(info("g", "polygon", "polygon")), DEFAULT
    )
    value = geometry.from_binlog(struct.pack("<i", 0) + wkb)
    assert [value.get(f) for f in ("wkb", "srid", "extensions")] == [wkb, None, None]
    assert geometry.schema.name == "io.debezium.data.geometry.Geometry"
    assert geometry.schema.version == 2
    assert geometry.schema.optional


def test_unsupported_types() -> None:
    for data_type in ("inet6", "inet4", "vector"):
        with pytest.raises(UnsupportedType, match=data_type):
            column_mapping(Column.of_information_schema(info("x", data_type, data_type)), DEFAULT)


# -- dates and times ---------------------------------------------------------------------------


def test_year() -> None:
    schema = check(column("year(4)"), DEFAULT, 2155, 2155, 2155)
    check(column("year(4)"), DEFAULT, 0, 1900, 1900)  # YEAR 0000: the binlog's 1900 on both
    assert schema.name == "io.debezium.time.Year"
    assert schema.type.name == "INT32"


def test_date() -> None:
    schema = check(column("date"), DEFAULT, dt.date(2018, 6, 20), dt.date(2018, 6, 20), 17702)
    check(column("date"), DEFAULT, dt.date(1000, 1, 1), dt.date(1000, 1, 1), -354285)
    assert schema.name == "io.debezium.time.Date"
    assert schema.type.name == "INT32"


def test_zero_dates_have_no_value() -> None:
    # PyMySQL returns zero dates as text; pymysqlreplication as None (never converted).
    date = column_mapping(column("date", nullable=False), DEFAULT)
    assert date.from_snapshot("0000-00-00") is None
    assert date.absent == 0
    datetime = column_mapping(column("datetime"), DEFAULT)
    assert datetime.from_snapshot("0000-00-00 00:00:00") is None
    assert datetime.absent is None


def test_two_digit_years_adjusted() -> None:
    check(column("date"), DEFAULT, dt.date(69, 3, 1), dt.date(69, 3, 1), 36219)  # 2069-03-01
    check(column("date"), DEFAULT, dt.date(70, 1, 1), dt.date(70, 1, 1), 0)  # 1970-01-01
    check(
        column("date"),
        TypeModes(time_adjuster=False),
        dt.date(70, 1, 1),
        dt.date(70, 1, 1),
        -693960,
    )


@pytest.mark.parametrize(
    ("column_type", "name", "value", "expected"),
    [
        (
            "datetime",
            "io.debezium.time.Timestamp",
            dt.datetime(2018, 6, 20, 6, 37, 3),
            1529476623000,
        ),
        (
            "datetime(3)",
            "io.debezium.time.Timestamp",
            dt.datetime(2018, 6, 20, 6, 37, 3, 123000),
            1529476623123,
        ),
        (
            "datetime(4)",
            "io.debezium.time.MicroTimestamp",
            dt.datetime(2018, 6, 20, 6, 37, 3, 123400),
            1529476623123400,
        ),
        (
            "datetime(6)",
            "io.debezium.time.MicroTimestamp",
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
            -1,
        ),
    ],
)
def test_datetime_adaptive(column_type: str, name: str, value: Any, expected: int) -> None:
    schema = check(column(column_type), DEFAULT, value, value, expected)
    assert schema.name == name
    assert schema.type.name == "INT64"


@pytest.mark.parametrize(
    ("column_type", "value", "expected"),
    [
        ("timestamp", dt.datetime(2018, 6, 20, 13, 37, 3), "2018-06-20T13:37:03Z"),
        ("timestamp(3)", dt.datetime(2018, 6, 20, 13, 37, 3, 120000), "2018-06-20T13:37:03.120Z"),
        ("timestamp(6)", dt.datetime(2038, 1, 19, 3, 14, 7, 999999), "2038-01-19T03:14:07.999999Z"),
        ("timestamp(2)", dt.datetime(1970, 1, 1, 0, 0, 1), "1970-01-01T00:00:01.00Z"),
    ],
)
def test_timestamp_zoned_utc(column_type: str, value: Any, expected: str) -> None:
    schema = check(column(column_type), DEFAULT, value, value, expected)
    assert schema.name == "io.debezium.time.ZonedTimestamp"
    check(column(column_type), TypeModes(time_precision="connect"), value, value, expected)


def test_zero_timestamp() -> None:
    # PyMySQL: the text; pymysqlreplication: utcfromtimestamp(0).
    mapping = column_mapping(column("timestamp", nullable=False), DEFAULT)
    assert mapping.from_snapshot("0000-00-00 00:00:00") is None
    assert mapping.from_binlog(dt.datetime(1970, 1, 1)) is None
    assert mapping.absent == "1970-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.timedelta(hours=13, minutes=37, seconds=3, microseconds=120000), 49023120000),
        (dt.timedelta(hours=-838, minutes=-59, seconds=-59), -3020399000000),  # Debezium's docs
        (dt.timedelta(hours=838, minutes=59, seconds=59), 3020399000000),
        (dt.timedelta(days=-1, seconds=86398, microseconds=500000), -1500000),  # -00:00:01.5
    ],
)
def test_time_micros(value: dt.timedelta, expected: int) -> None:
    schema = check(column("time(6)"), DEFAULT, value, value, expected)
    assert schema.name == "io.debezium.time.MicroTime"
    assert schema.type.name == "INT64"


def test_connect_mode() -> None:
    modes = TypeModes(time_precision="connect")
    schema = check(
        column("date"), modes, dt.date(2018, 6, 20), dt.date(2018, 6, 20), dt.date(2018, 6, 20)
    )
    assert schema == Date.SCHEMA.replace(optional=True)
    moment = dt.datetime(2018, 6, 20, 6, 37, 3, 123456)
    expected = dt.datetime(2018, 6, 20, 6, 37, 3, 123000, tzinfo=dt.timezone.utc)
    schema = check(column("datetime(6)"), modes, moment, moment, expected)
    assert schema == Timestamp.SCHEMA.replace(optional=True)
    duration = dt.timedelta(hours=13, minutes=37, seconds=3, microseconds=120500)
    schema = check(column("time(6)"), modes, duration, duration, dt.time(13, 37, 3, 120000))
    assert schema == Time.SCHEMA.replace(optional=True)
    # Outside a day: no Connect Time (Debezium fails the conversion and warns)
    check(column("time"), modes, dt.timedelta(hours=-1), dt.timedelta(hours=-1), None)
    check(column("time"), modes, dt.timedelta(hours=25), dt.timedelta(hours=25), None)


# -- defaults and optionality ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column_type", "nullable", "default", "expected"),
    [
        ("int(11)", False, "5", 5),
        ("tinyint(1)", True, "1", 1),
        ("bigint(20) unsigned", False, "18446744073709551615", -1),
        ("decimal(5,2)", True, "1.50", D("1.50")),
        ("double", True, "2.5", 2.5),
        ("varchar(5)", True, "a'b", "a'b"),
        ("enum('x','it''s')", True, "it's", "it's"),
        ("set('a','b')", False, "", ""),
        ("bit(10)", True, "b'101'", b"\x05\x00"),
        ("date", True, "2020-01-02", 18263),
        ("date", False, "0000-00-00", 0),  # zero date of a NOT NULL column: the epoch
        ("date", True, "0000-00-00", None),
        ("datetime", False, "current_timestamp()", 0),
        ("datetime(3)", True, "2020-01-02 03:04:05.500", 1577934245500),
        ("timestamp", False, "current_timestamp()", "1970-01-01T00:00:00Z"),
        ("timestamp", True, "current_timestamp()", None),
        ("time", True, "-01:02:03", -3723000000),
        ("year(4)", True, "2024", 2024),
        ("varchar(5)", True, None, None),
        ("int(11)", True, "(1 + 1)", None),  # an expression: no default
    ],
)
def test_defaults(column_type: str, nullable: bool, default: str | None, expected: Any) -> None:
    col = column(column_type, nullable, None)
    col = Column(**{**col.__dict__, "default": default})
    schema = column_mapping(col, DEFAULT).schema
    assert schema.default_value == expected
    assert schema.optional is nullable


def test_mariadb_default_text_is_unquoted() -> None:
    rows = {
        "'it''s'": "it's",
        "'a\\\\b'": "a\\b",
        "NULL": None,
        "current_timestamp()": "current_timestamp()",
        "5": "5",
        None: None,
    }
    for text, expected in rows.items():
        row = info("c", "varchar", "varchar(5)", default=text)
        assert Column.of_information_schema(row).default == expected


def test_absent_value() -> None:
    assert column_mapping(column("int(11)"), DEFAULT).absent is None
    assert column_mapping(column("int(11)", False), DEFAULT).absent == 0
    with_default = Column(**{**column("int(11)", False).__dict__, "default": "7"})
    assert column_mapping(with_default, DEFAULT).absent == 7
    assert column_mapping(column("decimal(5,2)", False), DEFAULT).absent == D("0.00")
    assert column_mapping(column("varchar(3)", False), DEFAULT).absent == ""


def test_modes_are_checked() -> None:
    with pytest.raises(ValueError, match="time.precision.mode must be one of"):
        TypeModes(time_precision="adaptive")
    with pytest.raises(ValueError, match="bigint.unsigned.handling.mode"):
        TypeModes(bigint_unsigned="string")


# -- columns -----------------------------------------------------------------------------------


def test_of_information_schema() -> None:
    row = info(
        "id",
        "int",
        "int(10) unsigned",
        "NO",
        None,
        precision=10,
        scale=0,
        extra="auto_increment",
        comment="the key",
    )
    col = Column.of_information_schema(row)
    assert (col.name, col.data_type, col.unsigned, col.optional) == ("id", "int", True, False)
    assert (col.auto_increment, col.comment, col.default) == (True, "the key", None)
    bit = Column.of_information_schema(info("b", "bit", "bit(10)", precision=10))
    assert bit.length == 10
    enum = Column.of_information_schema(info("e", "enum", "enum('x','it''s')"))
    assert enum.enum_values == ("x", "it's")


def binlog_column(**attributes: Any) -> Any:
    """A pymysqlreplication TABLE_MAP column as mysql-replication 1.0.17 builds it."""
    base = {
        "unsigned": False,
        "character_set_name": None,
        "enum_values": None,
        "set_values": None,
    }
    return SimpleNamespace(**{**base, **attributes})


def test_of_binlog_alone() -> None:
    cases = [
        (binlog_column(name="a", type=3, unsigned=True), "int", "int unsigned"),
        (
            binlog_column(name="b", type=254, character_set_name="binary", max_length=4),
            "binary",
            "binary(4)",
        ),
        (
            binlog_column(name="c", type=15, character_set_name="utf8", max_length=20),
            "varchar",
            "varchar",
        ),
        (
            binlog_column(name="d", type=252, character_set_name="utf8", length_size=4),
            "longtext",
            "longtext",
        ),
        (
            binlog_column(name="e", type=252, character_set_name="binary", length_size=1),
            "tinyblob",
            "tinyblob",
        ),
        (binlog_column(name="f", type=246, precision=10, decimals=2), "decimal", "decimal(10,2)"),
        (binlog_column(name="g", type=19, fsp=3), "time", "time(3)"),
        (binlog_column(name="h", type=16, bits=10, bytes=2), "bit", "bit(10)"),
        (
            binlog_column(name="i", type=247, enum_values=["", "x", "y"], size=1),
            "enum",
            "enum('x','y')",
        ),
        (binlog_column(name="j", type=248, set_values=["a"], size=1), "set", "set('a')"),
        (binlog_column(name="k", type=245, length_size=4), "json", "json"),
    ]
    for binlog, data_type, column_type in cases:
        col = Column.of_binlog(binlog, None, False)
        assert (col.data_type, col.column_type, col.optional) == (data_type, column_type, False)


def test_of_binlog_takes_known_only_for_the_same_storage() -> None:
    known = Column.of_information_schema(
        info("e", "enum", "enum('x','y')", "NO", "'y'", charset="latin1", comment="c")
    )
    same = binlog_column(
        name="e", type=247, enum_values=["", "x", "y"], character_set_name="cp1252", size=1
    )
    col = Column.of_binlog(same, known)
    assert (col.default, col.comment, col.optional, col.charset) == ("y", "c", False, "latin1")
    changed = binlog_column(name="e", type=247, enum_values=["", "x"], size=1)
    col = Column.of_binlog(changed, known)
    assert (col.default, col.comment, col.enum_values, col.optional) == (None, None, ("x",), True)
    uuid_known = Column.of_information_schema(info("u", "uuid", "uuid"))
    uuid_binlog = binlog_column(name="u", type=254, character_set_name="binary", max_length=16)
    assert Column.of_binlog(uuid_binlog, uuid_known).data_type == "uuid"
    float_known = Column.of_information_schema(
        info("f", "float", "float(7,4)", precision=7, scale=4)
    )
    col = Column.of_binlog(binlog_column(name="f", type=4, size=4), float_known)
    assert column_mapping(col, DEFAULT).schema == Schema.OPTIONAL_FLOAT64_SCHEMA


def test_nullable_columns() -> None:
    # recorded: MariaDB's TABLE_MAP of 14 columns, id NOT NULL, s and dt and dd NOT NULL
    assert nullable_columns(b"\xbe+", 14) == [
        False, True, True, True, True, True, False,
        True, True, True, False, True, False, True,
    ]  # fmt: skip
