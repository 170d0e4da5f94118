"""Kafka Connect's JSON wire format, byte-compatible with the Java ``JsonConverter``.

With ``schemas.enable=true`` (the default) every message is an envelope
``{"schema":…,"payload":…}``; with false, the payload alone, read back without a schema.
``schema.content`` (KIP-1054) gives the schema once, in the config: messages are then read
as payloads alone, each as data of that schema (written still as envelopes).
Output matches Java's byte for byte: the schema's keys in Java's order, numbers as Java
writes them, control characters escaped as Jackson escapes them, bytes and ``BASE64``
decimals in standard base64.

Differences from Java, each on input Java would accept silently: a JSON value of the wrong
type for its schema (a string for an int32, 300 for an int8) raises
:class:`~airflow_provider_connect.connect.errors.DataException` naming the field instead of
being coerced or truncated, and the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``
read back as those floats (Java writes them so, but reads 0.0).

Conversion plans are compiled once per schema and cached (``schemas.cache.size``), so the
per-record cost is a dict lookup plus the work on the values themselves.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal as _decimal
import json as _stdlib_json
import operator
import re
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

import orjson

from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    LambdaValidator,
    Range,
    Type,
    ValidString,
    Width,
)
from airflow_provider_connect.connect.data.logical import (
    EXACT_DECIMALS,
    Date,
    Decimal,
    Time,
    Timestamp,
    twos_complement,
)
from airflow_provider_connect.connect.data.schema import (
    INTEGER_RANGES,
    NULL_SCHEMA_AND_VALUE,
    Field,
    Schema,
    SchemaAndValue,
)
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.data.struct import Struct, validate_value
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.json.java_numbers import (
    NON_FINITE,
    format_double,
    format_float,
    to_float32,
)
from airflow_provider_connect.connect.storage import ValueHeaderConverter, converter_config_def

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
SCHEMA_CONTENT_CONFIG = "schema.content"

_ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
    "contain additional fields. If you are trying to deserialize plain JSON data, set "
    "schemas.enable=false in your converter configuration."
)

# Java type names on the wire; float32/float64 are "float"/"double".
_WIRE_NAMES = {t: t.value for t in SchemaType}
_WIRE_NAMES[SchemaType.FLOAT32] = "float"
_WIRE_NAMES[SchemaType.FLOAT64] = "double"
_TYPES_BY_WIRE_NAME = {name: t for t, name in _WIRE_NAMES.items()}

# orjson escapes control characters as \u001f, Jackson as \u001F. The lookbehind and the
# backslash pairs make sure an escaped backslash followed by "u00.." is left alone.
_LOWER_HEX_ESCAPE = re.compile(rb"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
# Where an escape may start: over a poll's joined output, a compiled literal searches in
# less than half the time of ``in`` (JSON in JSON strings is full of backslashes and zeros).
_ESCAPE_START = re.compile(rb"\\u00")


def _upper_hex(match: re.Match[bytes]) -> bytes:
    return match.group(1) + b"\\u00" + match.group(2).upper()


class DecimalFormat(Enum):
    """How decimals are written: base64 of the unscaled bytes, or a JSON number."""

    BASE64 = "BASE64"
    NUMERIC = "NUMERIC"


def json_converter_config_def() -> ConfigDef:
    """The JsonConverter's configuration, with Kafka's names and defaults."""

    def decimal_format(name: str, value: Any) -> None:
        ValidString(*(f.value for f in DecimalFormat), case_sensitive=False).ensure_valid(
            name, value
        )

    return (
        converter_config_def()
        .define(
            SCHEMAS_ENABLE_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.HIGH,
            "Include schemas within each of the serialized values and keys.",
            group="Schemas",
            order_in_group=0,
            width=Width.MEDIUM,
            display_name="Enable Schemas",
        )
        .define(
            SCHEMAS_CACHE_SIZE_CONFIG,
            Type.INT,
            1000,
            Range.at_least(0),
            Importance.HIGH,
            "The maximum number of schemas that can be cached in this converter instance.",
            group="Schemas",
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Schema Cache Size",
        )
        .define(
            SCHEMA_CONTENT_CONFIG,
            Type.STRING,
            None,
            LambdaValidator(_check_schema_content, "a Connect schema in JSON"),
            Importance.HIGH,
            "When set, this is used as the schema for all messages, and the schemas within "
            "each of the message will be ignored. Otherwise, the schema will be included in "
            "the content of each message. This configuration applies only 'schemas.enable' is "
            "true, and it exclusively affects the sink connector.",
            group="Schemas",
            order_in_group=2,
            width=Width.MEDIUM,
            display_name="Schema Content",
        )
        .define(
            DECIMAL_FORMAT_CONFIG,
            Type.STRING,
            DecimalFormat.BASE64.value,
            LambdaValidator(decimal_format, "[BASE64, NUMERIC]"),
            Importance.LOW,
            "Controls which format this converter will serialize decimals in. BASE64 (the "
            "default) writes the binary representation in base64; NUMERIC writes a JSON number.",
            group="Serialization",
            order_in_group=0,
            width=Width.MEDIUM,
            display_name="Decimal Format",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Whether to replace fields that have a default value and that are null to the "
            "default value. When set to true, the default value is used, otherwise null is used.",
            group="Serialization",
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Replace null with default",
        )
    )


def _check_schema_content(name: str, value: Any) -> None:
    """``schema.content`` must be empty or a Connect schema in JSON (KIP-1054); Kafka's
    converter finds out when it is configured, here the config's validation says so."""
    try:
        JsonConverter().schema_from_content(value)
    except DataException as e:
        raise ConfigException.invalid(name, value, str(e)) from None


