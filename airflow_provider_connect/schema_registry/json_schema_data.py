"""Connect schemas and values to JSON Schema and JSON and back, as Confluent's
``JsonSchemaData`` maps them.

Connect → JSON Schema (:meth:`JsonSchemaData.writer`): integers are ``integer`` and floats
``number``, each with its ``connect.type``; bytes are ``string`` with ``connect.type``
``bytes`` (values in base64); a struct is an ``object`` whose ``properties`` carry their
``connect.index`` (and ``additionalProperties: false`` with
``object.additional.properties=false``); a map with non-optional string keys is an
``object`` with ``connect.type`` ``map`` and ``additionalProperties``, any other map an
``array`` of ``{"key", "value"}`` objects; an optional schema is ``{"oneOf": [{"type":
"null"}, …]}``. Names are ``title``, docs ``description``, defaults ``default``, versions
``connect.version``, parameters ``connect.parameters``. Decimal is a base64 string (a
``number`` with ``decimal.format=NUMERIC``), Date, Time and Timestamp integers (days,
milliseconds of the day, milliseconds), each titled with its logical name.

JSON Schema → Connect (:meth:`JsonSchemaData.reader`), for what any producer registered:
``integer`` is int64 and ``number`` float64 unless ``connect.type`` says otherwise; an
``object`` is a struct (a map with ``connect.type`` ``map``), its fields in
``connect.index`` order, else in the order of ``properties``; every property is a required
field unless its schema allows null (``"type": ["string", "null"]``, a ``oneOf``/``anyOf``
with ``null``) or, with ``use.optional.for.nonrequired``, it is not ``required``; ``enum``
is a string with the symbols as parameters; other ``oneOf``/``anyOf`` are a struct named
``io.confluent.connect.json.OneOf``; local ``$ref``s (``#/definitions/…``, ``#/$defs/…``)
are followed. A value of the wrong JSON type for its schema raises DataException naming
the field (Confluent's converter coerces it, e.g. to 0).

Differences from Confluent's: ``properties`` are written in field order (Confluent's in the
order of a Java ``HashMap``, so the registry may keep the two texts as two versions of one
subject), and read in document order when they have no ``connect.index``; ``allOf``,
recursive and remote ``$ref``s and schemaless values are not supported.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import decimal as _decimal
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.data.logical import (
    LOGICAL_TYPES,
    Date,
    Decimal,
    Time,
    Timestamp,
    from_logical_of,
    to_logical_of,
)
from airflow_provider_connect.connect.data.schema import Schema, SchemaBuilder, Type
from airflow_provider_connect.connect.data.struct import Struct, validate_value
from airflow_provider_connect.connect.errors import DataException

NAMESPACE = "io.confluent.connect.json"
CONNECT_INDEX_PROP = "connect.index"
CONNECT_TYPE_PROP = "connect.type"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_TYPE_MAP = "map"
CONNECT_TYPE_BYTES = "bytes"
JSON_TYPE_ENUM = f"{NAMESPACE}.Enum"
JSON_TYPE_ONE_OF = f"{NAMESPACE}.OneOf"
KEY_FIELD = "key"
VALUE_FIELD = "value"

_NUMBER_TYPES = {
    "int8": Type.INT8,
    "int16": Type.INT16,
    "int32": Type.INT32,
    "int64": Type.INT64,
    "float32": Type.FLOAT32,
    "float64": Type.FLOAT64,
}

Convert = Callable[[Any], Any]
"""A compiled conversion of a non-null value (Connect → JSON-able, or parsed JSON → Connect)."""


@dataclass(frozen=True)
class JsonSchemaDataConfig:
    """The ``JsonSchemaDataConfig`` keys that change the mapping, with Confluent's defaults."""

    object_additional_properties: bool = True
    use_optional_for_nonrequired: bool = False
    decimal_numeric: bool = False
    ignore_default_for_nullables: bool = False


@dataclass(frozen=True)
class JsonWriter:
    schema: dict[str, Any]
    encode: Convert
    title: str | None


