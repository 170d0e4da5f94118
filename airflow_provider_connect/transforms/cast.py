"""``Cast``: casts fields, or the whole key or value, to another primitive type (Kafka's
``Cast$Key`` and ``Cast$Value``), with Java's conversions: numbers narrowed as Java narrows
them, strings parsed as Java parses them, booleans as 1/0, bytes to base64 strings."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from airflow_provider_connect.connect.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    LambdaValidator,
    Type,
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
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.json.java_numbers import (
    format_double,
    to_float32,
)
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

SPEC = "spec"
PURPOSE = "cast types"
INPUT_TYPES = [
    SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64, SchemaType.FLOAT32,
    SchemaType.FLOAT64, SchemaType.BOOLEAN, SchemaType.STRING, SchemaType.BYTES,
]  # fmt: skip
OUTPUT_TYPES = INPUT_TYPES[:-1]
WHOLE_VALUE = ""
_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
_JAVA_FLOAT = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)", re.ASCII)


def _type_names(types: list[SchemaType]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def parse_field_types(mappings: list[str]) -> dict[str, SchemaType]:
    """The spec as field -> target type ("" for the whole value); raises ConfigException."""
    casts: dict[str, SchemaType] = {}
    whole = False
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) > 2:
            raise ConfigException.invalid("renames", mappings, f"Invalid rename mapping: {mapping}")
        field, type_text = (WHOLE_VALUE, parts[0]) if len(parts) == 1 else parts
        whole = whole or len(parts) == 1
        try:
            target = SchemaType[type_text.strip().upper()]
        except KeyError:
            raise ConfigException(
                f"Invalid type found in casting spec: {type_text.strip()}"
            ) from None
        if target not in OUTPUT_TYPES:
            raise ConfigException(
                f"Cast transformation does not support casting to {target.name}; supported "
                f"types are {_type_names(OUTPUT_TYPES)}"
            )
        casts[field.strip()] = target
    if whole and len(mappings) > 1:
        raise ConfigException(
            "Cast transformations that specify a type to cast the entire value to may only "
            "specify a single cast in their spec"
        )
    return casts


def _check_spec(_name: str, value: Any) -> None:
    if not value:
        raise ConfigException("Must specify at least one field to cast.")
    parse_field_types(value)


CONFIG_DEF = with_replace_null_with_default(
    ConfigDef().define(
        SPEC,
        Type.LIST,
        NO_DEFAULT,
        LambdaValidator(
            _check_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
        ),
        Importance.HIGH,
        "List of fields and the type to cast them to of the form field1:type,field2:type to cast "
        "fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, "
        "int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can "
        "only be cast to string.",
    )
)


def _wrap(value: int, bits: int) -> int:
    """Java's narrowing of an integer to ``bits`` (two's complement)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _java_long(value: float | decimal.Decimal) -> int:
    """Java's ``(long)`` of a floating number: toward zero, saturated, NaN to 0."""
    if isinstance(value, float) and math.isnan(value):
        return 0
    if isinstance(value, float) and math.isinf(value):
        return (1 << 63) - 1 if value > 0 else -(1 << 63)
    return max(-(1 << 63), min((1 << 63) - 1, int(value)))


def _to_integer(target: SchemaType) -> Callable[[Any], int]:
    bits = _BITS[target]

    def cast(value: Any) -> int:
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, int):
            return _wrap(value, bits)
        if isinstance(value, (float, decimal.Decimal)):
            # Java narrows a double through int (64 bits: long), saturating there.
            whole = _java_long(value)
            if bits < 64 and not isinstance(value, decimal.Decimal):
                whole = max(-(1 << 31), min((1 << 31) - 1, whole))
            return _wrap(whole, bits)
        if isinstance(value, str):
            if not _JAVA_INTEGER.fullmatch(value):
                raise ValueError(value)
            parsed = int(value)
            if _wrap(parsed, bits) != parsed:
                raise ValueError(value)
            return parsed
        raise DataException(f"Unexpected type in Cast transformation: {type_name(value)}")

    return cast


def _to_float(value: Any) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not _JAVA_FLOAT.fullmatch(text):
            raise ValueError(value)
        return float(text.rstrip("fFdD").replace("Infinity", "inf"))
    raise DataException(f"Unexpected type in Cast transformation: {type_name(value)}")


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return _java_long(value) != 0 if not isinstance(value, int) else value != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataException(f"Unexpected type in Cast transformation: {type_name(value)}")


