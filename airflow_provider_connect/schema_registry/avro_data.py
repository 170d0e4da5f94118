"""Connect schemas and values to Avro and back, as Confluent's ``AvroData`` maps them.

Connect → Avro (:meth:`AvroData.writer`):

* int8 and int16 are Avro ``int`` with ``"connect.type": "int8"``/``"int16"``; int32, int64,
  float32, float64, boolean, string and bytes are ``int``, ``long``, ``float``, ``double``,
  ``boolean``, ``string`` and ``bytes``;
* a struct is a record named after the schema (namespace and name split at the last dot),
  ``io.confluent.connect.avro.ConnectDefault`` (then ``ConnectDefault2``, …) when it has no
  name; a map with non-optional string keys is an Avro map, any other map an array of
  ``io.confluent.connect.avro.MapEntry`` records (``key``, ``value``);
* an optional schema is a union with null, null first unless it has a default (then the
  type first), and a field of it defaults to null;
* Decimal is ``bytes`` with ``logicalType`` ``decimal``, its ``scale`` and ``precision``
  (``connect.decimal.precision``, else 64); Date ``int``/``date``, Time
  ``int``/``time-millis``, Timestamp ``long``/``timestamp-millis``;
* with ``connect.meta.data`` (the default) every non-union type carries ``connect.doc``,
  ``connect.version``, ``connect.parameters``, ``connect.default`` and ``connect.name`` from
  its Connect schema, so that a Connect schema read back is the one written;
* ``io.confluent.connect.avro.Union`` structs become unions, strings with
  ``io.confluent.connect.avro.Enum`` parameters enums (with
  ``enhanced.avro.schema.support``), bytes with ``connect.fixed.size`` fixed types.

Avro → Connect (:meth:`AvroData.reader`), for what any producer wrote: the reverse of the
above, plus enums (strings, their symbols as parameters), fixed (bytes with
``connect.fixed.size``), unions of more than null and one type (an
``io.confluent.connect.avro.Union`` struct, a field per branch), field defaults and docs, and
the logical types Connect has (other logical types read as their underlying type).

Differences from Confluent's, each a case it supports and this does not: schemaless values
(Confluent's ``Anything`` record), recursive schemas, ``generalized.sum.type.support`` and
``discard.type.doc.default`` (refused in the converter's config). A union of ``int`` and
``long`` (or ``float`` and ``double``) puts a value read from it in the first branch that
holds it: Python has one int and one float type.

Schemas are converted once; a value is converted by functions compiled for its schema, which
hand fastavro (the encoder behind confluent-kafka's serializers) plain Python data.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_connect.connect.data.logical import (
    Date,
    Decimal,
    Time,
    Timestamp,
    from_logical_of,
    to_logical_of,
)
from airflow_provider_connect.connect.data.schema import Schema, SchemaBuilder, Type
from airflow_provider_connect.connect.data.struct import Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.schema_registry.avro_names import NAMED as _NAMED
from airflow_provider_connect.schema_registry.avro_names import PRIMITIVES as _PRIMITIVE_NAMES
from airflow_provider_connect.schema_registry.avro_names import AvroNames, full_name, kind_of

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME = f"{NAMESPACE}.{DEFAULT_SCHEMA_NAME}"
MAP_ENTRY_TYPE_NAME = "MapEntry"
KEY_FIELD = "key"
VALUE_FIELD = "value"
CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
CONNECT_TYPE_PROP = "connect.type"
AVRO_RECORD_DOC_PROP = f"{NAMESPACE}.record.doc"
AVRO_ENUM_DOC_PREFIX_PROP = f"{NAMESPACE}.enum.doc."
AVRO_FIELD_DOC_PREFIX_PROP = f"{NAMESPACE}.field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = f"{NAMESPACE}.field.default"
AVRO_ENUM_DEFAULT_PREFIX_PROP = f"{NAMESPACE}.enum.default."
AVRO_TYPE_UNION = f"{NAMESPACE}.Union"
AVRO_TYPE_ENUM = f"{NAMESPACE}.Enum"
AVRO_PROP = "avro"
LOGICAL_TYPE_PROP = "logicalType"
CONNECT_FIXED_SIZE_PROP = "connect.fixed.size"
CONNECT_DECIMAL_PRECISION_PROP = "connect.decimal.precision"
DECIMAL_PRECISION_DEFAULT = 64

_CONNECT_TYPES_BY_CODE = {"int8": Type.INT8, "int16": Type.INT16}
_AVRO_PRIMITIVES = {
    Type.INT8: "int",
    Type.INT16: "int",
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}
_LOGICAL_BY_NAME = {
    Time.LOGICAL_NAME: "time-millis",
    Timestamp.LOGICAL_NAME: "timestamp-millis",
    Date.LOGICAL_NAME: "date",
}
_VALID_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Encode = Callable[[Any], Any]
"""A compiled conversion of a non-null Connect value to the data fastavro writes."""
Decode = Callable[[Any], Any]
"""A compiled conversion of non-null data fastavro read to a Connect value."""
_Made = tuple[dict[str, Any], Encode | None]
"""What a Connect type's translator makes: the Avro node (annotated afterwards) and the
value encoder."""


@dataclass(frozen=True)
class AvroDataConfig:
    """The ``AvroDataConfig`` keys that change the mapping, with Confluent's defaults."""

    connect_meta_data: bool = True
    enhanced_schema_support: bool = False
    scrub_invalid_names: bool = False
    allow_optional_map_keys: bool = False
    flatten_singleton_unions: bool = True
    ignore_default_for_nullables: bool = False


@dataclass(frozen=True)
class AvroWriter:
    """A Connect schema as Avro: the schema to register and the value encoder (None when
    values pass unchanged)."""

    schema: Any
    """The Avro schema, as parsed JSON (a string for a primitive)."""
    encode: Encode | None
    record_name: str | None
    """The full name of a named top-level type (what the record name strategies use)."""


@dataclass(frozen=True)
class AvroReader:
    """An Avro schema as Connect: its Connect schema and the value decoder (None when values
    pass unchanged)."""

    schema: Schema
    decode: Decode | None
    named_unions: bool
    """Whether the schema has unions of two or more named types, whose values fastavro
    must tag with the branch's name (``return_named_type``)."""


