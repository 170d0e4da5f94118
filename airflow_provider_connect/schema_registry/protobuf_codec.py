"""Protobuf payloads for the schemas :mod:`.protobuf_data` builds and the ones other
producers registered: written as confluent-kafka's ``ProtobufSerializer`` registers and
frames them (a serialized ``FileDescriptorProto``, the message indexes after the schema id),
read from the registry's ``serialized`` form with the schemas it references."""

from __future__ import annotations

import io
from typing import Any

from confluent_kafka.schema_registry import RegisteredSchema
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry._sync.protobuf import _resolve_named_schema
from confluent_kafka.schema_registry.common.protobuf import _create_index_array, _str_to_proto
from confluent_kafka.schema_registry.serde import SchemaId
from google.protobuf.descriptor import Descriptor
from google.protobuf.descriptor import FieldDescriptor as F

from airflow_provider_connect.connect.data.schema import Schema
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.schema_registry.protobuf_data import (
    PROTO_TYPE_NAMES,
    ProtobufData,
    file_text,
    new_pool,
    proto3_optional,
)
from airflow_provider_connect.schema_registry.registry import Registry
from airflow_provider_connect.schema_registry.serde import Codec, Encoder, ReadPlan, WritePlan

PROTOBUF = "PROTOBUF"


def _encoder(encode: Any) -> Encoder:
    def encode_all(values: list[Any], prefix: bytes) -> list[bytes | None]:
        return [None if v is None else prefix + encode(v) for v in values]

    return encode_all


_WIRE_KINDS: dict[int, str] = {
    **dict.fromkeys(
        (F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_BOOL, F.TYPE_ENUM),
        "varint",
    ),
    **dict.fromkeys((F.TYPE_SINT32, F.TYPE_SINT64), "zigzag"),
    **dict.fromkeys((F.TYPE_FIXED32, F.TYPE_SFIXED32), "fixed32"),
    **dict.fromkeys((F.TYPE_FIXED64, F.TYPE_SFIXED64), "fixed64"),
    **dict.fromkeys((F.TYPE_STRING, F.TYPE_BYTES), "length-delimited"),
    F.TYPE_FLOAT: "float",
    F.TYPE_DOUBLE: "double",
    F.TYPE_MESSAGE: "message",
    F.TYPE_GROUP: "group",
}
"""Field types by the kinds a reader takes for one another (Confluent's Protobuf
compatibility rules: int32, int64, uint32, uint64, bool and enums; sint32 and sint64;
fixed32 and sfixed32; fixed64 and sfixed64; string and bytes)."""


_SCALARS = frozenset({"varint", "zigzag", "fixed32", "fixed64", "float", "double"})
"""The kinds whose fields cannot turn repeated or single (packed on the wire)."""


def unreadable_fields(
    written: Descriptor, reader: Descriptor, seen: set[tuple[str, str]] | None = None
) -> list[str]:
    """What in messages of ``written`` a ``reader`` message reads other than written, by
    Confluent's Protobuf rules, in nested messages too: a field number of a type of another
    kind; a number or enum turned repeated or single; a field moved into a oneof that
    existed, or two into one new oneof (set together, they would overwrite each other); a
    required field the written lacks. Fields the reader lacks are no error: Protobuf
    readers skip unknown fields."""
    seen = set() if seen is None else seen
    if (written.full_name, reader.full_name) in seen:
        return []
    seen.add((written.full_name, reader.full_name))
    errors: list[str] = []
    existing = {o.name for o in written.oneofs}
    moved: dict[str, list[str]] = {}  # a new oneof of the reader: the fields moved into it
    for field in written.fields:
        other = reader.fields_by_number.get(field.number)
        if other is None:
            continue
        where = f"{written.full_name}.{field.name} (field {field.number})"
        kind = _WIRE_KINDS[field.type]
        if kind != _WIRE_KINDS[other.type]:
            errors.append(f"{where} is {_type_name(field)}, the latest's {_type_name(other)}")
        elif field.is_repeated != other.is_repeated and kind in _SCALARS:
            cardinality = ("single", "repeated")
            errors.append(
                f"{where} is {cardinality[field.is_repeated]}, "
                f"the latest's {cardinality[other.is_repeated]}"
            )
        elif field.message_type is not None and other.message_type is not None:
            errors += unreadable_fields(field.message_type, other.message_type, seen)
        oneof = _oneof(other)
        if oneof is not None and _oneof(field) is None:
            if oneof in existing:
                errors.append(f"{where} is in the latest's oneof {oneof}, which it was not in")
            else:
                moved.setdefault(oneof, []).append(field.name)
    for oneof, names in moved.items():
        if len(names) > 1:
            errors.append(
                f"{written.full_name}: {', '.join(names)} are in one oneof {oneof} in the latest"
            )
    for other in reader.fields:
        if other.is_required and other.number not in written.fields_by_number:
            errors.append(
                f"{reader.full_name}.{other.name} (field {other.number}) is required in the "
                "latest, and not written"
            )
    return errors


