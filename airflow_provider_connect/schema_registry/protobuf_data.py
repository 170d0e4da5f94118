"""Connect schemas and values to Protobuf and back, as Confluent's ``ProtobufData`` maps
them (its default configuration), with protobuf's runtime: schemas are
``FileDescriptorProto``s built here (no protoc), messages are made from them.

Connect → Protobuf (:meth:`ProtobufData.writer`): a struct is a proto3 message named after
the schema (package and name split at the last dot; ``ConnectDefault1``, ``ConnectDefault2``…
when unnamed), its fields numbered by their ``io.confluent.connect.protobuf.Tag`` parameter
or in order; nested structs, map entries (``repeated <Name>Entry {key = 1; value = 2;}``)
and enums (strings with ``io.confluent.connect.protobuf.Enum`` parameters) are defined in
the message that uses them; int8 and int16 are ``int32`` with the ``confluent.field_meta``
parameter ``connect.type``; ``io.confluent.connect.protobuf.Union`` structs are oneofs;
Decimal is ``confluent.type.Decimal``, Date ``google.type.Date``, Time
``google.type.TimeOfDay``, Timestamp ``google.protobuf.Timestamp``. Optional and required
Connect fields are written alike (proto3's implicit presence), unless
``optional.for.nullables`` makes optional ones proto3 ``optional``.

Protobuf → Connect (:meth:`ProtobufData.reader`), for any message: its oneofs first
(``<oneof>_<index>``, a struct named ``io.confluent.connect.protobuf.Union.<oneof>``), then
its fields, each optional and tagged with its number; ``sint32``, ``uint64`` and the like
keep their type in ``io.confluent.connect.protobuf.Type``; enums are strings; maps (real or
``…Entry`` pairs) are maps; the well-known types above are the logical types. An unset
scalar reads as its zero value (proto3 has no null), an unset message as null.

Differences from Confluent's: ``wrapper.for.nullables``, ``generalized.sum.type.support``
and ``int.for.enums`` are not supported; ``google.protobuf.*Value`` fields read as structs
with a ``value`` field (Confluent's default) and a top-level one as its primitive.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka.schema_registry.common.protobuf import _init_pool
from confluent_kafka.schema_registry.confluent import meta_pb2
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from airflow_provider_connect.connect.data.logical import Date, Decimal, Time, Timestamp
from airflow_provider_connect.connect.data.schema import Schema, SchemaBuilder, Type
from airflow_provider_connect.connect.data.struct import Struct
from airflow_provider_connect.connect.errors import DataException

NAMESPACE = "io.confluent.connect.protobuf"
TAG_PARAM = f"{NAMESPACE}.Tag"
TYPE_PARAM = f"{NAMESPACE}.Type"
ENUM_PARAM = f"{NAMESPACE}.Enum"
UNION_PREFIX = f"{NAMESPACE}.Union"
CONNECT_TYPE = "connect.type"
PRECISION_PARAM = "connect.decimal.precision"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
ENTRY_SUFFIX = "Entry"

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    Type.INT8: _F.TYPE_INT32,
    Type.INT16: _F.TYPE_INT32,
    Type.INT32: _F.TYPE_INT32,
    Type.INT64: _F.TYPE_INT64,
    Type.FLOAT32: _F.TYPE_FLOAT,
    Type.FLOAT64: _F.TYPE_DOUBLE,
    Type.BOOLEAN: _F.TYPE_BOOL,
    Type.STRING: _F.TYPE_STRING,
    Type.BYTES: _F.TYPE_BYTES,
}
_TYPES_BY_NAME = {
    name.lower().removeprefix("type_"): number
    for name, number in _F.Type.items()
    if name not in ("TYPE_GROUP", "TYPE_MESSAGE", "TYPE_ENUM")
}
_CONNECT_BY_PROTO = {
    FieldDescriptor.TYPE_INT32: Type.INT32,
    FieldDescriptor.TYPE_SINT32: Type.INT32,
    FieldDescriptor.TYPE_SFIXED32: Type.INT32,
    FieldDescriptor.TYPE_UINT32: Type.INT64,
    FieldDescriptor.TYPE_FIXED32: Type.INT64,
    FieldDescriptor.TYPE_INT64: Type.INT64,
    FieldDescriptor.TYPE_UINT64: Type.INT64,
    FieldDescriptor.TYPE_SINT64: Type.INT64,
    FieldDescriptor.TYPE_FIXED64: Type.INT64,
    FieldDescriptor.TYPE_SFIXED64: Type.INT64,
    FieldDescriptor.TYPE_FLOAT: Type.FLOAT32,
    FieldDescriptor.TYPE_DOUBLE: Type.FLOAT64,
    FieldDescriptor.TYPE_BOOL: Type.BOOLEAN,
    FieldDescriptor.TYPE_STRING: Type.STRING,
    FieldDescriptor.TYPE_BYTES: Type.BYTES,
}
PROTO_TYPE_NAMES: dict[int, str] = {int(number): name for name, number in _TYPES_BY_NAME.items()}
_LOGICAL_MESSAGES = {
    Decimal.LOGICAL_NAME: ("confluent.type.Decimal", "confluent/type/decimal.proto"),
    Date.LOGICAL_NAME: ("google.type.Date", "google/type/date.proto"),
    Time.LOGICAL_NAME: ("google.type.TimeOfDay", "google/type/timeofday.proto"),
    Timestamp.LOGICAL_NAME: ("google.protobuf.Timestamp", "google/protobuf/timestamp.proto"),
}
_WRAPPERS = {
    "google.protobuf.DoubleValue": Schema.FLOAT64_SCHEMA,
    "google.protobuf.FloatValue": Schema.FLOAT32_SCHEMA,
    "google.protobuf.Int64Value": Schema.INT64_SCHEMA,
    "google.protobuf.UInt64Value": Schema.INT64_SCHEMA,
    "google.protobuf.Int32Value": Schema.INT32_SCHEMA,
    "google.protobuf.UInt32Value": Schema.INT64_SCHEMA,
    "google.protobuf.BoolValue": Schema.BOOLEAN_SCHEMA,
    "google.protobuf.StringValue": Schema.STRING_SCHEMA,
    "google.protobuf.BytesValue": Schema.BYTES_SCHEMA,
}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_UINT64 = 2**64
_INT64_MAX = 2**63 - 1

Convert = Callable[[Any], Any]
FIELD_META = meta_pb2.field_meta  # type: ignore[attr-defined]  # generated: no stub declares it
"""The ``confluent.field_meta`` field option (extension 1088 of ``FieldOptions``)."""


@dataclass(frozen=True)
class ProtobufDataConfig:
    """The ``ProtobufDataConfig`` keys that change the mapping, with Confluent's defaults."""

    optional_for_nullables: bool = False
    enhanced_schema_support: bool = False
    scrub_invalid_names: bool = False
    ignore_default_for_nullables: bool = False
    wrapper_for_raw_primitives: bool = True
    generate_index_for_unions: bool = True


