"""MySQL and MariaDB column types as Connect schemas, and their values as Connect values, as
Debezium's binlog connectors map them (``BinlogValueConverters``, ``MySqlValueConverters``,
``MariaDbValueConverters`` over ``JdbcValueConverters``, with ``BinlogDefaultValueConverter``
for the columns' defaults).

A :class:`Column` describes one column, from ``information_schema.COLUMNS``
(:meth:`Column.of_information_schema`) or from a binlog TABLE_MAP event with
``binlog_row_metadata=FULL`` (:meth:`Column.of_binlog`). :func:`column_mapping` gives its
schema and two converters: ``from_snapshot`` for the values PyMySQL returns from a snapshot
query (default conversions, a session with ``time_zone='+00:00'``) and ``from_binlog`` for the
values mysql-replication (``pymysqlreplication``) decodes from the binlog. Both give the same
Connect value for the same stored value; neither is called for NULL.

=====================================  =================================================
MySQL / MariaDB type                   Connect schema (Python value)
=====================================  =================================================
tinyint / smallint / mediumint / int   INT8 / INT16 / INT32 / INT32 (int); tinyint(1) too
... unsigned                           INT16 / INT32 / INT32 / INT64
bigint                                 INT64
bigint unsigned                        long: INT64 (values past 2^63-1 wrap negative);
                                       precise: ``Decimal`` (scale 0, precision 20)
float; float(M,D), double, real        FLOAT32; FLOAT64 (float; float-stored values are
                                       the single-precision number, as Java reads them)
decimal(M,D)                           precise: ``Decimal`` (scale D,
                                       ``connect.decimal.precision`` M); double: FLOAT64;
                                       string: STRING (plain, with the column's scale)
char, varchar, *text                   STRING
binary(n), varbinary, *blob            BYTES (binary(n) right-padded with 0x00 to n), or
                                       base64 / base64-url-safe / hex STRING
bit(1) / bit(n)                        BOOLEAN / ``io.debezium.data.Bits`` (``length`` n,
                                       little-endian, ceil(n/8) bytes)
enum / set                             ``io.debezium.data.Enum`` / ``EnumSet`` (``allowed``:
                                       the options); a set's members in definition order
year                                   ``io.debezium.time.Year`` (INT32)
date                                   ``io.debezium.time.Date`` (epoch days)
time(p)                                ``io.debezium.time.MicroTime`` (µs, negative and past
                                       24 h too)
datetime(p)                            ``Timestamp`` (epoch ms, p <= 3) / ``MicroTimestamp``
                                       (µs), the wall time read as UTC
  … time.precision.mode=connect        Connect ``Date`` / ``Time`` / ``Timestamp``
timestamp(p)                           ``io.debezium.time.ZonedTimestamp`` in UTC, exactly p
                                       fraction digits
json (MySQL; MariaDB's checked         ``io.debezium.data.Json`` (MySQL's compact, MariaDB's
longtext)                              text as stored)
point / other geometries               ``io.debezium.data.geometry.Point`` / ``Geometry``
uuid (MariaDB)                         ``io.debezium.data.Uuid``
=====================================  =================================================

Guarantees:

* Schemas are Debezium's: types, semantic names, versions, parameters; a nullable column's
  schema is optional, and a column's default (``COLUMN_DEFAULT``) is its field's default,
  converted as Debezium converts defaults (``CURRENT_TIMESTAMP`` of a NOT NULL temporal
  column: the epoch; zero dates: none when the column is nullable, else the epoch).
* The two converters agree: a row read by a snapshot and the same row decoded from the binlog
  give equal Connect values (tests/integration/connectors/mysql/test_types.py checks each type
  on a real server).
* A converter returns None where Debezium has no value: zero and invalid dates
  (``0000-00-00``, a month or day 0), the zero ``TIMESTAMP``, and with
  ``time.precision.mode=connect`` a ``TIME`` outside 00:00-24:00. The captured table then puts
  the column's :attr:`Mapping.absent` (null when nullable, else the default or Debezium's
  fallback), as ``JdbcValueConverters.convertValue`` does.
* Two-digit years (0-69, 70-99) of dates and datetimes become 2000-2069 and 1970-1999 when
  ``enable.time.adjuster`` is on (the default), as Debezium adjusts them.
* A type Debezium does not map (MySQL's VECTOR, MariaDB's INET4/INET6, ...) raises
  :class:`UnsupportedType`: the caller leaves the column out of its events.

Deliberate differences from Debezium:

* ``time.precision.mode`` ``adaptive_time_microseconds`` and ``connect`` only (the config
  refuses the others).
* The same value from both paths where Debezium's differ: MySQL JSON read by a snapshot is
  given in the binlog's compact form (Debezium passes the server's spaced text on); JSON
  numbers print as Python prints floats (``1e+20`` where Java prints ``1.0E20``); ``YEAR``
  0000 is 1900 in snapshots too (Debezium's binlog value; its snapshot gives 2000).
* MariaDB's JSON is a LONGTEXT with a ``json_valid`` check: a column with that check (the
  ``json`` key database.py's ``columns`` adds) is Json, its text as stored, as Debezium's DDL
  parser makes a ``JSON`` column (its snapshots, reading ``SHOW CREATE TABLE``'s
  ``longtext``, give a plain STRING).
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import json
import re
import struct as _struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.logical import Date, Time, Timestamp
from airflow_provider_connect.connectors.change_capture.semantic import (
    DATE,
    GEOMETRY,
    JSON,
    MICRO_TIME,
    MICRO_TIMESTAMP,
    POINT,
    STRING,
    TIMESTAMP,
    UUID,
    ZONED_TIMESTAMP,
    bits_schema,
    decimal_schema,
    named,
)

Convert = Callable[[Any], Any]
"""A non-NULL value of one library -> its Connect value, or None where Debezium has none."""


class UnsupportedType(ValueError):
    """The type has no Connect mapping: leave the column out of the events."""


MODES: dict[str, tuple[str, tuple[str, ...]]] = {
    "decimal_handling": ("decimal.handling.mode", ("precise", "double", "string")),
    "time_precision": ("time.precision.mode", ("adaptive_time_microseconds", "connect")),
    "bigint_unsigned": ("bigint.unsigned.handling.mode", ("long", "precise")),
    "binary_handling": ("binary.handling.mode", ("bytes", "base64", "base64-url-safe", "hex")),
}
"""Each :class:`TypeModes` attribute's config key and allowed values, the default first."""


