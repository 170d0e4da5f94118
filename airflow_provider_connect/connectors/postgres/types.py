"""PostgreSQL column types as Connect schemas, and their text values as Connect values,
as Debezium's PostgreSQL connector maps them (``PostgresValueConverter`` over
``JdbcValueConverters``, with the values its pgoutput decoder hands them).

:func:`column_mapping` takes a column's :class:`PgType` (``pg_type`` and ``atttypmod`` as the
catalog or a pgoutput Relation message give them), whether it is nullable and the
connector's :class:`TypeModes`, and returns the column's schema and ``parse``, which turns a
value in PostgreSQL's text output form into the Connect value. The text comes from a session
with ``DateStyle=ISO, MDY``, ``IntervalStyle=iso_8601``, ``extra_float_digits=3``,
``bytea_output=hex`` and ``TimeZone=UTC`` (``config.SESSION_OPTIONS``), from the stream and
from snapshots alike; ``parse`` is never called for NULL.

=====================================  =================================================
PostgreSQL type                        Connect schema (Python value)
=====================================  =================================================
bool; bit(1), varbit(1)                BOOLEAN
int2 / int4 / int8, oid                INT16 / INT32 / INT64 (int)
float4 / float8                        FLOAT32 / FLOAT64 (float; NaN and ±Infinity too)
numeric(p, s)                          ``Decimal`` (scale s, ``connect.decimal.precision`` p)
numeric                                ``io.debezium.data.VariableScaleDecimal`` struct
money                                  ``Decimal`` (scale ``money.fraction.digits``)
numeric, money: decimal.handling.mode  double: FLOAT64; string: STRING (NaN: ``NAN``)
char, bpchar, varchar, text, name,     STRING (as PostgreSQL prints them: char(n) padded)
citext, isbn, inet, cidr, macaddr(8),
int4/int8/num/ts/tstz/date ranges
json, jsonb / xml / uuid               ``io.debezium.data.Json`` / ``Xml`` / ``Uuid`` strings
tsvector / ltree                       ``io.debezium.data.Tsvector`` / ``Ltree`` strings
bytea                                  BYTES, or base64 / base64-url-safe / hex STRING
date                                   ``io.debezium.time.Date`` (epoch days)
time(p)                                ``Time`` (ms, p ≤ 3) / ``MicroTime`` (µs)
timestamp(p)                           ``Timestamp`` (ms, p ≤ 3) / ``MicroTimestamp`` (µs)
  … time.precision.mode=connect        Connect ``Date`` / ``Time`` / ``Timestamp``
timetz / timestamptz                   ``ZonedTime`` / ``ZonedTimestamp`` strings in UTC
interval                               ``MicroDuration`` (µs), or ``Interval`` ISO string
bit(n), varbit(n)                      ``io.debezium.data.Bits`` (``length`` n), little-endian
enum                                   ``io.debezium.data.Enum`` (``allowed``: its labels)
domain                                 its base type's mapping (the domain's modifier first)
arrays of any of these                 ARRAY of the optional element schema
hstore                                 ``Json`` string, or MAP<STRING, optional STRING>
point / circle / line                  ``io.debezium.data.geometry.Point`` / ``Circle`` / ``Line``
box, lseg, path, polygon; geometry     ``io.debezium.data.geometry.Geometry`` (WKB)
geography                              ``io.debezium.data.geometry.Geography``
vector / halfvec / sparsevec           ``DoubleVector`` / ``FloatVector`` / ``SparseDoubleVector``
=====================================  =================================================

Guarantees:

* Schemas are Debezium's: the same types, semantic names, versions, docs and parameters, and
  the same choice by modifier (``numeric(p, s)`` against unconstrained ``numeric``, a time's
  or a timestamp's precision, a bit string's length). A nullable column's schema is
  optional (Debezium's geometry and circle/line schemas always are); array elements are
  optional, except an enum array's, as in Debezium.
* Values are Debezium's, in Python: INT64 values (epoch micros, durations, ...) as ``int``,
  BYTES as ``bytes``, ``Decimal`` as ``decimal.Decimal`` (with the column's scale, as
  PostgreSQL prints it), structs as :class:`Struct` of the column's schema, maps as ``dict``.
  Dates and timestamps of any year PostgreSQL has (BC, beyond 9999) and ``±infinity`` give
  Debezium's numbers and strings (``ZonedTimestamp``: ``2024-01-02T03:04:05.123456Z``,
  exactly the column's precision in fraction digits, ``+21016-…``, ``-4713-…``).
* Each ``parse`` is chosen once per column; a value costs no dispatch on its type. Text
  that is not PostgreSQL's output in the session's styles raises ``ValueError``; a special
  value (NaN, ±Infinity) of a ``numeric`` in precise mode raises ``DataException``, as
  Debezium fails on it.
* A type Debezium does not capture (composite, custom range, tsquery, pg_lsn, ... : what
  ``include.unknown.datatypes=false`` drops) raises :class:`UnsupportedType`: the caller
  leaves the column out of its events, as Debezium does.

Deliberate differences from Debezium:

* Arrays Debezium leaves out (``money[]``, ``name[]``, ``interval[]``, ``varbit[]``,
  ``xml[]``, ``point[]``, arrays of domains) are mapped as the other arrays, and ``bit[]``
  as an array of its element (Debezium gives it a Bits schema its values cannot fit).
  Multidimensional arrays (which Debezium cannot convert) are flattened in row-major order.
* ``timetz`` ``24:00:00`` with a non-zero offset is converted to UTC (Debezium fails on it);
  ``numeric`` with a negative scale (PostgreSQL 15+) gets that scale.
* ``time.precision.mode=connect``: Python cannot hold Debezium's values outside years
  1-9999, so ``±infinity`` becomes ``date``/``datetime`` ``max``/``min``, ``24:00:00``
  23:59:59.999, and another date out of that range raises ``ValueError``. Timestamps are
  aware UTC datetimes, times naive, both truncated to milliseconds as Connect encodes them.
* ``money`` drops any currency symbol and grouping characters (Debezium drops one leading
  symbol); as in Debezium the decimal point must be ``.`` (``lc_monetary`` C or English).
* hstore as JSON orders its keys as Java's ``HashMap`` iterates them, as Debezium's output
  does, except for the (treeified) order of 9 or more keys colliding in one bucket.
* Intervals are read from the ``iso_8601`` style only; ``bool`` accepts ``t`` and ``true``.

Snapshots should read each column's output text as the stream carries it, not a ``::text``
cast of it: the casts of ``bpchar`` (trailing blanks dropped) and ``inet`` (netmask always
shown) print other text than the output functions do.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import math
import re
import struct as _struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.logical import (
    Date,
    Time,
    Timestamp,
    twos_complement,
)
from airflow_provider_connect.connect.errors import DataException
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

Parse = Callable[[str], Any]
"""Text output of a non-NULL value -> its Connect value."""
_Factory = Callable[["PgType", "TypeModes", bool], tuple[Schema, Parse]]
"""A type's mapping: (type, modes, optional) -> (schema, parse)."""