@dataclass(frozen=True)
class ProtobufWriter:
    file: descriptor_pb2.FileDescriptorProto
    """The schema to register (what Confluent's converter registers, as a descriptor)."""
    full_name: str
    encode: Callable[[Any], bytes]


@dataclass(frozen=True)
class ProtobufReader:
    schema: Schema
    decode: Callable[[bytes], Any]


def file_text(file: descriptor_pb2.FileDescriptorProto) -> str:
    """The registry's form of a descriptor: base64 of its deterministic serialization."""
    return base64.b64encode(file.SerializeToString(deterministic=True)).decode()


def new_pool() -> descriptor_pool.DescriptorPool:
    """A descriptor pool holding the well-known types and Confluent's own (meta, Decimal)."""
    pool = descriptor_pool.DescriptorPool()
    _init_pool(pool)
    return pool


def scrub(name: str) -> str:
    """Confluent's ``scrub.invalid.names`` of a Protobuf name."""
    import urllib.parse

    if (
        name
        and all(c.isalnum() or c == "_" for c in name)
        and not (name[0].isdigit() or name[0] == "_")
    ):
        return name
    encoded = urllib.parse.quote_plus(name, safe="*-._")
    if encoded[:1].isdigit() or encoded[:1] == "_":
        encoded = "x" + encoded
    return "".join(c if c.isalnum() or c == "_" else "_" for c in encoded)


@dataclass
class _Building:
    """The state of one Connect → Protobuf conversion."""

    file: descriptor_pb2.FileDescriptorProto
    names: int = 0
    imports: list[str] = field(default_factory=list)

    def default_name(self) -> str:
        self.names += 1
        return f"{DEFAULT_SCHEMA_NAME}{self.names}"

    def uses(self, path: str) -> None:
        if path not in self.imports:
            self.imports.append(path)