@dataclass(frozen=True)
class TypeModes:
    """Debezium's type-related settings (lowercase values); invalid ones raise ``ValueError``."""

    decimal_handling: str = "precise"
    """decimal.handling.mode: precise | double | string"""
    time_precision: str = "adaptive_time_microseconds"
    """time.precision.mode: adaptive_time_microseconds | connect"""
    bigint_unsigned: str = "long"
    """bigint.unsigned.handling.mode: long | precise"""
    binary_handling: str = "bytes"
    """binary.handling.mode: bytes | base64 | base64-url-safe | hex"""
    time_adjuster: bool = True
    """enable.time.adjuster: two-digit years of dates and datetimes moved to 1970-2069"""

    def __post_init__(self) -> None:
        for attribute, (key, allowed) in MODES.items():
            value = getattr(self, attribute)
            if value not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}, not {value!r}")


# -- columns -----------------------------------------------------------------------------------


class BinlogColumn(Protocol):
    """What :meth:`Column.of_binlog` reads of a ``pymysqlreplication.column.Column`` (a TABLE_MAP
    column with FULL row metadata); the attributes after ``character_set_name`` exist only
    for the types that have them."""

    name: str
    type: int
    unsigned: bool
    character_set_name: str | None
    enum_values: list[str] | None
    set_values: list[str] | None


# MySQL's protocol type codes (include/field_types.h), as TABLE_MAP events carry them.
_FT_TINY, _FT_SHORT, _FT_LONG, _FT_FLOAT, _FT_DOUBLE = 1, 2, 3, 4, 5
_FT_TIMESTAMP, _FT_LONGLONG, _FT_INT24, _FT_DATE, _FT_TIME, _FT_DATETIME, _FT_YEAR = (
    7,
    8,
    9,
    10,
    11,
    12,
    13,
)
_FT_VARCHAR, _FT_BIT, _FT_TIMESTAMP2, _FT_DATETIME2, _FT_TIME2 = 15, 16, 17, 18, 19
_FT_JSON, _FT_NEWDECIMAL, _FT_ENUM, _FT_SET, _FT_BLOB, _FT_VAR_STRING, _FT_STRING, _FT_GEOMETRY = (
    245,
    246,
    247,
    248,
    252,
    253,
    254,
    255,
)
_BINLOG_BASES: dict[int, str] = {
    _FT_TINY: "tinyint",
    _FT_SHORT: "smallint",
    _FT_INT24: "mediumint",
    _FT_LONG: "int",
    _FT_LONGLONG: "bigint",
    _FT_FLOAT: "float",
    _FT_DOUBLE: "double",
    _FT_NEWDECIMAL: "decimal",
    _FT_ENUM: "enum",
    _FT_SET: "set",
    _FT_DATE: "date",
    _FT_DATETIME: "datetime",
    _FT_DATETIME2: "datetime",
    _FT_TIMESTAMP: "timestamp",
    _FT_TIMESTAMP2: "timestamp",
    _FT_TIME: "time",
    _FT_TIME2: "time",
    _FT_YEAR: "year",
    _FT_BIT: "bit",
    _FT_GEOMETRY: "geometry",
    _FT_JSON: "json",
}
_BLOB_PREFIXES = {1: "tiny", 2: "", 3: "medium", 4: "long"}
_GEOMETRIES = frozenset(
    (
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
        "geomcollection",
    )
)
_STORED_AS: dict[str, str] = {
    **{name: "geometry" for name in _GEOMETRIES},
    # MariaDB's own types, BINARY(n) in row events (INET4/INET6 have no mapping).
    "uuid": "binary",
    "inet4": "binary",
    "inet6": "binary",
}
"""information_schema's base types that the binlog shows as another one."""
_BINARY_CHARSET = "binary"