@dataclass(frozen=True)
class JsonReader:
    schema: Schema
    decode: Convert
    exact_decimals: bool
    """Whether numbers must be parsed exactly (a NUMERIC decimal somewhere in the schema)."""


class JsonSchemaData:
    """Converts between Connect and JSON Schema (see the module's docstring)."""

    def __init__(self, config: JsonSchemaDataConfig) -> None:
        self.config = config

    # -- Connect → JSON Schema ---------------------------------------------------------------
    def writer(self, schema: Schema) -> JsonWriter:
        node, encode = self._from_connect(schema)
        return JsonWriter(node, encode, schema.name if schema.type is Type.STRUCT else None)

    def _from_connect(self, schema: Schema) -> tuple[dict[str, Any], Convert]:
        if schema.optional:
            inner, encode = self._from_connect_base(schema)
            return {"oneOf": [{"type": "null"}, inner]}, encode
        return self._from_connect_base(schema)

    def _from_connect_base(self, schema: Schema) -> tuple[dict[str, Any], Convert]:
        t = schema.type
        node: dict[str, Any] = {}
        connect_type: str | None = None
        encode: Convert = _identity
        if schema.name == Decimal.LOGICAL_NAME:
            node["type"] = "number" if self.config.decimal_numeric else "string"
            connect_type = CONNECT_TYPE_BYTES
            encode = self._decimal_encoder(schema)
        elif t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            node["type"] = "integer"
            connect_type = t.value
            encode = from_logical_of(schema) or _identity
        elif t in (Type.FLOAT32, Type.FLOAT64):
            node["type"] = "number"
            connect_type = t.value
            encode = _float
        elif t is Type.BOOLEAN:
            node["type"] = "boolean"
        elif t is Type.STRING:
            symbols = _enum_symbols(schema)
            if symbols is not None:
                node["enum"] = symbols
            else:
                node["type"] = "string"
        elif t is Type.BYTES:
            node["type"] = "string"
            connect_type = CONNECT_TYPE_BYTES
            encode = _base64
        elif t is Type.ARRAY:
            assert schema.value_schema is not None
            items, item_encode = self._from_connect(schema.value_schema)
            node["type"] = "array"
            node["items"] = items
            encode = _each(item_encode)
        elif t is Type.MAP:
            return self._map_from_connect(schema)
        elif _is_one_of(schema):
            return self._one_of_from_connect(schema)
        else:
            return self._struct_from_connect(schema)
        self._metadata(schema, node, connect_type, encode)
        return node, encode

    def _metadata(
        self, schema: Schema, node: dict[str, Any], connect_type: str | None, encode: Convert
    ) -> None:
        """The schema's name, doc, default (written by ``encode``, its values' encoder),
        version, Connect type and parameters on its ``node``."""
        if schema.name is not None:
            node["title"] = schema.name
        if schema.doc is not None:
            node["description"] = schema.doc
        if schema.default_value is not None:
            node["default"] = encode(schema.default_value)
        if schema.version is not None:
            node[CONNECT_VERSION_PROP] = schema.version
        if connect_type is not None:
            node[CONNECT_TYPE_PROP] = connect_type
        params = {k: v for k, v in (schema.parameters or {}).items() if not k.startswith(NAMESPACE)}
        if params:
            node[CONNECT_PARAMETERS_PROP] = params

    def _struct_from_connect(self, schema: Schema) -> tuple[dict[str, Any], Convert]:
        properties: dict[str, Any] = {}
        fields: list[tuple[str, int, Convert, Any, bool]] = []
        assert schema.fields is not None
        for f in schema.fields:
            property_node, encode = self._from_connect(f.schema)
            properties[f.name] = _indexed(property_node, f.index)
            default = (
                None
                if self.config.ignore_default_for_nullables
                else _maybe_encode(encode, f.schema.default_value)
            )
            fields.append((f.name, f.index, encode, default, f.schema.optional))
        encode_struct = _struct_encoder(schema, fields)
        node: dict[str, Any] = {"type": "object"}
        if not self.config.object_additional_properties:
            node["additionalProperties"] = False
        self._metadata(schema, node, None, encode_struct)
        node["properties"] = properties
        return node, encode_struct

    def _map_from_connect(self, schema: Schema) -> tuple[dict[str, Any], Convert]:
        assert schema.key_schema is not None and schema.value_schema is not None
        value_node, value_encode = self._from_connect(schema.value_schema)
        if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
            node: dict[str, Any] = {"type": "object"}

            def encode_map(m: Mapping[str, Any]) -> dict[str, Any]:
                return {k: _maybe_encode(value_encode, v) for k, v in m.items()}

            self._metadata(schema, node, CONNECT_TYPE_MAP, encode_map)
            node["additionalProperties"] = value_node
            return node, encode_map
        return self._entries_from_connect(schema, value_node, value_encode)

    def _entries_from_connect(
        self, schema: Schema, value_node: dict[str, Any], value_encode: Convert
    ) -> tuple[dict[str, Any], Convert]:
        """A map with keys other than required strings: an array of key/value objects."""
        assert schema.key_schema is not None
        key_node, key_encode = self._from_connect(schema.key_schema)

        def encode_entries(m: Mapping[Any, Any]) -> list[dict[str, Any]]:
            return [
                {
                    KEY_FIELD: _maybe_encode(key_encode, k),
                    VALUE_FIELD: _maybe_encode(value_encode, v),
                }
                for k, v in m.items()
            ]

        node: dict[str, Any] = {"type": "array"}
        self._metadata(schema, node, CONNECT_TYPE_MAP, encode_entries)
        node["items"] = {
            "type": "object",
            "properties": {
                KEY_FIELD: _indexed(key_node, 0),
                VALUE_FIELD: _indexed(value_node, 1),
            },
        }
        return node, encode_entries

    def _one_of_from_connect(self, schema: Schema) -> tuple[dict[str, Any], Convert]:
        branches: list[Any] = [{"type": "null"}] if schema.optional else []
        encoders: list[tuple[int, Convert]] = []
        assert schema.fields is not None
        for f in schema.fields:
            branch, branch_encode = self._from_connect_base(f.schema)
            branches.append({**branch, CONNECT_INDEX_PROP: f.index})
            encoders.append((f.index, branch_encode))

        def encode(struct: Struct) -> Any:
            for index, convert in encoders:
                value = struct._values[index]
                if value is not None:
                    return convert(value)
            return None

        return {"oneOf": branches}, encode

    def _decimal_encoder(self, schema: Schema) -> Convert:
        if self.config.decimal_numeric:
            return _identity  # a Decimal: written as a JSON number (see json_number)
        return lambda v: base64.b64encode(Decimal.from_logical(schema, v)).decode()

    # -- JSON Schema → Connect ---------------------------------------------------------------
    def reader(self, node: Any, version: int | None = None) -> JsonReader:
        """The Connect schema of the JSON Schema ``node`` and its value decoder; ``version``
        is the registry's version, for the top-level schema unless ``connect.version`` says
        otherwise."""
        resolver = _Refs(node)
        schema, decode = self._to_connect(node, resolver, False, version)
        return JsonReader(schema, decode, resolver.exact_decimals)

    def _to_connect(
        self, node: Any, refs: _Refs, optional: bool, version: int | None = None
    ) -> tuple[Schema, Convert]:
        """The Connect schema of the JSON Schema ``node`` and its value decoder: a union
        (``oneOf``, ``anyOf``, a list of types), an enum, a struct, else as its type's
        translator (``_TO_CONNECT``) builds it; then named by its ``title`` (a logical type
        when it is one's name) and finished with what every type carries."""
        node = refs.resolve(node)
        if node is True or node == {}:
            raise DataException("Schemaless JSON (an empty schema) is not supported here")
        if not isinstance(node, Mapping):
            raise DataException(f"Unsupported JSON Schema: {node!r}")
        union = node.get("oneOf", node.get("anyOf"))
        kind = node.get("type")
        if isinstance(kind, list):
            union = [{**node, "type": k} for k in kind]
        if union is not None:
            return self._union_to_connect(node, union, refs, optional, version)
        if "enum" in node or "const" in node:
            builder, decode = _enum_to_connect(node)
        elif kind == "object" and node.get(CONNECT_TYPE_PROP) != CONNECT_TYPE_MAP:
            return self._struct_to_connect(node, refs, optional, version)
        else:
            translate = _TO_CONNECT.get(kind) if isinstance(kind, str) else None
            if translate is None:
                raise DataException(f"Unsupported JSON Schema type: {kind!r}")
            builder, decode = translate(self, node, refs)
        title = node.get("title")
        if title in LOGICAL_TYPES:
            builder = _logical_builder(title, node)
            decode = self._logical_decoder(builder.build(), decode)
            if title == Decimal.LOGICAL_NAME and kind == "number":
                refs.exact_decimals = True
        elif title is not None:
            builder.name(title)
        return self._finish(builder, node, optional, version, decode)

    def _integer_to_connect(self, node: Mapping[str, Any], refs: _Refs) -> _Made:
        """The Connect number type ``connect.type`` names, else int64."""
        number = _NUMBER_TYPES.get(node.get(CONNECT_TYPE_PROP) or "int64", Type.INT64)
        decode = _checked(int, "an integer") if number.value.startswith("int") else _to_float
        return SchemaBuilder(number), decode

    def _number_to_connect(self, node: Mapping[str, Any], refs: _Refs) -> _Made:
        """The Connect number type ``connect.type`` names, bytes (a numeric Decimal's), else
        float64."""
        connect_type = node.get(CONNECT_TYPE_PROP)
        if connect_type in _NUMBER_TYPES:
            return self._integer_to_connect(node, refs)
        if connect_type == CONNECT_TYPE_BYTES:
            return SchemaBuilder.bytes(), _identity
        return SchemaBuilder.float64(), _to_float

    def _boolean_to_connect(self, node: Mapping[str, Any], refs: _Refs) -> _Made:
        return SchemaBuilder.bool(), _checked(bool, "a boolean")

    def _string_to_connect(self, node: Mapping[str, Any], refs: _Refs) -> _Made:
        """A string, or bytes in base64 (``connect.type`` ``bytes``)."""
        if node.get(CONNECT_TYPE_PROP) == CONNECT_TYPE_BYTES:
            return SchemaBuilder.bytes(), _from_base64
        return SchemaBuilder.string(), _checked(str, "a string")

    def _array_to_connect(self, node: Mapping[str, Any], refs: _Refs) -> _Made:
        """An array, or a map written as an array of ``key``/``value`` objects
        (``connect.type`` ``map``)."""
        if node.get(CONNECT_TYPE_PROP) == CONNECT_TYPE_MAP:
            items = refs.resolve(node.get("items"))
            properties = items.get("properties", {}) if isinstance(items, Mapping) else {}
            if KEY_FIELD not in properties or VALUE_FIELD not in properties:
                raise DataException("A map encoded as an array needs key and value items")
            key, key_decode = self._to_connect(properties[KEY_FIELD], refs, False)
            value, value_decode = self._to_connect(properties[VALUE_FIELD], refs, False)
            return SchemaBuilder.map(key, value), _entries_decoder(key_decode, value_decode)
        if not isinstance(node.get("items"), Mapping):
            raise DataException("Array schema did not specify the items type")
        element, element_decode = self._to_connect(node["items"], refs, False)
        return SchemaBuilder.array(element), _list_decoder(element_decode)

    def _map_to_connect(self, node: Mapping[str, Any], refs: _Refs) -> _Made:
        """An ``object`` with ``connect.type`` ``map`` (any other is a struct): a map of
        strings to its ``additionalProperties``."""
        value, value_decode = self._to_connect(node.get("additionalProperties", {}), refs, False)
        return SchemaBuilder.map(Schema.STRING_SCHEMA, value), _dict_decoder(value_decode)

    def _finish(
        self,
        builder: SchemaBuilder,
        node: Mapping[str, Any],
        optional: bool,
        version: int | None,
        decode: Convert,
    ) -> tuple[Schema, Convert]:
        title = node.get("title")
        if node.get("description") is not None:
            builder.doc(node["description"])
        connect_version = node.get(CONNECT_VERSION_PROP, version)
        if connect_version is not None and title not in LOGICAL_TYPES:
            builder.version(int(connect_version))
        for key, value in (node.get(CONNECT_PARAMETERS_PROP) or {}).items():
            if title not in LOGICAL_TYPES or key != Decimal.SCALE_FIELD:
                builder.parameter(key, str(value))
        if optional:
            builder.optional()
        if node.get("default") is not None:
            with contextlib.suppress(DataException, TypeError, ValueError):  # as Confluent's:
                builder.default_value(decode(node["default"]))  # an invalid default is ignored
        return builder.build(), decode

    def _struct_to_connect(
        self, node: Mapping[str, Any], refs: _Refs, optional: bool, version: int | None
    ) -> tuple[Schema, Convert]:
        builder = SchemaBuilder.struct()
        if node.get("title") is not None:
            builder.name(node["title"])
        required = set(node.get("required", ()))
        properties = list((node.get("properties") or {}).items())
        ordered = sorted(enumerate(properties), key=lambda p: refs.index_of(p[1][1], p[0]))
        decoders: list[tuple[str, Convert, bool]] = []
        for _, (name, property_node) in ordered:
            nullable = self.config.use_optional_for_nonrequired and name not in required
            field_schema, decode = self._to_connect(property_node, refs, nullable)
            builder.field(name, field_schema)
            decoders.append((name, decode, field_schema.optional))
        schema, _ = self._finish(builder, node, optional, version, _identity)
        return schema, _struct_decoder(schema, decoders)

    def _union_to_connect(
        self,
        node: Mapping[str, Any],
        branches: list[Any],
        refs: _Refs,
        optional: bool,
        version: int | None,
    ) -> tuple[Schema, Convert]:
        resolved = [refs.resolve(b) for b in branches]
        others = [b for b in resolved if not _is_null(b)]
        if len(branches) == 1:
            return self._to_connect(branches[0], refs, optional, None)
        if len(others) == 1 and len(branches) == 2:
            return self._to_connect(others[0], refs, True, version)
        builder = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF)
        members: list[tuple[str, Schema, Convert]] = []
        for k, branch in enumerate(others):
            member, decode = self._to_connect(branch, refs, True)
            name = f"{JSON_TYPE_ONE_OF}.field.{k}"
            builder.field(name, member)
            members.append((name, member, decode))
        if optional or len(others) < len(branches):
            builder.optional()
        schema = builder.build()
        return schema, _union_decoder(schema, members)

    def _logical_decoder(self, schema: Schema, base: Convert) -> Convert:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:

            def decode_decimal(value: Any) -> _decimal.Decimal:
                if isinstance(value, str):
                    return Decimal.to_logical(schema, _from_base64(value))
                if isinstance(value, (int, _decimal.Decimal)) and not isinstance(value, bool):
                    return _decimal.Decimal(value)
                if isinstance(value, float):
                    return _decimal.Decimal(str(value))
                raise DataException(f"Invalid type for Decimal: {type(value).__name__}")

            return decode_decimal
        convert = to_logical_of(schema)  # Date, Time or Timestamp: integers
        assert convert is not None
        checked = _checked(int, "an integer")
        return lambda v: convert(checked(v))