class _ConversionError(DataException):
    """A conversion failure deep in a value; collects the field path on its way out."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []

    def public(self, prefix: str) -> DataException:
        where = f' (field "{".".join(reversed(self.path))}")' if self.path else ""
        return DataException(f"{prefix}{self.reason}{where}")


class _NeedExactNumbers(Exception):
    """A NUMERIC decimal arrived as a float: the message must be re-read exactly."""


_EXACT_JSON = _stdlib_json.JSONDecoder(parse_float=_decimal.Decimal)


def _exact_loads(data: bytes) -> Any:
    """JSON with exact numbers (NUMERIC decimals); raises ValueError as orjson does."""
    return _EXACT_JSON.decode(data.decode("utf-8"))


# A number's leading zeros, outside strings (a string is matched whole, and kept).
_LEADING_ZEROS = re.compile(rb'"(?:[^"\\]|\\.)*"|(?<![0-9A-Za-z_.+-])(-?)0+(?=[0-9])')


def _with_leading_zeros(data: bytes, error: ValueError) -> Any:
    """JSON that has numbers written with leading zeros (``007``), read as Kafka's converter
    reads it (Jackson with ``ALLOW_LEADING_ZEROS_FOR_NUMBERS``): the zeros are dropped. Only
    tried once the strict parse failed; raises the original error's DataException when the
    data is not JSON even so."""
    stripped = _LEADING_ZEROS.sub(
        lambda m: m.group(0) if m.group(0)[:1] == b'"' else m.group(1), bytes(data)
    )
    if stripped != data:
        try:
            return orjson.loads(stripped)
        except orjson.JSONDecodeError:
            pass
    raise DataException(
        f"Converting byte[] to Kafka Connect data failed due to serialization error: {error}"
    ) from None


def _kind(node: Any) -> str:
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, float, _decimal.Decimal)):
        return "NUMBER"
    kinds: dict[type, str] = {str: "STRING", list: "ARRAY", dict: "OBJECT"}
    return kinds.get(type(node), type(node).__name__)


def _picker(indices: list[int]) -> Callable[[list[Any]], tuple[Any, ...]]:
    """A function from a list to the tuple of its items at ``indices``."""
    if len(indices) > 1:
        return operator.itemgetter(*indices)
    if indices:
        index = indices[0]
        return lambda values: (values[index],)
    return lambda _: ()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]


_INT64_MIN, _INT64_MAX = INTEGER_RANGES[SchemaType.INT64]


def _written_as_is(value: dict[Any, Any]) -> bool:
    """Whether orjson writes this map exactly as Kafka's JsonConverter does, with no walk
    of its values: string keys, and values that are strings, booleans, nulls, int64s or
    doubles that both write alike (see ``_double_json``); anything nested says no."""
    for k, v in value.items():
        if k.__class__ is not str:
            return False
        c = v.__class__
        if c is str or c is bool or v is None:
            continue
        if c is int:
            if _INT64_MIN <= v <= _INT64_MAX:
                continue
            return False
        if c is float and (1e-3 <= v < 1e7 or -1e7 < v <= -1e-3 or v == 0.0):
            continue
        return False
    return True


class JsonConverter(ValueHeaderConverter):
    """Converts Connect data to and from Kafka Connect's JSON, as the Java JsonConverter.

    ``configure`` takes ``schemas.enable``, ``schemas.cache.size``, ``schema.content``,
    ``decimal.format`` (``BASE64`` or ``NUMERIC``) and ``replace.null.with.default``. One
    instance serves one thread.
    """

    def __init__(self) -> None:
        self.schemas_enabled = True
        self.decimal_format = DecimalFormat.BASE64
        self.replace_null_with_default = True
        self.cache_size = 1000
        self._encoders: dict[Schema, Encoder] = {}
        self._decoders: dict[Schema, Decoder] = {}
        self._schema_bytes: dict[Schema, bytes] = {}
        self._schemas_by_json: dict[bytes, Schema] = {}
        # The text before the payload in the last envelope read, and its schema: messages
        # that start with the same bytes have the same schema, and only their payload is parsed.
        self._last_prefix: bytes | None = None
        self._last_schema: Schema | None = None
        self._last_decoder: Decoder | None = None  # the last schema's (None without one)
        # The envelope's start for the schema last written, likewise.
        self._out_schema: Schema | None = None
        self._out_prefix: bytes | None = None
        # schema.content's schema while schemas are enabled (KIP-1054), its decoder, and
        # whether its payloads are read with exact numbers (NUMERIC decimals met as floats).
        self._content: Schema | None = None
        self._content_decoder: Decoder | None = None
        self._content_exact = False

    # -- configuration ---------------------------------------------------------------------
    def config(self) -> ConfigDef:
        return json_converter_config_def()

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """Applies the converter's keys; raises :class:`ConfigException` naming a bad key."""
        parsed = self.config().parse(configs)
        self.schemas_enabled = parsed[SCHEMAS_ENABLE_CONFIG]
        self.cache_size = parsed[SCHEMAS_CACHE_SIZE_CONFIG]
        self.decimal_format = DecimalFormat(parsed[DECIMAL_FORMAT_CONFIG].upper())
        self.replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        for cache in (self._encoders, self._decoders, self._schema_bytes, self._schemas_by_json):
            cache.clear()
        self._last_prefix = self._last_schema = self._out_prefix = None
        self._last_exact = self._content_exact = False
        content = parsed[SCHEMA_CONTENT_CONFIG] if self.schemas_enabled else None
        self._content = self.schema_from_content(content)
        self._content_decoder = None if self._content is None else self._decoder(self._content)

    def schema_from_content(self, content: str | None) -> Schema | None:
        """The schema ``schema.content`` gives (KIP-1054): None when it is unset, empty or
        ``null``; raises :class:`DataException` with Kafka's message when it is not JSON,
        and as an envelope's schema does when it is no Connect schema. Numbers are read
        exactly, as Kafka reads them (a decimal default keeps its digits)."""
        if not content:
            return None
        try:
            node = _EXACT_JSON.decode(content)
        except ValueError as e:
            raise DataException(
                f"Failed to parse schema in converter config due to serialization error: {e}"
            ) from None
        return self.as_connect_schema(node)

    def _remember(self, cache: dict[Any, Any], key: Any, value: Any) -> Any:
        if len(cache) >= self.cache_size:
            cache.clear()
        self._last_prefix = self._last_schema = None
        self._last_exact = False
        if self.cache_size:
            cache[key] = value
        return value

    # -- Connect data to bytes -------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is None and value is None:
            return None
        try:
            payload = orjson.dumps(self._payload(schema, value))
        except _ConversionError as e:
            raise e.public("Converting Kafka Connect data to byte[] failed: ") from None
        except TypeError as e:  # orjson met a value the schema walk let through
            raise DataException(f"Converting Kafka Connect data to byte[] failed: {e}") from None
        if b"\\u00" in payload:
            payload = _LOWER_HEX_ESCAPE.sub(_upper_hex, payload)
        if self.schemas_enabled:
            payload = self._envelope_prefix(schema) + payload + b"}"
        return payload

    def from_connect_values(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        """As :meth:`from_connect_data` for each value. Strings (of a string schema, or
        schemaless), schemaless flat maps of scalars and structs are written in one pass
        with their escapes checked once for all; other values one by one."""
        if schema is not None and schema.type is SchemaType.STRUCT:
            return self._structs(topic, schema, values)
        if schema is not None and schema.type is not SchemaType.STRING:
            return super().from_connect_values(topic, schema, values)
        dumps, one = orjson.dumps, self.from_connect_data
        try:
            if self.schemas_enabled:
                prefix = self._envelope_prefix(schema)
                out = [
                    prefix + dumps(v) + b"}" if v.__class__ is str else one(topic, schema, v)
                    for v in values
                ]
            else:
                out = [
                    dumps(v)
                    if v.__class__ is str or (v.__class__ is dict and _written_as_is(v))
                    else one(topic, schema, v)
                    for v in values
                ]
        except TypeError:  # orjson refused a string (a lone surrogate): raised as one value is
            out = [one(topic, schema, v) for v in values]
        try:
            written = b"".join(out)  # type: ignore[arg-type]  # None only without a schema
        except TypeError:
            written = b"".join(b for b in out if b is not None)
        if _ESCAPE_START.search(written):
            out = [_LOWER_HEX_ESCAPE.sub(_upper_hex, b) if b is not None else b for b in out]
        return out

    def _structs(self, topic: str, schema: Schema, values: list[Any]) -> list[bytes | None]:
        """The values of a struct schema: their payloads in one pass, the escapes of all
        of them checked at once; when one fails, each value through
        :meth:`from_connect_data`, which raises for the first that fails."""
        encode, dumps = self._encoder(schema), orjson.dumps
        try:
            payloads = [dumps(self._null_json(schema) if v is None else encode(v)) for v in values]
        except (_ConversionError, DataException, TypeError):
            return super().from_connect_values(topic, schema, values)
        if _ESCAPE_START.search(b"".join(payloads)):
            payloads = [_LOWER_HEX_ESCAPE.sub(_upper_hex, p) for p in payloads]
        if not self.schemas_enabled:
            return payloads  # type: ignore[return-value]  # bytes are bytes or None
        prefix = self._envelope_prefix(schema)
        return [prefix + p + b"}" for p in payloads]

    def _payload(self, schema: Schema | None, value: Any) -> Any:
        if schema is None:
            return self._schemaless_json(value)
        if value is None:
            return self._null_json(schema)
        if value.__class__ is str and schema.type is SchemaType.STRING:
            return value  # the common case (lines, text columns), valid as it is
        if schema.type is not SchemaType.STRUCT:
            try:
                validate_value(schema, value, "value")
            except DataException as e:
                raise _ConversionError(str(e)) from None
        return self._encoder(schema)(value)

    def _schemaless_json(self, value: Any) -> Any:
        t = type(value)
        if t is dict and _written_as_is(value):
            return value  # the common case (a flat map of scalars): orjson writes it alike
        if value is None or t is str or t is bool:
            return value
        if t is int:
            if (
                not INTEGER_RANGES[SchemaType.INT64][0]
                <= value
                <= INTEGER_RANGES[SchemaType.INT64][1]
            ):
                raise _ConversionError(f"Integer {value} does not fit in int64")
            return value
        if t is float:
            return self._double_json(value)
        if t is bytes or t is bytearray:
            return _b64(value)
        if t is list or t is tuple:
            return [self._schemaless_json(v) for v in value]
        if t is dict:
            if all(type(k) is str for k in value):
                return {k: self._schemaless_json(v) for k, v in value.items()}
            return [[self._schemaless_json(k), self._schemaless_json(v)] for k, v in value.items()]
        if t is Struct:
            raise _ConversionError("Mismatching schema: a Struct needs its schema")
        raise _ConversionError(f"Python type {t.__name__} does not have corresponding schema type.")

    @staticmethod
    def _double_json(value: float) -> Any:
        value = float(value)
        if 1e-3 <= abs(value) < 1e7 or value == 0.0:
            return value  # orjson writes these exactly as Java does
        return orjson.Fragment(format_double(value))

    def _null_json(self, schema: Schema) -> Any:
        if schema.default_value is not None and self.replace_null_with_default:
            return self._encoder(schema)(schema.default_value)
        if schema.optional:
            return None
        raise _ConversionError(
            "Conversion error: null value for field that is required and has no default value"
        )

    def _encoder(self, schema: Schema) -> Encoder:
        encoder = self._encoders.get(schema)
        if encoder is None:
            encoder = self._remember(self._encoders, schema, self._compile_encoder(schema))
        return encoder

    def _compile_encoder(self, schema: Schema) -> Encoder:
        """A function from a non-null, validated value of ``schema`` to what orjson writes."""
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            return _decimal_encoder(schema, self.decimal_format)
        if name == Timestamp.LOGICAL_NAME:
            return _timestamp_encoder(schema)
        for logical in (Date, Time):
            if name == logical.LOGICAL_NAME:
                from_logical: Callable[[Schema, Any], int] = logical.from_logical
                return lambda v: from_logical(schema, v)
        t = schema.type
        if t in INTEGER_RANGES or t is SchemaType.BOOLEAN or t is SchemaType.STRING:
            return _identity
        if t is SchemaType.FLOAT64:
            return self._double_json
        if t is SchemaType.FLOAT32:
            return lambda v: orjson.Fragment(format_float(v))
        if t is SchemaType.BYTES:
            return _b64
        if t is SchemaType.ARRAY:
            assert schema.value_schema is not None  # an array schema has one
            return self._array_encoder(schema.value_schema)
        if t is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            return self._map_encoder(schema.key_schema, schema.value_schema)
        return self._struct_encoder(schema)

    def _nullable(self, schema: Schema) -> Encoder:
        encoder = self._encoder(schema)
        return lambda v: self._null_json(schema) if v is None else encoder(v)

    def _array_encoder(self, element: Schema) -> Encoder:
        encode = self._nullable(element)
        return lambda v: [encode(x) for x in v]

    def _map_encoder(self, key: Schema, value: Schema) -> Encoder:
        encode_key = self._nullable(key)
        encode_value = self._nullable(value)
        if key.type is SchemaType.STRING:
            return lambda v: {encode_key(k): encode_value(x) for k, x in v.items()}
        return lambda v: [[encode_key(k), encode_value(x)] for k, x in v.items()]

    def _struct_encoder(self, schema: Schema) -> Encoder:
        """A struct's encoder: :func:`_usual_struct_encoder`'s, which hands any struct it
        cannot write to :meth:`_field_by_field_encoder`'s."""
        return _usual_struct_encoder(schema, self, self._field_by_field_encoder(schema))

    def _field_by_field_encoder(self, schema: Schema) -> Encoder:
        """A struct's encoder that takes each field in turn and names the path of a field
        that fails."""
        fields = schema.fields
        assert fields is not None  # a struct schema has fields
        names = [f.name for f in fields]
        # Per field written otherwise than as it is: its index, name, encoder, and ``float``
        # for a double (one that orjson writes as Java does is left as it is).
        converted = []
        for f in fields:
            encoder = self._encoder(f.schema)
            if encoder is not _identity:
                double = float if encoder is self._double_json else None
                converted.append((f.index, f.name, encoder, double))
        # The fields whose null is not written as null: required ones, or with a default;
        # ``unlike_null_values`` picks their values out at once.
        unlike_null = [
            f
            for f in fields
            if not f.schema.optional
            or (f.schema.default_value is not None and self.replace_null_with_default)
        ]
        unlike_null_values = _picker([f.index for f in unlike_null])

        def encode(v: Any) -> Any:
            if type(v) is not Struct:
                raise _ConversionError(f"Expected a Struct, got {type(v).__name__}")
            if v.schema is not schema and v.schema != schema:
                raise _ConversionError("Mismatching schema.")
            values = v._values
            # A struct holds a value per field: strict's check would only cost (a third).
            out = dict(zip(names, values, strict=False))
            if None in values:
                for f, x in zip(unlike_null, unlike_null_values(values), strict=True):
                    if x is None:
                        try:
                            out[f.name] = self._null_json(f.schema)
                        except _ConversionError as e:
                            e.path.append(f.name)
                            raise
            for index, name, encoder, double in converted:
                x = values[index]
                if x.__class__ is double and (1e-3 <= x < 1e7 or -1e7 < x <= -1e-3 or x == 0.0):
                    continue  # as _double_json, inline: written as it is
                if x is not None:
                    try:
                        out[name] = encoder(x)
                    except _ConversionError as e:
                        e.path.append(name)
                        raise
                    except DataException as e:
                        raise _with_path(e, name) from None
            return out

        return encode

    def _envelope_prefix(self, schema: Schema | None) -> bytes:
        """``{"schema":<schema>,"payload":`` for ``schema``; the last one is kept at hand."""
        if schema is not self._out_schema or self._out_prefix is None:
            prefix = b'{"schema":' + self._schema_json_bytes(schema) + b',"payload":'
            self._out_schema = schema
            self._out_prefix = _LOWER_HEX_ESCAPE.sub(_upper_hex, prefix)
        return self._out_prefix

    # -- schemas to JSON -------------------------------------------------------------------
    def _schema_json_bytes(self, schema: Schema | None) -> bytes:
        if schema is None:
            return b"null"
        cached = self._schema_bytes.get(schema)
        if cached is None:
            cached = self._remember(
                self._schema_bytes, schema, orjson.dumps(self.as_json_schema(schema))
            )
        return cached

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The JSON form of ``schema``, with Java's keys in Java's order."""
        return None if schema is None else self._schema_node(schema)

    def _schema_node(self, schema: Schema) -> dict[str, Any]:
        node: dict[str, Any] = {"type": _WIRE_NAMES[schema.type]}
        if schema.type is SchemaType.ARRAY:
            node["items"] = self.as_json_schema(schema.value_schema)
        elif schema.type is SchemaType.MAP:
            node["keys"] = self.as_json_schema(schema.key_schema)
            node["values"] = self.as_json_schema(schema.value_schema)
        elif schema.type is SchemaType.STRUCT:
            assert schema.fields is not None  # a struct schema has fields
            node["fields"] = [
                {**self._schema_node(f.schema), "field": f.name} for f in schema.fields
            ]
        node["optional"] = schema.optional
        if schema.name is not None:
            node["name"] = schema.name
        if schema.version is not None:
            node["version"] = schema.version
        if schema.doc is not None:
            node["doc"] = schema.doc
        if schema.parameters is not None:
            node["parameters"] = dict(schema.parameters)
        if schema.default_value is not None:
            node["default"] = self._encoder(schema)(schema.default_value)
        return node

    # -- bytes to Connect data -------------------------------------------------------------
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        content = self._content
        if content is not None:
            return self._payload_alone(content, data)
        prefix = self._last_prefix
        if prefix is not None and data.startswith(prefix) and data.endswith(b"}"):
            # A schema whose payloads hold NUMERIC decimals is read exactly at once.
            loads = _exact_loads if self._last_exact else orjson.loads
            try:
                payload = loads(data[len(prefix) : -1])  # a copy: cheaper than a memoryview
            except ValueError:  # either parser's JSONDecodeError, or bytes that are not UTF-8
                pass  # not a plain envelope after all: the general path below decides
            else:
                schema = self._last_schema
                if (
                    payload.__class__ is str
                    and schema is not None
                    and schema.type is SchemaType.STRING
                ):
                    # The common case, valid as it is; built as a tuple: NamedTuple's
                    # constructor is a Python function, twice the cost.
                    return tuple.__new__(SchemaAndValue, (schema, payload))
                decode = self._last_decoder
                if decode is not None and payload is not None:
                    try:
                        return tuple.__new__(SchemaAndValue, (schema, decode(payload)))
                    except (_ConversionError, _NeedExactNumbers):
                        pass  # decoded again below, which raises or reads exact numbers
                return self._with_schema(schema, payload, data)
        return self._read_message(data)

    def _read_message(self, data: bytes) -> SchemaAndValue:
        """A message not read as the last envelope was: parsed whole; an envelope's schema
        is looked up (or read and cached), and its start kept for the envelopes after it."""
        if not data:  # no JSON at all: null without schemas, as in Java
            if self.schemas_enabled:
                raise DataException(_ENVELOPE_ERROR)
            return NULL_SCHEMA_AND_VALUE
        try:
            node = orjson.loads(data)
        except orjson.JSONDecodeError as e:
            node = _with_leading_zeros(data, e)
        if not self.schemas_enabled:
            return SchemaAndValue(None, node)
        if (
            type(node) is not dict
            or len(node) != 2
            or "schema" not in node
            or "payload" not in node
        ):
            raise DataException(_ENVELOPE_ERROR)
        schema_text = orjson.dumps(node["schema"])
        schema = self._schemas_by_json.get(schema_text)
        if schema is None:
            schema = self._remember(
                self._schemas_by_json, schema_text, self.as_connect_schema(node["schema"])
            )
        prefix = b'{"schema":' + schema_text + b',"payload":'
        if data.startswith(prefix):
            decoder = None if schema is None else self._decoder(schema)
            self._last_prefix, self._last_schema, self._last_exact = prefix, schema, False
            self._last_decoder = decoder
        return self._with_schema(schema, node["payload"], data)

    def to_connect_values(self, topic: str, datas: list[bytes | None]) -> list[SchemaAndValue]:
        """As :meth:`to_connect_data` for each. Envelopes that start as the last one read
        (its schema) are read in one pass: their payloads parsed and given to the schema's
        decoder; any other data, and all of them once one of those fails, one by one."""
        if self._content is not None:
            return self._payloads_alone(topic, datas)
        prefix, schema, decode = self._last_prefix, self._last_schema, self._last_decoder
        if prefix is None or decode is None or self._last_exact:
            return super().to_connect_values(topic, datas)
        one, start, loads, pair = self.to_connect_data, len(prefix), orjson.loads, tuple.__new__
        try:
            return [
                pair(SchemaAndValue, (schema, decode(loads(data[start:-1]))))
                if data.__class__ is bytes and data.startswith(prefix) and data.endswith(b"}")
                else one(topic, data)
                for data in datas
            ]
        except Exception:  # not JSON, a null or invalid payload, exact numbers needed
            return super().to_connect_values(topic, datas)

    def _payload_alone(self, schema: Schema, data: bytes) -> SchemaAndValue:
        """A message that is a payload alone, as data of ``schema.content``'s ``schema``;
        no JSON at all reads as a JSON null."""
        try:
            loads = _exact_loads if self._content_exact else orjson.loads
            payload = loads(data) if data else None
        except ValueError as e:  # either parser's JSONDecodeError, or bytes that are not UTF-8
            payload = _with_leading_zeros(data, e)
        return self._with_schema(schema, payload, data, alone=True)

    def _payloads_alone(self, topic: str, datas: list[bytes | None]) -> list[SchemaAndValue]:
        """As :meth:`to_connect_values` with ``schema.content``: the payloads parsed and
        decoded in one pass; any other data (a tombstone), and all of them once one
        fails (a null payload too: no decoder takes a null), one by one."""
        schema, decode = self._content, self._content_decoder
        if decode is None or self._content_exact:
            return super().to_connect_values(topic, datas)
        one, loads, pair = self.to_connect_data, orjson.loads, tuple.__new__
        try:
            return [
                pair(SchemaAndValue, (schema, decode(loads(data))))
                if data.__class__ is bytes
                else one(topic, data)
                for data in datas
            ]
        except Exception:  # not JSON, a null or invalid payload, exact numbers needed
            return super().to_connect_values(topic, datas)

    def _with_schema(
        self, schema: Schema | None, payload: Any, data: bytes, *, alone: bool = False
    ) -> SchemaAndValue:
        """``payload`` (of ``data``, an envelope, or the payload ``alone``) as data of
        ``schema``; the message is read again with exact numbers when a NUMERIC decimal
        needs them, and messages of the same schema are read exactly at once from then on."""
        if schema is None:
            return SchemaAndValue(None, payload)
        try:
            try:
                return SchemaAndValue(schema, self._value(schema, payload))
            except _NeedExactNumbers:
                exact = _exact_loads(data)
                if alone:
                    self._content_exact = True
                    return SchemaAndValue(schema, self._value(schema, exact))
                self._last_exact = schema is self._last_schema
                return SchemaAndValue(schema, self._value(schema, exact["payload"]))
        except _ConversionError as e:
            raise e.public("Converting byte[] to Kafka Connect data failed: ") from None

    def _value(self, schema: Schema, node: Any) -> Any:
        return self._null_value(schema) if node is None else self._decoder(schema)(node)

    def _null_value(self, schema: Schema) -> Any:
        if schema.default_value is not None and self.replace_null_with_default:
            return schema.default_value
        if schema.optional:
            return None
        raise _ConversionError(f"Invalid null value for required {schema.type.name} field")

    def _decoder(self, schema: Schema) -> Decoder:
        decoder = self._decoders.get(schema)
        if decoder is None:
            decoder = self._remember(self._decoders, schema, self._compile_decoder(schema))
        return decoder

    def _compile_decoder(self, schema: Schema) -> Decoder:
        """A function from a non-null JSON node to a valid value of ``schema``; raises
        :class:`_ConversionError` when the node does not fit."""
        name = schema.name
        t = schema.type
        if name == Decimal.LOGICAL_NAME:
            return lambda node: _decimal_value(schema, node)
        for logical in (Date, Time):
            if name == logical.LOGICAL_NAME:
                check = _integer_decoder(
                    SchemaType.INT32,
                    f"{logical.__name__}, underlying representation should be integer",
                )
                to_logical: Callable[[Schema, Any], Any] = logical.to_logical
                return lambda node: _logical(to_logical, schema, check(node))
        if name == Timestamp.LOGICAL_NAME:
            check = _integer_decoder(
                SchemaType.INT64, "Timestamp, underlying representation should be integral"
            )
            return lambda node: _logical(Timestamp.to_logical, schema, check(node))
        if t in INTEGER_RANGES:
            return _integer_decoder(t, t.name)
        if t is SchemaType.FLOAT32:  # as Java's floatValue(): the nearest float32
            return lambda node: to_float32(_float_value(node))
        if t is SchemaType.FLOAT64:
            return _float_value
        if t is SchemaType.BOOLEAN:
            return _boolean_value
        if t is SchemaType.STRING:
            return _string_value
        if t is SchemaType.BYTES:
            return _bytes_value
        if t is SchemaType.ARRAY:
            element = schema.value_schema
            assert element is not None  # an array schema has one
            return lambda node: [self._value(element, x) for x in _expect(node, list, "Arrays")]
        if t is SchemaType.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            return self._map_decoder(schema.key_schema, schema.value_schema)
        return self._struct_decoder(schema)

    def _map_decoder(self, key: Schema, value: Schema) -> Decoder:
        if key.type is SchemaType.STRING:

            def decode_object(node: Any) -> dict[Any, Any]:
                entries = _expect(node, dict, "Maps with string fields")
                return {self._value(key, k): self._value(value, x) for k, x in entries.items()}

            return decode_object

        def decode_pairs(node: Any) -> dict[Any, Any]:
            result = {}
            for entry in _expect(node, list, "Maps with non-string fields"):
                if type(entry) is not list or len(entry) != 2:
                    raise _ConversionError(
                        f"Found invalid map entry instead of array tuple: {_kind(entry)}"
                    )
                map_key = self._value(key, entry[0])
                try:
                    result[map_key] = self._value(value, entry[1])
                except TypeError:
                    raise _ConversionError(
                        f"Map keys of type {key.type.name} are not hashable in Python"
                    ) from None
            return result

        return decode_pairs

    def _struct_decoder(self, schema: Schema) -> Decoder:
        """A struct's decoder: :func:`_usual_struct_decoder`'s for the usual objects, which
        hands any other to :meth:`_field_by_field_decoder`'s."""
        return _usual_struct_decoder(schema, self, self._field_by_field_decoder(schema))

    def _field_by_field_decoder(self, schema: Schema) -> Decoder:
        """A struct's decoder that takes each field in turn and names the path of a field
        that fails."""
        # Per field: the JSON type that is a valid value exactly as parsed (None when every
        # value needs checking or converting), the field's decoder, and its schema for nulls.
        assert schema.fields is not None  # a struct schema has fields
        plan = [
            (
                f.name,
                _VALID_AS_PARSED.get(f.schema.type) if f.schema.name is None else None,
                self._decoder(f.schema),
                f.schema,
            )
            for f in schema.fields
        ]
        null_value = self._null_value

        def decode(node: Any) -> Struct:
            if type(node) is not dict:
                raise _ConversionError(
                    f"Structs should be encoded as JSON objects, but found {_kind(node)}"
                )
            get = node.get
            values = []
            for name, valid_type, field_decoder, field_schema in plan:
                x = get(name)
                if type(x) is valid_type:
                    values.append(x)
                    continue
                try:
                    values.append(null_value(field_schema) if x is None else field_decoder(x))
                except _ConversionError as e:
                    e.path.append(name)
                    raise
            return Struct._trusted(schema, values)

        return decode

    def as_connect_schema(self, node: Any) -> Schema | None:
        """The schema described by a JSON schema node (as parsed by a JSON library)."""
        return None if node is None else self._schema_of_node(node)

    def _schema_of_node(self, node: Any) -> Schema:
        if type(node) is not dict:
            raise DataException("Schema must be a JSON object")
        type_name = node.get("type")
        if type(type_name) is not str:
            raise DataException("Schema must contain 'type' field")
        schema_type = _TYPES_BY_WIRE_NAME.get(type_name)
        if schema_type is None:
            raise DataException(f"Unknown schema type: {type_name}")
        parts: dict[str, Any] = {}
        if schema_type is SchemaType.ARRAY:
            if node.get("items") is None:
                raise DataException("Array schema did not specify the element type")
            parts["value_schema"] = self.as_connect_schema(node["items"])
        elif schema_type is SchemaType.MAP:
            if node.get("keys") is None:
                raise DataException("Map schema did not specify the key type")
            if node.get("values") is None:
                raise DataException("Map schema did not specify the value type")
            parts["key_schema"] = self.as_connect_schema(node["keys"])
            parts["value_schema"] = self.as_connect_schema(node["values"])
        elif schema_type is SchemaType.STRUCT:
            parts["fields"] = self._fields_from_node(node.get("fields"))
        params = node.get("parameters")
        if type(params) is dict and any(type(v) is not str for v in params.values()):
            raise DataException("Schema parameters must have string values.")
        parts.update(
            optional=node.get("optional") is True,
            name=_text(node.get("name")),
            version=node["version"] if type(node.get("version")) is int else None,
            doc=_text(node.get("doc")),
            parameters=params if type(params) is dict else None,
        )
        schema = Schema(schema_type, **parts)
        if node.get("default") is None:
            return schema
        try:
            default = self._decoder(schema)(node["default"])
        except (_ConversionError, _NeedExactNumbers) as e:
            raise DataException(f"Invalid default value in schema: {e}") from None
        return Schema(schema_type, default_value=default, **parts)

    def _fields_from_node(self, fields: Any) -> list[Field]:
        if type(fields) is not list:
            raise DataException('Struct schema\'s "fields" argument is not an array.')
        result: dict[str, Field] = {}
        for field in fields:
            name = field.get("field") if type(field) is dict else None
            if type(name) is not str:
                raise DataException("Struct schema's field name not specified properly")
            if name in result:
                raise DataException(f"Cannot create field because of field name duplication {name}")
            result[name] = Field(name, len(result), self._schema_of_node(field))
        return list(result.values())


def _text(value: Any) -> str | None:
    return value if type(value) is str else None


# JSON values that are valid Connect values of these types exactly as parsed.
_VALID_AS_PARSED: dict[SchemaType, type] = {
    SchemaType.STRING: str,
    SchemaType.BOOLEAN: bool,
    SchemaType.FLOAT64: float,
}


def _identity(value: Any) -> Any:
    return value


def _with_path(error: DataException, name: str) -> _ConversionError:
    wrapped = _ConversionError(str(error))
    wrapped.path.append(name)
    return wrapped


def _rescaled(schema: Schema, value: _decimal.Decimal, scale: int) -> _decimal.Decimal:
    if not isinstance(value, _decimal.Decimal):
        raise _ConversionError(
            f"Invalid type for Decimal, expected decimal.Decimal but was {type(value).__name__}"
        )
    return _decimal.Decimal(f"{Decimal.unscaled(schema, value)}E{-scale}")


def _decimal_encoder(schema: Schema, decimal_format: DecimalFormat) -> Encoder:
    """The encoder of a ``Decimal`` schema's values: for a finite ``decimal.Decimal``, its
    unscaled value in base64 at once when it is exact at the schema's scale, or, under
    ``NUMERIC``, its text as it is when it holds that scale (what a connector usually has);
    any other value through the general path, which rescales it or raises as Kafka does."""
    scale = Decimal.scale(schema)
    if decimal_format is DecimalFormat.NUMERIC and scale > 0:
        point, after = -scale - 1, -scale

        def numeric_read(v: Any) -> Any:
            # Its text tells: a decimal of exponent -scale is written with ``scale`` digits
            # after its point and no exponent (Decimal's __str__ for any such value of
            # fewer than 7 leading zeros; others take the general path).
            if v.__class__ is _decimal.Decimal:
                text = str(v)
                if text[point:after] == "." and "E" not in text and (v or text[0] != "-"):
                    return orjson.Fragment(text)  # -0.00 takes the general path: 0.00
            return orjson.Fragment(str(_rescaled(schema, v, scale)))

        return numeric_read
    if decimal_format is DecimalFormat.NUMERIC:

        def numeric(v: Any) -> Any:
            if v.__class__ is _decimal.Decimal:
                sign, _, exponent = v.as_tuple()
                if exponent == -scale and (v or not sign):  # -0.00 is written as 0.00
                    return orjson.Fragment(str(v))
            return orjson.Fragment(str(_rescaled(schema, v, scale)))

        return numeric
    scaleb, b2a_base64 = EXACT_DECIMALS.scaleb, binascii.b2a_base64

    def base64_bytes(v: Any) -> Any:
        if v.__class__ is _decimal.Decimal and v.is_finite():
            scaled = scaleb(v, scale)
            unscaled = int(scaled)
            if scaled == unscaled:
                return b2a_base64(twos_complement(unscaled), newline=False).decode()
        return _b64(Decimal.bytes_at(v, scale))

    return base64_bytes


def _timestamp_encoder(schema: Schema) -> Encoder:
    """The encoder of a ``Timestamp`` schema's values: a ``datetime`` as its milliseconds
    since the epoch, at once (a naive one taken as UTC, as :meth:`Timestamp.from_logical`
    takes it); any other value through that method, which raises."""
    epoch, naive_epoch = _EPOCH, _EPOCH.replace(tzinfo=None)
    millisecond = _dt.timedelta(milliseconds=1)

    def encode(v: Any) -> Any:
        if v.__class__ is _dt.datetime:
            return (v - (naive_epoch if v.tzinfo is None else epoch)) // millisecond
        return Timestamp.from_logical(schema, v)

    return encode


def _expect(node: Any, kind: type, what: str) -> Any:
    if type(node) is not kind:
        article = "JSON objects" if kind is dict else "JSON arrays"
        raise _ConversionError(f"{what} should be encoded as {article}, but found {_kind(node)}")
    return node


def _integer_decoder(t: SchemaType, what: str) -> Decoder:
    low, high = INTEGER_RANGES[t]

    def decode(node: Any) -> int:
        if type(node) is int and low <= node <= high:
            return node
        raise _ConversionError(f"Invalid value for {what}: {_kind(node)} {str(node)[:40]}")

    return decode


def _logical(to_logical: Callable[[Schema, Any], Any], schema: Schema, value: Any) -> Any:
    try:
        return to_logical(schema, value)
    except DataException as e:
        raise _ConversionError(str(e)) from None


def _float_value(node: Any) -> float:
    t = type(node)
    if t is float:
        number: float = node  # a float, checked above
        return number
    if t is int or t is _decimal.Decimal:
        return float(node)
    if t is str and node in NON_FINITE:
        return NON_FINITE[node]
    raise _ConversionError(f"Invalid value for a float: {_kind(node)}")


def _boolean_value(node: Any) -> bool:
    if node is True or node is False:
        return node
    raise _ConversionError(f"Invalid value for BOOLEAN: {_kind(node)}")


def _string_value(node: Any) -> str:
    if type(node) is str:
        return node
    raise _ConversionError(f"Invalid value for STRING: {_kind(node)}")


def _bytes_value(node: Any) -> bytes:
    if type(node) is not str:
        raise _ConversionError(f"Invalid value for BYTES, expected base64 text: {_kind(node)}")
    try:
        return base64.b64decode(node, validate=True)
    except ValueError:  # binascii.Error, or characters beyond ASCII
        raise _ConversionError("Invalid bytes field: not base64") from None


def _decimal_value(schema: Schema, node: Any) -> _decimal.Decimal:
    t = type(node)
    if t is str:
        decoded: _decimal.Decimal = _logical(Decimal.to_logical, schema, _bytes_value(node))
        return decoded
    if t is _decimal.Decimal:
        exact: _decimal.Decimal = node  # a Decimal, checked above
        return exact
    if t is int:
        return _decimal.Decimal(node)
    if t is float:
        raise _NeedExactNumbers
    raise _ConversionError(
        f"Invalid type for Decimal, underlying representation should be numeric or bytes but was {_kind(node)}"
    )


_PLAIN_CHECKS: dict[Decoder, str] = {
    _string_value: "{v}.__class__ is str",
    _boolean_value: "{v}.__class__ is bool",
    _float_value: "{v}.__class__ is float",
}
"""The decoders whose valid values are the JSON values of one class, exactly as parsed: the
check generated for a field of each (integers have theirs, with the type's range)."""

_TEMPORAL_NAMES = frozenset((Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME))


def _usual_struct_decoder(schema: Schema, converter: JsonConverter, each: Decoder) -> Decoder:
    """A function generated for ``schema`` (once, when its decoder is made) that decodes a
    JSON object whose fields all hold what they usually do in one pass, with no loop: each
    field read once, a value valid as parsed checked by its class (and range), any other
    given to its field's decoder, and the struct made of them. An object it cannot take so
    (not an object, a null where the field's schema has a default or requires a value, a
    value of another class, a decoder that raised) goes to ``each``, which decodes it field
    by field and raises naming the field: both give the same struct or the same error. The
    code holds the field names as literals (``repr``); schemas and decoders are variables."""
    fields = schema.fields or []
    namespace: dict[str, Any] = {"schema": schema, "each": each, "trusted": Struct._trusted}
    reads, checks, conversions = [], [], []
    for f in fields:
        v = f"v{f.index}"
        reads.append(f"    {v} = get({str.__repr__(f.name)})")
        nullable = f.schema.optional and f.schema.default_value is None
        decoder = converter._decoder(f.schema)
        t = f.schema.type
        if t in INTEGER_RANGES and f.schema.name not in _TEMPORAL_NAMES:
            low, high = INTEGER_RANGES[t]
            check = f"{v}.__class__ is int and {low} <= {v} <= {high}"
        elif decoder in _PLAIN_CHECKS:
            check = _PLAIN_CHECKS[decoder].format(v=v)
        else:  # converted by its decoder
            namespace[f"d{f.index}"] = decoder
            if nullable:
                conversions.append(f"        if {v} is not None: {v} = d{f.index}({v})")
            else:
                checks.append(f"{v} is not None")
                conversions.append(f"        {v} = d{f.index}({v})")
            continue
        checks.append(f"({v} is None or {check})" if nullable else f"({check})")
    values = ", ".join(f"v{f.index}" for f in fields)
    lines = [
        "def decode(node):",
        "    if node.__class__ is not dict:",
        "        return each(node)",
        "    get = node.get",
        *reads,
        f"    if not ({' and '.join(checks) or 'True'}):",
        "        return each(node)",
    ]
    if conversions:
        lines += ["    try:", *conversions, "    except Exception:", "        return each(node)"]
    lines.append(f"    return trusted(schema, [{values}])")
    exec("\n".join(lines), namespace)  # no schema text in the code: variables v0, v1, ...
    decode: Decoder = namespace["decode"]
    return decode


_JAVA_LIKE_DOUBLE = "(1e-3 <= {v} < 1e7 or -1e7 < {v} <= -1e-3 or {v} == 0.0)"
"""The doubles orjson writes as Java does (see ``JsonConverter._double_json``), as code."""


def _usual_struct_encoder(schema: Schema, converter: JsonConverter, each: Encoder) -> Encoder:
    """A function generated for ``schema`` (once, when its encoder is made) that writes a
    struct of that schema as one dict display: each field's value read once (the values
    unpacked), written as it is where orjson writes it as Java does, else through its
    field's encoder, a null through the field's null rule. A struct of an equal schema
    object is taken too (the last such object is remembered: a connector that makes its
    schemas again, as change capture does at each new session, pays one comparison). A
    struct it cannot take so (not a struct, of another schema, an encoder or a null rule
    that raised) goes to ``each``, which writes it field by field and raises naming the
    field: both give the same dict or the same error (encoders are pure, so running them
    again is safe). The code holds the field names as literals (``str.__repr__``); schemas
    and encoders are variables."""
    fields = schema.fields or []
    namespace: dict[str, Any] = {
        "schema": schema,
        "each": each,
        "Struct": Struct,
        "equal": [schema],  # the last equal schema object met
    }
    items = []
    for f in fields:
        v, encoder = f"v{f.index}", converter._encoder(f.schema)
        if encoder is _identity:
            written = v
        elif encoder is converter._double_json:
            namespace[f"e{f.index}"] = encoder
            as_is = f"{v}.__class__ is float and {_JAVA_LIKE_DOUBLE.format(v=v)}"
            written = f"({v} if {as_is} else e{f.index}({v}))"
        else:
            namespace[f"e{f.index}"] = encoder
            written = f"e{f.index}({v})"
        if f.schema.optional and not (
            f.schema.default_value is not None and converter.replace_null_with_default
        ):
            null = "None"  # a null written as null
        else:
            namespace[f"n{f.index}"] = f.schema
            null = f"null(n{f.index})"
        if written != v or null != "None":
            written = f"({written} if {v} is not None else {null})"
        items.append(f"{str.__repr__(f.name)}: {written}")
    namespace["null"] = converter._null_json
    values = "".join(f"v{f.index}, " for f in fields)
    lines = [
        "def encode(struct):",
        "    if struct.__class__ is not Struct:",
        "        return each(struct)",
        "    given = struct.schema",
        "    if given is not schema and given is not equal[0]:",
        "        if given != schema:",
        "            return each(struct)",
        "        equal[0] = given",
        "    try:",
        f"        {values or '_'} = struct._values" if values else "        pass",
        f"        return {{{', '.join(items)}}}",
        "    except Exception:",
        "        return each(struct)",
    ]
    exec("\n".join(lines), namespace)  # no schema text in the code: variables v0, v1, ...
    encode: Encoder = namespace["encode"]
    return encode