@dataclass(frozen=True)
class Column:
    """One column as this connector maps it."""

    name: str
    data_type: str
    """information_schema's ``DATA_TYPE``, lower case: ``int``, ``varchar``, ``enum``, ..."""
    column_type: str
    """The full type: ``tinyint(3) unsigned``, ``enum('a','b')``, ``decimal(10,2)``."""
    unsigned: bool = False
    optional: bool = True
    length: int | None = None
    """Characters of a string, bytes of a binary, bits of a BIT."""
    precision: int | None = None
    """A decimal's digits (M of decimal(M,D))."""
    scale: int | None = None
    """A decimal's or a float(M,D)'s fraction digits."""
    fsp: int | None = None
    """Fraction digits of a time, datetime or timestamp."""
    enum_values: tuple[str, ...] = ()
    """An ENUM's or a SET's options, in definition order."""
    charset: str | None = None
    default: str | None = None
    """The default as text: a literal's value (unquoted) or an expression
    (``current_timestamp()``); None when the column has none (or NULL)."""
    auto_increment: bool = False
    comment: str | None = None
    json: bool = False
    """The column holds JSON: MySQL's JSON type, or MariaDB's LONGTEXT with a
    ``json_valid`` check (its JSON type)."""

    @classmethod
    def of_information_schema(cls, row: dict[str, Any]) -> Column:
        """The column of an ``information_schema.COLUMNS`` row (lower-case keys). MariaDB
        quotes a string default and writes ``NULL`` for none; MySQL writes literals bare:
        both are read into :attr:`default`. A ``json`` key (database.py's) says whether the
        column holds JSON; without one only MySQL's JSON type does."""
        data_type = str(row["data_type"]).lower()
        column_type = str(row["column_type"])
        fsp = row.get("datetime_precision")
        if data_type == "bit":
            length = row.get("numeric_precision")
        else:
            length = row.get("character_maximum_length")
        return cls(
            name=row["column_name"],
            data_type=data_type,
            column_type=column_type,
            unsigned=" unsigned" in column_type.lower(),
            optional=str(row["is_nullable"]).upper() == "YES",
            length=None if length is None else int(length),
            precision=_int_or_none(row.get("numeric_precision")),
            scale=_int_or_none(row.get("numeric_scale")),
            fsp=None if fsp is None else int(fsp),
            enum_values=_options(column_type) if data_type in ("enum", "set") else (),
            charset=row.get("character_set_name"),
            default=_default_text(row.get("column_default")),
            auto_increment="auto_increment" in str(row.get("extra") or "").lower(),
            comment=row.get("column_comment") or None,
            json=bool(row.get("json", data_type == "json")),
        )

    @classmethod
    def of_binlog(
        cls, column: BinlogColumn, known: Column | None, optional: bool | None = None
    ) -> Column:
        """The column of a TABLE_MAP event's ``column`` (FULL row metadata). ``known`` (the
        column of that name from information_schema) supplies what the binlog lacks (the
        declared type, default, auto-increment, comment, string lengths) only when it
        describes the same stored type: base type, signedness, options, decimal digits,
        fraction digits and bit length equal. ``optional``: the event's null bitmap for the
        column (:func:`nullable_columns`); None takes ``known``'s, else true."""
        binlog = _binlog_column(column, True if optional is None else optional)
        if known is None or not _same_storage(binlog, known):
            return binlog
        return Column(
            name=binlog.name,
            data_type=known.data_type,
            column_type=known.column_type,
            unsigned=binlog.unsigned,
            optional=known.optional if optional is None else optional,
            length=known.length,
            precision=known.precision,
            scale=known.scale,
            fsp=known.fsp,
            enum_values=binlog.enum_values,
            charset=known.charset,
            default=known.default,
            auto_increment=known.auto_increment,
            comment=known.comment,
            json=known.json,
        )


