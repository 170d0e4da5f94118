"""Schemas: the types of Connect data, as ``org.apache.kafka.connect.data.Schema``.

A :class:`Schema` is immutable and compares by value; build one with :class:`SchemaBuilder`
or use the constants (``Schema.INT32_SCHEMA``, ``Schema.OPTIONAL_STRING_SCHEMA``, …).

Python values of each type:

============  =====================================================================
type          Python value
============  =====================================================================
int8…int64    ``int`` within the type's range (``bool`` is not an integer here)
float32/64    ``float`` (an ``int`` is accepted and read as a float)
boolean       ``bool``
string        ``str``
bytes         ``bytes`` or ``bytearray``
array         ``list`` or ``tuple`` of values of the element schema
map           ``dict`` from key-schema values to value-schema values
struct        :class:`~airflow_provider_connect.connect.data.Struct` of the same schema
============  =====================================================================

Logical types (``Decimal``, ``Date``, ``Time``, ``Timestamp``) take ``decimal.Decimal``,
``datetime.date``, ``datetime.time`` and ``datetime.datetime`` values instead.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Mapping
from enum import Enum
from typing import Any, NamedTuple

from airflow_provider_connect.connect.errors import DataException, SchemaBuilderException


class Type(Enum):
    """The schema types; values are Kafka Connect's type names."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)


INTEGER_RANGES: dict[Type, tuple[int, int]] = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}

# Python value types of the logical types, by logical name.
LOGICAL_VALUE_TYPES: dict[str, type] = {
    "org.apache.kafka.connect.data.Decimal": _decimal.Decimal,
    "org.apache.kafka.connect.data.Date": _dt.date,
    "org.apache.kafka.connect.data.Time": _dt.time,
    "org.apache.kafka.connect.data.Timestamp": _dt.datetime,
}


class Field:
    """One field of a struct schema: its name, position and schema."""

    __slots__ = ("index", "name", "schema")

    def __init__(self, name: str, index: int, schema: Schema) -> None:
        self.name = name
        self.index = index
        self.schema = schema

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Field)
            and self.name == other.name
            and self.index == other.index
            and self.schema == other.schema
        )

    def __hash__(self) -> int:
        return hash((self.name, self.index, self.schema))

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, index={self.index}, schema={self.schema!r})"