@dataclass(frozen=True)
class _Nest:
    """Where a field's type defines the nested messages and enums it needs: in ``message``,
    each name once (``defined``), in the file being built."""

    message: descriptor_pb2.DescriptorProto
    building: _Building
    defined: set[str]

    def first(self, name: str) -> bool:
        """Whether ``name`` is not defined yet (it is from now on)."""
        if name in self.defined:
            return False
        self.defined.add(name)
        return True


class ProtobufData:
    """Converts between Connect and Protobuf (see the module's docstring)."""

    def __init__(self, config: ProtobufDataConfig) -> None:
        self.config = config

    def _name(self, name: str) -> str:
        return scrub(name) if self.config.scrub_invalid_names else name

    # -- Connect → Protobuf ------------------------------------------------------------------
    def writer(self, schema: Schema) -> ProtobufWriter:
        """The message of the Connect struct ``schema`` and its value encoder."""
        if schema.type is not Type.STRUCT:
            raise DataException(
                f"The Protobuf converter writes structs; a {schema.type.value} value needs a "
                "struct around it"
            )
        building = _Building(descriptor_pb2.FileDescriptorProto(syntax="proto3"))
        full_name = schema.name or building.default_name()
        package, _, name = full_name.rpartition(".")
        if package:
            building.file.package = ".".join(self._name(p) for p in package.split("."))
        message = building.file.message_type.add(name=self._name(name))
        self._message(schema, message, building)
        building.file.dependency.extend(building.imports)
        full = f"{building.file.package}.{message.name}" if package else message.name
        pool = new_pool()
        local = descriptor_pb2.FileDescriptorProto()
        local.CopyFrom(building.file)
        local.name = f"connect/{id(local)}.proto"
        for message_proto in _all_messages(local):
            for field_proto in message_proto.field:
                field_proto.json_name = field_proto.name
        pool.Add(local)
        descriptor = pool.FindMessageTypeByName(full)
        cls = message_factory.GetMessageClass(descriptor)
        fill = self._filler(schema, descriptor)

        def encode(value: Struct) -> bytes:
            message_value = cls()
            fill(message_value, value)
            return bytes(message_value.SerializeToString())

        return ProtobufWriter(building.file, full, encode)

    def _message(
        self, schema: Schema, message: descriptor_pb2.DescriptorProto, building: _Building
    ) -> None:
        number = 1
        defined: set[str] = set()
        assert schema.fields is not None
        for f in schema.fields:
            field_schema = f.schema
            tag = (field_schema.parameters or {}).get(TAG_PARAM)
            if _is_union(field_schema):
                if tag is None:
                    number += 1
                self._oneof(f.name, field_schema, message, building, defined)
                continue
            if tag is None:
                tag, number = str(number), number + 1
            proto = message.field.add(name=self._name(f.name), number=int(tag))
            self._field(f.name, field_schema, proto, message, building, defined)
        _synthetic_oneofs_last(message)

    def _oneof(
        self,
        field_name: str,
        schema: Schema,
        message: descriptor_pb2.DescriptorProto,
        building: _Building,
        defined: set[str],
    ) -> None:
        assert schema.name is not None and schema.fields is not None
        name = schema.name[len(UNION_PREFIX) + 1 :].rpartition(".")[2] or field_name
        index = len(message.oneof_decl)
        message.oneof_decl.add(name=self._name(name))
        for member in schema.fields:
            tag = (member.schema.parameters or {}).get(TAG_PARAM)
            if tag is None:
                raise DataException(
                    f"The union member {member.name} needs its field number in the "
                    f"{TAG_PARAM} parameter"
                )
            proto = message.field.add(name=self._name(member.name), number=int(tag))
            proto.oneof_index = index  # a member: in its oneof, never repeated or optional
            self._type(member.name, member.schema, proto, message, building, defined)

    def _field(
        self,
        field_name: str,
        schema: Schema,
        proto: descriptor_pb2.FieldDescriptorProto,
        message: descriptor_pb2.DescriptorProto,
        building: _Building,
        defined: set[str],
    ) -> None:
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            if schema.value_schema.type is Type.ARRAY:
                raise DataException("Array cannot be nested")
            proto.label = _F.LABEL_REPEATED
            self._type(field_name, schema.value_schema, proto, message, building, defined)
            return
        if schema.type is Type.MAP:
            proto.label = _F.LABEL_REPEATED
        elif self.config.optional_for_nullables and schema.optional:
            proto.proto3_optional = True
            proto.oneof_index = len(message.oneof_decl)
            message.oneof_decl.add(name="_" + proto.name)
        self._type(field_name, schema, proto, message, building, defined)

    def _type(
        self,
        field_name: str,
        schema: Schema,
        proto: descriptor_pb2.FieldDescriptorProto,
        message: descriptor_pb2.DescriptorProto,
        building: _Building,
        defined: set[str],
    ) -> None:
        """Gives the field ``proto`` the type of ``schema``: a logical type's well-known
        message, an enum, else its Connect type's translator's (``_FIELD_TYPES``), which
        defines the nested types it needs in ``message`` once (``defined``)."""
        nest = _Nest(message, building, defined)
        if schema.name in _LOGICAL_MESSAGES:
            self._logical_type(schema, proto, nest)
        elif schema.type in (Type.STRING, Type.INT32) and ENUM_PARAM in (schema.parameters or {}):
            self._enum_type(schema, proto, nest)
        else:
            _FIELD_TYPES.get(schema.type, ProtobufData._scalar_type)(self, schema, proto, nest)

    def _logical_type(self, schema: Schema, proto: _F, nest: _Nest) -> None:
        """A logical type's well-known message (imported), a Decimal's precision and scale
        as ``confluent.field_meta`` parameters."""
        assert schema.name is not None
        proto.type_name, path = _LOGICAL_MESSAGES[schema.name]
        nest.building.uses(path)
        if schema.name == Decimal.LOGICAL_NAME:
            params = schema.parameters or {}
            meta = proto.options.Extensions[FIELD_META]
            if PRECISION_PARAM in params:
                meta.params["precision"] = params[PRECISION_PARAM]
            if Decimal.SCALE_FIELD in params:
                meta.params["scale"] = params[Decimal.SCALE_FIELD]

    def _enum_type(self, schema: Schema, proto: _F, nest: _Nest) -> None:
        """An enum named by the ``…protobuf.Enum`` parameter, its values (name and number)
        from the ``…protobuf.Enum.<name>`` ones."""
        params = schema.parameters or {}
        enum_name = params[ENUM_PARAM]
        proto.type_name = enum_name
        if nest.first(enum_name):
            enum = nest.message.enum_type.add(name=enum_name)
            prefix = ENUM_PARAM + "."
            for key, value in params.items():
                if key.startswith(prefix):
                    enum.value.add(name=key[len(prefix) :], number=int(value))

    def _struct_type(self, schema: Schema, proto: _F, nest: _Nest) -> None:
        """A nested message named after the struct (``Message`` appended when that is the
        field's name)."""
        name = self._name((schema.name or nest.building.default_name()).rpartition(".")[2])
        if name == proto.name:
            name += "Message"
        proto.type_name = name
        if nest.first(name):
            self._message(schema, nest.message.nested_type.add(name=name), nest.building)

    def _map_type(self, schema: Schema, proto: _F, nest: _Nest) -> None:
        """A nested ``<Name>Entry`` message of a ``key`` and a ``value`` field (a
        snake_case name made CamelCase)."""
        assert schema.key_schema is not None and schema.value_schema is not None
        base = self._name((schema.name or nest.building.default_name()).rpartition(".")[2])
        if "_" in base:
            base = "".join(w[:1].upper() + w[1:].lower() for w in base.split("_"))
        entry_name = base + ENTRY_SUFFIX
        proto.type_name = entry_name
        if nest.first(entry_name):
            entry = nest.message.nested_type.add(name=entry_name)
            for number, (part, part_schema) in enumerate(
                (("key", schema.key_schema), ("value", schema.value_schema)), start=1
            ):
                part_proto = entry.field.add(name=part, number=number)
                self._field(part, part_schema, part_proto, entry, nest.building, nest.defined)

    def _array_type(self, schema: Schema, proto: _F, nest: _Nest) -> None:
        """Only a field is repeated (``_field``): an array here is one inside another."""
        raise DataException("Array cannot be nested")

    def _scalar_type(self, schema: Schema, proto: _F, nest: _Nest) -> None:
        """The scalar of the Connect type, or the one its ``…protobuf.Type`` parameter
        declares; int8 and int16 tagged with their ``connect.type``."""
        t = schema.type
        declared = (schema.parameters or {}).get(TYPE_PARAM)
        proto.type = _TYPES_BY_NAME[declared] if declared in _TYPES_BY_NAME else _SCALARS[t]
        if t in (Type.INT8, Type.INT16):
            proto.options.Extensions[FIELD_META].params[CONNECT_TYPE] = t.value

    def _filler(self, schema: Schema, descriptor: Descriptor) -> Callable[[Any, Struct], None]:
        """Sets a message's fields from a struct of ``schema``."""
        setters: list[tuple[int, Callable[[Any, Any], None], Any]] = []
        assert schema.fields is not None
        for f in schema.fields:
            default = None if self.config.ignore_default_for_nullables else f.schema.default_value
            if _is_union(f.schema):
                setters.append((f.index, self._union_setter(f.schema, descriptor), None))
                continue
            proto = descriptor.fields_by_name[self._name(f.name)]
            setters.append((f.index, self._setter(f.schema, proto), default))

        def fill(message: Any, struct: Struct) -> None:
            if struct.schema is not schema and struct.schema != schema:
                raise DataException("Mismatching struct schema")
            values = struct._values
            for index, setter, default in setters:
                value = values[index]
                if value is None:
                    value = default
                if value is not None:
                    setter(message, value)

        return fill

    def _union_setter(self, schema: Schema, descriptor: Descriptor) -> Callable[[Any, Any], None]:
        assert schema.fields is not None
        members = [
            (f.index, self._setter(f.schema, descriptor.fields_by_name[self._name(f.name)]))
            for f in schema.fields
        ]

        def set_union(message: Any, struct: Struct) -> None:
            for index, setter in members:
                value = struct._values[index]
                if value is not None:
                    setter(message, value)
                    return
            raise DataException("Cannot find non-null field")

        return set_union

    def _setter(self, schema: Schema, proto: FieldDescriptor) -> Callable[[Any, Any], None]:
        name = proto.name
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            element = self._value(schema.value_schema, proto)
            if proto.message_type is not None:

                def add_messages(message: Any, values: Any) -> None:
                    container = getattr(message, name)
                    for v in values:
                        container.add().CopyFrom(element(v))

                return add_messages
            return lambda message, values: getattr(message, name).extend(element(v) for v in values)
        if schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            entry = proto.message_type
            assert entry is not None  # a map field's entry message
            key = self._value(schema.key_schema, entry.fields_by_name["key"])
            value = self._value(schema.value_schema, entry.fields_by_name["value"])

            def add_entries(message: Any, values: Any) -> None:
                container = getattr(message, name)
                for k, v in values.items():
                    item = container.add()
                    _put(item, "key", None if k is None else key(k))
                    _put(item, "value", None if v is None else value(v))

            return add_entries
        convert = self._value(schema, proto)
        return lambda message, value: _put(message, name, convert(value))

    def _value(self, schema: Schema, proto: FieldDescriptor) -> Convert:
        """How a non-null Connect value of ``schema`` becomes the value of field ``proto``
        (a message for message fields)."""
        logical = _TO_WELL_KNOWN.get(schema.name or "")
        message_type, enum_type = proto.message_type, proto.enum_type
        if logical is not None:
            assert message_type is not None  # a logical type's field is its message
            cls = message_factory.GetMessageClass(message_type)
            return lambda value: cls(**logical(value))
        if enum_type is not None:
            values = enum_type.values_by_name

            def enum_number(symbol: Any) -> int:
                if isinstance(symbol, int):
                    return symbol
                found = values.get(symbol)
                if found is None:
                    raise DataException(f"{symbol!r} is not a symbol of {enum_type.full_name}")
                return int(found.number)

            return enum_number
        if schema.type is Type.STRUCT:
            assert message_type is not None  # a struct's field is its message
            cls = message_factory.GetMessageClass(message_type)
            fill = self._filler(schema, message_type)

            def build(struct: Struct) -> Any:
                message = cls()
                fill(message, struct)
                return message

            return build
        if proto.type in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
            return lambda v: v % _UINT64
        if proto.type in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
            return lambda v: v & 0xFFFFFFFF
        if schema.type is Type.BYTES:
            return bytes
        return _identity

    # -- Protobuf → Connect ------------------------------------------------------------------
    def reader(self, descriptor: Descriptor, version: int | None) -> ProtobufReader:
        """The Connect schema of ``descriptor`` (with the registry's ``version``) and the
        decoder of its payloads."""
        cls = message_factory.GetMessageClass(descriptor)
        raw = (
            _WRAPPERS.get(descriptor.full_name) if self.config.wrapper_for_raw_primitives else None
        )
        if raw is not None:
            value_field = descriptor.fields_by_name["value"]
            convert = _from_unsigned(value_field)

            def decode_raw(payload: bytes) -> Any:
                message: Any = cls.FromString(payload)
                return convert(message.value)

            return ProtobufReader(raw, decode_raw)
        schema, read = self._struct(descriptor, version, optional=False, seen=set())

        def decode(payload: bytes) -> Any:
            return read(cls.FromString(payload))

        return ProtobufReader(schema, decode)

    def _struct(
        self, descriptor: Descriptor, version: int | None, optional: bool, seen: set[str]
    ) -> tuple[Schema, Convert]:
        if descriptor.full_name in seen:
            raise DataException(
                f"The message {descriptor.full_name} is recursive, which Connect schemas "
                "cannot represent"
            )
        seen = seen | {descriptor.full_name}
        builder = SchemaBuilder.struct().name(
            descriptor.full_name if self.config.enhanced_schema_support else descriptor.name
        )
        readers: list[Callable[[Any], Any]] = []
        synthetic = {o.name for o in descriptor.oneofs if all(proto3_optional(f) for f in o.fields)}
        for index, oneof in enumerate(descriptor.oneofs):
            if oneof.name in synthetic:
                continue
            union = (
                SchemaBuilder.struct()
                .name(
                    f"{UNION_PREFIX}."
                    + (oneof.full_name if self.config.enhanced_schema_support else oneof.name)
                )
                .optional()
            )
            members: dict[str, tuple[int, Convert]] = {}  # by name: the union's field index
            for member_index, member in enumerate(oneof.fields):
                member_schema, member_read = self._read_field(member, seen, in_oneof=True)
                union.field(member.name, member_schema)
                members[member.name] = (member_index, member_read)
            union_schema = union.build()
            name = f"{oneof.name}_{index}" if self.config.generate_index_for_unions else oneof.name
            builder.field(name, union_schema)
            readers.append(_oneof_reader(oneof.name, union_schema, members))
        for f in descriptor.fields:
            if f.containing_oneof is not None and f.containing_oneof.name not in synthetic:
                continue
            field_schema, field_read = self._read_field(f, seen, in_oneof=False)
            builder.field(f.name, field_schema)
            readers.append(_field_reader(f, field_read))
        if version is not None:
            builder.version(version)
        if optional:
            builder.optional()
        schema = builder.build()

        def read(message: Any) -> Struct:
            return Struct._trusted(schema, [r(message) for r in readers])

        return schema, read

    def _read_field(
        self, proto: FieldDescriptor, seen: set[str], in_oneof: bool
    ) -> tuple[Schema, Convert]:
        tag = str(proto.number)
        message = proto.message_type
        if message is not None and _is_map_like(proto):
            key_schema, key_read = self._read_field(message.fields_by_name["key"], seen, False)
            value_schema, value_read = self._read_field(
                message.fields_by_name["value"], seen, False
            )
            entry = message.full_name if self.config.enhanced_schema_support else message.name
            map_schema = (
                SchemaBuilder.map(key_schema, value_schema)
                .name(_map_field_name(entry))
                .optional()
                .parameter(TAG_PARAM, tag)
                .build()
            )
            return map_schema, _map_reader(proto, key_read, value_read)
        element, read = self._element(proto, seen)
        if proto.is_repeated:
            array = SchemaBuilder.array(element).optional().parameter(TAG_PARAM, tag).build()
            return array, lambda values: [read(v) for v in values]
        optional = in_oneof or message is not None or proto.enum_type is not None
        if not optional and self.config.optional_for_nullables:
            optional = proto3_optional(proto)
        elif not self.config.optional_for_nullables:
            optional = True
        return (
            element.replace(
                optional=optional, parameters={**(element.parameters or {}), TAG_PARAM: tag}
            ),
            read,
        )

    def _element(self, proto: FieldDescriptor, seen: set[str]) -> tuple[Schema, Convert]:
        """The schema of one value of ``proto`` (an element, for a repeated field), without
        its tag, optional, and the reader of its value."""
        message = proto.message_type
        if message is not None:
            full = message.full_name
            if full == "confluent.type.Decimal":
                meta = _meta(proto)
                builder = Decimal.builder(int(meta.get("scale", "0") or 0))
                if meta.get("precision"):
                    builder.parameter(PRECISION_PARAM, meta["precision"])
                return builder.optional().build(), _from_proto_decimal
            if full == "google.type.Date":
                return Date.builder().optional().build(), _from_date
            if full == "google.type.TimeOfDay":
                return Time.builder().optional().build(), _from_time_of_day
            if full == "google.protobuf.Timestamp":
                return Timestamp.builder().optional().build(), _from_timestamp
            return self._struct(message, None, optional=True, seen=seen)
        if proto.enum_type is not None:
            enum = proto.enum_type
            builder = SchemaBuilder.string().name(
                enum.full_name if self.config.enhanced_schema_support else enum.name
            )
            builder.parameter(ENUM_PARAM, enum.name)
            for value in enum.values:
                builder.parameter(f"{ENUM_PARAM}.{value.name}", str(value.number))
            names = {v.number: v.name for v in enum.values}
            return builder.optional().build(), lambda n: names.get(
                n, f"UNKNOWN_ENUM_VALUE_{enum.name}_{n}"
            )
        connect = _CONNECT_BY_PROTO[proto.type]
        meta_type = _meta(proto).get(CONNECT_TYPE)
        if connect is Type.INT32 and meta_type in ("int8", "int16"):
            connect = Type.INT8 if meta_type == "int8" else Type.INT16
        builder = SchemaBuilder(connect)
        if proto.type not in (
            FieldDescriptor.TYPE_INT32,
            FieldDescriptor.TYPE_INT64,
        ) and connect in (Type.INT32, Type.INT64):
            builder.parameter(TYPE_PARAM, PROTO_TYPE_NAMES[int(proto.type)])
        return builder.optional().build(), _from_unsigned(proto)