_Made = tuple[SchemaBuilder, Convert]
"""What a JSON Schema type's translator makes: the builder of the Connect schema (named and
finished afterwards) and the value decoder."""

_TO_CONNECT: dict[str, Callable[[JsonSchemaData, Mapping[str, Any], _Refs], _Made]] = {
    "integer": JsonSchemaData._integer_to_connect,
    "number": JsonSchemaData._number_to_connect,
    "boolean": JsonSchemaData._boolean_to_connect,
    "string": JsonSchemaData._string_to_connect,
    "array": JsonSchemaData._array_to_connect,
    "object": JsonSchemaData._map_to_connect,
}
"""JSON Schema → Connect: the translator of each ``type`` (unions, enums and structs are
read before it is asked)."""


def _enum_to_connect(node: Mapping[str, Any]) -> _Made:
    """An ``enum`` (or ``const``): a string with its symbols as parameters (null as
    ``<NULL>``)."""
    symbols = node.get("enum", [node.get("const")])
    builder = SchemaBuilder.string().parameter(JSON_TYPE_ENUM, "")
    for symbol in symbols:
        text = "<NULL>" if symbol is None else str(symbol)
        builder.parameter(f"{JSON_TYPE_ENUM}.{text}", text)
    return builder, _checked(str, "a string")