def _oneof(field: F) -> str | None:
    """The name of the oneof the field is in, if a real one (not proto3 ``optional``'s)."""
    oneof = field.containing_oneof
    return None if oneof is None or proto3_optional(field) else str(oneof.name)


def _type_name(field: F) -> str:
    named = field.message_type or field.enum_type
    return str(named.full_name) if named is not None else PROTO_TYPE_NAMES.get(field.type, "group")


class ProtobufCodec(Codec):
    schema_type = PROTOBUF
    registry_format = "serialized"

    def __init__(self, data: ProtobufData, registry: Registry) -> None:
        self.data = data
        self.registry = registry
        self._last: tuple[Any, Descriptor] | None = None

    def write_plan(self, schema: Schema) -> WritePlan:
        writer = self.data.writer(schema)
        registered = RegistrySchema(file_text(writer.file), PROTOBUF)
        return WritePlan(registered, writer.full_name, _encoder(writer.encode), [0])

    def latest_plan(
        self, schema: Schema, plan: WritePlan, latest: RegisteredSchema, strict: bool
    ) -> WritePlan:
        descriptor = self._descriptor(self._serialized(latest), [0], by_name=plan.record_name)
        if strict and descriptor.full_name != plan.record_name:
            raise DataException(
                f"The latest version of subject {latest.subject} has no message {plan.record_name}"
            )
        if strict:
            errors = unreadable_fields(self._descriptor(plan.schema, [0]), descriptor)
            if errors:
                raise DataException(
                    f"Latest schema (id {latest.schema_id}) of subject {latest.subject} is not "
                    f"backward compatible with the schema of the data: {'; '.join(errors)}"
                )
        indexes = _create_index_array(descriptor)
        return WritePlan(latest.schema, plan.record_name, plan.encode, indexes)

    def read_plan(
        self,
        writer: RegistrySchema,
        schema_id: SchemaId,
        version: int | None,
        reader: RegistrySchema | None,
    ) -> ReadPlan:
        descriptor = self._descriptor(writer, schema_id.message_indexes or [0])
        decoder = self.data.reader(descriptor, version)
        decode_payload = decoder.decode

        def decode(payload: io.BytesIO) -> Any:
            return decode_payload(payload.read())

        return ReadPlan(decoder.schema, decode)

    def record_name(self, schema: RegistrySchema, schema_id: SchemaId) -> str | None:
        return str(self._descriptor(schema, schema_id.message_indexes or [0]).full_name)

    def _serialized(self, registered: RegisteredSchema) -> RegistrySchema:
        assert registered.schema_id is not None
        return self.registry.schema(registered.schema_id, None, self.registry_format)

    def _descriptor(
        self, schema: RegistrySchema, indexes: list[int], by_name: str | None = None
    ) -> Descriptor:
        """The message of a registered schema at ``indexes`` (or called ``by_name``), its
        references loaded; the last one is kept, as reading a new schema id asks for it
        twice (its record name, then its read plan)."""
        references = tuple((r.name, r.subject, r.version) for r in schema.references or ())
        key = (schema.schema_str, references, tuple(indexes), by_name)
        if self._last is None or self._last[0] != key:
            self._last = key, self._load(schema, indexes, by_name)
        return self._last[1]

    def _load(self, schema: RegistrySchema, indexes: list[int], by_name: str | None) -> Descriptor:
        pool = new_pool()
        with self.registry.calls("reading the schemas a Protobuf schema references"):
            _resolve_named_schema(schema, self.registry.client, pool)
        try:
            file = _str_to_proto(f"schema/{id(schema)}.proto", schema.schema_str or "")
        except Exception as e:
            raise DataException(f"The registry's Protobuf schema could not be read: {e}") from e
        pool.Add(file)
        if by_name is not None:
            try:
                return pool.FindMessageTypeByName(by_name)
            except KeyError:
                pass
        messages = file.message_type
        path: list[str] = []
        for index in indexes:
            if index >= len(messages):
                raise DataException(f"The message indexes {indexes} are not in the schema")
            path.append(messages[index].name)
            messages = messages[index].nested_type
        full = ".".join(filter(None, [file.package, *path]))
        return pool.FindMessageTypeByName(full)