_FIELD_TYPES: dict[Type, Callable[[ProtobufData, Schema, _F, _Nest], None]] = {
    Type.STRUCT: ProtobufData._struct_type,
    Type.MAP: ProtobufData._map_type,
    Type.ARRAY: ProtobufData._array_type,
}
"""The field type of the Connect types that are not a scalar (``_scalar_type``)."""


def _all_messages(file: descriptor_pb2.FileDescriptorProto) -> list[descriptor_pb2.DescriptorProto]:
    found: list[descriptor_pb2.DescriptorProto] = []
    stack = list(file.message_type)
    while stack:
        message = stack.pop()
        found.append(message)
        stack.extend(message.nested_type)
    return found


def _synthetic_oneofs_last(message: descriptor_pb2.DescriptorProto) -> None:
    """Moves proto3 ``optional``'s synthetic oneofs after the real ones, as protobuf's
    runtimes require (Confluent's converter adds them in field order; the registry does not
    print them, so the schema's text is the same)."""
    synthetic = {f.oneof_index for f in message.field if f.proto3_optional}
    order = [i for i in range(len(message.oneof_decl)) if i not in synthetic] + sorted(synthetic)
    if order == list(range(len(message.oneof_decl))):
        return
    decls = [descriptor_pb2.OneofDescriptorProto(name=message.oneof_decl[i].name) for i in order]
    moved = {old: new for new, old in enumerate(order)}
    for proto in message.field:
        if proto.HasField("oneof_index"):
            proto.oneof_index = moved[proto.oneof_index]
    del message.oneof_decl[:]
    message.oneof_decl.extend(decls)