def nullable_columns(null_bitmask: bytes, count: int) -> list[bool]:
    """Whether each of a TABLE_MAP event's ``count`` columns is nullable, from its
    ``null_bitmask`` (bit i of byte i // 8)."""
    return [bool(null_bitmask[i >> 3] & (1 << (i & 7))) for i in range(count)]


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


_OPTION = re.compile(r"'((?:[^'\\]|''|\\.)*)'", re.S)


def _options(column_type: str) -> tuple[str, ...]:
    """The options of ``enum('a','it''s')`` / ``set(...)`` as information_schema prints them."""
    body = column_type[column_type.index("(") + 1 : column_type.rindex(")")]
    return tuple(_unquote(match) for match in _OPTION.findall(body))


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("''", "'"))


def _default_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    if text == "NULL":  # MariaDB: no default, or DEFAULT NULL
        return None
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":  # MariaDB: a string literal
        return _unquote(text[1:-1])
    return text


def _binlog_column(column: BinlogColumn, optional: bool) -> Column:
    """The column as the binlog alone describes it."""
    code = column.type
    charset = column.character_set_name
    binary = charset == _BINARY_CHARSET
    length = precision = scale = fsp = None
    options: tuple[str, ...] = ()
    if code in (_FT_VARCHAR, _FT_VAR_STRING):
        base = "varbinary" if binary else "varchar"
        length = getattr(column, "max_length", None) if binary else None
    elif code == _FT_STRING:
        base = "binary" if binary else "char"
        length = getattr(column, "max_length", None) if binary else None
    elif code == _FT_BLOB:
        size = _BLOB_PREFIXES.get(getattr(column, "length_size", 2), "")
        base = size + ("blob" if binary else "text")
    elif code in _BINLOG_BASES:
        base = _BINLOG_BASES[code]
    else:
        raise UnsupportedType(f"column {column.name} has binlog type {code}, which has no mapping")
    if code == _FT_NEWDECIMAL:
        precision, scale = column.precision, column.decimals  # type: ignore[attr-defined]
    elif code in (_FT_TIME2, _FT_DATETIME2, _FT_TIMESTAMP2):
        fsp = column.fsp  # type: ignore[attr-defined]
    elif code in (_FT_TIME, _FT_DATETIME, _FT_TIMESTAMP):
        fsp = 0
    elif code == _FT_BIT:
        length = column.bits  # type: ignore[attr-defined]
    elif code == _FT_ENUM:
        options = tuple((column.enum_values or [""])[1:])  # the library puts "" first
    elif code == _FT_SET:
        options = tuple(column.set_values or ())
    column_type = _column_type(base, column.unsigned, length, precision, scale, fsp, options)
    return Column(
        name=column.name,
        data_type=base,
        column_type=column_type,
        unsigned=column.unsigned,
        optional=optional,
        length=length,
        precision=precision,
        scale=scale,
        fsp=fsp,
        enum_values=options,
        charset=None if binary else charset,
        json=base == "json",
    )


def _column_type(
    base: str,
    unsigned: bool,
    length: int | None,
    precision: int | None,
    scale: int | None,
    fsp: int | None,
    options: tuple[str, ...],
) -> str:
    """A column type as information_schema would print it, from what the binlog says."""
    if options:
        quoted = ",".join("'" + option.replace("'", "''") + "'" for option in options)
        text = f"{base}({quoted})"
    elif precision is not None:
        text = f"{base}({precision},{scale})"
    elif length is not None:
        text = f"{base}({length})"
    elif fsp:
        text = f"{base}({fsp})"
    else:
        text = base
    return text + " unsigned" if unsigned else text


def _same_storage(binlog: Column, known: Column) -> bool:
    """Whether ``known`` (information_schema) describes the column the binlog decoded."""
    stored_as = _STORED_AS.get(known.data_type, known.data_type)
    return (
        binlog.name == known.name
        and binlog.data_type == stored_as
        and binlog.unsigned == known.unsigned
        and binlog.enum_values == known.enum_values
        and (binlog.precision, binlog.scale) in ((None, None), (known.precision, known.scale))
        and binlog.fsp in (None, known.fsp or 0)
        and (binlog.length in (None, known.length) or stored_as != known.data_type)
    )


# -- Debezium's semantic schemas ---------------------------------------------------------------


_YEAR = named(SchemaBuilder.int32(), "io.debezium.time.Year").build()


def _escape_option(option: str) -> str:
    """``EnumeratedValues.escape``: ``\\`` and ``,`` escaped with a backslash."""
    return option.replace("\\", "\\\\").replace(",", "\\,")