class UnsupportedType(ValueError):
    """The type has no Connect mapping (Debezium drops such columns unless
    ``include.unknown.datatypes`` is set): leave the column out."""


@dataclass(frozen=True)
class PgType:
    """A column's type as the catalog describes it."""

    name: str
    """``pg_type.typname``: ``int4``, ``numeric``, ``bpchar``, ``_int4`` (an array), an enum's
    or a domain's own name, ..."""
    modifier: int = -1
    """``atttypmod`` (-1 when none): varchar(n) is n+4, numeric(p,s) ((p<<16)|s)+4,
    timestamp(p) p, bit(n) n; an array's is its elements'."""
    kind: str = "b"
    """``pg_type.typtype``: b base, e enum, d domain, r range, c composite, ..."""
    enum_values: tuple[str, ...] = ()
    """An enum's labels, in their sort order."""
    element: PgType | None = None
    """The element type of an array type."""
    base: PgType | None = None
    """The base type of a domain (with the domain's ``typtypmod`` as its modifier)."""


MODES: dict[str, tuple[str, tuple[str, ...]]] = {
    "decimal_handling": ("decimal.handling.mode", ("precise", "double", "string")),
    "time_precision": (
        "time.precision.mode",
        ("adaptive", "adaptive_time_microseconds", "connect"),
    ),
    "binary_handling": ("binary.handling.mode", ("bytes", "base64", "base64-url-safe", "hex")),
    "interval_handling": ("interval.handling.mode", ("numeric", "string")),
    "hstore_handling": ("hstore.handling.mode", ("json", "map")),
}
"""Each :class:`TypeModes` attribute's config key and allowed values, the default first."""


@dataclass(frozen=True)
class TypeModes:
    """Debezium's type-related settings (lowercase values); invalid ones raise ``ValueError``."""

    decimal_handling: str = "precise"
    """decimal.handling.mode: precise | double | string"""
    time_precision: str = "adaptive"
    """time.precision.mode: adaptive | adaptive_time_microseconds | connect"""
    binary_handling: str = "bytes"
    """binary.handling.mode: bytes | base64 | base64-url-safe | hex"""
    interval_handling: str = "numeric"
    """interval.handling.mode: numeric | string"""
    hstore_handling: str = "json"
    """hstore.handling.mode: json | map"""
    money_fraction_digits: int = 2
    """money.fraction.digits"""

    def __post_init__(self) -> None:
        for attribute, (key, allowed) in MODES.items():
            value = getattr(self, attribute)
            if value not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}, not {value!r}")
        if self.money_fraction_digits < 0:
            raise ValueError(
                f"money.fraction.digits must be at least 0, not {self.money_fraction_digits}"
            )


class ColumnMapping(NamedTuple):
    """A column's Connect schema and the parse of its values."""

    schema: Schema
    """The column's schema, already optional when the column is nullable."""
    parse: Parse
    """Text output -> Connect value (never called for NULL)."""


def column_mapping(pg_type: PgType, optional: bool, modes: TypeModes) -> ColumnMapping:
    """The schema of a column of ``pg_type`` (optional when ``optional``) and the parse of
    its values' text, as Debezium maps them. Raises :class:`UnsupportedType` for a type
    Debezium does not capture: the caller leaves the column out."""
    schema, parse = _resolve(pg_type, modes, optional)
    return ColumnMapping(schema, parse)


# -- Debezium's semantic schemas -------------------------------------------------------------


def _opt(schema: Schema, optional: bool) -> Schema:
    return schema.replace(optional=True) if optional and not schema.optional else schema


