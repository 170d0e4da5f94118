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


def _fastavro_writer(parsed: Any, to_datum: Encode | None) -> Write:
    """Writes the data ``to_datum`` makes of a value with fastavro in the parsed schema
    (whose fields need not be the value's: fastavro fills the others with their defaults)."""

    def write(out: bytearray, value: Any) -> None:
        buffer = io.BytesIO()
        schemaless_writer(buffer, parsed, value if to_datum is None else to_datum(value))
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
        if latest.schema.schema_type not in (AVRO, None):
            raise DataException(
                f"The latest version of subject {latest.subject} is a "
                f"{latest.schema.schema_type} schema, not an Avro one"
            )
        parsed, latest_json, references = self._parsed(latest.schema)
        if strict:
            written = json.loads(plan.schema.schema_str or "null")
            errors = resolution_errors(latest_json, written, references)
            if errors:
                raise DataException(
                    f"Latest schema (id {latest.schema_id}) of subject {latest.subject} is not "
                    f"backward compatible with the schema of the data: {'; '.join(errors)}"
                )
        encode = _encoder(_fastavro_writer(parsed, self.data.writer(schema).encode))
        return WritePlan(latest.schema, plan.record_name, encode)

    def read_plan(
        self,
        writer: RegistrySchema,
        schema_id: SchemaId,
        version: int | None,
        reader: RegistrySchema | None,
    ) -> ReadPlan:
        written, avro, references = self._parsed(writer)
        read = None
        if reader is not None:
            read, avro, references = self._parsed(reader)
        connect = self.data.reader(avro, version, references, resolving=reader is not None)
        decode_value = connect.decode
        tagged = connect.named_unions

        def decode(payload: io.BytesIO) -> Any:
            datum = schemaless_reader(
                payload,
                written,
                read,
                return_named_type=tagged,
                return_named_type_override=tagged,
            )
            return datum if decode_value is None or datum is None else decode_value(datum)

        return ReadPlan(connect.schema, decode)

    def record_name(self, schema: RegistrySchema, schema_id: SchemaId) -> str | None:
        avro = json.loads(schema.schema_str or "null")
        if isinstance(avro, dict) and avro.get("type") in ("record", "enum", "fixed"):
            name = str(avro["name"])
            namespace = avro.get("namespace")
            return name if "." in name or not namespace else f"{namespace}.{name}"
        return _primitive_name(avro)

    def _parsed(self, schema: RegistrySchema) -> tuple[Any, Any, list[Any]]:
        """fastavro's parsed form of a registered schema, its JSON, and the JSON of the
        schemas it references."""
        references = self._references(schema)
        avro = json.loads(schema.schema_str or "null")
        return _parse(avro, references, {}), avro, references

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


def _parse(avro: Any, references: list[Any], named: dict[str, Any]) -> Any:
    """fastavro's parsed form of ``avro`` (logical types left out: see ``physical``), the
    named types of the ``references`` parsed first; ``named`` collects every named type.
    Field defaults are turned into the data they stand for (see :func:`_datum`), since
    fastavro fills a missing field with its default as it is, reading and writing."""
    for referenced in references:
        parse_schema(physical(referenced), named_schemas=named)
    parsed = parse_schema(physical(avro), named_schemas=named)
    for node in named.values():
        for f in node.get("fields", ()):
            if "default" in f:
                f["default"] = _datum(f["type"], f["default"], named)
    return parsed


def _datum(node: Any, default: Any, named: dict[str, Any]) -> Any:
    """The datum of a default in its JSON form for the parsed type ``node``: bytes and
    fixed from their text of one character per byte, within records, arrays and maps
    too; a union's default is of its first branch."""
    if isinstance(node, list):
        return _datum(node[0], default, named)
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


def _primitive_name(avro: Any) -> str | None:
    """The name Avro gives a schema of a primitive type: the type's."""
    if isinstance(avro, str):
        return avro
    if isinstance(avro, dict) and isinstance(avro.get("type"), str):
        return str(avro["type"])
    return None