def _options_schema(name: str, options: tuple[str, ...]) -> Schema:
    return (
        named(SchemaBuilder.string(), name)
        .parameter("allowed", ",".join(_escape_option(o) for o in options))
        .build()
    )


# -- the mapping -------------------------------------------------------------------------------


class Mapping(NamedTuple):
    """A column's Connect schema and the conversions of its values."""

    schema: Schema
    """The column's schema: optional when the column is nullable, its default when it has one."""
    from_snapshot: Convert
    """A PyMySQL value -> the Connect value (None: no value, see :attr:`absent`)."""
    from_binlog: Convert
    """A pymysqlreplication value -> the Connect value (None: no value)."""
    absent: Any
    """What the column holds when its value is NULL or has no Connect value: None when
    nullable, else the schema's default, else Debezium's fallback for the type."""


_Parts = tuple[Schema, Convert, Convert, Any]
"""(schema, from_snapshot, from_binlog, fallback) before optionality and default."""


def column_mapping(column: Column, modes: TypeModes) -> Mapping:
    """The schema of ``column`` and the conversions of its values, as Debezium maps them.
    Raises :class:`UnsupportedType` for a type Debezium does not map."""
    schema, snapshot, binlog, fallback = _parts(column, modes)
    default = None
    if column.default is not None:
        default = _default_value(column, snapshot, fallback)
    if column.optional and not schema.optional:
        schema = schema.replace(optional=True)
    if default is not None:
        schema = schema.replace(default_value=default)
    absent = None if column.optional else fallback if default is None else default
    return Mapping(schema, snapshot, binlog, absent)


def _identity(value: Any) -> Any:
    return value


def _same(schema: Schema, convert: Convert, fallback: Any) -> _Parts:
    return schema, convert, convert, fallback


# -- numbers -----------------------------------------------------------------------------------

_INTEGERS: dict[str, tuple[Schema, Schema]] = {
    "tinyint": (Schema.INT8_SCHEMA, Schema.INT16_SCHEMA),
    "smallint": (Schema.INT16_SCHEMA, Schema.INT32_SCHEMA),
    "mediumint": (Schema.INT32_SCHEMA, Schema.INT32_SCHEMA),
    "int": (Schema.INT32_SCHEMA, Schema.INT64_SCHEMA),
}
"""(signed, unsigned) schemas of the integer types below BIGINT."""
_TWO_64 = 1 << 64
_MAX_LONG = (1 << 63) - 1


def _wrap_long(value: Any) -> Any:
    """A BIGINT UNSIGNED value as Java's ``long`` holds it (2^64-1 is -1)."""
    return value - _TWO_64 if value > _MAX_LONG else value


def _unsigned_decimal(value: Any) -> Any:
    return decimal.Decimal(value)


def _integer(column: Column, modes: TypeModes) -> _Parts:
    if column.data_type == "bigint":
        if not column.unsigned:
            return _same(Schema.INT64_SCHEMA, _identity, 0)
        if modes.bigint_unsigned == "precise":
            return _same(decimal_schema(0, 20), _unsigned_decimal, decimal.Decimal(0))
        return _same(Schema.INT64_SCHEMA, _wrap_long, 0)
    signed, unsigned = _INTEGERS[column.data_type]
    return _same(unsigned if column.unsigned else signed, _identity, 0)


def _float32(value: Any) -> Any:
    """The single-precision number nearest ``value`` (as Java's float holds it), as a float."""
    return _struct.unpack("<f", _struct.pack("<f", value))[0]


def _floating(column: Column, modes: TypeModes) -> _Parts:
    if column.data_type == "float":  # stored in 4 bytes, whatever the schema
        schema = Schema.FLOAT32_SCHEMA if column.scale is None else Schema.FLOAT64_SCHEMA
        return schema, _float32, _identity, 0.0
    return _same(Schema.FLOAT64_SCHEMA, float, 0.0)


def _plain(value: Any) -> Any:
    return format(value, "f")


def _decimal(column: Column, modes: TypeModes) -> _Parts:
    precision = 10 if column.precision is None else column.precision
    scale = 0 if column.scale is None else column.scale
    if modes.decimal_handling == "double":
        return _same(Schema.FLOAT64_SCHEMA, float, 0.0)
    if modes.decimal_handling == "string":
        return _same(STRING, _plain, "0")
    return _same(decimal_schema(scale, precision), _identity, decimal.Decimal(0).scaleb(-scale))


# -- strings and binaries ----------------------------------------------------------------------


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else bytes(value).decode("utf-8", "replace")


def _string(column: Column, modes: TypeModes) -> _Parts:
    return _same(STRING, _text, "")