def physical(avro: Any) -> Any:
    """``avro`` without its ``logicalType`` annotations: the schema fastavro is given, so
    that the values it reads and writes are the underlying ones, converted here exactly as
    Connect converts them (fastavro would round decimals to their precision, and read
    logical types Connect lacks, e.g. ``timestamp-micros``, as datetimes)."""
    if isinstance(avro, list):
        return [physical(branch) for branch in avro]
    if not isinstance(avro, dict):
        return avro
    result = {k: v for k, v in avro.items() if k != LOGICAL_TYPE_PROP}
    kind = avro.get("type")
    if isinstance(kind, (dict, list)):
        result["type"] = physical(kind)
    if kind == "record":
        result["fields"] = [{**f, "type": physical(f["type"])} for f in avro["fields"]]
    elif kind == "array":
        result["items"] = physical(avro["items"])
    elif kind == "map":
        result["values"] = physical(avro["values"])
    return result


def scrub_name(name: str) -> str:
    """``name`` made a valid Avro name, as Confluent's ``scrub.invalid.names`` does."""
    if not name or _VALID_NAME.match(name):
        return name
    encoded = urllib.parse.quote_plus(name)
    if encoded[0].isdigit():
        encoded = "x" + encoded
    return re.sub(r"[^A-Za-z0-9_]", "_", encoded)


def split_name(full_name: str, scrub: bool = False) -> tuple[str | None, str]:
    """``(namespace, name)`` of a dotted full name (namespace None without a dot)."""
    parts = full_name.split(".")
    if scrub:
        parts = [scrub_name(p) for p in parts]
    if len(parts) <= 1:
        return None, parts[0]
    return ".".join(parts[:-1]), parts[-1]


@dataclass
class _FromConnect:
    """The state of one Connect → Avro conversion: Avro nodes already made for non-optional
    Connect schemas (a type used twice is defined once), and the index of the next
    ``ConnectDefault`` name."""

    made: dict[Schema, tuple[Any, Encode | None]] = field(default_factory=dict)
    default_names: int = 0


@dataclass
class _Translation:
    """What an Avro kind's translator makes: the builder of the Connect schema (finished
    afterwards with what every kind carries), its decoder, the logical type's name when a
    logical type's builder made it, and a record's fields' decoders (its decoder is
    compiled from them once its schema is built)."""

    builder: SchemaBuilder
    decode: Decode | None = None
    logical_name: str | None = None
    fields: list[tuple[str, Decode | None]] | None = None