_XML = named(SchemaBuilder.string(), "io.debezium.data.Xml").build()
_TSVECTOR = named(SchemaBuilder.string(), "io.debezium.data.Tsvector").build()
_LTREE = named(SchemaBuilder.string(), "io.debezium.data.Ltree").build()
_TIME = named(SchemaBuilder.int32(), "io.debezium.time.Time").build()
_NANO_TIME = named(SchemaBuilder.int64(), "io.debezium.time.NanoTime").build()
_NANO_TIMESTAMP = named(SchemaBuilder.int64(), "io.debezium.time.NanoTimestamp").build()
_ZONED_TIME = named(SchemaBuilder.string(), "io.debezium.time.ZonedTime").build()
_MICRO_DURATION = named(SchemaBuilder.int64(), "io.debezium.time.MicroDuration").build()
_INTERVAL = named(SchemaBuilder.string(), "io.debezium.time.Interval").build()
_VARIABLE_SCALE_DECIMAL = (
    named(SchemaBuilder.struct(), "io.debezium.data.VariableScaleDecimal")
    .doc("Variable scaled decimal")
    .field("scale", Schema.INT32_SCHEMA)
    .field("value", Schema.BYTES_SCHEMA)
    .build()
)
_GEOGRAPHY = (
    named(SchemaBuilder.struct(), "io.debezium.data.geometry.Geography")
    .doc("Geography")
    .field("wkb", Schema.BYTES_SCHEMA)
    .field("srid", Schema.OPTIONAL_INT32_SCHEMA)
    .build()
)
_CIRCLE = (
    named(SchemaBuilder.struct(), "io.debezium.data.geometry.Circle")
    .doc("Geometry (CIRCLE)")
    .optional()
    .field("center", POINT)
    .field("radius", Schema.FLOAT64_SCHEMA)
    .build()
)
_LINE = (
    named(SchemaBuilder.struct(), "io.debezium.data.geometry.Line")
    .doc("Geometry (LINE)")
    .optional()
    .field("a", Schema.FLOAT64_SCHEMA)
    .field("b", Schema.FLOAT64_SCHEMA)
    .field("c", Schema.FLOAT64_SCHEMA)
    .build()
)
_DOUBLE_VECTOR = named(
    SchemaBuilder.array(Schema.FLOAT64_SCHEMA), "io.debezium.data.DoubleVector"
).build()
_FLOAT_VECTOR = named(
    SchemaBuilder.array(Schema.FLOAT32_SCHEMA), "io.debezium.data.FloatVector"
).build()
_SPARSE_VECTOR = (
    named(SchemaBuilder.struct(), "io.debezium.data.SparseDoubleVector")
    .doc("Sparse double vector")
    .field("dimensions", Schema.INT16_SCHEMA)
    .field("vector", SchemaBuilder.map(Schema.INT16_SCHEMA, Schema.FLOAT64_SCHEMA))
    .build()
)
_HSTORE_MAP = SchemaBuilder.map(STRING, Schema.OPTIONAL_STRING_SCHEMA).build()
_UNLIMITED_LENGTH = 2**31 - 1  # pgjdbc's length of a varbit without one: Integer.MAX_VALUE


def _enum_schema(labels: tuple[str, ...]) -> Schema:
    return (
        named(SchemaBuilder.string(), "io.debezium.data.Enum")
        .parameter("allowed", ",".join(labels))
        .build()
    )


# -- calendar arithmetic: the proleptic Gregorian calendar of any year (java.time's) ----------

_US_PER_DAY = 86_400_000_000
_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a date of the astronomical ``year`` (1 BC is year 0)."""
    if month <= 2:
        year -= 1
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month - 3 if month > 2 else month + 9) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """(astronomical year, month, day) of a day since 1970-01-01."""
    days += 719_468
    era = days // 146_097
    day_of_era = days - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def _year_text(year: int) -> str:
    """A year as java.time's ISO formatters print it: 4 digits at least, ``+`` past 9999."""
    if year > 9999:
        return f"+{year}"
    return f"{year:04d}" if year >= 0 else f"-{-year:04d}"


def _fraction_micros(digits: str | None) -> int:
    return int(digits.ljust(6, "0")[:6]) if digits else 0


def _clock_text(micros: int) -> str:
    """``HH:MM:SS[.fraction]`` of microseconds since midnight, as ISO_LOCAL_TIME prints
    them: the fraction without trailing zeros, none when zero."""
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    text = f"{hour:02d}:{minute:02d}:{second:02d}"
    return text + "." + f"{fraction:06d}".rstrip("0") if fraction else text


# -- numbers ----------------------------------------------------------------------------------

_NUMERIC_SPECIALS = {
    "NaN": "NAN",
    "Infinity": "POSITIVE_INFINITY",
    "-Infinity": "NEGATIVE_INFINITY",
}
"""numeric's special values, and their string mode text (Debezium's enum names)."""


def _special_numeric(text: str) -> DataException:
    return DataException(
        f"Got a special value ({text}) for a Decimal type, which the current "
        "decimal.handling.mode cannot hold. Set decimal.handling.mode to 'string' or 'double' "
        "to capture it."
    )


def _numeric_precise(text: str) -> Any:
    if text in _NUMERIC_SPECIALS:
        raise _special_numeric(text)
    return decimal.Decimal(text)


def _numeric_string(text: str) -> Any:
    return _NUMERIC_SPECIALS.get(text, text)


def _variable_scale_decimal(schema: Schema) -> Parse:
    """VariableScaleDecimal structs: the value without trailing fraction zeros (as
    ``stripTrailingZeros``, never a negative scale), its scale and unscaled bytes."""
    trusted = Struct._trusted

    def parse(text: str) -> Any:
        if text in _NUMERIC_SPECIALS:
            raise _special_numeric(text)
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        whole, _, fraction = text.partition(".")
        return trusted(schema, [len(fraction), twos_complement(int(whole + fraction))])

    return parse


def _numeric_modifier(modifier: int) -> tuple[int, int]:
    """(precision, scale) of numeric's typmod; the scale is 11-bit signed (PostgreSQL 15+)."""
    packed = modifier - 4
    return (packed >> 16) & 0xFFFF, ((packed & 0x7FF) ^ 1024) - 1024


