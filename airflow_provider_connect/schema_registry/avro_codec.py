"""Avro bytes for the schemas :mod:`.avro_data` maps: written by the writers
:mod:`.avro_writer` compiles per schema (the values of a poll into one buffer, cut apart),
read by fastavro (the decoder of confluent-kafka's ``AvroDeserializer``) with the writer's
schema (and the subject's latest as the reader's, with ``use.latest.version``). Writing
with the subject's latest schema, which need not be the data's, goes through fastavro too.
Schemas that reference others (``references``) are read with them.
"""

from __future__ import annotations

import io
import json
from typing import Any

from confluent_kafka.schema_registry import RegisteredSchema
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry.serde import SchemaId
from fastavro import parse_schema, schemaless_reader, schemaless_writer

from airflow_provider_connect.connect.data.schema import Schema
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.schema_registry.avro_compat import resolution_errors
from airflow_provider_connect.schema_registry.avro_data import AvroData, Encode, physical
from airflow_provider_connect.schema_registry.avro_names import NAMED, full_name
from airflow_provider_connect.schema_registry.avro_writer import Write, compile_writer
from airflow_provider_connect.schema_registry.registry import Registry
from airflow_provider_connect.schema_registry.serde import Codec, Encoder, ReadPlan, WritePlan

AVRO = "AVRO"


def _encoder(write: Write) -> Encoder:
    """Writes every value, each behind the prefix, into one buffer, then cuts it apart."""

    def encode(values: list[Any], prefix: bytes) -> list[bytes | None]:
        out = bytearray()
        bounds: list[tuple[int, int] | None] = []
        for value in values:
            if value is None:
                bounds.append(None)
                continue
            start = len(out)
            out += prefix
            write(out, value)
            bounds.append((start, len(out)))
        data = bytes(out)
        return [None if b is None else data[b[0] : b[1]] for b in bounds]

    return encode


def _fastavro_writer(parsed: Any, to_datum: Encode | None, wrapped: bool) -> Write:
    """Writes the data ``to_datum`` makes of a value with fastavro in the parsed schema
    (whose fields need not be the value's: fastavro fills the others with their defaults),
    ``wrapped`` in a record (see :func:`_as_record`)."""

    def write(out: bytearray, value: Any) -> None:
        buffer = io.BytesIO()
        datum = value if to_datum is None else to_datum(value)
        schemaless_writer(buffer, parsed, {_VALUE: datum} if wrapped else datum)
        out += buffer.getvalue()

    return write


class AvroCodec(Codec):
    schema_type = AVRO

    def __init__(self, data: AvroData, registry: Registry) -> None:
        self.data = data
        self.registry = registry

    def write_plan(self, schema: Schema) -> WritePlan:
        writer = self.data.writer(schema)
        text = json.dumps(writer.schema, separators=(",", ":"))
        record_name = writer.record_name or _primitive_name(writer.schema)
        write = compile_writer(schema, writer.schema, self.data.config.ignore_default_for_nullables)
        return WritePlan(RegistrySchema(text, AVRO), record_name, _encoder(write))

    def latest_plan(
        self, schema: Schema, plan: WritePlan, latest: RegisteredSchema, strict: bool
    ) -> WritePlan:
        latest_json, references = self._json(latest.schema)
        if strict:
            written = json.loads(plan.schema.schema_str or "null")
            errors = resolution_errors(latest_json, written, references)
            if errors:
                raise DataException(
                    f"Latest schema (id {latest.schema_id}) of subject {latest.subject} is not "
                    f"backward compatible with the schema of the data: {'; '.join(errors)}"
                )
        wrapped = not _is_record(latest_json)
        parsed = _parse(latest_json, references, wrapped)
        encode = _encoder(_fastavro_writer(parsed, self.data.writer(schema).encode, wrapped))
        return WritePlan(latest.schema, plan.record_name, encode)

    def read_plan(
        self,
        writer: RegistrySchema,
        schema_id: SchemaId,
        version: int | None,
        reader: RegistrySchema | None,
    ) -> ReadPlan:
        avro, references = self._json(writer)
        latest, latest_references = self._json(reader) if reader is not None else (None, [])
        wrapped = not _is_record(avro) or (reader is not None and not _is_record(latest))
        written = _parse(avro, references, wrapped)
        read = None
        if reader is not None:
            read = _parse(latest, latest_references, wrapped)
            avro, references = latest, latest_references
        connect = self.data.reader(avro, version, references, resolving=reader is not None)
        decode_value = connect.decode
        tagged = connect.named_unions

        def decode(payload: io.BytesIO) -> Any:
            datum: Any = schemaless_reader(
                payload,
                written,
                read,
                return_named_type=tagged,
                return_named_type_override=tagged,
            )
            if wrapped:
                datum = datum[_VALUE]
            return datum if decode_value is None or datum is None else decode_value(datum)

        return ReadPlan(connect.schema, decode)

    def record_name(self, schema: RegistrySchema, schema_id: SchemaId) -> str | None:
        avro = json.loads(schema.schema_str or "null")
        if isinstance(avro, dict) and avro.get("type") in NAMED:
            return full_name(avro, None)
        return _primitive_name(avro)

    def _json(self, schema: RegistrySchema) -> tuple[Any, list[Any]]:
        """The JSON of a registered schema and of the schemas it references."""
        return json.loads(schema.schema_str or "null"), self._references(schema)

    def _references(self, schema: RegistrySchema) -> list[Any]:
        """The JSON of every schema ``schema`` references, depth first (dependencies first)."""
        found: list[Any] = []
        for ref in schema.references or []:
            assert ref.subject is not None and ref.version is not None
            with self.registry.calls(f"reading the reference {ref.name} of a schema"):
                registered = self.registry.client.get_version(ref.subject, ref.version)
            found += self._references(registered.schema)
            found.append(json.loads(registered.schema.schema_str or "null"))
        return found