def _is_union(schema: Schema) -> bool:
    return schema.type is Type.STRUCT and (schema.name or "").startswith(UNION_PREFIX)


def _identity(value: Any) -> Any:
    return value


def _put(message: Any, name: str, value: Any) -> None:
    if value is None:
        return
    if hasattr(value, "DESCRIPTOR"):
        getattr(message, name).CopyFrom(value)
    else:
        setattr(message, name, value)


def proto3_optional(proto: FieldDescriptor) -> bool:
    """Whether the field is proto3's ``optional`` (in a synthetic oneof of its own)."""
    oneof = proto.containing_oneof
    return (
        bool(oneof is not None and len(oneof.fields) == 1 and oneof.name == "_" + proto.name)
        and proto.has_presence
    )


def _is_map_like(proto: FieldDescriptor) -> bool:
    message = proto.message_type
    if not proto.is_repeated or message is None or not message.name.endswith(ENTRY_SUFFIX):
        return False
    names = [f.name for f in message.fields]
    return sorted(names) == ["key", "value"] and not any(f.is_repeated for f in message.fields)


def _map_field_name(entry: str) -> str:
    """``MapTypeEntry`` → ``map_type``, as Confluent names a map read back."""
    base = entry.removesuffix(ENTRY_SUFFIX)
    prefix, _, name = base.rpartition(".")
    snake = "".join(
        ("_" + c.lower()) if c.isupper() and i else c.lower() for i, c in enumerate(name)
    )
    return f"{prefix}.{snake}" if prefix else snake