def _numeric(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    mode = modes.decimal_handling
    if mode == "double":
        return _opt(Schema.FLOAT64_SCHEMA, optional), float
    if mode == "string":
        return _opt(STRING, optional), _numeric_string
    if t.modifier == -1:  # unconstrained: the scale varies by value
        schema = _opt(_VARIABLE_SCALE_DECIMAL, optional)
        return schema, _variable_scale_decimal(schema)
    precision, scale = _numeric_modifier(t.modifier)
    return _opt(decimal_schema(scale, precision), optional), _numeric_precise


_MONEY_NOISE = re.compile(r"[^0-9.]")


def _money_digits(text: str) -> str:
    """The plain number of money's text: the sign (``-`` or parentheses), then its digits and
    decimal point without currency symbol or grouping (``-$1,234.56`` -> ``-1234.56``)."""
    digits = _MONEY_NOISE.sub("", text)
    return "-" + digits if text[0] in "-(" else digits


def _money(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    mode = modes.decimal_handling
    if mode == "double":
        return _opt(Schema.FLOAT64_SCHEMA, optional), lambda text: float(_money_digits(text))
    if mode == "string":
        return _opt(STRING, optional), lambda text: format(
            decimal.Decimal(_money_digits(text)), "f"
        )
    quantum = decimal.Decimal(1).scaleb(-modes.money_fraction_digits)
    money_decimal = decimal.Decimal

    def parse(text: str) -> Any:
        value = money_decimal(_money_digits(text)).quantize(quantum, decimal.ROUND_HALF_UP)
        return value if value else value.copy_abs()  # BigDecimal has no -0.0

    return _opt(decimal_schema(modes.money_fraction_digits, None), optional), parse


_TRUE_TEXTS = frozenset({"t", "true"})


# -- binary -----------------------------------------------------------------------------------


def _bytea_bytes(text: str) -> Any:
    return bytes.fromhex(text[2:])


def _bytea_base64(text: str) -> Any:
    return base64.b64encode(bytes.fromhex(text[2:])).decode("ascii")


def _bytea_base64_url_safe(text: str) -> Any:
    return base64.urlsafe_b64encode(bytes.fromhex(text[2:])).decode("ascii")


def _bytea_hex(text: str) -> Any:
    return text[2:]  # bytea_output=hex prints lowercase digits, as Debezium's HexConverter


_BYTEA: dict[str, tuple[Schema, Parse]] = {
    "bytes": (Schema.BYTES_SCHEMA, _bytea_bytes),
    "base64": (STRING, _bytea_base64),
    "base64-url-safe": (STRING, _bytea_base64_url_safe),
    "hex": (STRING, _bytea_hex),
}


def _bytea(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    schema, parse = _BYTEA[modes.binary_handling]
    return _opt(schema, optional), parse


def _bit_flag(text: str) -> Any:
    return "1" in text


def _bits_value(text: str) -> Any:
    """A bit string as ``BitSet.toByteArray`` of its bits (the last one is bit 0):
    little-endian, no trailing zero bytes (``b'00'`` is empty)."""
    value = int(text, 2) if text else 0
    return value.to_bytes((value.bit_length() + 7) // 8, "little")


def _bit_mapping(length: int, optional: bool) -> tuple[Schema, Parse]:
    if length > 1:
        return _opt(bits_schema(length), optional), _bits_value
    return _opt(Schema.BOOLEAN_SCHEMA, optional), _bit_flag


def _bit(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    return _bit_mapping(t.modifier, optional)


def _varbit(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    return _bit_mapping(_UNLIMITED_LENGTH if t.modifier == -1 else t.modifier, optional)


# -- dates and times --------------------------------------------------------------------------

# 'infinity' dates: the LocalDates Debezium's decoder maps them to (PostgreSQL's internal
# ±INT_MAX days, shifted to the Unix epoch and wrapped to an int).
DATE_POSITIVE_INFINITY = _days_from_civil(-5_877_611, 6, 21)
DATE_NEGATIVE_INFINITY = _days_from_civil(-5_877_611, 6, 22)
# 'infinity' timestamps: pgjdbc's PGStatement.DATE_POSITIVE/NEGATIVE_INFINITY, read as micros.
TIMESTAMP_POSITIVE_INFINITY = 9_223_372_036_825_200_000
TIMESTAMP_NEGATIVE_INFINITY = -9_223_372_036_832_400_000

DATE_TEXT = re.compile(r"(\d{4,})-(\d\d)-(\d\d)( BC)?")
TIMESTAMP_TEXT = re.compile(
    r"(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?"
    r"(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?( BC)?"
)
_date_fromisoformat = _dt.date.fromisoformat
_datetime_fromisoformat = _dt.datetime.fromisoformat


def _epoch_day_of_text(text: str) -> int:
    """Days since the epoch of any date's text (``0044-03-15 BC``, ``10000-01-01``, ...)."""
    if text == "infinity":
        return DATE_POSITIVE_INFINITY
    if text == "-infinity":
        return DATE_NEGATIVE_INFINITY
    match = DATE_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"Unexpected date value {text!r} (DateStyle must be ISO)")
    year = int(match[1])
    return _days_from_civil(1 - year if match[4] else year, int(match[2]), int(match[3]))


def _epoch_day(text: str) -> Any:
    try:
        return _date_fromisoformat(text).toordinal() - _EPOCH_ORDINAL
    except ValueError:  # BC, beyond 9999, infinity
        return _epoch_day_of_text(text)


def _instant_micros(text: str) -> int:
    """Epoch microseconds of any timestamp's or timestamptz's text (UTC without offset)."""
    match = TIMESTAMP_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"Unexpected timestamp value {text!r} (DateStyle must be ISO)")
    year = int(match[1])
    days = _days_from_civil(1 - year if match[12] else year, int(match[2]), int(match[3]))
    seconds = days * 86_400 + int(match[4]) * 3600 + int(match[5]) * 60 + int(match[6])
    if match[8]:
        offset = int(match[9]) * 3600 + int(match[10] or 0) * 60 + int(match[11] or 0)
        seconds -= offset if match[8] == "+" else -offset
    return seconds * 1_000_000 + _fraction_micros(match[7])


def _timestamp_micros(text: str) -> Any:
    try:
        moment = _datetime_fromisoformat(text)
    except ValueError:  # BC, beyond 9999, infinity (and Python 3.10's narrower parser)
        if text == "infinity":
            return TIMESTAMP_POSITIVE_INFINITY
        if text == "-infinity":
            return TIMESTAMP_NEGATIVE_INFINITY
        return _instant_micros(text)
    seconds = moment.hour * 3600 + moment.minute * 60 + moment.second
    return (
        (moment.toordinal() - _EPOCH_ORDINAL) * 86_400 + seconds
    ) * 1_000_000 + moment.microsecond


def _timestamp_millis(text: str) -> Any:
    return _timestamp_micros(text) // 1000


def _timestamp_nanos(text: str) -> Any:
    if text == "infinity":
        return 2**63 - 1
    if text == "-infinity":
        return -(2**63)
    return _timestamp_micros(text) * 1000


def _time_micros(text: str) -> Any:
    """Microseconds since midnight of ``HH:MM:SS[.ffffff]`` (``24:00:00`` is a whole day)."""
    micros = (int(text[0:2]) * 3600 + int(text[3:5]) * 60 + int(text[6:8])) * 1_000_000
    return micros + int(text[9:15].ljust(6, "0")) if len(text) > 9 else micros


def _time_millis(text: str) -> Any:
    return _time_micros(text) // 1000


def _time_nanos(text: str) -> Any:
    return _time_micros(text) * 1000


def _zoned_time(text: str) -> Any:
    """timetz as ZonedTime: the time in UTC, ``11:51:30.123789Z`` (``24:00:00Z`` stays)."""
    if text[-3:] == "+00" and (len(text) == 11 or text[-4] != "0"):
        return text[:-3] + "Z"  # already in UTC, and printed as ISO_OFFSET_TIME prints it
    at = max(text.rfind("+"), text.rfind("-"))
    if at < 8:
        raise ValueError(f"Unexpected timetz value {text!r}")
    clock = _time_micros(text[:at])
    zone = text[at + 1 :]
    offset = int(zone[0:2]) * 3600
    if len(zone) > 3:
        offset += int(zone[3:5]) * 60 + (int(zone[6:8]) if len(zone) > 6 else 0)
    if text[at] == "-":
        offset = -offset
    if offset == 0 and clock == _US_PER_DAY:
        return "24:00:00Z"
    return _clock_text((clock - offset * 1_000_000) % _US_PER_DAY) + "Z"


def _zoned_text(micros: int, width: int) -> str:
    """An instant as ZonedTimestamp prints it in UTC: ``width`` fraction digits when 1 to 9,
    else (ISO_OFFSET_DATE_TIME) as many as needed."""
    days, clock = divmod(micros, _US_PER_DAY)
    year, month, day = _civil_from_days(days)
    seconds, fraction = divmod(clock, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    if 0 < width <= 9:
        fraction_text = "." + f"{fraction:06d}000"[:width]
    else:
        fraction_text = "." + f"{fraction:06d}".rstrip("0") if fraction else ""
    return (
        f"{_year_text(year)}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
        f"{fraction_text}Z"
    )


def _zoned_timestamp(width: int) -> Parse:
    """timestamptz as ZonedTimestamp, at ``width`` fraction digits (the column's precision)."""
    fixed = 0 < width <= 9
    padding = "0" * 9

    def parse(text: str) -> Any:
        # The usual text, 'YYYY-MM-DD HH:MM:SS[.ffffff]+00' of a year 1-9999: rearranged.
        if len(text) >= 22 and text[-3:] == "+00" and text[4] == "-":
            if not fixed:  # the clock, its fraction without trailing zeros (none if zero)
                clock = text[11:-3].rstrip("0").rstrip(".") if text[19] == "." else text[11:19]
                return f"{text[:10]}T{clock}Z"
            digits = text[20:-3] if text[19] == "." else ""
            return f"{text[:10]}T{text[11:19]}.{(digits + padding)[:width]}Z"
        if text in ("infinity", "-infinity"):
            return text
        return _zoned_text(_instant_micros(text), width)

    return parse


# Connect's Date, Time and Timestamp carry Python values of years 1-9999 only.
_CONNECT_MAX_TIMESTAMP = _dt.datetime.max.replace(microsecond=999_000, tzinfo=_UTC)
_CONNECT_MIN_TIMESTAMP = _dt.datetime.min.replace(tzinfo=_UTC)


def _connect_date(text: str) -> Any:
    try:
        return _date_fromisoformat(text)
    except ValueError:
        pass
    if text == "infinity":
        return _dt.date.max
    if text == "-infinity":
        return _dt.date.min
    try:
        return _dt.date.fromordinal(_epoch_day_of_text(text) + _EPOCH_ORDINAL)
    except (ValueError, OverflowError):
        raise ValueError(f"date {text!r} is out of the range of Connect dates") from None


def _connect_time(text: str) -> Any:
    micros = min(_time_micros(text), _US_PER_DAY - 1000)  # 24:00:00 -> 23:59:59.999
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return _dt.time(hour, minute, second, fraction // 1000 * 1000)


def _connect_timestamp(text: str) -> Any:
    try:
        moment = _datetime_fromisoformat(text)
    except ValueError:
        if text == "infinity":
            return _CONNECT_MAX_TIMESTAMP
        if text == "-infinity":
            return _CONNECT_MIN_TIMESTAMP
        micros = _instant_micros(text) // 1000 * 1000
        try:
            return _EPOCH + _dt.timedelta(microseconds=micros)
        except OverflowError:
            raise ValueError(
                f"timestamp {text!r} is out of the range of Connect timestamps"
            ) from None
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000, tzinfo=_UTC)


def _precision(modifier: int) -> int:
    """A time's or timestamp's fractional digits: its typmod, 6 when it has none."""
    return 6 if modifier == -1 else modifier


def _date(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    if modes.time_precision == "connect":
        return _opt(Date.SCHEMA, optional), _connect_date
    return _opt(DATE, optional), _epoch_day


def _time(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    precision = _precision(t.modifier)
    if modes.time_precision == "connect":
        return _opt(Time.SCHEMA, optional), _connect_time
    if modes.time_precision == "adaptive_time_microseconds" or 3 < precision <= 6:
        return _opt(MICRO_TIME, optional), _time_micros
    if precision <= 3:
        return _opt(_TIME, optional), _time_millis
    return _opt(_NANO_TIME, optional), _time_nanos


def _timestamp(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    precision = _precision(t.modifier)
    if modes.time_precision == "connect":
        return _opt(Timestamp.SCHEMA, optional), _connect_timestamp
    if precision <= 3:
        return _opt(TIMESTAMP, optional), _timestamp_millis
    if precision <= 6:
        return _opt(MICRO_TIMESTAMP, optional), _timestamp_micros
    return _opt(_NANO_TIMESTAMP, optional), _timestamp_nanos


def _timestamptz(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    return _opt(ZONED_TIMESTAMP, optional), _zoned_timestamp(_precision(t.modifier))


def _timetz(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    return _opt(_ZONED_TIME, optional), _zoned_time


# -- intervals --------------------------------------------------------------------------------

_INTERVAL_TEXT = re.compile(
    r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?"
    r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d*)?)S)?)?"
)
_DAYS_PER_MONTH_AVG = 365.25 / 12.0  # MicroDuration.DAYS_PER_MONTH_AVG


def _interval_parts(text: str) -> tuple[int, int, int, int, int, float]:
    """(years, months, days, hours, minutes, seconds) of an iso_8601 interval, as pgjdbc's
    PGInterval reads them: the seconds rounded to whole microseconds, then a double."""
    match = _INTERVAL_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"Unexpected interval value {text!r} (IntervalStyle must be iso_8601)")
    seconds = 0.0
    if match[6]:
        total = math.floor(float(match[6]) * 1_000_000 + 0.5)  # Math.round
        whole = abs(total) // 1_000_000
        micros = abs(total) - whole * 1_000_000
        seconds = -whole - micros / 1_000_000 if total < 0 else whole + micros / 1_000_000
    years, months, days, hours, minutes = (int(match[i] or 0) for i in range(1, 6))
    return years, months, days, hours, minutes, seconds


def _micro_duration(text: str) -> Any:
    """MicroDuration.durationMicros: months of 365.25/12 days, in double arithmetic."""
    years, months, days, hours, minutes, seconds = _interval_parts(text)
    day_count = (years * 12 + months) * _DAYS_PER_MONTH_AVG + days
    total_seconds = ((day_count * 24 + hours) * 60 + minutes) * 60 + seconds
    return int(total_seconds * 1e6)  # (long): truncated toward zero


def _seconds_text(seconds: float) -> str:
    """``BigDecimal.valueOf(seconds)``, at most 9 decimals, without trailing zeros, plain."""
    value = decimal.Decimal(repr(seconds))
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -9:
        value = value.quantize(decimal.Decimal("1e-9"), decimal.ROUND_DOWN)
    return format(value.normalize(), "f") if value else "0"


def _interval_string(text: str) -> Any:
    """Interval.toIsoString: ``P1Y2M3DT4H5M6.78S``, every part present."""
    years, months, days, hours, minutes, seconds = _interval_parts(text)
    return f"P{years}Y{months}M{days}DT{hours}H{minutes}M{_seconds_text(seconds)}S"


def _interval(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    if modes.interval_handling == "string":
        return _opt(_INTERVAL, optional), _interval_string
    return _opt(_MICRO_DURATION, optional), _micro_duration


# -- hstore -----------------------------------------------------------------------------------

_HSTORE_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"\s*=>\s*(?:"((?:[^"\\]|\\.)*)"|NULL)', re.S)
_BACKSLASH_ESCAPE = re.compile(r"\\(.)", re.S)
JSON_ESCAPES: dict[int, str] = {code: f"\\u{code:04X}" for code in range(32)}
JSON_ESCAPES.update(
    {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", ord('"'): '\\"', ord("\\"): "\\\\"}
)
"""Jackson's escapes: the short ones, else ``\\u00XX`` (upper case) for control characters."""


def _unescape(text: str) -> str:
    return _BACKSLASH_ESCAPE.sub(r"\1", text) if "\\" in text else text


def _hstore_pairs(text: str) -> list[tuple[str, str | None]]:
    return [
        (_unescape(match[1]), None if match[2] is None else _unescape(match[2]))
        for match in _HSTORE_PAIR.finditer(text)
    ]


def _hstore_map(text: str) -> Any:
    return dict(_hstore_pairs(text))


def _java_string_hash(text: str) -> int:
    """``String.hashCode`` (over UTF-16 code units), as an unsigned 32-bit int."""
    code = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        code = (31 * code + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return code


def _java_hash_map_order(keys: list[str]) -> list[int]:
    """The order in which a ``java.util.HashMap`` filled with ``keys`` (distinct, in this
    order) iterates them: by bucket of the final table, then by insertion."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(index: int) -> tuple[int, int]:
        code = _java_string_hash(keys[index])
        return (code ^ (code >> 16)) & (capacity - 1), index

    return sorted(range(len(keys)), key=bucket)


def _hstore_json(text: str) -> Any:
    """hstore as Debezium's JSON: a flat object, keys in Java HashMap order, compact."""
    pairs = _hstore_pairs(text)
    members = []
    for index in _java_hash_map_order([key for key, _ in pairs]):
        key, value = pairs[index]
        shown = "null" if value is None else '"' + value.translate(JSON_ESCAPES) + '"'
        members.append('"' + key.translate(JSON_ESCAPES) + '":' + shown)
    return "{" + ",".join(members) + "}"


def _hstore(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    if modes.hstore_handling == "map":
        return _opt(_HSTORE_MAP, optional), _hstore_map
    return _opt(JSON, optional), _hstore_json


# -- geometry ---------------------------------------------------------------------------------

POINT_TEXT = re.compile(r"\(\s*([^,()\s]+)\s*,\s*([^,()\s]+)\s*\)")


def _points(text: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in POINT_TEXT.findall(text)]


def _point_struct(schema: Schema, x: float, y: float) -> Struct:
    """Point.createValue: x, y and their little-endian WKB, no SRID."""
    return Struct._trusted(schema, [x, y, _struct.pack("<BIdd", 1, 1, x, y), None])


def _wkb_line_string(points: list[tuple[float, float]]) -> bytes:
    flat = [c for point in points for c in point]
    return _struct.pack(f"<BII{len(flat)}d", 1, 2, len(points), *flat)


def _wkb_polygon(ring: list[tuple[float, float]]) -> bytes:
    flat = [c for point in ring for c in point]
    return _struct.pack(f"<BIII{len(flat)}d", 1, 3, 1, len(ring), *flat)


def _point(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    schema = _opt(POINT, optional)

    def parse(text: str) -> Any:
        x, _, y = text.strip()[1:-1].partition(",")
        return _point_struct(schema, float(x), float(y))

    return schema, parse


def _geometric(kind: str, text: str) -> tuple[bytes, dict[str, str]]:
    """A box, lseg, path or polygon as Debezium's WKB and extensions."""
    points = _points(text)
    if kind == "box":  # the ring of its corners, from the first one
        (x1, y1), (x2, y2) = points[0], points[1]
        ring = [(x1, y1), (x1, y2), (x2, y2), (x2, y1), (x1, y1)]
        return _wkb_polygon(ring), {"type": "box"}
    if kind == "polygon":
        if len(points) >= 2 and points[0] != points[-1]:
            points.append(points[0])
        return _wkb_polygon(points), {"type": "polygon"}
    if kind == "path":  # '[...]' is open, '(...)' closed
        closed = "false" if text.lstrip().startswith("[") else "true"
        return _wkb_line_string(points), {"type": "path", "closed": closed}
    return _wkb_line_string(points), {"type": "lseg"}


def _geometry_shape(kind: str) -> _Factory:
    def factory(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
        def parse(text: str) -> Any:
            wkb, extensions = _geometric(kind, text)
            return Struct._trusted(GEOMETRY, [wkb, None, extensions])

        return GEOMETRY, parse

    return factory


def _circle(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    def parse(text: str) -> Any:
        (x, y), radius = _points(text)[0], float(text[text.rindex(",") + 1 :].strip(" >"))
        return Struct._trusted(_CIRCLE, [_point_struct(POINT, x, y), radius])

    return _CIRCLE, parse


def _line(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    def parse(text: str) -> Any:
        a, b, c = (float(part) for part in text.strip()[1:-1].split(","))
        return Struct._trusted(_LINE, [a, b, c])

    return _LINE, parse


def _ewkb(text: str) -> tuple[bytes, int | None]:
    """PostGIS's hex EWKB: the bytes as they are, and the SRID its header carries."""
    ewkb = bytes.fromhex(text)
    if len(ewkb) < 9:
        raise ValueError("Invalid EWKB length")
    order = "<" if ewkb[0] else ">"
    (kind,) = _struct.unpack_from(order + "I", ewkb, 1)
    srid = _struct.unpack_from(order + "i", ewkb, 5)[0] if kind & 0x20000000 else None
    return ewkb, srid


def _postgis_geometry(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    def parse(text: str) -> Any:
        return Struct._trusted(GEOMETRY, [*_ewkb(text), None])

    return GEOMETRY, parse


def _postgis_geography(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    schema = _opt(_GEOGRAPHY, optional)

    def parse(text: str) -> Any:
        return Struct._trusted(schema, list(_ewkb(text)))

    return schema, parse


# -- pgvector ---------------------------------------------------------------------------------


def _vector_values(text: str) -> Any:
    return [float(value) for value in text.strip()[1:-1].split(",")]


def _sparse_vector(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    schema = _opt(_SPARSE_VECTOR, optional)

    def parse(text: str) -> Any:
        entries, _, dimensions = text.strip().partition("/")
        vector = {}
        for entry in entries.strip()[1:-1].split(","):
            if entry.strip():
                index, _, value = entry.partition(":")
                vector[int(index)] = float(value)
        return Struct._trusted(schema, [int(dimensions), vector])

    return schema, parse


# -- arrays, enums, domains -------------------------------------------------------------------

_ARRAY_TOKENS = {
    delimiter: re.compile(r'"((?:[^"\\]|\\.)*)"|([^{}"' + delimiter + r"]+)", re.S)
    for delimiter in ",;"
}


def _array_parser(element: Parse | None, delimiter: str) -> Parse:
    """Parses PostgreSQL's array text (``{1,NULL,"a \\"b\\""}``, ``[0:1]={...}``), each
    non-NULL element by ``element`` (None: kept as text); nested arrays are flattened."""
    tokens = _ARRAY_TOKENS[delimiter]

    def parse(text: str) -> Any:
        if text[0] == "[":  # explicit bounds
            text = text[text.index("=") + 1 :]
        body = text[1:-1]
        if not body:
            return []
        if '"' not in body and "{" not in body:
            items: list[str | None] = [
                None if item == "NULL" else item for item in body.split(delimiter)
            ]
        else:
            items = [
                (None if bare.upper() == "NULL" else bare) if bare else _unescape(quoted)
                for quoted, bare in tokens.findall(body)
            ]
        if element is None:
            return items
        return [None if item is None else element(item) for item in items]

    return parse


def _root_name(t: PgType) -> str:
    while t.kind == "d" and t.base is not None:
        t = t.base
    return t.name


def _array(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    element = t.element
    assert element is not None  # an array type has one
    if t.modifier != -1:  # atttypmod applies to the elements
        element = replace(element, modifier=t.modifier)
    # Elements may be NULL, except an enum array's (Debezium gives that one a required
    # element schema).
    schema, parse = _resolve(element, modes, element.kind != "e")
    delimiter = ";" if _root_name(element) == "box" else ","
    array = SchemaBuilder.array(schema).build()
    return _opt(array, optional), _array_parser(None if parse is str else parse, delimiter)


def _enum(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    return _opt(_enum_schema(t.enum_values), optional), str


def _domain(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    if t.base is None:
        raise UnsupportedType(f"domain {t.name} has no base type")
    base = t.base if t.modifier == -1 else replace(t.base, modifier=t.modifier)
    return _resolve(base, modes, optional)


def _fixed(schema: Schema, parse: Parse) -> _Factory:
    def factory(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
        return _opt(schema, optional), parse

    return factory


_TEXT = _fixed(STRING, str)

_BUILTIN: dict[str, _Factory] = {
    "bool": _fixed(Schema.BOOLEAN_SCHEMA, _TRUE_TEXTS.__contains__),
    "int2": _fixed(Schema.INT16_SCHEMA, int),
    "int4": _fixed(Schema.INT32_SCHEMA, int),
    "int8": _fixed(Schema.INT64_SCHEMA, int),
    "oid": _fixed(Schema.INT64_SCHEMA, int),
    "float4": _fixed(Schema.FLOAT32_SCHEMA, float),
    "float8": _fixed(Schema.FLOAT64_SCHEMA, float),
    "numeric": _numeric,
    "money": _money,
    **dict.fromkeys(
        (
            "char",
            "bpchar",
            "varchar",
            "text",
            "name",
            "citext",
            "isbn",
            "inet",
            "cidr",
            "macaddr",
            "macaddr8",
            "int4range",
            "int8range",
            "numrange",
            "tsrange",
            "tstzrange",
            "daterange",
        ),
        _TEXT,
    ),
    "json": _fixed(JSON, str),
    "jsonb": _fixed(JSON, str),
    "xml": _fixed(_XML, str),
    "uuid": _fixed(UUID, str),
    "tsvector": _fixed(_TSVECTOR, str),
    "ltree": _fixed(_LTREE, str),
    "bytea": _bytea,
    "bit": _bit,
    "varbit": _varbit,
    "date": _date,
    "time": _time,
    "timetz": _timetz,
    "timestamp": _timestamp,
    "timestamptz": _timestamptz,
    "interval": _interval,
    "hstore": _hstore,
    "point": _point,
    "box": _geometry_shape("box"),
    "lseg": _geometry_shape("lseg"),
    "path": _geometry_shape("path"),
    "polygon": _geometry_shape("polygon"),
    "circle": _circle,
    "line": _line,
    "geometry": _postgis_geometry,
    "geography": _postgis_geography,
    "vector": _fixed(_DOUBLE_VECTOR, _vector_values),
    "halfvec": _fixed(_FLOAT_VECTOR, _vector_values),
    "sparsevec": _sparse_vector,
}
"""The base types Debezium maps (and the range types it captures as strings), by typname."""

MAPPED_TYPES = frozenset(_BUILTIN)
"""The typnames of the base and range types that have a mapping (besides enums, domains and
arrays of mapped types); docs/postgres-cdc.md's table documents each."""


def _resolve(t: PgType, modes: TypeModes, optional: bool) -> tuple[Schema, Parse]:
    if t.kind == "d":
        return _domain(t, modes, optional)
    if t.element is not None:
        return _array(t, modes, optional)
    if t.kind == "e":
        return _enum(t, modes, optional)
    factory = _BUILTIN.get(t.name) if t.kind in ("b", "r") else None
    if factory is None:
        raise UnsupportedType(
            f"type {t.name} (typtype {t.kind!r}) has no Connect mapping; Debezium's "
            "PostgreSQL connector leaves such columns out of its events"
        )
    return factory(t, modes, optional)