class AvroData:
    """Converts between Connect and Avro (see the module's docstring); one per converter."""

    def __init__(self, config: AvroDataConfig) -> None:
        self.config = config

    # -- Connect → Avro ----------------------------------------------------------------------
    def writer(self, schema: Schema) -> AvroWriter:
        """The Avro schema of the Connect ``schema`` and its value encoder."""
        node, encode = self._from_connect(schema, _FromConnect())
        rendered = _render(node, {}, None)
        named = _name_of(rendered)
        return AvroWriter(rendered, encode, named)

    def _from_connect(self, schema: Schema, ctx: _FromConnect) -> tuple[Any, Encode | None]:
        if not _is_union(schema) and not schema.optional:
            made = ctx.made.get(schema)
            if made is not None:
                return made
        result = self._from_connect_base(schema, ctx)
        if not schema.optional:
            ctx.made[schema] = result
        return result

    def _from_connect_base(self, schema: Schema, ctx: _FromConnect) -> tuple[Any, Encode | None]:
        """The Avro node of ``schema`` as its type's translator (``_FROM_CONNECT``) makes it,
        with the annotations every type carries, in a union with null when optional."""
        if schema.type is Type.STRUCT and (_is_union(schema) or schema.optional):
            return self._union_from_connect(schema, ctx)
        node, encode = _FROM_CONNECT[schema.type](self, schema, ctx)
        return self._annotated(schema, node), encode

    def _annotated(self, schema: Schema, node: dict[str, Any]) -> Any:
        """``node`` with the decimal's scale and precision, the ``connect.*`` properties
        (with ``connect.meta.data``), the logical type and the ``avro*`` parameters; a
        primitive without any as its name; in a union with null when optional."""
        if schema.name == Decimal.LOGICAL_NAME:
            params = schema.parameters or {}
            node["scale"] = int(params.get(Decimal.SCALE_FIELD, "0"))
            node["precision"] = int(
                params.get(CONNECT_DECIMAL_PRECISION_PROP, DECIMAL_PRECISION_DEFAULT)
            )
        if self.config.connect_meta_data:
            node |= self._connect_props(schema)
        logical = self._logical_type(schema)
        if logical is not None:
            node[LOGICAL_TYPE_PROP] = logical
        for key, value in (schema.parameters or {}).items():
            if key.startswith(AVRO_PROP):
                node[key] = value
        avro: Any = node["type"] if len(node) == 1 and node["type"] in _PRIMITIVE_NAMES else node
        if schema.optional:
            avro = ["null", avro] if schema.default_value is None else [avro, "null"]
        return avro

    def _primitive_from_connect(self, schema: Schema, ctx: _FromConnect) -> _Made:
        return {"type": _AVRO_PRIMITIVES[schema.type]}, from_logical_of(schema)

    def _string_from_connect(self, schema: Schema, ctx: _FromConnect) -> _Made:
        """A string, or an enum for a string with enum symbols under
        ``enhanced.avro.schema.support``."""
        if _is_enum(schema) and self.config.enhanced_schema_support:
            return self._enum_from_connect(schema, ctx), None
        return self._primitive_from_connect(schema, ctx)

    def _bytes_from_connect(self, schema: Schema, ctx: _FromConnect) -> _Made:
        """Bytes, or a ``fixed`` for named bytes with ``connect.fixed.size``."""
        if not _is_fixed(schema):
            return {"type": "bytes"}, _bytes_encoder(schema)
        namespace, name = self._name_or_default(ctx, schema.name)
        size = int((schema.parameters or {})[CONNECT_FIXED_SIZE_PROP])
        node = {"type": "fixed", "name": name, "namespace": namespace, "size": size}
        return node, fixed_encoder(schema, size)

    def _array_from_connect(self, schema: Schema, ctx: _FromConnect) -> _Made:
        assert schema.value_schema is not None
        items, item_encode = self._from_connect(schema.value_schema, ctx)
        encode = _per_item(item_encode) if item_encode is not None else None
        return {"type": "array", "items": items}, encode

    def _record_from_connect(self, schema: Schema, ctx: _FromConnect) -> _Made:
        """A required, non-union struct: a record (its doc and its fields' docs from the
        struct's parameters), with the encoder that fills in the fields' defaults."""
        config = self.config
        namespace, name = self._name_or_default(ctx, schema.name)
        params = schema.parameters or {}
        node: dict[str, Any] = {"type": "record", "name": name, "namespace": namespace}
        doc = params.get(AVRO_RECORD_DOC_PROP)
        if doc is not None:
            node["doc"] = doc
        fields = []
        encoders: list[tuple[str, int, Encode | None, Any]] = []
        assert schema.fields is not None  # a struct has fields
        for f in schema.fields:
            field_name = scrub_name(f.name) if config.scrub_invalid_names else f.name
            field_node, field_encode = self._from_connect(f.schema, ctx)
            field_doc = params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name)
            fields.append(self._avro_field(field_name, f.schema, field_node, field_doc))
            default = field_default(f.schema, config.ignore_default_for_nullables)
            encoders.append((field_name, f.index, field_encode, default))
        node["fields"] = fields
        return node, _struct_encoder(schema, encoders)

    def _connect_props(self, schema: Schema) -> dict[str, Any]:
        props: dict[str, Any] = {}
        if schema.doc is not None:
            props[CONNECT_DOC_PROP] = schema.doc
        if schema.version is not None:
            props[CONNECT_VERSION_PROP] = schema.version
        params = {
            k: v for k, v in (schema.parameters or {}).items() if k != AVRO_FIELD_DEFAULT_FLAG_PROP
        }
        if params:
            props[CONNECT_PARAMETERS_PROP] = params
        if schema.default_value is not None and AVRO_FIELD_DEFAULT_FLAG_PROP not in (
            schema.parameters or {}
        ):
            props[CONNECT_DEFAULT_VALUE_PROP] = self._default_json(schema, schema.default_value)
        if schema.name is not None:
            props[CONNECT_NAME_PROP] = schema.name
        if schema.type in (Type.INT8, Type.INT16):
            props[CONNECT_TYPE_PROP] = schema.type.value
        return props

    @staticmethod
    def _logical_type(schema: Schema) -> str | None:
        if schema.name == Decimal.LOGICAL_NAME:
            return "decimal"
        return _LOGICAL_BY_NAME.get(schema.name or "")

    def _name_or_default(self, ctx: _FromConnect, name: str | None) -> tuple[str | None, str]:
        if name is not None:
            return split_name(name, self.config.scrub_invalid_names)
        ctx.default_names += 1
        suffix = str(ctx.default_names) if ctx.default_names > 1 else ""
        return NAMESPACE, DEFAULT_SCHEMA_NAME + suffix

    def _union_from_connect(self, schema: Schema, ctx: _FromConnect) -> tuple[Any, Encode | None]:
        """An optional struct (a union of null and its record), or a Connect union struct
        (a union of its fields' types), with the encoder that picks the branch."""
        if not _is_union(schema):
            inner, encode = self._from_connect(_non_optional(schema), ctx)
            return ["null", inner], encode
        branches: list[Any] = ["null"] if schema.optional else []
        choices: list[tuple[int, Encode | None, str]] = []
        assert schema.fields is not None
        for f in schema.fields:
            node, encode = self._from_connect(_non_optional(f.schema), ctx)
            branches.append(node)
            choices.append((f.index, encode, _name_of(node) or kind_of(node)))
        return branches, _union_encoder(choices)

    def _map_from_connect(self, schema: Schema, ctx: _FromConnect) -> _Made:
        """An Avro map for required (or, with ``allow.optional.map.keys``, optional) string
        keys, else an array of ``MapEntry`` records."""
        assert schema.key_schema is not None and schema.value_schema is not None
        key_schema = schema.key_schema
        if key_schema.type is Type.STRING and (
            not key_schema.optional or self.config.allow_optional_map_keys
        ):
            values, value_encode = self._from_connect(schema.value_schema, ctx)
            encode = _per_value(value_encode) if value_encode else None
            return {"type": "map", "values": values}, encode
        entry: dict[str, Any]
        if schema.name is None:
            entry = {"type": "record", "name": MAP_ENTRY_TYPE_NAME, "namespace": NAMESPACE}
        else:
            namespace, name = self._name_or_default(ctx, schema.name)
            entry = {"type": "record", "name": name, "namespace": namespace}
        key_node, key_encode = self._from_connect(key_schema, ctx)
        value_node, value_encode = self._from_connect(schema.value_schema, ctx)
        entry["fields"] = [
            self._avro_field(KEY_FIELD, key_schema, key_node),
            self._avro_field(VALUE_FIELD, schema.value_schema, value_node),
        ]
        if schema.name is not None:
            entry[CONNECT_INTERNAL_TYPE_NAME] = MAP_ENTRY_TYPE_NAME
        return {"type": "array", "items": entry}, _entries_encoder(key_encode, value_encode)

    def _avro_field(
        self, name: str, schema: Schema, node: Any, doc: str | None = None
    ) -> dict[str, Any]:
        """A record's field of ``schema`` (its Avro ``node``): its doc, and its default
        (null for an optional field without one)."""
        result: dict[str, Any] = {"name": name, "type": node}
        if doc is not None:
            result["doc"] = doc
        if schema.default_value is not None:
            result["default"] = self._default_json(schema, schema.default_value)
        elif schema.optional:
            result["default"] = None
        return result

    def _enum_from_connect(self, schema: Schema, ctx: _FromConnect) -> dict[str, Any]:
        params = schema.parameters or {}
        prefix = AVRO_TYPE_ENUM + "."
        symbols = [k[len(prefix) :] for k in params if k.startswith(prefix)]
        _, name = self._name_or_default(ctx, schema.name)
        enum_namespace, enum_name = split_name(params[AVRO_TYPE_ENUM])
        node: dict[str, Any] = {"type": "enum", "name": enum_name, "namespace": enum_namespace}
        doc = params.get(AVRO_ENUM_DOC_PREFIX_PROP + name)
        if doc is not None:
            node["doc"] = doc
        node["symbols"] = symbols
        default = params.get(AVRO_ENUM_DEFAULT_PREFIX_PROP + name)
        if default is not None:
            node["default"] = default
        return node

    def _default_json(self, schema: Schema, value: Any) -> Any:
        """A Connect default as the JSON of an Avro default (Confluent's
        ``defaultValueFromConnect``)."""
        if value is None:
            return None
        to_base = from_logical_of(schema)
        if to_base is not None:
            value = to_base(value)
        t = schema.type
        if t is Type.BYTES:
            return bytes(value).decode("latin-1")
        if t in (Type.FLOAT32, Type.FLOAT64):
            return float(value)
        if t is Type.ARRAY:
            assert schema.value_schema is not None
            return [self._default_json(schema.value_schema, v) for v in value]
        if t is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            if schema.key_schema.type is Type.STRING and (
                not schema.key_schema.optional or self.config.allow_optional_map_keys
            ):
                return {k: self._default_json(schema.value_schema, v) for k, v in value.items()}
            return [
                [
                    self._default_json(schema.key_schema, k),
                    self._default_json(schema.value_schema, v),
                ]
                for k, v in value.items()
            ]
        if t is Type.STRUCT:
            assert schema.fields is not None
            if _is_union(schema):
                return next(
                    (
                        self._default_json(f.schema, value.get(f))
                        for f in schema.fields
                        if value.get(f) is not None
                    ),
                    None,
                )
            return {
                (scrub_name(f.name) if self.config.scrub_invalid_names else f.name): (
                    self._default_json(f.schema, value.get(f))
                )
                for f in schema.fields
            }
        return value

    # -- Avro → Connect ----------------------------------------------------------------------
    def reader(
        self,
        avro: Any,
        version: int | None = None,
        references: list[Any] | None = None,
        *,
        resolving: bool = False,
    ) -> AvroReader:
        """The Connect schema of the Avro schema ``avro`` (parsed JSON) and its value
        decoder; ``references`` are the schemas whose named types it uses by name;
        ``version`` is the registry's version of the schema, given to the Connect schema
        unless ``connect.version`` says otherwise; ``resolving``: the values are read with
        ``avro`` as the reader schema of data written with another. Raises DataException
        for what Connect cannot represent."""
        ctx = _ToConnect(*(references or ()), avro, resolving=resolving)
        schema, decode = self._to_connect(avro, ctx, None, False, _NO_DEFAULT, version)
        return AvroReader(schema, decode, ctx.named_unions)

    def _to_connect(
        self,
        avro: Any,
        ctx: _ToConnect,
        namespace: str | None,
        force_optional: bool,
        field_default: Any,
        version: int | None = None,
    ) -> tuple[Schema, Decode | None]:
        """The Connect schema of the Avro node ``avro`` met in ``namespace``, as its kind's
        translator (``_TO_CONNECT``) builds it, with what every kind carries: docs, version,
        parameters, name, optionality and the default (``field_default``: the enclosing
        field's, else ``_NO_DEFAULT``); and the decoder of its values."""
        node = ctx.resolve(avro, namespace)
        if isinstance(node, list):
            return self._union_to_connect(node, ctx, namespace, force_optional)
        kind = node["type"]
        if kind in _NAMED:
            namespace = full_name(node, namespace).rpartition(".")[0] or None
            if ctx.entering(node):
                raise DataException(
                    f"The Avro schema {full_name(node, namespace)} is recursive, which "
                    "Connect schemas cannot represent"
                )
        made = _TO_CONNECT[kind](self, node, ctx, namespace)  # resolved: a kind it has
        builder = made.builder
        self._read_doc_and_version(builder, node, made.logical_name, version)
        self._read_parameters(builder, node)
        default = self._default_of(builder, node, field_default)
        self._read_name(builder, node, namespace, made.logical_name)
        if force_optional:
            builder.optional()
        if default is not _NO_DEFAULT and default is not None:
            try:
                value = _JsonDefaults(self, ctx, namespace).read(builder.build(), node, default)
                builder.default_value(value)
            except (DataException, TypeError, ValueError, KeyError):
                pass  # as Confluent's: an invalid default is ignored
        schema = builder.build()
        if made.fields is not None:
            ctx.leaving(node)
            return schema, _struct_decoder(schema, made.fields, by_name=ctx.resolving)
        return schema, made.decode or to_logical_of(schema)

    def _read_doc_and_version(
        self,
        builder: SchemaBuilder,
        node: dict[str, Any],
        logical_name: str | None,
        version: int | None,
    ) -> None:
        """``connect.doc`` (with ``connect.meta.data``), and ``connect.version`` (else the
        registry's ``version``), which a logical type's schema must have as 1."""
        doc = node.get(CONNECT_DOC_PROP)
        if self.config.connect_meta_data and doc is not None:
            builder.doc(doc)
        connect_version = node.get(CONNECT_VERSION_PROP)
        if connect_version is not None:
            if not isinstance(connect_version, int):
                raise DataException(f"Invalid Connect version found: {connect_version}")
            version = connect_version
        if version is None or version < 0:
            return
        if logical_name is None:
            builder.version(version)
        elif version != 1:  # the logical types' builders set version 1
            raise DataException(
                "Mismatched versions: version already added to SchemaBuilder (1) differs "
                f"from version in source schema ({version})"
            )

    def _read_parameters(self, builder: SchemaBuilder, node: dict[str, Any]) -> None:
        """``connect.parameters`` (with ``connect.meta.data``), then the ``avro*``
        properties (their JSON when not strings)."""
        parameters = node.get(CONNECT_PARAMETERS_PROP)
        if self.config.connect_meta_data and parameters is not None:
            if not isinstance(parameters, Mapping):
                raise DataException(
                    f"Expected JSON object for schema parameters but found: {parameters}"
                )
            for key, value in parameters.items():
                if not isinstance(value, str):
                    raise DataException(
                        f"Expected schema parameter values to be strings but found: {value}"
                    )
                builder.parameter(key, value)
        for key, value in node.items():
            if key.startswith(AVRO_PROP):
                builder.parameter(key, value if isinstance(value, str) else json.dumps(value))

    def _default_of(self, builder: SchemaBuilder, node: dict[str, Any], field_default: Any) -> Any:
        """The default of the schema: its field's, else its ``connect.default``; a field's
        default where Connect's had none is flagged (``…avro.field.default``, with
        ``connect.meta.data``) so that it is not written back as ``connect.default``."""
        connect_default = node.get(CONNECT_DEFAULT_VALUE_PROP, _NO_DEFAULT)
        if field_default is _NO_DEFAULT:
            return connect_default
        if self.config.connect_meta_data and connect_default is _NO_DEFAULT:
            builder.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true")
        return field_default

    @staticmethod
    def _read_name(
        builder: SchemaBuilder,
        node: dict[str, Any],
        namespace: str | None,
        logical_name: str | None,
    ) -> None:
        """``connect.name``, else a named type's full name (not a decimal ``fixed``'s), unless
        it is a ``ConnectDefault`` one; a logical type's schema must keep its own."""
        name = node.get(CONNECT_NAME_PROP)
        if name is not None and not isinstance(name, str):
            raise DataException(f"Invalid schema name: {name}")
        kind = node["type"]
        if name is None and (
            kind in ("record", "enum") or (kind == "fixed" and logical_name is None)
        ):
            name = full_name(node, namespace)
        if name is None or name.startswith(DEFAULT_SCHEMA_FULL_NAME):
            return
        if logical_name is None:
            builder.name(name)
        elif name != logical_name:
            raise DataException(
                f"Mismatched names: name already added to SchemaBuilder ({logical_name}) "
                f"differs from name in source schema ({name})"
            )

    def _bytes_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        """Bytes or ``fixed`` (its size as ``connect.fixed.size``), a Decimal when its
        ``logicalType`` is ``decimal``."""
        if node.get(LOGICAL_TYPE_PROP) == "decimal":
            made = _Translation(_decimal_builder(node), logical_name=Decimal.LOGICAL_NAME)
        else:
            made = _Translation(SchemaBuilder.bytes())
        if node["type"] == "fixed":
            made.builder.parameter(CONNECT_FIXED_SIZE_PROP, str(node["size"]))
        return made

    def _int_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        """Date, Time, int8 or int16 (``connect.type``, with no ``logicalType``), else
        int32."""
        logical = node.get(LOGICAL_TYPE_PROP)
        connect_type = node.get(CONNECT_TYPE_PROP)
        if logical == "date":
            return _Translation(Date.builder(), logical_name=Date.LOGICAL_NAME)
        if logical == "time-millis":
            return _Translation(Time.builder(), logical_name=Time.LOGICAL_NAME)
        if connect_type is None or logical is not None:
            return _Translation(SchemaBuilder.int32())
        if connect_type in _CONNECT_TYPES_BY_CODE:
            return _Translation(SchemaBuilder(_CONNECT_TYPES_BY_CODE[connect_type]))
        raise DataException("Connect type annotation for Avro int field is null")

    def _long_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        if node.get(LOGICAL_TYPE_PROP) == "timestamp-millis":
            return _Translation(Timestamp.builder(), logical_name=Timestamp.LOGICAL_NAME)
        return _Translation(SchemaBuilder.int64())

    def _array_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        """An array, or a map when its items are ``MapEntry`` records."""
        items = ctx.resolve(node["items"], namespace)
        if _is_map_entry(items, ctx, namespace):
            return self._entries_to_connect(items, ctx, namespace)
        element, element_decode = self._to_connect(
            node["items"], ctx, namespace, False, _NO_DEFAULT
        )
        decode = _per_item(element_decode) if element_decode else None
        return _Translation(SchemaBuilder.array(element), decode)

    def _entries_to_connect(
        self, items: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        """A map written as an array of ``MapEntry`` records (``key`` and ``value``)."""
        fields = {f["name"]: f for f in items["fields"]}
        if len(fields) != 2 or KEY_FIELD not in fields or VALUE_FIELD not in fields:
            raise DataException(
                "Found map encoded as array of key-value pairs, but array elements do "
                "not match the expected format."
            )
        entry_ns = full_name(items, namespace).rpartition(".")[0] or None
        key, key_decode = self._to_connect(
            fields[KEY_FIELD]["type"], ctx, entry_ns, False, _NO_DEFAULT
        )
        value, value_decode = self._to_connect(
            fields[VALUE_FIELD]["type"], ctx, entry_ns, False, _NO_DEFAULT
        )
        return _Translation(
            SchemaBuilder.map(key, value), _entries_decoder(key_decode, value_decode)
        )

    def _map_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        value, value_decode = self._to_connect(node["values"], ctx, namespace, False, _NO_DEFAULT)
        decode = _per_value(value_decode) if value_decode else None
        return _Translation(SchemaBuilder.map(Schema.STRING_SCHEMA, value), decode)

    def _record_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        """A struct, its doc and its fields' docs as parameters (with
        ``connect.meta.data``), each field's default and field-level
        ``connect.parameters`` read."""
        meta = self.config.connect_meta_data
        builder = SchemaBuilder.struct()
        if meta and node.get("doc") is not None:
            builder.parameter(AVRO_RECORD_DOC_PROP, node["doc"])
        decoders: list[tuple[str, Decode | None]] = []
        for f in node["fields"]:
            if meta and f.get("doc") is not None:
                builder.parameter(AVRO_FIELD_DOC_PREFIX_PROP + f["name"], f["doc"])
            field_schema, field_decode = self._to_connect(
                f["type"], ctx, namespace, False, f.get("default", _NO_DEFAULT)
            )
            if meta and isinstance(f.get(CONNECT_PARAMETERS_PROP), Mapping):
                field_schema = _with_parameters(field_schema, f[CONNECT_PARAMETERS_PROP])
            builder.field(f["name"], field_schema)
            decoders.append((f["name"], field_decode))
        return _Translation(builder, fields=decoders)

    def _enum_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        """A string with the enum's full name and symbols (and, with
        ``connect.meta.data``, its doc and default) as parameters."""
        meta = self.config.connect_meta_data
        builder = SchemaBuilder.string()
        short = node["name"].rpartition(".")[2]
        if meta and node.get("doc") is not None:
            builder.parameter(AVRO_ENUM_DOC_PREFIX_PROP + short, node["doc"])
        if meta and node.get("default") is not None:
            builder.parameter(AVRO_ENUM_DEFAULT_PREFIX_PROP + short, node["default"])
        builder.parameter(AVRO_TYPE_ENUM, full_name(node, namespace))
        for symbol in node["symbols"]:
            builder.parameter(f"{AVRO_TYPE_ENUM}.{symbol}", symbol)
        return _Translation(builder)

    def _null_to_connect(
        self, node: dict[str, Any], ctx: _ToConnect, namespace: str | None
    ) -> _Translation:
        raise DataException("Standalone null schemas are not supported by this converter")

    def _union_to_connect(
        self, branches: list[Any], ctx: _ToConnect, namespace: str | None, force_optional: bool
    ) -> tuple[Schema, Decode | None]:
        resolved = [ctx.resolve(b, namespace) for b in branches]
        if len(branches) == 1 and self.config.flatten_singleton_unions:
            return self._to_connect(branches[0], ctx, namespace, force_optional, _NO_DEFAULT)
        nulls = [b for b in resolved if kind_of(b) == "null"]
        if len(branches) == 2 and nulls:
            member = next(
                b for b, r in zip(branches, resolved, strict=True) if kind_of(r) != "null"
            )
            return self._to_connect(member, ctx, namespace, True, _NO_DEFAULT)
        builder = SchemaBuilder.struct().name(AVRO_TYPE_UNION)
        members: list[tuple[str, str, Any, Decode | None]] = []
        seen: set[str] = set()
        for branch, node in zip(branches, resolved, strict=True):
            kind = kind_of(node)
            if kind == "null":
                builder.optional()
                continue
            field_name = self._member_name(node, namespace)
            if field_name in seen:
                raise DataException("Multiple union schemas map to the Connect union field name")
            seen.add(field_name)
            member_schema, member_decode = self._to_connect(
                branch, ctx, namespace, True, _NO_DEFAULT
            )
            builder.field(field_name, member_schema)
            tag = full_name(node, namespace) if kind in _NAMED else kind
            members.append((field_name, tag, node, member_decode))
        if force_optional and not nulls:
            builder.optional()
        schema = builder.build()
        return schema, _union_decoder(schema, members)

    def _member_name(self, node: Any, namespace: str | None) -> str:
        kind = kind_of(node)
        if kind in _NAMED:
            full = full_name(node, namespace)
            return full if self.config.enhanced_schema_support else full.rpartition(".")[2]
        return str(kind)


_Translate = Callable[[AvroData, dict[str, Any], "_ToConnect", "str | None"], _Translation]


def _plain(make: Callable[[], SchemaBuilder]) -> _Translate:
    """The translator of an Avro type that is one Connect type, whatever its properties."""
    return lambda data, node, ctx, namespace: _Translation(make())


_FROM_CONNECT: dict[Type, Callable[[AvroData, Schema, _FromConnect], _Made]] = {
    **dict.fromkeys(_AVRO_PRIMITIVES, AvroData._primitive_from_connect),
    Type.STRING: AvroData._string_from_connect,
    Type.BYTES: AvroData._bytes_from_connect,
    Type.ARRAY: AvroData._array_from_connect,
    Type.MAP: AvroData._map_from_connect,
    Type.STRUCT: AvroData._record_from_connect,
}
"""Connect → Avro: the translator of each Connect type (a union or an optional struct is
``_union_from_connect``'s)."""

_TO_CONNECT: dict[str, _Translate] = {
    "null": AvroData._null_to_connect,
    "boolean": _plain(SchemaBuilder.bool),
    "int": AvroData._int_to_connect,
    "long": AvroData._long_to_connect,
    "float": _plain(SchemaBuilder.float32),
    "double": _plain(SchemaBuilder.float64),
    "bytes": AvroData._bytes_to_connect,
    "fixed": AvroData._bytes_to_connect,
    "string": _plain(SchemaBuilder.string),
    "enum": AvroData._enum_to_connect,
    "array": AvroData._array_to_connect,
    "map": AvroData._map_to_connect,
    "record": AvroData._record_to_connect,
}
"""Avro → Connect: the translator of each kind of node ``_ToConnect.resolve`` gives (a union
is ``_union_to_connect``'s)."""


_NO_DEFAULT: Any = object()


class _ToConnect(AvroNames):
    """An Avro schema being converted to Connect: its named types (fastavro's
    ``parse_schema`` has checked the schema), the records being converted (to detect
    recursion), and whether its values are read through a reader schema (``resolving``:
    a record's fields then come in the writer's order, the ones the writer lacks last, so
    structs are filled by field name)."""

    def __init__(self, *schemas: Any, resolving: bool = False) -> None:
        super().__init__(*schemas)
        self.open: set[int] = set()
        self.resolving = resolving

    def resolve(self, node: Any, namespace: str | None) -> Any:
        try:
            return super().resolve(node, namespace)
        except KeyError:
            raise DataException(f"Unknown Avro type {node}") from None

    def entering(self, node: dict[str, Any]) -> bool:
        """Marks a record open; True when it already was (a recursive schema)."""
        if node.get("type") != "record":
            return False
        key = id(node)
        if key in self.open:
            return True
        self.open.add(key)
        return False

    def leaving(self, node: dict[str, Any]) -> None:
        self.open.discard(id(node))


def _decimal_builder(node: dict[str, Any]) -> SchemaBuilder:
    """The Decimal of an Avro ``decimal``: its scale (0 unless an integer), its precision
    as ``connect.decimal.precision`` unless the default."""
    scale = node.get("scale", 0)
    builder = Decimal.builder(int(scale) if isinstance(scale, int) else 0)
    precision = node.get("precision")
    if precision is not None:
        if not isinstance(precision, int):
            raise DataException(
                "precision property must be a JSON Integer. "
                "https://avro.apache.org/docs/1.9.1/spec.html#Decimal"
            )
        if precision != DECIMAL_PRECISION_DEFAULT:
            builder.parameter(CONNECT_DECIMAL_PRECISION_PROP, str(precision))
    return builder


class _JsonDefaults:
    """Reads the JSON defaults of an Avro schema met in ``namespace`` as Connect values
    (Confluent's ``defaultValueFromAvro``): a union's is its first branch's, a scalar's
    converted by ``_SCALAR_DEFAULTS`` (then to its logical type), an array's, a map's and a
    record's by their own readers (``_CONTAINER_DEFAULTS``)."""

    def __init__(self, data: AvroData, ctx: _ToConnect, namespace: str | None) -> None:
        self.data = data
        self.ctx = ctx
        self.namespace = namespace

    def read(self, schema: Schema, node: Any, value: Any) -> Any:
        """The default ``value`` of the Avro ``node`` as a value of ``schema``."""
        if value is None:
            return None
        node = self.ctx.resolve(node, self.namespace)
        if isinstance(node, list):
            return self._union(schema, node, value)
        kind = node["type"]
        convert = _SCALAR_DEFAULTS.get(kind)
        if convert is not None:
            raw = convert(value)
            decode = to_logical_of(schema)
            return decode(raw) if decode else raw
        read = _CONTAINER_DEFAULTS.get(kind)
        return None if read is None else read(self, schema, node, value)

    def _union(self, schema: Schema, branches: list[Any], value: Any) -> Any:
        """Of the first branch: null, a Connect union struct's member, or the value of the
        branch's type."""
        first = self.ctx.resolve(branches[0], self.namespace)
        if kind_of(first) == "null":
            return None
        if schema.name != AVRO_TYPE_UNION:
            return self.read(schema, first, value)
        member = self.data._member_name(first, self.namespace)
        inner = schema.field(member)
        assert inner is not None
        struct = Struct(schema)
        struct.put(member, self.read(inner.schema, first, value))
        return struct

    def _array(self, schema: Schema, node: dict[str, Any], value: Any) -> Any:
        """A list, or a map's ``[key, value]`` pairs when ``schema`` is a map."""
        assert schema.value_schema is not None
        items = self.ctx.resolve(node["items"], self.namespace)
        if schema.type is not Type.MAP:
            return [self.read(schema.value_schema, items, v) for v in value]
        assert schema.key_schema is not None
        fields = {f["name"]: f["type"] for f in items["fields"]}
        return {
            self.read(schema.key_schema, fields[KEY_FIELD], k): (
                self.read(schema.value_schema, fields[VALUE_FIELD], v)
            )
            for k, v in value
        }

    def _map(self, schema: Schema, node: dict[str, Any], value: Any) -> Any:
        assert schema.value_schema is not None
        return {k: self.read(schema.value_schema, node["values"], v) for k, v in value.items()}

    def _record(self, schema: Schema, node: dict[str, Any], value: Any) -> Any:
        struct = Struct(schema)
        for f in node["fields"]:
            connect_field = schema.field(f["name"])
            assert connect_field is not None
            struct.put(
                connect_field, self.read(connect_field.schema, f["type"], value.get(f["name"]))
            )
        return struct


def _bytes_default(value: Any) -> bytes:
    """Avro's JSON of bytes: a string of one character per byte (ISO-8859-1)."""
    return value.encode("latin-1") if isinstance(value, str) else bytes(value)


_SCALAR_DEFAULTS: dict[str, Callable[[Any], Any]] = {
    "bytes": _bytes_default,
    "fixed": _bytes_default,
    "float": float,
    "double": float,
    "int": int,
    "long": int,
    "boolean": bool,
    "string": str,
    "enum": str,
}
"""The JSON default of each scalar Avro kind as its Connect value (before its logical type)."""

_CONTAINER_DEFAULTS: dict[str, Callable[[_JsonDefaults, Schema, dict[str, Any], Any], Any]] = {
    "array": _JsonDefaults._array,
    "map": _JsonDefaults._map,
    "record": _JsonDefaults._record,
}
"""The JSON default of each container Avro kind as its Connect value (a null's is null)."""


def _is_map_entry(items: Any, ctx: _ToConnect, namespace: str | None) -> bool:
    if not isinstance(items, dict) or items.get("type") != "record":
        return False
    if full_name(items, namespace) == f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}":
        return True
    return bool(items.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME)