class Schema:
    """An immutable Connect schema; compares and hashes by value.

    Use :class:`SchemaBuilder` to make one. ``fields`` is set for structs only;
    ``key_schema`` for maps; ``value_schema`` for arrays (the element) and maps.
    """

    __slots__ = (
        "_field_by_name",
        "_hash",
        "default_value",
        "doc",
        "fields",
        "key_schema",
        "name",
        "optional",
        "parameters",
        "type",
        "value_schema",
        "version",
    )

    # Constants, set below the class: INT8_SCHEMA, OPTIONAL_INT8_SCHEMA, …
    INT8_SCHEMA: Schema
    INT16_SCHEMA: Schema
    INT32_SCHEMA: Schema
    INT64_SCHEMA: Schema
    FLOAT32_SCHEMA: Schema
    FLOAT64_SCHEMA: Schema
    BOOLEAN_SCHEMA: Schema
    STRING_SCHEMA: Schema
    BYTES_SCHEMA: Schema
    OPTIONAL_INT8_SCHEMA: Schema
    OPTIONAL_INT16_SCHEMA: Schema
    OPTIONAL_INT32_SCHEMA: Schema
    OPTIONAL_INT64_SCHEMA: Schema
    OPTIONAL_FLOAT32_SCHEMA: Schema
    OPTIONAL_FLOAT64_SCHEMA: Schema
    OPTIONAL_BOOLEAN_SCHEMA: Schema
    OPTIONAL_STRING_SCHEMA: Schema
    OPTIONAL_BYTES_SCHEMA: Schema

    def __init__(
        self,
        type: Type,
        *,
        optional: bool = False,
        default_value: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: list[Field] | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        if type is Type.STRUCT:
            fields = list(fields or ())
        elif fields:
            raise DataException(f"Cannot specify fields on a non-struct schema ({type.value})")
        if (key_schema is not None) != (type is Type.MAP):
            raise DataException("Only a map schema has a key schema, and it must have one")
        if (value_schema is not None) != (type in (Type.ARRAY, Type.MAP)):
            raise DataException("Only array and map schemas have a value schema, and must have one")
        self.type = type
        self.optional = optional
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters = dict(parameters) if parameters is not None else None
        self.fields = fields
        self.key_schema = key_schema
        self.value_schema = value_schema
        self._field_by_name = {f.name: f for f in fields} if fields is not None else None
        self._hash: int | None = None
        self.default_value = None
        if default_value is not None:
            from airflow_provider_connect.connect.data.struct import validate_value

            validate_value(self, default_value, "default value")
        self.default_value = default_value

    def replace(self, **changes: Any) -> Schema:
        """A copy of this schema with ``changes`` (the constructor's keyword arguments:
        ``optional``, ``name``, ``version``, ``parameters``, ...)."""
        parts = {
            "optional": self.optional,
            "default_value": self.default_value,
            "name": self.name,
            "version": self.version,
            "doc": self.doc,
            "parameters": self.parameters,
            "fields": self.fields,
            "key_schema": self.key_schema,
            "value_schema": self.value_schema,
        }
        return Schema(self.type, **{**parts, **changes})

    def field(self, name: str) -> Field | None:
        """The struct field called ``name``, or None; raises on a non-struct schema."""
        if self._field_by_name is None:
            raise DataException("Cannot look up fields on a non-struct schema")
        return self._field_by_name.get(name)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        return (
            self.type is other.type
            and self.optional == other.optional
            and self.name == other.name
            and self.version == other.version
            and self.doc == other.doc
            and self.parameters == other.parameters
            and self.fields == other.fields
            and self.key_schema == other.key_schema
            and self.value_schema == other.value_schema
            and _values_equal(self.default_value, other.default_value)
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(
                (
                    self.type,
                    self.optional,
                    self.name,
                    self.version,
                    self.doc,
                    tuple(sorted(self.parameters.items())) if self.parameters else None,
                    tuple(self.fields) if self.fields is not None else None,
                    self.key_schema,
                    self.value_schema,
                )
            )
        return self._hash

    def __repr__(self) -> str:
        parts = [self.type.name]
        if self.name:
            parts.append(f"name={self.name!r}")
        if self.optional:
            parts.append("optional")
        if self.fields is not None:
            parts.append(
                "fields=[" + ", ".join(f"{f.name}: {f.schema!r}" for f in self.fields) + "]"
            )
        if self.key_schema is not None:
            parts.append(f"key={self.key_schema!r}")
        if self.value_schema is not None:
            parts.append(f"value={self.value_schema!r}")
        return f"Schema({', '.join(parts)})"


def _values_equal(a: Any, b: Any) -> bool:
    """Value equality of Connect data, where ``bytes`` and ``bytearray`` compare by content."""
    if isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray)):
        return bytes(a) == bytes(b)
    return bool(a == b)


for _t in Type:
    if _t.is_primitive:
        setattr(Schema, f"{_t.name}_SCHEMA", Schema(_t))
        setattr(Schema, f"OPTIONAL_{_t.name}_SCHEMA", Schema(_t, optional=True))


class SchemaAndValue(NamedTuple):
    """A schema with a value of it; ``SchemaAndValue.NULL`` stands for a null record part."""

    schema: Schema | None
    value: Any


NULL_SCHEMA_AND_VALUE = SchemaAndValue(None, None)
SchemaAndValue.NULL = NULL_SCHEMA_AND_VALUE  # type: ignore[attr-defined]  # a NamedTuple declares no class constants


_UNSET = object()