def _to_string(value: Any) -> str:
    """Java's ``toString`` (``Values.dateFormatFor`` for dates, base64 for bytes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dt.datetime):
        millis = Timestamp.from_logical(Timestamp.SCHEMA, value)
        if 0 <= millis < 86_400_000:
            return value.astimezone(dt.timezone.utc).strftime("%H:%M:%S.") + f"{millis % 1000:03d}Z"
        if millis % 86_400_000 == 0:
            return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%d")
        utc = value.astimezone(dt.timezone.utc)
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    return str(value)


_CASTS: dict[SchemaType, Callable[[Any], Any]] = {
    SchemaType.INT8: _to_integer(SchemaType.INT8),
    SchemaType.INT16: _to_integer(SchemaType.INT16),
    SchemaType.INT32: _to_integer(SchemaType.INT32),
    SchemaType.INT64: _to_integer(SchemaType.INT64),
    SchemaType.FLOAT32: lambda v: to_float32(_to_float(v)),
    SchemaType.FLOAT64: _to_float,
    SchemaType.BOOLEAN: _to_boolean,
    SchemaType.STRING: _to_string,
}
_LOGICAL_ENCODERS: dict[str, Callable[[Schema, Any], int]] = {
    Date.LOGICAL_NAME: Date.from_logical,
    Time.LOGICAL_NAME: Time.from_logical,
    Timestamp.LOGICAL_NAME: Timestamp.from_logical,
}


def _inferred_type(value: Any) -> SchemaType | None:
    """What Kafka's ``ConnectSchema.schemaType`` says of a schemaless value."""
    if isinstance(value, bool):
        return SchemaType.BOOLEAN
    if isinstance(value, int):
        return SchemaType.INT64
    if isinstance(value, float):
        return SchemaType.FLOAT64
    if isinstance(value, str):
        return SchemaType.STRING
    if isinstance(value, (bytes, bytearray)):
        return SchemaType.BYTES
    if isinstance(value, list):
        return SchemaType.ARRAY
    if isinstance(value, dict):
        return SchemaType.MAP
    if isinstance(value, Struct):
        return SchemaType.STRUCT
    return None


def cast_value(schema: Schema | None, value: Any, target: SchemaType) -> Any:
    """``value`` (of ``schema``, or schemaless) cast to ``target``."""
    if value is None:
        return None
    inferred = _inferred_type(value) if schema is None else schema.type
    if inferred is None:
        raise DataException(
            f"Cast transformation was passed a value of type {type_name(value)} which is not "
            "supported by Connect's data API"
        )
    if inferred not in INPUT_TYPES:
        raise DataException(
            f"Cast transformation does not support casting from {inferred.name}; supported "
            f"types are {_type_names(INPUT_TYPES)}"
        )
    if schema is not None and schema.name in _LOGICAL_ENCODERS and target is not SchemaType.STRING:
        value = _LOGICAL_ENCODERS[schema.name](schema, value)
    try:
        return _CASTS[target](value)
    except (ValueError, OverflowError, decimal.InvalidOperation):
        raise DataException(f"Value ({value}) was out of range for requested data type") from None


class Cast(PartTransformation[R]):
    """Cast fields or the entire key or value to a specific type, e.g. to force an integer
    field to a smaller width. Cast from integers, floats, boolean and string to any other
    type, and cast binary to string (base64 encoded). Use :class:`CastKey` or
    :class:`CastValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.casts = parse_field_types(config[SPEC])
        self.whole_value = self.casts.get(WHOLE_VALUE)
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        self.schemas: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self.whole_value is not None:
                return self.new_record(record, None, cast_value(None, value, self.whole_value))
            updated_map = dict(require_map(value, PURPOSE))
            for name, target in self.casts.items():
                updated_map[name] = cast_value(None, updated_map.get(name), target)
            return self.new_record(record, None, updated_map)
        updated_schema = self.schemas.get(schema, self._updated_schema)
        if self.whole_value is not None:
            return self.new_record(
                record, updated_schema, cast_value(schema, value, self.whole_value)
            )
        struct = require_struct(value, PURPOSE)
        updated = Struct(updated_schema)
        for field in struct.schema.fields or ():
            original = field_value(struct, field, self.replace_null_with_default)
            cast_to = self.casts.get(field.name)
            updated.put(
                field.name,
                original if cast_to is None else cast_value(field.schema, original, cast_to),
            )
        return self.new_record(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        if self.whole_value is not None:
            builder = copy_schema_basics(schema, SchemaBuilder(self.whole_value))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields or ():
                target = self.casts.get(field.name)
                if target is None:
                    builder.field(field.name, field.schema)
                    continue
                field_builder = SchemaBuilder(target)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(
                        cast_value(field.schema, field.schema.default_value, target)
                    )
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(cast_value(schema, schema.default_value, builder.type))
        return builder.build()


class CastKey(Cast[R]):
    """Kafka's ``Cast$Key``."""

    KEY = True


class CastValue(Cast[R]):
    """Kafka's ``Cast$Value``."""

    KEY = False