def _with_parameters(schema: Schema, params: Mapping[str, Any]) -> Schema:
    """``schema`` with field-level ``connect.parameters`` added (Confluent's
    ``applyFieldLevelParams``)."""
    current = schema.parameters or {}
    if all(current.get(str(k)) == str(v) for k, v in params.items()):
        return schema
    return schema.replace(parameters={**current, **{str(k): str(v) for k, v in params.items()}})


def _is_union(schema: Schema) -> bool:
    return schema.type is Type.STRUCT and schema.name == AVRO_TYPE_UNION


def _is_enum(schema: Schema) -> bool:
    return AVRO_TYPE_ENUM in (schema.parameters or {})


def _is_fixed(schema: Schema) -> bool:
    return schema.name is not None and CONNECT_FIXED_SIZE_PROP in (schema.parameters or {})


def _non_optional(schema: Schema) -> Schema:
    return schema.replace(optional=False) if schema.optional else schema


def _name_of(node: Any) -> str | None:
    """The full name of a named node (as given to fastavro's union tuples), else None."""
    if isinstance(node, dict) and node.get("type") in _NAMED:
        return full_name(node, None)
    if isinstance(node, str) and node not in _PRIMITIVE_NAMES:
        return node
    return None


def _render(node: Any, defined: dict[str, Any], namespace: str | None) -> Any:
    """``node`` as JSON: each named type defined where it first appears and referred to by
    its full name afterwards (as Avro writes a schema), namespaces written out. Two
    different types of one name raise DataException, as Avro's "Can't redefine", and so
    does a type named after a primitive without a namespace (a struct named ``null``),
    which Avro refuses and fastavro would take for the primitive."""
    if isinstance(node, list):
        return [_render(branch, defined, namespace) for branch in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in _NAMED:
        full = _name_of(node)
        assert full is not None
        if full in _PRIMITIVE_NAMES:
            raise DataException(f"Schemas may not be named after primitives: {full}")
        if full in defined:
            if defined[full] is not node and defined[full] != node:
                raise DataException(f"Can't redefine: {full} (two different types of one name)")
            if "." not in full and namespace:
                raise DataException(
                    f"The type {full} has no namespace and is used twice inside {namespace}: "
                    "Avro cannot refer to it there (its name would mean "
                    f"{namespace}.{full}); give the Connect schema a dotted name"
                )
            return full
        defined[full] = node
        result = {**node}
        if result.get("namespace") is None:
            if namespace:
                result["namespace"] = ""
            else:
                result.pop("namespace", None)
        inner = node.get("namespace") or None
        if kind == "record":
            result["fields"] = [
                {**f, "type": _render(f["type"], defined, inner)} for f in node["fields"]
            ]
        return result
    if kind == "array":
        return {**node, "items": _render(node["items"], defined, namespace)}
    if kind == "map":
        return {**node, "values": _render(node["values"], defined, namespace)}
    return node


# -- compiled value conversions -------------------------------------------------------------
def _bytes_encoder(schema: Schema) -> Encode | None:
    logical = from_logical_of(schema)
    if logical is not None:
        return logical
    return lambda v: v if type(v) is bytes else bytes(v)


def fixed_encoder(schema: Schema, size: int) -> Encode:
    """The bytes of a value of ``schema`` written as an Avro ``fixed`` of ``size`` (a
    Decimal sign-extended to it); DataException when they do not fit."""
    is_decimal = schema.name == Decimal.LOGICAL_NAME

    def encode(value: Any) -> bytes:
        data = Decimal.from_logical(schema, value) if is_decimal else bytes(value)
        if is_decimal and len(data) < size:
            fill = b"\xff" if data and data[0] & 0x80 else b"\x00"
            data = fill * (size - len(data)) + data
        if len(data) != size:
            raise DataException(f"Fixed size {size} does not fit a value of {len(data)} bytes")
        return data

    return encode


def _per_item(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """An array's conversion from its items' (either way: an encoder or a decoder), nulls
    kept."""
    return lambda values: [None if v is None else convert(v) for v in values]


def _per_value(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A map's conversion from its values' (either way: an encoder or a decoder), keys and
    nulls kept."""
    return lambda values: {k: None if v is None else convert(v) for k, v in values.items()}


def _entries_encoder(key: Encode | None, value: Encode | None) -> Encode:
    def encode(values: Mapping[Any, Any]) -> list[dict[str, Any]]:
        return [
            {
                KEY_FIELD: k if key is None or k is None else key(k),
                VALUE_FIELD: v if value is None or v is None else value(v),
            }
            for k, v in values.items()
        ]

    return encode


def _struct_encoder(schema: Schema, fields: list[tuple[str, int, Encode | None, Any]]) -> Encode:
    """A struct as the dict fastavro writes a record from; a null field takes its schema's
    default (as Connect's ``Struct.get``), unless ``ignore.default.for.nullables``."""
    names = [name for name, _, _, _ in fields]
    accepted = accepted_schemas(schema)
    if all(encode is None and default is None for _, _, encode, default in fields):

        def plain(struct: Struct) -> dict[str, Any]:
            if struct.schema not in accepted:
                raise DataException("Mismatching struct schema")
            return dict(zip(names, struct._values, strict=True))

        return plain

    def encode(struct: Struct) -> dict[str, Any]:
        if struct.schema not in accepted:
            raise DataException("Mismatching struct schema")
        values = struct._values
        record = {}
        for name, index, convert, default in fields:
            value = values[index]
            if value is None:
                value = default
            record[name] = value if convert is None or value is None else convert(value)
        return record

    return encode


def field_default(schema: Schema, ignore_default_for_nullables: bool) -> Any:
    """The value a struct's unset field of ``schema`` is written as: its default, except
    an optional field's under ``ignore.default.for.nullables`` (null then). A required
    field keeps its default there too, where Confluent's fails to serialize the null."""
    if ignore_default_for_nullables and schema.optional:
        return None
    return schema.default_value


def accepted_schemas(schema: Schema) -> frozenset[Schema]:
    """The schemas a struct written as ``schema`` may have: it, and its twin of the other
    optionality (a struct keeps the schema it was made with)."""
    return frozenset((schema, schema.replace(optional=not schema.optional)))


def _union_encoder(choices: list[tuple[int, Encode | None, str]]) -> Encode:
    """A Connect union struct as the value of its one set field, tagged with its branch's
    name or type (fastavro's tuple notation: an int written as a ``long`` branch stays
    one)."""

    def encode(struct: Struct) -> Any:
        values = struct._values
        for index, convert, name in choices:
            value = values[index]
            if value is not None:
                return (name, value if convert is None else convert(value))
        return None

    return encode


def _entries_decoder(key: Decode | None, value: Decode | None) -> Decode:
    def decode(entries: list[Mapping[str, Any]]) -> dict[Any, Any]:
        result = {}
        for entry in entries:
            k, v = entry[KEY_FIELD], entry[VALUE_FIELD]
            result[k if key is None or k is None else key(k)] = (
                v if value is None or v is None else value(v)
            )
        return result

    return decode


def _struct_decoder(
    schema: Schema, fields: list[tuple[str, Decode | None]], by_name: bool
) -> Decode:
    """A record fastavro read as a Struct of ``schema``. Its dict is in the writer's field
    order, which is the schema's unless a reader schema resolved it (``by_name``)."""
    if not by_name and all(decode is None for _, decode in fields):
        return lambda record: Struct._trusted(schema, list(record.values()))
    names = [name for name, _ in fields]
    decoders = [decode for _, decode in fields]

    def decode(record: Mapping[str, Any]) -> Struct:
        values = []
        for name, convert in zip(names, decoders, strict=True):
            value = record[name]
            values.append(value if convert is None or value is None else convert(value))
        return Struct._trusted(schema, values)

    return decode


_PY_KINDS: dict[type, tuple[str, ...]] = {
    bool: ("boolean",),
    int: ("int", "long"),
    float: ("double", "float"),
    str: ("string",),
    bytes: ("bytes",),
    list: ("array",),
    dict: ("map", "record"),
}


def _union_decoder(schema: Schema, members: list[tuple[str, str, Any, Decode | None]]) -> Decode:
    """A value fastavro read from a union as a Connect union struct: a tagged value
    (``return_named_type``) by its branch's name, else by its Python type."""
    size = len(schema.fields or ())
    indexes = {f.name: f.index for f in schema.fields or ()}
    by_tag = {tag: (indexes[name], convert) for name, tag, _, convert in members}
    kinds: dict[str, tuple[int, Decode | None]] = {}
    for name, tag, node, convert in members:
        member = indexes[name], convert
        kind = kind_of(node)
        if kind == "record":
            kinds.setdefault("record", member)
        elif kind == "enum":
            kinds.setdefault("string", member)
        elif kind == "fixed":
            kinds.setdefault("bytes", member)
        kinds.setdefault(tag, member)
    int32 = -(2**31), 2**31 - 1

    def decode(value: Any) -> Struct:
        if isinstance(value, tuple):
            member = by_tag.get(value[0])
            value = value[1]
        else:
            member = None
            for kind in _PY_KINDS.get(type(value), ()):
                if kind == "int" and not int32[0] <= value <= int32[1]:
                    continue
                member = kinds.get(kind)
                if member is not None:
                    break
        if member is None:
            raise DataException("Did not find matching union field for data")
        index, convert = member
        values: list[Any] = [None] * size
        values[index] = value if convert is None else convert(value)
        return Struct._trusted(schema, values)

    return decode