class SchemaBuilder:
    """Builds a :class:`Schema` step by step, as Kafka Connect's ``SchemaBuilder``.

    Each property may be set once; a second call raises :class:`SchemaBuilderException`.
    Every setter returns the builder, so calls chain::

        SchemaBuilder.struct().name("user").field("id", Schema.INT64_SCHEMA).build()
    """

    def __init__(self, type: Type) -> None:
        self.type = type
        self._optional: bool | None = None
        self._default: Any = _UNSET
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Field] | None = {} if type is Type.STRUCT else None
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    # -- factories -------------------------------------------------------------------------
    @staticmethod
    def int8() -> SchemaBuilder:
        return SchemaBuilder(Type.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        return SchemaBuilder(Type.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        return SchemaBuilder(Type.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        return SchemaBuilder(Type.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT64)

    @staticmethod
    def bool() -> SchemaBuilder:
        return SchemaBuilder(Type.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        return SchemaBuilder(Type.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        return SchemaBuilder(Type.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(Type.STRUCT)

    @staticmethod
    def array(value_schema: Schema | SchemaBuilder) -> SchemaBuilder:
        builder = SchemaBuilder(Type.ARRAY)
        builder._value_schema = _as_schema(value_schema)
        return builder

    @staticmethod
    def map(
        key_schema: Schema | SchemaBuilder, value_schema: Schema | SchemaBuilder
    ) -> SchemaBuilder:
        builder = SchemaBuilder(Type.MAP)
        builder._key_schema = _as_schema(key_schema)
        builder._value_schema = _as_schema(value_schema)
        return builder

    # -- properties ------------------------------------------------------------------------
    def _check_unset(self, prop: str, current: Any, unset: Any = None) -> None:
        if current is not unset:
            raise SchemaBuilderException(
                f"Invalid SchemaBuilder call: {prop} has already been set."
            )

    def optional(self) -> SchemaBuilder:
        self._check_unset("optional", self._optional)
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        self._check_unset("optional", self._optional)
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        self._check_unset("default", self._default, _UNSET)
        self._default = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        self._check_unset("name", self._name)
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        self._check_unset("version", self._version)
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        self._check_unset("doc", self._doc)
        self._doc = doc
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        self._parameters[key] = value
        return self

    def parameters(self, params: Mapping[str, str]) -> SchemaBuilder:
        for key, value in params.items():
            self.parameter(key, value)
        return self

    def field(self, name: str, schema: Schema | SchemaBuilder) -> SchemaBuilder:
        """Adds a struct field; names must be unique."""
        if self._fields is None:
            raise SchemaBuilderException("Cannot create fields on type " + self.type.name)
        if not name:
            raise SchemaBuilderException("fieldName cannot be null.")
        if name in self._fields:
            raise SchemaBuilderException(
                f"Cannot create field because of field name duplication {name}"
            )
        self._fields[name] = Field(name, len(self._fields), _as_schema(schema))
        return self

    def build(self) -> Schema:
        """The immutable schema; raises :class:`SchemaBuilderException` on an invalid default."""
        try:
            return Schema(
                self.type,
                optional=bool(self._optional),
                default_value=None if self._default is _UNSET else self._default,
                name=self._name,
                version=self._version,
                doc=self._doc,
                parameters=self._parameters,
                fields=list(self._fields.values()) if self._fields is not None else None,
                key_schema=self._key_schema,
                value_schema=self._value_schema,
            )
        except SchemaBuilderException:
            raise
        except DataException as e:
            raise SchemaBuilderException(f"Invalid default value: {e}") from e

    def schema(self) -> Schema:
        """Same as :meth:`build`, as in Kafka Connect."""
        return self.build()


def _as_schema(schema: Schema | SchemaBuilder) -> Schema:
    if isinstance(schema, SchemaBuilder):
        return schema.build()
    if not isinstance(schema, Schema):
        raise SchemaBuilderException(f"Expected a Schema, got {type(schema).__name__}")
    return schema