def _meta(proto: FieldDescriptor) -> dict[str, str]:
    options = proto.GetOptions()
    if not options.HasExtension(FIELD_META):
        return {}
    return dict(options.Extensions[FIELD_META].params)


def _field_reader(proto: FieldDescriptor, read: Convert) -> Convert:
    name = proto.name
    if proto.is_repeated:
        return lambda message: read(getattr(message, name))
    if proto.message_type is not None or proto3_optional(proto):
        return lambda message: read(getattr(message, name)) if message.HasField(name) else None
    return lambda message: read(getattr(message, name))


def _oneof_reader(oneof: str, schema: Schema, members: dict[str, tuple[int, Convert]]) -> Convert:
    size = len(members)

    def read(message: Any) -> Struct | None:
        which = message.WhichOneof(oneof)
        if which is None:
            return None
        index, convert = members[which]
        values: list[Any] = [None] * size
        values[index] = convert(getattr(message, which))
        return Struct._trusted(schema, values)

    return read


def _map_reader(proto: FieldDescriptor, key: Convert, value: Convert) -> Convert:
    """A map field (protobuf gives a mapping) or repeated ``…Entry`` messages as a dict."""
    entry = proto.message_type
    assert entry is not None  # map-like: a repeated message
    if entry.GetOptions().map_entry:

        def read_map(entries: Any) -> dict[Any, Any]:
            return {key(k): value(v) for k, v in entries.items()}

        return read_map

    def read_entries(entries: Any) -> dict[Any, Any]:
        return {key(e.key): value(e.value) for e in entries}

    return read_entries


