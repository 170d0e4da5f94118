"""Columns for Debezium's semantic types, as Debezium's JDBC sink maps them (its
``GeneralDatabaseDialect`` and ``PostgresDatabaseDialect`` type registries), and the
values written to them.

=====================================================  ======================================
field schema                                           column (value written)
=====================================================  ======================================
``io.debezium.time.Date`` (epoch days)                 DATE
``io.debezium.time.Time`` / ``MicroTime`` / ``NanoTime``  TIME
``io.debezium.time.Timestamp`` / ``MicroTimestamp`` /  TIMESTAMP (the wall clock in
``NanoTimestamp`` (epoch ms / µs / ns)                 ``use.time.zone``)
``io.debezium.time.ZonedTimestamp`` (ISO string)       TIMESTAMP WITH TIME ZONE (the instant)
``io.debezium.time.ZonedTime`` (ISO string)            TIME WITH TIME ZONE
``io.debezium.time.MicroDuration`` (µs)                INTERVAL
``io.debezium.data.VariableScaleDecimal``              NUMERIC (exact, unconstrained)
``io.debezium.data.Json``                              JSONB on PostgreSQL, JSON elsewhere
``io.debezium.data.Uuid``                              UUID (CHAR(32) where there is none)
arrays (PostgreSQL only)                               ARRAY of the element's column type
anything else                                          as Kafka Connect's types (``writer``)
=====================================================  ======================================

Each field's conversion is chosen once per schema (:func:`converter`), not per value.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import JSON, Date, DateTime, Interval, Numeric, Time, Uuid
from sqlalchemy.dialects import postgresql
from sqlalchemy.types import TypeEngine

from airflow_provider_connect.connect.data import Schema, Struct, Type
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.jdbc.writer import sql_type

Convert = Callable[[Any], Any]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)


def _micros_of_millis(value: int) -> int:
    return value * 1_000


def _micros_of_nanos(value: int) -> int:
    return value // 1_000


def _micros(value: int) -> int:
    return value


_TIMESTAMPS = {  # epoch-based timestamps without a zone, in microseconds
    "io.debezium.time.Timestamp": _micros_of_millis,
    "io.debezium.time.MicroTimestamp": _micros,
    "io.debezium.time.NanoTimestamp": _micros_of_nanos,
}
_TIMES = {  # times of day, in microseconds
    "io.debezium.time.Time": _micros_of_millis,
    "io.debezium.time.MicroTime": _micros,
    "io.debezium.time.NanoTime": _micros_of_nanos,
}

_COLUMNS: dict[str, Callable[[], TypeEngine[Any]]] = {
    "io.debezium.time.Date": Date,
    **dict.fromkeys(_TIMESTAMPS, DateTime),
    **dict.fromkeys(_TIMES, Time),
    "io.debezium.time.ZonedTimestamp": lambda: DateTime(timezone=True),
    "io.debezium.time.ZonedTime": lambda: Time(timezone=True),
    "io.debezium.time.MicroDuration": Interval,
    "io.debezium.data.VariableScaleDecimal": Numeric,
    "io.debezium.data.Json": lambda: JSON().with_variant(postgresql.JSONB(), "postgresql"),
    "io.debezium.data.Uuid": lambda: Uuid(as_uuid=False),
}


def column_type(schema: Schema, key: bool = False) -> TypeEngine[Any]:
    """The column type of a field's schema: Debezium's semantic types first, then Kafka
    Connect's (a key's strings get a bounded VARCHAR)."""
    made = _COLUMNS.get(schema.name or "")
    if made is not None:
        return made()
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return postgresql.ARRAY(column_type(schema.value_schema))
    if schema.type in (Type.STRUCT, Type.MAP):
        raise DataException(
            f"The Debezium JDBC sink cannot store {schema.name or schema.type.value} fields"
        )
    return sql_type(schema, key)


def converter(schema: Schema, zone: ZoneInfo) -> Convert:
    """How a value of ``schema`` becomes its column's value (never called for None):
    timestamps without a zone become the wall clock in ``zone``, zoned ones an aware
    datetime in ``zone``."""
    name = schema.name or ""
    if name == "io.debezium.time.Date":
        return lambda days: _EPOCH_DAY + dt.timedelta(days=days)
    if name in _TIMESTAMPS:
        micros = _TIMESTAMPS[name]
        return lambda v: _wall_clock(_EPOCH + dt.timedelta(microseconds=micros(v)), zone)
    if name in _TIMES:
        of_day = _TIMES[name]
        return lambda v: (_EPOCH + dt.timedelta(microseconds=of_day(v))).time()
    if name == "io.debezium.time.ZonedTimestamp":
        return lambda v: dt.datetime.fromisoformat(v).astimezone(zone)
    if name == "io.debezium.time.ZonedTime":
        return dt.time.fromisoformat
    if name == "io.debezium.time.MicroDuration":
        return lambda v: dt.timedelta(microseconds=v)
    if name == "io.debezium.data.VariableScaleDecimal":
        return _variable_scale_decimal
    if name == "io.debezium.data.Json":
        return json.loads
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        element = converter(schema.value_schema, zone)
        return lambda items: [None if i is None else element(i) for i in items]
    return lambda v: _wall_clock(v, zone) if isinstance(v, dt.datetime) else v


def _wall_clock(value: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """A UTC instant (naive or aware) as the naive wall clock in ``zone``."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(zone).replace(tzinfo=None)


def _variable_scale_decimal(value: Struct) -> decimal.Decimal:
    unscaled = int.from_bytes(value.get("value"), "big", signed=True)
    return decimal.Decimal(unscaled).scaleb(-value.get("scale"))
