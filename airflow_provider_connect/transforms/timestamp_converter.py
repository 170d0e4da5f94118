"""``TimestampConverter``: converts a timestamp field, or the whole key or value, between
Unix epochs, strings (``java.text.SimpleDateFormat`` patterns, in UTC) and Connect's Date,
Time and Timestamp (Kafka's ``TimestampConverter$Key`` and ``TimestampConverter$Value``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    Type,
    ValidString,
)
from airflow_provider_connect.connect.data import (
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import ConfigException, ConnectException, DataException
from airflow_provider_connect.transforms.java_text import SimpleDateFormat
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    PartTransformation,
    R,
    SchemaCache,
    copy_schema_basics,
    field_value,
    require_map,
    require_struct,
    type_name,
    with_replace_null_with_default,
)

FIELD = "field"
TARGET_TYPE = "target.type"
FORMAT = "format"
UNIX_PRECISION = "unix.precision"
PURPOSE = "converting timestamp formats"
STRING, UNIX, DATE, TIME, TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
SECONDS, MILLIS, MICROS, NANOS = "seconds", "milliseconds", "microseconds", "nanoseconds"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

CONFIG_DEF = with_replace_null_with_default(
    ConfigDef()
    .define(
        FIELD,
        Type.STRING,
        "",
        None,
        Importance.HIGH,
        "The field containing the timestamp, or empty if the entire value is a timestamp",
    )
    .define(
        TARGET_TYPE,
        Type.STRING,
        NO_DEFAULT,
        ValidString(STRING, UNIX, DATE, TIME, TIMESTAMP),
        Importance.HIGH,
        "The desired timestamp representation: string, unix, Date, Time, or Timestamp",
    )
    .define(
        FORMAT,
        Type.STRING,
        "",
        None,
        Importance.MEDIUM,
        "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when "
        "type=string or used to parse the input if the input is a string.",
    )
    .define(
        UNIX_PRECISION,
        Type.STRING,
        MILLIS,
        ValidString(NANOS, MICROS, MILLIS, SECONDS),
        Importance.LOW,
        "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or "
        "nanoseconds. Used to generate the output when type=unix or used to parse the input if "
        "the input is a Long.Note: This SMT will cause precision loss during conversions from, "
        "and to, values with sub-millisecond components.",
    )
)


def _truncated_millis(moment: dt.datetime) -> int:
    return Timestamp.from_logical(Timestamp.SCHEMA, moment)


@dataclass(frozen=True)
class _Translator:
    """One representation: to and from an instant (an aware UTC datetime, millisecond
    precision), and its schema."""

    to_raw: Callable[[TimestampConverter[Any], Any], dt.datetime]
    to_type: Callable[[TimestampConverter[Any], dt.datetime], Any]
    schema: Schema
    optional_schema: Schema


def _string_to_raw(xform: TimestampConverter[Any], value: Any) -> dt.datetime:
    if not isinstance(value, str):
        raise DataException(
            f"Expected string timestamp to be a String, but found {type_name(value)}"
        )
    assert xform.format is not None  # configure requires one for string timestamps
    try:
        return xform.format.parse(value)
    except ValueError:
        raise DataException(
            f"Could not parse timestamp: value ({value}) does not match pattern "
            f"({xform.format.pattern})"
        ) from None


def _unix_to_raw(xform: TimestampConverter[Any], value: Any) -> dt.datetime:
    if not isinstance(value, int) or isinstance(value, bool):
        raise DataException(f"Expected Unix timestamp to be a Long, but found {type_name(value)}")
    millis = value * 1000 if xform.precision == SECONDS else value
    if xform.precision in (MICROS, NANOS):
        divisor = 1000 if xform.precision == MICROS else 1_000_000
        millis = abs(value) // divisor * (1 if value >= 0 else -1)
    return Timestamp.to_logical(Timestamp.SCHEMA, millis)


def _unix_to_type(xform: TimestampConverter[Any], moment: dt.datetime) -> int:
    millis = _truncated_millis(moment)
    if xform.precision == SECONDS:
        return abs(millis) // 1000 * (1 if millis >= 0 else -1)
    return millis * {MILLIS: 1, MICROS: 1000, NANOS: 1_000_000}[xform.precision]


def _date_to_raw(xform: TimestampConverter[Any], value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    raise DataException(f"Expected Date to be a java.util.Date, but found {type_name(value)}")


def _time_to_raw(xform: TimestampConverter[Any], value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.time):
        return dt.datetime.combine(_EPOCH.date(), value.replace(tzinfo=None), dt.timezone.utc)
    raise DataException(f"Expected Time to be a java.util.Date, but found {type_name(value)}")


def _timestamp_to_raw(xform: TimestampConverter[Any], value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    raise DataException(f"Expected Timestamp to be a java.util.Date, but found {type_name(value)}")


def _utc(moment: dt.datetime) -> dt.datetime:
    return (
        moment.replace(tzinfo=dt.timezone.utc)
        if moment.tzinfo is None
        else moment.astimezone(dt.timezone.utc)
    )


def _string_to_type(xform: TimestampConverter[Any], moment: dt.datetime) -> str:
    assert xform.format is not None  # configure requires one for string timestamps
    return xform.format.format(_utc(moment))


TRANSLATORS: dict[str, _Translator] = {
    STRING: _Translator(
        _string_to_raw, _string_to_type, Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA
    ),
    UNIX: _Translator(
        _unix_to_raw, _unix_to_type, Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA
    ),
    DATE: _Translator(
        _date_to_raw,
        lambda _x, moment: _utc(moment).date(),
        Date.SCHEMA,
        Date.builder().optional().build(),
    ),
    TIME: _Translator(
        _time_to_raw,
        lambda _x, moment: (
            _utc(moment).time().replace(microsecond=_utc(moment).microsecond // 1000 * 1000)
        ),
        Time.SCHEMA,
        Time.builder().optional().build(),
    ),
    TIMESTAMP: _Translator(
        _timestamp_to_raw,
        lambda _x, moment: _EPOCH + dt.timedelta(milliseconds=_truncated_millis(moment)),
        Timestamp.SCHEMA,
        Timestamp.builder().optional().build(),
    ),
}


def _type_of_schema(schema: Schema) -> str:
    for logical, kind in ((Timestamp, TIMESTAMP), (Date, DATE), (Time, TIME)):
        if schema.name == logical.LOGICAL_NAME:
            return kind
    if schema.type is SchemaType.STRING:
        return STRING
    if schema.type is SchemaType.INT64:
        return UNIX
    raise ConnectException(f"Schema {schema} does not correspond to a known timestamp type format")


def _inferred_type(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return TIMESTAMP
    if isinstance(value, dt.date):
        return DATE
    if isinstance(value, dt.time):
        return TIME
    if isinstance(value, int) and not isinstance(value, bool):
        return UNIX
    if isinstance(value, str):
        return STRING
    raise DataException(
        f"TimestampConverter does not support {type_name(value)} objects as timestamps"
    )


class TimestampConverter(PartTransformation[R]):
    """Convert timestamps between different formats such as Unix epoch, strings, and Connect
    Date/Timestamp types. Applies to individual fields or to the entire value. Use
    :class:`TimestampConverterKey` or :class:`TimestampConverterValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.field: str = config[FIELD]
        self.target: str = config[TARGET_TYPE]
        self.precision: str = config[UNIX_PRECISION]
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        pattern: str = config[FORMAT]
        if self.target == STRING and not pattern.strip():
            raise ConfigException(
                "TimestampConverter requires format option to be specified when using string "
                "timestamps"
            )
        self.format = SimpleDateFormat(pattern, FORMAT) if pattern.strip() else None
        self.schemas: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def convert(self, value: Any, kind: str | None = None) -> Any:
        """``value`` (of ``kind``, inferred when None) in the target representation."""
        if value is None:
            return None
        source = TRANSLATORS[kind or _inferred_type(value)]
        return TRANSLATORS[self.target].to_type(self, source.to_raw(self, value))

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        target = TRANSLATORS[self.target]
        if schema is None:
            if value is None or not self.field:
                return self.new_record(record, None, self.convert(value))
            updated_map = dict(require_map(value, PURPOSE))
            updated_map[self.field] = self.convert(updated_map.get(self.field))
            return self.new_record(record, None, updated_map)
        if not self.field:
            updated_schema = target.optional_schema if schema.optional else target.schema
            return self.new_record(
                record, updated_schema, self.convert(value, _type_of_schema(schema))
            )
        struct = None if value is None else require_struct(value, PURPOSE)
        updated_schema = self.schemas.get(schema, self._updated_schema)
        return self.new_record(
            record, updated_schema, self._converted_struct(struct, updated_schema)
        )

    def _updated_schema(self, schema: Schema) -> Schema:
        target = TRANSLATORS[self.target]
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields or ():
            if field.name == self.field:
                builder.field(
                    field.name, target.optional_schema if field.schema.optional else target.schema
                )
            else:
                builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(self._converted_struct(schema.default_value, builder.build()))
        return builder.build()

    def _converted_struct(self, struct: Struct | None, schema: Schema) -> Struct | None:
        if struct is None:
            return None
        updated = Struct(schema)
        for field in struct.schema.fields or ():
            value = field_value(struct, field, self.replace_null_with_default)
            if field.name == self.field:
                value = self.convert(value, _type_of_schema(field.schema))
            updated.put(field.name, value)
        return updated


class TimestampConverterKey(TimestampConverter[R]):
    """Kafka's ``TimestampConverter$Key``."""

    KEY = True


class TimestampConverterValue(TimestampConverter[R]):
    """Kafka's ``TimestampConverter$Value``."""

    KEY = False
