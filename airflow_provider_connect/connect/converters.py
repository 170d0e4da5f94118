"""Converters of single primitive values to Kafka's fixed-size byte formats, as
``org.apache.kafka.connect.converters``: :class:`IntegerConverter`, :class:`LongConverter`,
:class:`ShortConverter`, :class:`FloatConverter` and :class:`DoubleConverter` (Kafka's
``NumberConverter`` family) and :class:`BooleanConverter` (KIP-959).

Each writes exactly the bytes Kafka's serializer of its type writes (``IntegerSerializer``
and so on: big-endian two's complement integers, IEEE 754 floats, one ``0x01``/``0x00``
byte for a boolean), reads them back with the optional schema of its type, and maps null to
null both ways. Each is a converter and a header converter alike; its only key is
``converter.type``. Errors are :class:`~airflow_provider_connect.connect.errors.DataException`
with Kafka's messages (a Python type name where Kafka names a Java class).
"""

from __future__ import annotations

import struct
from typing import Any, ClassVar

from airflow_provider_connect.connect.data.schema import Schema, SchemaAndValue
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.storage import ValueHeaderConverter


def _check_size(data: bytes, size: int, deserializer: str, type_name: str) -> None:
    """Raises Kafka's error for ``data`` that is not ``size`` bytes long, as
    ``deserializer`` reports it to the converter of ``type_name``."""
    if len(data) != size:
        raise DataException(
            f"Failed to deserialize {type_name}: "
            f"Size of data received by {deserializer} is not {size}"
        )


class NumberConverter(ValueHeaderConverter):
    """A number as Kafka's serializer of its type writes it (Kafka's ``NumberConverter``).

    A subclass names its type; the schema given to :meth:`from_connect_data` is not looked
    at, as in Kafka. Written: ``None`` as None, an int (never a bool) of the type's range, or
    for the floating-point types an int or float the type can hold; anything else raises
    :class:`DataException`. Read: the value with the type's optional schema; bytes of
    another length than the type's raise :class:`DataException`.
    """

    TYPE_NAME: ClassVar[str]
    """The type as Kafka's messages name it: ``integer``, ``long``, ``short``, …"""
    SCHEMA: ClassVar[Schema]
    """The optional schema of every value read."""
    FORMAT: ClassVar[struct.Struct]
    """The big-endian layout of the type."""
    DESERIALIZER: ClassVar[str]
    """The Kafka deserializer whose size error a read of the wrong length reports."""
    VALUE_TYPES: ClassVar[tuple[type, ...]]
    """The Python types of the values written (bool excepted)."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, self.VALUE_TYPES):
            raise DataException(
                f"Failed to serialize to {self.TYPE_NAME} (was {type(value).__name__})"
            )
        try:
            return self.FORMAT.pack(value)
        except (struct.error, OverflowError) as e:
            raise DataException(
                f"Failed to serialize to {self.TYPE_NAME}: "
                f"{value!r} is out of range for {self.SCHEMA.type.name}"
            ) from e

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(self.SCHEMA, None)
        _check_size(data, self.FORMAT.size, self.DESERIALIZER, self.TYPE_NAME)
        return SchemaAndValue(self.SCHEMA, self.FORMAT.unpack(data)[0])


class ShortConverter(NumberConverter):
    """INT16 values as 2 big-endian bytes (Kafka's ``ShortSerializer``); reads an optional
    INT16."""

    TYPE_NAME = "short"
    SCHEMA = Schema.OPTIONAL_INT16_SCHEMA
    FORMAT = struct.Struct(">h")
    DESERIALIZER = "ShortDeserializer"
    VALUE_TYPES = (int,)


class IntegerConverter(NumberConverter):
    """INT32 values as 4 big-endian bytes (Kafka's ``IntegerSerializer``); reads an optional
    INT32."""

    TYPE_NAME = "integer"
    SCHEMA = Schema.OPTIONAL_INT32_SCHEMA
    FORMAT = struct.Struct(">i")
    DESERIALIZER = "IntegerDeserializer"
    VALUE_TYPES = (int,)


class LongConverter(NumberConverter):
    """INT64 values as 8 big-endian bytes (Kafka's ``LongSerializer``); reads an optional
    INT64."""

    TYPE_NAME = "long"
    SCHEMA = Schema.OPTIONAL_INT64_SCHEMA
    FORMAT = struct.Struct(">q")
    DESERIALIZER = "LongDeserializer"
    VALUE_TYPES = (int,)


class FloatConverter(NumberConverter):
    """FLOAT32 values as 4 big-endian IEEE 754 bytes (Kafka's ``FloatSerializer``): a value
    is rounded to the nearest 32-bit float, and one beyond the 32-bit range raises; reads an
    optional FLOAT32."""

    TYPE_NAME = "float"
    SCHEMA = Schema.OPTIONAL_FLOAT32_SCHEMA
    FORMAT = struct.Struct(">f")
    DESERIALIZER = "Deserializer"  # sic: Kafka's FloatDeserializer names no class
    VALUE_TYPES = (int, float)


class DoubleConverter(NumberConverter):
    """FLOAT64 values as 8 big-endian IEEE 754 bytes (Kafka's ``DoubleSerializer``); reads
    an optional FLOAT64."""

    TYPE_NAME = "double"
    SCHEMA = Schema.OPTIONAL_FLOAT64_SCHEMA
    FORMAT = struct.Struct(">d")
    DESERIALIZER = "Deserializer"  # sic: Kafka's DoubleDeserializer names no class
    VALUE_TYPES = (int, float)


class BooleanConverter(ValueHeaderConverter):
    """Booleans as one byte, ``0x01`` true and ``0x00`` false (KIP-959, Kafka's
    ``BooleanSerializer``).

    Written: ``None`` as None, a bool as its byte; a schema other than BOOLEAN, or a value
    that is not a bool, raises :class:`DataException`. Read: an optional BOOLEAN; bytes of
    another length than 1, or a byte other than ``0x00``/``0x01``, raise
    :class:`DataException`.
    """

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not SchemaType.BOOLEAN:
            raise DataException(f"Invalid schema type for BooleanConverter: {schema.type.name}")
        if value is None:
            return None
        if not isinstance(value, bool):
            raise DataException(
                f"BooleanConverter is not compatible with objects of type {type(value).__name__}"
            )
        return b"\x01" if value else b"\x00"

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, None)
        _check_size(data, 1, "BooleanDeserializer", "boolean")
        byte = data[0]
        if byte > 1:
            signed = byte - 256 if byte > 127 else byte  # as Java prints a byte
            raise DataException(
                "Failed to deserialize boolean: "
                f"Unexpected byte received by BooleanDeserializer: {signed}"
            )
        return SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, byte == 1)