_VALUE = "value"
_TOP_LEVEL = "ConnectTopLevelValue"


def _is_record(avro: Any) -> bool:
    return isinstance(avro, dict) and avro.get("type") == "record"


def _as_record(avro: Any) -> Any:
    """A schema that is not a record as the one field of one: fastavro parses a schema
    again at every call unless it is a record it parsed (and then without the named types
    of the references), while a record's bytes are its fields'. The record has no
    namespace, so the names inside resolve as they did."""
    return {"type": "record", "name": _TOP_LEVEL, "fields": [{"name": _VALUE, "type": avro}]}


def _parse(avro: Any, references: list[Any], wrapped: bool) -> Any:
    """fastavro's parsed form of ``avro`` (logical types left out: see ``physical``;
    ``wrapped``: see :func:`_as_record`), the named types of the ``references`` parsed
    first. Field defaults are turned into the data they stand for (see :func:`_datum`),
    since fastavro fills a missing field with its default as it is, reading and writing."""
    named: dict[str, Any] = {}
    for referenced in references:
        parse_schema(physical(referenced), named_schemas=named)
    parsed = parse_schema(physical(_as_record(avro) if wrapped else avro), named_schemas=named)
    for node in named.values():
        for f in node.get("fields", ()):
            if "default" in f:
                f["default"] = _datum(f["type"], f["default"], named)
    return parsed


def _datum(node: Any, default: Any, named: dict[str, Any]) -> Any:
    """The datum of a default in its JSON form for the parsed type ``node``: bytes and
    fixed from their text of one character per byte, within records, arrays and maps
    too; a union's default is of its first branch that the JSON fits (Avro 1.12 takes any
    branch, as fastavro does; before, the first)."""
    if isinstance(node, list):
        fitting = (b for b in node if _fits(b, default, named))
        return _datum(next(fitting, node[0]), default, named)
    if isinstance(node, str):
        node = named.get(node, {"type": node})
    elif not isinstance(node["type"], str) or node["type"] in named:  # {"type": <a type>}
        return _datum(node["type"], default, named)
    kind = node["type"]
    if kind in ("bytes", "fixed") and isinstance(default, str):
        return default.encode("latin-1")
    if kind == "record" and isinstance(default, dict):
        return {
            f["name"]: _datum(f["type"], default.get(f["name"], f.get("default")), named)
            for f in node["fields"]
        }
    if kind == "array" and isinstance(default, list):
        return [_datum(node["items"], v, named) for v in default]
    if kind == "map" and isinstance(default, dict):
        return {k: _datum(node["values"], v, named) for k, v in default.items()}
    return default


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "int": (int,),
    "long": (int,),
    "float": (int, float),
    "double": (int, float),
    "string": (str,),
    "bytes": (str,),
    "enum": (str,),
    "fixed": (str,),
    "array": (list,),
    "map": (dict,),
    "record": (dict,),
}


def _fits(node: Any, default: Any, named: dict[str, Any]) -> bool:
    """Whether a default in its JSON form is of the JSON type of the parsed ``node``."""
    if isinstance(node, str):
        node = named.get(node, {"type": node})
    kind = node["type"] if isinstance(node, dict) else "union"
    if not isinstance(kind, str):
        return _fits(kind, default, named)
    if kind in named:
        return _fits(named[kind], default, named)
    types = _JSON_TYPES.get(kind, ())
    return isinstance(default, types) and not (isinstance(default, bool) and bool not in types)


def _primitive_name(avro: Any) -> str | None:
    """The name Avro gives a schema of a primitive type: the type's."""
    if isinstance(avro, str):
        return avro
    if isinstance(avro, dict) and isinstance(avro.get("type"), str):
        return str(avro["type"])
    return None
