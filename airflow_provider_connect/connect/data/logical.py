"""Logical types: Decimal, Date, Time and Timestamp, with their wire conversions.

Each mirrors its ``org.apache.kafka.connect.data`` class: the same logical name, schema
version 1, and the same encoding, so data round-trips with Java workers:

* ``Decimal``: bytes, the unscaled value in big-endian two's complement (as
  ``BigInteger.toByteArray``), with parameter ``scale``; Python value ``decimal.Decimal``.
* ``Date``: int32 days since the Unix epoch; Python value ``datetime.date``.
* ``Time``: int32 milliseconds since midnight UTC; Python value ``datetime.time`` (naive,
  read as UTC; sub-millisecond digits are dropped).
* ``Timestamp``: int64 milliseconds since the Unix epoch; Python value
  ``datetime.datetime`` (naive ones are read as UTC; :meth:`Timestamp.to_logical` returns
  an aware UTC datetime).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import functools
from collections.abc import Callable
from typing import Any

from airflow_provider_connect.connect.data.schema import Schema, SchemaBuilder
from airflow_provider_connect.connect.errors import DataException

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
EXACT_DECIMALS = _decimal.Context(
    prec=_decimal.MAX_PREC, Emax=_decimal.MAX_EMAX, Emin=_decimal.MIN_EMIN
)
"""Decimal arithmetic that never rounds."""
"""Arithmetic that never rounds: a decimal is scaled by moving its exponent alone."""
_MS = _dt.timedelta(milliseconds=1)
_MS_PER_DAY = 86_400_000


def _check_logical(schema: Schema, logical_name: str) -> None:
    if schema.name != logical_name:
        raise DataException(
            f"Requested conversion of {logical_name} object but the schema does not match."
        )


def twos_complement(number: int) -> bytes:
    """``BigInteger.toByteArray``: big-endian two's complement, in as few bytes as fit."""
    bits = number.bit_length() if number >= 0 else (~number).bit_length()
    return number.to_bytes(bits // 8 + 1, "big", signed=True)


class Decimal:
    """Arbitrary-precision decimals with a fixed scale."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return (
            SchemaBuilder.bytes()
            .name(Decimal.LOGICAL_NAME)
            .parameter(Decimal.SCALE_FIELD, str(scale))
            .version(1)
        )

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        """The schema's scale; raises :class:`DataException` when it is missing or not a number."""
        raw = (schema.parameters or {}).get(Decimal.SCALE_FIELD)
        if raw is None:
            raise DataException(f"Invalid Decimal schema: scale parameter not found: {schema!r}")
        try:
            return int(raw)
        except ValueError as e:
            raise DataException(f"Invalid scale parameter found in Decimal schema: {raw}") from e

    @staticmethod
    def unscaled(schema: Schema, value: _decimal.Decimal) -> int:
        """The unscaled integer of ``value`` at the schema's scale.

        A value with fewer decimal places is rescaled exactly (``1.5`` at scale 2 is 150);
        one that would need rounding raises :class:`DataException`.
        """
        return Decimal.unscaled_at(value, Decimal.scale(schema))

    @staticmethod
    def unscaled_at(value: _decimal.Decimal, scale: int) -> int:
        """As :meth:`unscaled` at ``scale``."""
        if not value.is_finite():
            raise DataException(f"Decimal value {value} is not finite")
        scaled = EXACT_DECIMALS.scaleb(value, scale)
        unscaled = int(scaled)
        if scaled != unscaled:
            raise DataException(
                "Decimal value has mismatching scale for given Decimal schema. "
                f"Schema has scale {scale}, value has scale {-int(value.as_tuple().exponent)}"
            )
        return unscaled

    @staticmethod
    def from_logical(schema: Schema, value: _decimal.Decimal) -> bytes:
        """The wire bytes of ``value``: its unscaled value, big-endian two's complement."""
        _check_logical(schema, Decimal.LOGICAL_NAME)
        return Decimal.bytes_at(value, Decimal.scale(schema))

    @staticmethod
    def bytes_at(value: _decimal.Decimal, scale: int) -> bytes:
        """As :meth:`from_logical` at ``scale``."""
        return twos_complement(Decimal.unscaled_at(value, scale))

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> _decimal.Decimal:
        """The decimal encoded by ``value`` at the schema's scale."""
        _check_logical(schema, Decimal.LOGICAL_NAME)
        if not value:
            raise DataException("Invalid Decimal bytes: empty")
        unscaled = int.from_bytes(value, "big", signed=True)
        # Built from text: exact at any precision, unlike arithmetic in the decimal context.
        return _decimal.Decimal(f"{unscaled}E{-Decimal.scale(schema)}")


class Date:
    """Calendar dates, as whole days since 1970-01-01."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.date) -> int:
        _check_logical(schema, Date.LOGICAL_NAME)
        if isinstance(value, _dt.datetime) or not isinstance(value, _dt.date):
            raise DataException(
                f"Kafka Connect Date type takes a datetime.date, got {type(value).__name__}"
            )
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.date:
        _check_logical(schema, Date.LOGICAL_NAME)
        try:
            return _EPOCH_DATE + _dt.timedelta(days=value)
        except OverflowError as e:
            raise DataException(f"Date value {value} days is out of range") from e


class Time:
    """Times of day, as milliseconds since midnight UTC."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.time) -> int:
        _check_logical(schema, Time.LOGICAL_NAME)
        if not isinstance(value, _dt.time):
            raise DataException(
                f"Kafka Connect Time type takes a datetime.time, got {type(value).__name__}"
            )
        millis = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
        millis += value.microsecond // 1000
        offset = value.utcoffset()
        if offset:
            millis = (millis - offset // _MS) % _MS_PER_DAY
        return millis

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.time:
        _check_logical(schema, Time.LOGICAL_NAME)
        if not 0 <= value < _MS_PER_DAY:
            raise DataException(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        seconds, millis = divmod(value, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return _dt.time(hour, minute, second, millis * 1000)


class Timestamp:
    """Instants, as milliseconds since the Unix epoch."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.datetime) -> int:
        _check_logical(schema, Timestamp.LOGICAL_NAME)
        if not isinstance(value, _dt.datetime):
            raise DataException(
                f"Kafka Connect Timestamp type takes a datetime.datetime, got {type(value).__name__}"
            )
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return (value - _EPOCH) // _MS

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.datetime:
        _check_logical(schema, Timestamp.LOGICAL_NAME)
        try:
            return _EPOCH + _dt.timedelta(milliseconds=value)
        except OverflowError as e:
            raise DataException(f"Timestamp value {value} ms is out of range") from e


LOGICAL_TYPES: dict[str, type[Decimal] | type[Date] | type[Time] | type[Timestamp]] = {
    logical.LOGICAL_NAME: logical for logical in (Decimal, Date, Time, Timestamp)
}
"""The logical types by logical name."""


def from_logical_of(schema: Schema) -> Callable[[Any], Any] | None:
    """The conversion of values of ``schema`` to their base type (``Date`` to days, …)
    when it is a logical type's, else None."""
    logical = LOGICAL_TYPES.get(schema.name or "")
    return None if logical is None else functools.partial(logical.from_logical, schema)


def to_logical_of(schema: Schema) -> Callable[[Any], Any] | None:
    """The conversion of base values to values of ``schema`` (days to ``Date``, …) when it
    is a logical type's, else None."""
    logical = LOGICAL_TYPES.get(schema.name or "")
    return None if logical is None else functools.partial(logical.to_logical, schema)


Date.SCHEMA = Date.builder().build()
Time.SCHEMA = Time.builder().build()
Timestamp.SCHEMA = Timestamp.builder().build()