class _Refs:
    """Local ``$ref``s of a schema document, and where properties say their index."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.exact_decimals = False

    def resolve(self, node: Any) -> Any:
        seen = 0
        while isinstance(node, Mapping) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#"):
                raise DataException(f"Only local $refs are supported here, not {ref!r}")
            target = self.root
            for part in [p for p in ref[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, Mapping) or part not in target:
                    raise DataException(f"The $ref {ref} points nowhere")
                target = target[part]
            node = target
            seen += 1
            if seen > 32:
                raise DataException(f"The $ref {ref} is recursive, which is not supported here")
        return node

    def index_of(self, node: Any, position: int) -> tuple[int, int]:
        if isinstance(node, Mapping) and isinstance(node.get(CONNECT_INDEX_PROP), int):
            return node[CONNECT_INDEX_PROP], position
        return position, position


def _is_null(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null"


def _is_one_of(schema: Schema) -> bool:
    return schema.type is Type.STRUCT and schema.name == JSON_TYPE_ONE_OF


def _indexed(node: dict[str, Any], index: int) -> dict[str, Any]:
    if "oneOf" in node:
        return {CONNECT_INDEX_PROP: index, **node}
    return {**node, CONNECT_INDEX_PROP: index}


def _enum_symbols(schema: Schema) -> list[Any] | None:
    params = schema.parameters or {}
    if JSON_TYPE_ENUM not in params:
        return None
    prefix = JSON_TYPE_ENUM + "."
    return [
        None if k == prefix + "<NULL>" else k[len(prefix) :] for k in params if k.startswith(prefix)
    ]


def _logical_builder(title: str, node: Mapping[str, Any]) -> SchemaBuilder:
    if title == Decimal.LOGICAL_NAME:
        params = node.get(CONNECT_PARAMETERS_PROP) or {}
        builder = Decimal.builder(int(params.get(Decimal.SCALE_FIELD, 0)))
        return builder
    return {
        Date.LOGICAL_NAME: Date.builder,
        Time.LOGICAL_NAME: Time.builder,
        Timestamp.LOGICAL_NAME: Timestamp.builder,
    }[title]()


def _identity(value: Any) -> Any:
    return value


def _maybe_encode(encode: Convert, value: Any) -> Any:
    return None if value is None else encode(value)


def _float(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _base64(value: Any) -> str:
    return base64.b64encode(bytes(value)).decode()


def _from_base64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise DataException(
            f"Invalid bytes field: expected base64 text, got {type(value).__name__}"
        )
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise DataException(f"Invalid bytes field: {e}") from e


def _each(convert: Convert) -> Convert:
    if convert is _identity:
        return _identity
    return lambda values: [None if v is None else convert(v) for v in values]


def _struct_encoder(schema: Schema, fields: list[tuple[str, int, Convert, Any, bool]]) -> Convert:
    """A struct as a JSON object in field order: a null field takes its default, is written
    null when optional, and is left out when required (as Confluent's)."""

    def encode(struct: Struct) -> dict[str, Any]:
        if struct.schema is not schema and struct.schema != schema:
            raise DataException("Mismatching schema.")
        values = struct._values
        result: dict[str, Any] = {}
        for name, index, convert, default, optional in fields:
            value = values[index]
            if value is not None:
                result[name] = convert(value)
            elif default is not None:
                result[name] = default
            elif optional:
                result[name] = None
        return result

    return encode


def _checked(kind: type, expected: str) -> Convert:
    def check(value: Any) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise DataException(f"Expected {expected}, got {type(value).__name__} {value!r}")
        return value

    return check


def _to_float(value: Any) -> float:
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if isinstance(value, bool) or not isinstance(value, (int, float, _decimal.Decimal)):
        raise DataException(f"Expected a number, got {type(value).__name__} {value!r}")
    return float(value)


def _list_decoder(decode: Convert) -> Convert:
    def convert(values: Any) -> list[Any]:
        if not isinstance(values, list):
            raise DataException(f"Expected a JSON array, got {type(values).__name__}")
        return [None if v is None else decode(v) for v in values]

    return convert


def _dict_decoder(decode: Convert) -> Convert:
    def convert(values: Any) -> dict[str, Any]:
        if not isinstance(values, dict):
            raise DataException(
                "Maps with string fields should be encoded as JSON objects, but found "
                + type(values).__name__
            )
        return {k: None if v is None else decode(v) for k, v in values.items()}

    return convert


def _entries_decoder(key: Convert, value: Convert) -> Convert:
    def convert(entries: Any) -> dict[Any, Any]:
        if not isinstance(entries, list):
            raise DataException(f"Expected an array of map entries, got {type(entries).__name__}")
        result = {}
        for entry in entries:
            if not isinstance(entry, dict):
                raise DataException("A map entry must be a JSON object with key and value")
            k, v = entry.get(KEY_FIELD), entry.get(VALUE_FIELD)
            result[None if k is None else key(k)] = None if v is None else value(v)
        return result

    return convert


def _struct_decoder(schema: Schema, fields: list[tuple[str, Convert, bool]]) -> Convert:
    def decode(node: Any) -> Struct:
        if not isinstance(node, dict):
            raise DataException(
                f"Structs should be encoded as JSON objects, but found {type(node).__name__}"
            )
        values = []
        for name, convert, _ in fields:
            value = node.get(name)
            values.append(None if value is None else convert(value))
        return Struct._trusted(schema, values)

    return decode


_JSON_KINDS: dict[Type, tuple[type, ...]] = {
    Type.INT8: (int,),
    Type.INT16: (int,),
    Type.INT32: (int,),
    Type.INT64: (int,),
    Type.FLOAT32: (int, float),
    Type.FLOAT64: (int, float),
    Type.BOOLEAN: (bool,),
    Type.STRING: (str,),
    Type.ARRAY: (list,),
    Type.MAP: (dict, list),
    Type.STRUCT: (dict,),
}


def _union_decoder(schema: Schema, members: list[tuple[str, Schema, Convert]]) -> Convert:
    """A value of a ``oneOf`` as its union struct: the first branch whose type takes it."""
    size = len(schema.fields or ())
    indexes = {f.name: f.index for f in schema.fields or ()}
    branches = [
        (indexes[name], name, member, _JSON_KINDS.get(member.type, ()), convert)
        for name, member, convert in members
    ]

    def decode(value: Any) -> Struct:
        for index, name, member, kinds, convert in branches:
            if isinstance(value, bool) and member.type is not Type.BOOLEAN:
                continue
            if isinstance(value, kinds):
                try:
                    converted = convert(value)
                except DataException:
                    continue
                validate_value(member, converted, name)  # as Struct.put checks it
                values: list[Any] = [None] * size
                values[index] = converted
                return Struct._trusted(schema, values)
        raise DataException("Did not find matching oneof field for data")

    return decode
