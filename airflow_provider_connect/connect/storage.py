"""Converters between Connect data and Kafka bytes, as ``org.apache.kafka.connect.storage``.

A :class:`Converter` turns record keys or values into bytes and back; a
:class:`HeaderConverter` does the same for header values. The runtime configures one of
each per task from the connector's (or worker's) ``key.converter``, ``value.converter`` and
``header.converter`` and the keys under those prefixes (``value.converter.schemas.enable``
reaches the value converter as ``schemas.enable``). Converters run on the per-record path:
one instance is used by one task thread.
"""

from __future__ import annotations

import codecs
from abc import ABC, abstractmethod
from collections.abc import Mapping
from enum import Enum
from typing import Any, ClassVar

import orjson

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type
from airflow_provider_connect.connect.data.schema import (
    INTEGER_RANGES,
    NULL_SCHEMA_AND_VALUE,
    Schema,
    SchemaAndValue,
)
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.header import Headers


class ConverterType(Enum):
    """What a converter instance converts."""

    KEY = "key"
    VALUE = "value"
    HEADER = "header"


CONVERTER_TYPE_CONFIG = "converter.type"


def converter_config_def() -> ConfigDef:
    """The keys every converter takes: ``converter.type``."""
    return ConfigDef().define(
        CONVERTER_TYPE_CONFIG,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "How this converter will be used: key, value or header.",
    )


class Converter(ABC):
    """Converts record keys or values between Connect data and bytes."""

    reads_headers: ClassVar[bool] = False
    """True when :meth:`to_connect_data` needs the record's headers as consumed (values as
    the raw bytes, schemas None), as a converter that finds its schema id in a header does;
    the runtime passes none otherwise."""

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        """Called once, before any conversion, with the converter's own keys (prefix
        stripped); ``is_key`` tells whether it converts keys or values."""

    @abstractmethod
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """The bytes of ``value`` (of ``schema``) for ``topic``; None for a null record part.
        Raises :class:`~airflow_provider_connect.connect.errors.DataException` when the
        value cannot be converted."""

    def from_connect_values(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        """The bytes of each of ``values`` (all of ``schema``, for ``topic``), in order: what
        :meth:`from_connect_data` gives for each, in one call. The runtime converts the
        records of a poll that share a topic and schemas through this; a converter overrides
        it when converting values together is faster. Raises as :meth:`from_connect_data`."""
        convert = self.from_connect_data
        return [convert(topic, schema, value) for value in values]

    @abstractmethod
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """The Connect data in ``data`` (None for a tombstone gives ``SchemaAndValue.NULL``).
        Raises :class:`~airflow_provider_connect.connect.errors.DataException` on malformed
        bytes."""

    def to_connect_values(self, topic: str, datas: list[bytes | None]) -> list[SchemaAndValue]:
        """The Connect data in each of ``datas`` (parts of messages of ``topic``), in order:
        what :meth:`to_connect_data` without headers gives for each, in one call. The runtime
        converts the keys and the values of a consumed batch through this when the batch is of
        one topic and neither converter reads headers; a converter overrides it when
        converting data together is faster. Raises as :meth:`to_connect_data` (the runtime
        then converts each part alone, to find the one that fails)."""
        convert = self.to_connect_data
        return [convert(topic, data) for data in datas]

    def config(self) -> ConfigDef:
        """The definition of this converter's configuration."""
        return converter_config_def()

    def close(self) -> None:
        """Releases resources; called once, when the task stops."""


class HeaderConverter(ABC):
    """Converts header values between Connect data and bytes."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once, before any conversion."""

    @abstractmethod
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    @abstractmethod
    def to_connect_header(
        self, topic: str, header_key: str, data: bytes | None
    ) -> SchemaAndValue: ...

    def config(self) -> ConfigDef:
        return converter_config_def()

    def close(self) -> None:
        """Releases resources; called once, when the task stops."""


class ValueHeaderConverter(Converter, HeaderConverter):
    """A converter that converts header values exactly as it converts record values."""

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """Configures key/value use (``is_key``) and header use (no ``is_key``) alike."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, data)


class StringConverter(ValueHeaderConverter):
    """Values as text in ``converter.encoding`` (UTF-8 by default), as Kafka's
    ``StringConverter``: any value is written as ``str(value)``; bytes are read back as an
    optional string."""

    ENCODING_CONFIG = "converter.encoding"

    def __init__(self) -> None:
        self.encoding = "utf-8"

    def config(self) -> ConfigDef:
        return converter_config_def().define(
            self.ENCODING_CONFIG,
            Type.STRING,
            "UTF8",
            None,
            Importance.HIGH,
            "The name of the character encoding to use for converting between strings and bytes.",
        )

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        encoding = self.config().parse(configs)[self.ENCODING_CONFIG]
        try:
            self.encoding = codecs.lookup(encoding.replace("UTF8", "UTF-8")).name
        except LookupError as e:
            raise DataException(f"Unsupported encoding {encoding}") from e

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        try:
            return str(value).encode(self.encoding)
        except UnicodeEncodeError as e:
            raise DataException(f"Failed to serialize to a string: {e}") from e

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, bytes(data).decode(self.encoding))
        except UnicodeDecodeError as e:
            raise DataException(f"Failed to deserialize string: {e}") from e


class ByteArrayConverter(ValueHeaderConverter):
    """Passes bytes through unchanged, as Kafka's ``ByteArrayConverter``."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not SchemaType.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(
                f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}"
            )
        return bytes(value)

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, None if data is None else bytes(data))