def _from_unsigned(proto: FieldDescriptor) -> Convert:
    if proto.type in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return lambda v: v - _UINT64 if v > _INT64_MAX else v
    return _identity


def _decimal_fields(value: _decimal.Decimal) -> dict[str, Any]:
    """A decimal as ``confluent.type.Decimal``'s fields: the unscaled value in big-endian
    two's complement, its digits, its scale (as Confluent's ``DecimalUtils``)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    scale = -exponent
    if scale < 0:
        unscaled, scale = unscaled * 10**-scale, 0
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return {
        "value": unscaled.to_bytes(bits // 8 + 1, "big", signed=True),
        "precision": max(len(str(abs(unscaled))), 1),
        "scale": scale,
    }


def _from_proto_decimal(message: Any) -> _decimal.Decimal:
    if not message.value:
        raise DataException("A confluent.type.Decimal without value bytes")
    unscaled = int.from_bytes(message.value, "big", signed=True)
    return _decimal.Decimal(f"{unscaled}E{-message.scale}")


def _from_date(message: Any) -> _dt.date:
    try:
        return _dt.date(message.year, message.month, message.day)
    except ValueError as e:
        raise DataException(f"Invalid google.type.Date: {e}") from e


def _time_fields(value: _dt.time) -> dict[str, int]:
    millis = Time.from_logical(Time.SCHEMA, value)
    seconds, ms = divmod(millis, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return {"hours": hour, "minutes": minute, "seconds": second, "nanos": ms * 1_000_000}


def _from_time_of_day(message: Any) -> _dt.time:
    millis = ((message.hours * 60 + message.minutes) * 60 + message.seconds) * 1000
    return Time.to_logical(Time.SCHEMA, millis + message.nanos // 1_000_000)


def _timestamp_fields(value: _dt.datetime) -> dict[str, int]:
    seconds, ms = divmod(Timestamp.from_logical(Timestamp.SCHEMA, value), 1000)
    return {"seconds": seconds, "nanos": ms * 1_000_000}


def _from_timestamp(message: Any) -> _dt.datetime:
    return Timestamp.to_logical(
        Timestamp.SCHEMA, message.seconds * 1000 + message.nanos // 1_000_000
    )


_TO_WELL_KNOWN: dict[str, Callable[[Any], dict[str, Any]]] = {
    Decimal.LOGICAL_NAME: _decimal_fields,
    Date.LOGICAL_NAME: lambda d: {"year": d.year, "month": d.month, "day": d.day},
    Time.LOGICAL_NAME: _time_fields,
    Timestamp.LOGICAL_NAME: _timestamp_fields,
}
"""The fields of the well-known message of each logical type, from a Connect value (the
message class comes from the schema's own descriptor pool)."""