def _hex(data: bytes) -> str:
    return data.hex()


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _base64_url_safe(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


_BINARY_ENCODINGS: dict[str, Callable[[bytes], Any] | None] = {
    "bytes": None,
    "base64": _base64,
    "base64-url-safe": _base64_url_safe,
    "hex": _hex,
}


def _binary(column: Column, modes: TypeModes) -> _Parts:
    encode = _BINARY_ENCODINGS[modes.binary_handling]
    width = column.length if column.data_type == "binary" else None

    def convert(value: Any) -> Any:
        data = value.encode() if isinstance(value, str) else bytes(value)
        if width is not None and len(data) < width:  # the binlog drops trailing zero bytes
            data = data.ljust(width, b"\x00")
        return data if encode is None else encode(data)

    if encode is None:
        return _same(Schema.BYTES_SCHEMA, convert, b"")
    return _same(STRING, convert, "")


def _bit(column: Column, modes: TypeModes) -> _Parts:
    length = column.length or 1
    if length == 1:
        return (
            Schema.BOOLEAN_SCHEMA,
            lambda value: int.from_bytes(value, "big") != 0,
            lambda value: value == "1",
            False,
        )
    size = (length + 7) // 8

    def from_snapshot(value: Any) -> Any:  # big-endian bytes
        return int.from_bytes(value, "big").to_bytes(size, "little")

    def from_binlog(value: Any) -> Any:  # '0'/'1' text, most significant bit first
        return int(value, 2).to_bytes(size, "little")

    return bits_schema(length), from_snapshot, from_binlog, b""


def _enum(column: Column, modes: TypeModes) -> _Parts:
    schema = _options_schema("io.debezium.data.Enum", column.enum_values)
    return _same(schema, _identity, "")


def _set(column: Column, modes: TypeModes) -> _Parts:
    schema = _options_schema("io.debezium.data.EnumSet", column.enum_values)
    options = column.enum_values

    def from_binlog(value: Any) -> Any:  # a Python set
        return ",".join(option for option in options if option in value)

    return schema, _identity, from_binlog, ""


# -- JSON (MySQL) ------------------------------------------------------------------------------


def _json_value(value: Any) -> Any:
    """pymysqlreplication's JSON (bytes keys and strings) as plain Python values."""
    if isinstance(value, dict):
        return {_json_text(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (_dt.date, _dt.time, _dt.timedelta)):
        return str(value)
    return value


def _json_text(key: Any) -> str:
    return bytes(key).decode("utf-8") if isinstance(key, (bytes, bytearray)) else str(key)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _json(column: Column, modes: TypeModes) -> _Parts:
    if column.data_type != "json":  # MariaDB's: text on both paths
        return _same(JSON, _text, "{}")
    return (
        JSON,
        lambda text: _compact(json.loads(text)),
        lambda value: _compact(_json_value(value)),
        "{}",
    )


# -- dates and times ---------------------------------------------------------------------------

_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_UTC = _dt.timezone.utc
_EPOCH_NAIVE = _dt.datetime(1970, 1, 1)
_US = _dt.timedelta(microseconds=1)
_US_PER_DAY = 86_400_000_000


def _adjusted_year(year: int) -> int:
    """``BinlogValueConverters.adjustTemporal``: 0-69 -> 2000-2069, 70-99 -> 1970-1999."""
    if year <= 69:
        return year + 2000
    if year <= 99:
        return year + 1900
    return year


def _adjust(moment: Any) -> Any:
    """A date or datetime of a two-digit year moved as ``Temporal.plus(years)`` moves it
    (29 February to 28 February when the new year has none)."""
    year = _adjusted_year(moment.year)
    try:
        return moment.replace(year=year)
    except ValueError:
        return moment.replace(year=year, day=28)


def _valid(value: Any, kind: type[_dt.date], adjust: bool) -> Any:
    """``value`` when it is a ``kind`` (PyMySQL returns zero and invalid dates as text,
    pymysqlreplication as None), adjusted when it has a two-digit year."""
    if not isinstance(value, kind):
        return None
    if adjust and value.year < 100:
        return _adjust(value)
    return value


def _date(column: Column, modes: TypeModes) -> _Parts:
    adjust = modes.time_adjuster
    if modes.time_precision == "connect":

        def to_date(value: Any) -> Any:
            valid = _valid(value, _dt.date, adjust)
            return None if valid is None else _dt.date(valid.year, valid.month, valid.day)

        return _same(Date.SCHEMA, to_date, _dt.date(1970, 1, 1))

    def epoch_day(value: Any) -> Any:
        valid = _valid(value, _dt.date, adjust)
        return None if valid is None else valid.toordinal() - _EPOCH_ORDINAL

    return _same(DATE, epoch_day, 0)


def _epoch_micros(moment: _dt.datetime) -> int:
    return (moment - _EPOCH_NAIVE) // _US


def _datetime(column: Column, modes: TypeModes) -> _Parts:
    adjust = modes.time_adjuster
    if modes.time_precision == "connect":

        def to_timestamp(value: Any) -> Any:
            valid = _valid(value, _dt.datetime, adjust)
            if valid is None:
                return None
            return valid.replace(microsecond=valid.microsecond // 1000 * 1000, tzinfo=_UTC)

        return _same(Timestamp.SCHEMA, to_timestamp, _dt.datetime(1970, 1, 1, tzinfo=_UTC))
    if (column.fsp or 0) <= 3:

        def epoch_millis(value: Any) -> Any:
            valid = _valid(value, _dt.datetime, adjust)
            return None if valid is None else _epoch_micros(valid) // 1000

        return _same(TIMESTAMP, epoch_millis, 0)

    def epoch_micros(value: Any) -> Any:
        valid = _valid(value, _dt.datetime, adjust)
        return None if valid is None else _epoch_micros(valid)

    return _same(MICRO_TIMESTAMP, epoch_micros, 0)


def _zoned_text(moment: _dt.datetime, fsp: int) -> str:
    """``ZonedTimestamp.toIsoString`` in UTC: exactly ``fsp`` fraction digits (none for 0)."""
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if fsp:
        text += "." + f"{moment.microsecond:06d}"[:fsp]
    return text + "Z"


_ZONED_EPOCH = "1970-01-01T00:00:00Z"


def _timestamp(column: Column, modes: TypeModes) -> _Parts:
    fsp = column.fsp or 0

    def zoned(value: Any) -> Any:
        # Naive UTC from both libraries (the snapshot session's time zone is +00:00). The
        # zero TIMESTAMP is text from PyMySQL and the epoch itself from the binlog.
        if not isinstance(value, _dt.datetime) or value == _EPOCH_NAIVE:
            return None
        return _zoned_text(value, fsp)

    return _same(ZONED_TIMESTAMP, zoned, _ZONED_EPOCH)


def _time(column: Column, modes: TypeModes) -> _Parts:
    if modes.time_precision == "connect":

        def to_time(value: Any) -> Any:
            if not isinstance(value, _dt.timedelta):
                return None
            micros = value // _US
            if not 0 <= micros < _US_PER_DAY:  # Connect's Time is a time of day
                return None
            seconds, fraction = divmod(micros, 1_000_000)
            minutes, second = divmod(seconds, 60)
            hour, minute = divmod(minutes, 60)
            return _dt.time(hour, minute, second, fraction // 1000 * 1000)

        return _same(Time.SCHEMA, to_time, _dt.time(0))

    def micros(value: Any) -> Any:
        return value // _US if isinstance(value, _dt.timedelta) else None

    return _same(MICRO_TIME, micros, 0)


def _year(column: Column, modes: TypeModes) -> _Parts:
    def from_snapshot(value: Any) -> Any:
        year = int(value)
        return 1900 if year == 0 else year  # YEAR 0000, as the binlog gives it

    return _YEAR, from_snapshot, _identity, 0


# -- geometry, uuid ----------------------------------------------------------------------------


_EMPTY_COLLECTION = bytes.fromhex("010700000000000000")
"""``BinlogGeometry.createEmpty``'s WKB: GEOMETRYCOLLECTION EMPTY."""


def _srid_and_wkb(value: Any) -> tuple[int | None, bytes]:
    """``BinlogGeometry.fromBytes``: a 4-byte little-endian SRID (0: none), then WKB."""
    data = bytes(value)
    srid = int.from_bytes(data[:4], "little", signed=True)
    return (srid or None), data[4:]


def _point(column: Column, modes: TypeModes) -> _Parts:
    schema = POINT.replace(optional=True) if column.optional else POINT

    def convert(value: Any) -> Any:
        srid, wkb = _srid_and_wkb(value)
        order = "<" if wkb[0] else ">"
        x, y = _struct.unpack_from(order + "dd", wkb, 5)
        return Struct._trusted(schema, [x, y, wkb, srid])

    empty = Struct._trusted(schema, [0.0, 0.0, _EMPTY_COLLECTION, None])
    return _same(schema, convert, empty)


def _geometry(column: Column, modes: TypeModes) -> _Parts:
    def convert(value: Any) -> Any:
        srid, wkb = _srid_and_wkb(value)
        return Struct._trusted(GEOMETRY, [wkb, srid, None])

    return _same(GEOMETRY, convert, Struct._trusted(GEOMETRY, [_EMPTY_COLLECTION, None, None]))


def _uuid(column: Column, modes: TypeModes) -> _Parts:
    def from_binlog(value: Any) -> Any:  # BINARY(16), trailing zero bytes dropped
        return str(uuid.UUID(bytes=bytes(value).ljust(16, b"\x00")))

    return UUID, _text, from_binlog, ""


# -- dispatch ----------------------------------------------------------------------------------

_Factory = Callable[[Column, TypeModes], _Parts]
_TYPES: dict[str, _Factory] = {
    **dict.fromkeys(("tinyint", "smallint", "mediumint", "int", "bigint"), _integer),
    **dict.fromkeys(("float", "double"), _floating),
    "decimal": _decimal,
    **dict.fromkeys(
        ("char", "varchar", "tinytext", "text", "mediumtext", "longtext"),
        _string,
    ),
    **dict.fromkeys(
        ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"),
        _binary,
    ),
    "bit": _bit,
    "enum": _enum,
    "set": _set,
    "json": _json,
    "date": _date,
    "datetime": _datetime,
    "timestamp": _timestamp,
    "time": _time,
    "year": _year,
    "point": _point,
    **dict.fromkeys(_GEOMETRIES - {"point"}, _geometry),
    "uuid": _uuid,
}


def _parts(column: Column, modes: TypeModes) -> _Parts:
    factory = _json if column.json else _TYPES.get(column.data_type)
    if factory is None:
        raise UnsupportedType(
            f"column {column.name} has type {column.column_type}, which Debezium's binlog "
            "connectors do not map"
        )
    return factory(column, modes)


# -- defaults ----------------------------------------------------------------------------------

_CURRENT_TIMESTAMP = re.compile(r"(current_timestamp|now|localtimestamp|localtime)(\(\d*\))?", re.I)
_ZERO_DATE = re.compile(r"(\d{4}-\d\d-00|\d{4}-00-\d\d|0000-\d\d-\d\d)( .*)?")
_TIME_TEXT = re.compile(r"(-)?(\d+):(\d\d)(?::(\d\d)(?:\.(\d{1,6}))?)?")
_BIT_TEXT = re.compile(r"b'([01]*)'", re.I)


def _duration(text: str) -> _dt.timedelta:
    match = _TIME_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"not a TIME: {text!r}")
    sign, hours, minutes, seconds, fraction = match.groups()
    value = _dt.timedelta(
        hours=int(hours),
        minutes=int(minutes),
        seconds=int(seconds or 0),
        microseconds=int((fraction or "").ljust(6, "0")),
    )
    return -value if sign else value


def _snapshot_value(column: Column, text: str) -> Any:
    """A default's text as PyMySQL would return the value (None: the default has no value:
    an expression, a zero date)."""
    kind = column.data_type
    if kind in ("date", "datetime", "timestamp"):
        if _CURRENT_TIMESTAMP.fullmatch(text) or _ZERO_DATE.fullmatch(text) or text == "0":
            return None
        if kind == "date":
            return _dt.date.fromisoformat(text)
        return _dt.datetime.fromisoformat(text)
    if kind == "time":
        return _duration(text)
    if kind in ("bit",):
        match = _BIT_TEXT.fullmatch(text)
        number = int(match[1] or "0", 2) if match else int(text)
        return number.to_bytes(((column.length or 1) + 7) // 8, "big")
    if kind in _INTEGERS or kind in ("bigint", "year"):
        if text.lower() in ("true", "false"):
            return int(text.lower() == "true")
        return int(decimal.Decimal(text).to_integral_value(decimal.ROUND_HALF_UP))
    if kind in ("float", "double"):
        return float(text)
    if kind == "decimal":
        scale = column.scale or 0
        return decimal.Decimal(text).quantize(decimal.Decimal(1).scaleb(-scale))
    if kind in ("json", "uuid") or kind in _GEOMETRIES:
        return None
    return text


def _default_value(column: Column, from_snapshot: Convert, fallback: Any) -> Any:
    """The Connect default of ``column`` (``BinlogDefaultValueConverter``): its literal
    converted as a snapshot value; a NOT NULL temporal column whose default is
    ``CURRENT_TIMESTAMP`` or a zero date gets the epoch (Debezium's fallback); an
    expression that is no literal of the type gives no default."""
    text = column.default
    assert text is not None
    try:
        value = _snapshot_value(column, text.strip() if column.data_type not in _TEXTUAL else text)
    except (ValueError, ArithmeticError):
        return None
    converted = None if value is None else from_snapshot(value)
    if converted is None and not column.optional and column.data_type in _TEMPORAL:
        return fallback
    return converted


_TEXTUAL = frozenset(
    ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set")
)
_TEMPORAL = frozenset(("date", "datetime", "timestamp"))