class SimpleHeaderConverter(HeaderConverter):
    """The default header converter: header values as plain text, with the type inferred
    back from the text, as Kafka's ``SimpleHeaderConverter``.

    Written: strings as they are, booleans as ``true``/``false``, numbers in decimal, lists
    and maps as JSON. Read: ``true``/``false`` as a boolean, an integer as the smallest
    int type that holds it, a decimal number as float64, a JSON array or object as an array
    or map, anything else as a string. Empty bytes read as an empty string.
    """

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, bool):
            return b"true" if value else b"false"
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        try:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except TypeError as e:
            raise DataException(
                f"Header {header_key!r}: cannot convert {type(value).__name__}"
            ) from e

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        try:
            text = bytes(data).decode()
        except UnicodeDecodeError:
            return SchemaAndValue(Schema.BYTES_SCHEMA, bytes(data))
        return parse_string(text)


def parse_string(text: str) -> SchemaAndValue:
    """The value ``text`` spells, with its inferred schema (as Kafka's ``Values.parseString``):
    ``true``/``false`` a boolean, an integer the smallest int type that holds it, a decimal
    number a float64, a JSON array or object an array or map, anything else the string."""
    stripped = text.strip()
    if stripped in ("true", "false"):
        return SchemaAndValue(Schema.BOOLEAN_SCHEMA, stripped == "true")
    if stripped[:1] in ("[", "{") or _looks_numeric(stripped):
        try:
            parsed = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return SchemaAndValue(Schema.STRING_SCHEMA, text)
        if isinstance(parsed, bool):
            return SchemaAndValue(Schema.BOOLEAN_SCHEMA, parsed)
        if isinstance(parsed, int):
            for int_type in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64):
                low, high = INTEGER_RANGES[int_type]
                if low <= parsed <= high:
                    return SchemaAndValue(getattr(Schema, f"{int_type.name}_SCHEMA"), parsed)
            return SchemaAndValue(Schema.STRING_SCHEMA, text)
        if isinstance(parsed, float):
            return SchemaAndValue(Schema.FLOAT64_SCHEMA, parsed)
        if isinstance(parsed, (list, dict)):
            return SchemaAndValue(None, parsed)
    return SchemaAndValue(Schema.STRING_SCHEMA, text)


def _looks_numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or (text[0] == "-" and text[1:2].isdigit()))
