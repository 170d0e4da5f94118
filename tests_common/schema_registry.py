"""A Confluent Schema Registry stand-in for tests and benchmarks: the REST API v1 over real HTTP on 127.0.0.1, in
memory, in this process, for confluent-kafka's ``SchemaRegistryClient`` and its Avro,
Protobuf and JSON Schema serializers (and for Spark executors on this machine).

What it guarantees, as Confluent's registry does (paths, JSON shapes, status codes and error
codes are those of Confluent's ``*Resource.java`` and ``Errors.java``):

- ids are global: the same schema (same type, canonical form, references, metadata and rule
  set) gets the same id under every subject; registering a schema a subject already has
  answers its id and version and adds no version;
- versions count up per subject, soft-deleted ones included; a soft delete keeps the id
  readable (``GET /schemas/ids/{id}``), a permanent delete needs a soft delete first;
- registering checks compatibility with the subject's level (else the global one, BACKWARD by
  default): Avro by Avro's schema resolution (:func:`avro_incompatibilities`), a schema of
  another type is incompatible, Protobuf and JSON Schema are always compatible here;
- answers are ``application/vnd.schemaregistry.v1+json``; errors are Confluent's body,
  ``{"error_code": ..., "message": ...}``.

Where it differs: canonical forms (for ids) are the parsed JSON with sorted keys and no
whitespace for AVRO and JSON (a bare ``{"type": "<primitive>"}`` is the primitive), and the
text as given for PROTOBUF; Confluent compares its own renderings of the parsed schemas
(Avro's ``Schema.toString()``, a normalized .proto text), close enough for these tests. A
schema is stored as registered: Protobuf stays a base64 ``FileDescriptorProto`` (what
confluent-kafka's ``ProtobufSerializer`` registers), which also answers ``format=serialized``
(what its deserializer asks for); a .proto text cannot be turned into that without a .proto
parser, so ``format=serialized`` on one answers 422. Other formats answer the stored text. A
JSON schema is checked to be JSON, not a valid JSON Schema. Contexts, modes other than
READWRITE, import mode, metadata lookups, tags, associations (always none, which 2.16's
default subject name strategy takes as "use the topic name") and deleting referenced schemas
are not implemented.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import fastavro
import pytest
from fastavro.schema import SchemaParseException
from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from tests_common.processes import Started

URL_ENV = "SCHEMA_REGISTRY_URL"
"""Set, it names a real registry that :func:`schema_registry` yields instead of a stand-in."""

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
SCHEMA_TYPES = ("JSON", "PROTOBUF", "AVRO")
LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
INCOMPATIBLE_ERROR_CODE = 40901
"""Confluent's error code of an incompatible schema since 8.1 (the release that added the
associations confluent-kafka 2.16 looks up); 409 before."""


class RegistryError(Exception):
    """An error answer: ``status`` with Confluent's body."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"error_code": error_code, "message": message}


@dataclass(frozen=True)
class RecordedRequest:
    """A request as received: ``path`` URL-decoded, ``headers`` with lower-case names."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass(frozen=True)
class _Schema:
    """A schema as registered (its id is the registry's business)."""

    schema_type: str
    text: str
    references: list[dict[str, Any]]
    metadata: dict[str, Any] | None
    rule_set: dict[str, Any] | None
    key: str = field(init=False)

    def __post_init__(self) -> None:
        identity = [
            self.schema_type,
            _canonical(self),
            self.references,
            self.metadata,
            self.rule_set,
        ]
        object.__setattr__(self, "key", json.dumps(identity, sort_keys=True))

    @property
    def guid(self) -> str:
        """A UUID from the MD5 of the schema's identity, as Confluent derives it."""
        return str(uuid.UUID(bytes=hashlib.md5(self.key.encode()).digest()))


@dataclass
class _Version:
    subject: str
    version: int
    id: int
    deleted: bool = False


@dataclass(frozen=True)
class _Call:
    """A routed request: path parameters (decoded), query and JSON body."""

    params: dict[str, str]
    query: dict[str, list[str]]
    body: Any

    def arg(self, name: str) -> str:
        values = self.query.get(name)
        return values[-1] if values else ""

    def flag(self, name: str) -> bool:
        return self.arg(name).lower() == "true"


def _canonical(schema: _Schema) -> str:
    if schema.schema_type == "PROTOBUF":
        return schema.text
    parsed = json.loads(schema.text)
    if schema.schema_type == "AVRO" and isinstance(parsed, dict) and list(parsed) == ["type"]:
        parsed = parsed["type"]
    return json.dumps(parsed, sort_keys=True, separators=(",", ":"))


def _version_id(text: str) -> int:
    """A version of a path: 1 and up, or -1 for ``latest`` (Confluent's ``VersionId``)."""
    if text.strip().lower() == "latest":
        return -1
    try:
        version = int(text)
    except ValueError:
        version = 0
    if version <= 0 and version != -1:
        raise RegistryError(
            422,
            42202,
            f"The specified version '{text}' is not a valid version id. Allowed values are"
            ' between [1, 2^31-1] and the string "latest"',
        )
    return version


def _serialized_descriptor(text: str) -> bool:
    try:
        descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, DecodeError):
        return False
    return True


# Avro schema resolution -------------------------------------------------------------------

_PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}
"""Writer type → reader types that read it."""

_NAMED = {"record", "error", "enum", "fixed"}

_DESCRIPTIONS = {
    "FIXED_SIZE_MISMATCH": "The size of FIXED type field at path '{path}' in the {reader}"
    " schema does not match with the {writer} schema",
    "TYPE_MISMATCH": "The type (path '{path}') of a field in the {reader} schema does not"
    " match with the {writer} schema",
    "NAME_MISMATCH": "The name of the schema has changed (path '{path}')",
    "MISSING_ENUM_SYMBOLS": "The {reader} schema is missing enum symbols '{info}' at path"
    " '{path}' in the {writer} schema",
    "MISSING_UNION_BRANCH": "The {reader} schema is missing a type inside a union field at"
    " path '{path}' in the {writer} schema",
    "READER_FIELD_MISSING_DEFAULT_VALUE": "The field '{info}' at path '{path}' in the {reader}"
    " schema has no default value and is missing in the {writer} schema",
}
"""Confluent's ``Difference`` texts of Avro's incompatibility types."""


@dataclass(frozen=True)
class Incompatibility:
    """Why a reader schema cannot read a writer's data: Avro's type, where, and a detail."""

    kind: str
    path: str
    info: str

    def message(self, reader: str, writer: str) -> str:
        """Confluent's rendering, the reader and writer named ``new`` or ``old``."""
        text = _DESCRIPTIONS[self.kind].format(
            path=self.path, info=self.info, reader=reader, writer=writer
        )
        return f"{{errorType:'{self.kind}', description:'{text}', additionalInfo:'{self.info}'}}"


ParsedAvro = tuple[Any, Mapping[str, Any]]
"""A schema parsed by ``fastavro.parse_schema``, and the named types it (and the schemas it
references) defines."""


def avro_incompatibilities(reader: ParsedAvro, writer: ParsedAvro) -> list[Incompatibility]:
    """What stops ``reader`` from reading data written with ``writer``, as Avro's
    ``SchemaCompatibility`` finds it: records match by name (a reader alias naming the
    writer's full name too), a reader field the writer lacks needs a default, writer fields
    the reader lacks are skipped; int → long → float → double and string ↔ bytes promote;
    each branch of a writer union must be read by the reader (by one of its branches if it
    is a union); enum symbols of the writer must be the reader's unless it has a default;
    arrays and maps compare their items and values, fixed types their sizes."""
    return _Resolution(reader[1], writer[1]).check(reader[0], writer[0], "")


class _Resolution:
    def __init__(self, reader_named: Mapping[str, Any], writer_named: Mapping[str, Any]) -> None:
        self.reader_named, self.writer_named = reader_named, writer_named
        self.checking: set[tuple[int, int]] = set()  # records being compared (recursion)

    @staticmethod
    def resolve(schema: Any, named: Mapping[str, Any]) -> Any:
        """A schema as a primitive's name, a union's list or a complex type's dict."""
        if isinstance(schema, str):
            return named.get(schema, schema)
        if isinstance(schema, dict) and schema["type"] not in {*_NAMED, "array", "map"}:
            return _Resolution.resolve(schema["type"], named)  # with attributes (logicalType)
        return schema

    @staticmethod
    def kind(schema: Any) -> str:
        if isinstance(schema, list):
            return "union"
        if isinstance(schema, str):
            return schema
        return "record" if schema["type"] == "error" else str(schema["type"])

    def check(self, reader: Any, writer: Any, path: str) -> list[Incompatibility]:
        reader = self.resolve(reader, self.reader_named)
        writer = self.resolve(writer, self.writer_named)
        r, w = self.kind(reader), self.kind(writer)
        if w == "union":
            return [
                found
                for i, branch in enumerate(writer)
                for found in self.check(reader, branch, f"{path}/{i}")
            ]
        if r == w:
            return self.same_kind(r, reader, writer, path)
        if r in _PROMOTIONS.get(w, ()):
            return []
        if r == "union":
            if any(not self.check(branch, writer, path) for branch in reader):
                return []
            info = f"reader union lacking writer type: {w.upper()}"
            return [Incompatibility("MISSING_UNION_BRANCH", path or "/", info)]
        info = f"reader type: {r.upper()} not compatible with writer type: {w.upper()}"
        return [Incompatibility("TYPE_MISMATCH", path or "/", info)]

    def same_kind(self, kind: str, reader: Any, writer: Any, path: str) -> list[Incompatibility]:
        if kind == "array":
            return self.check(reader["items"], writer["items"], f"{path}/items")
        if kind == "map":
            return self.check(reader["values"], writer["values"], f"{path}/values")
        if kind not in _NAMED:
            return []
        if not self.same_name(reader, writer):
            return [Incompatibility("NAME_MISMATCH", f"{path}/name", f"expected: {writer['name']}")]
        if kind == "fixed" and reader["size"] != writer["size"]:
            info = f"expected: {writer['size']}, found: {reader['size']}"
            return [Incompatibility("FIXED_SIZE_MISMATCH", f"{path}/size", info)]
        if kind == "enum":
            missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if missing and "default" not in reader:
                info = f"[{', '.join(missing)}]"
                return [Incompatibility("MISSING_ENUM_SYMBOLS", f"{path}/symbols", info)]
            return []
        return self.fields(reader, writer, path) if kind == "record" else []

    @staticmethod
    def same_name(reader: dict[str, Any], writer: dict[str, Any]) -> bool:
        """Avro's ``schemaNameEquals``: the same simple name, or a reader alias (qualified with
        the reader's namespace) naming the writer's full name."""
        namespace, _, name = reader["name"].rpartition(".")
        if name == writer["name"].rpartition(".")[2]:
            return True
        aliases = {
            a if "." in a or not namespace else f"{namespace}.{a}"
            for a in reader.get("aliases", ())
        }
        return writer["name"] in aliases

    def fields(
        self, reader: dict[str, Any], writer: dict[str, Any], path: str
    ) -> list[Incompatibility]:
        pair = (id(reader), id(writer))
        if pair in self.checking:
            return []  # a recursive type, being compared further up
        self.checking.add(pair)
        found: list[Incompatibility] = []
        written = {f["name"]: f for f in writer["fields"]}
        for i, reader_field in enumerate(reader["fields"]):
            names = [reader_field["name"], *reader_field.get("aliases", ())]
            writer_field = next((written[n] for n in names if n in written), None)
            if writer_field is not None:
                found += self.check(
                    reader_field["type"], writer_field["type"], f"{path}/fields/{i}/type"
                )
            elif "default" not in reader_field:
                found.append(
                    Incompatibility(
                        "READER_FIELD_MISSING_DEFAULT_VALUE",
                        f"{path}/fields/{i}",
                        reader_field["name"],
                    )
                )
        self.checking.discard(pair)
        return found


# The registry's state -------------------------------------------------------------------


class _State:
    """Subjects, versions, ids and configs; every method runs under the registry's lock."""

    def __init__(self) -> None:
        self.schemas: dict[int, _Schema] = {}
        self.ids: dict[str, int] = {}  # schema key → id, kept for good: ids are never reused
        self.subjects: dict[str, list[_Version]] = {}
        self.global_level = "BACKWARD"
        self.levels: dict[str, str] = {}

    # lookups

    def versions_of(self, subject: str, deleted: bool = False) -> list[_Version]:
        return [v for v in self.subjects.get(subject, []) if deleted or not v.deleted]

    def find_version(self, subject: str, version: int, deleted: bool = False) -> _Version:
        versions = self.versions_of(subject, deleted)
        if not versions:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        found = (
            versions[-1]
            if version == -1
            else next((v for v in versions if v.version == version), None)
        )
        if found is None:
            raise RegistryError(404, 40402, f"Version {version} not found.")
        return found

    def holders(self, schema_id: int, deleted: bool = True) -> list[_Version]:
        return [
            v
            for versions in self.subjects.values()
            for v in versions
            if v.id == schema_id and (deleted or not v.deleted)
        ]

    # bodies

    def text(self, schema: _Schema, fmt: str) -> str:
        """The stored text, which is what every ``format`` answers (see the module's doc)."""
        proto_text = schema.schema_type == "PROTOBUF" and not _serialized_descriptor(schema.text)
        if proto_text and fmt == "serialized":
            raise RegistryError(
                422,
                42201,
                "TestSchemaRegistry cannot answer format=serialized for a schema registered"
                " as .proto text (it has no .proto parser): register the base64"
                " FileDescriptorProto, as confluent-kafka's ProtobufSerializer does",
            )
        return schema.text

    def schema_fields(self, schema: _Schema, fmt: str = "") -> dict[str, Any]:
        """Confluent's ``SchemaString`` (``schemaType`` left out for AVRO, as its examples)."""
        body: dict[str, Any] = {"guid": schema.guid}
        if schema.schema_type != "AVRO":
            body["schemaType"] = schema.schema_type
        if schema.references:
            body["references"] = schema.references
        if schema.metadata is not None:
            body["metadata"] = schema.metadata
        if schema.rule_set is not None:
            body["ruleSet"] = schema.rule_set
        return {**body, "schema": self.text(schema, fmt)}

    def version_body(self, v: _Version, fmt: str = "") -> dict[str, Any]:
        """Confluent's ``Schema`` entity."""
        head = {"subject": v.subject, "version": v.version, "id": v.id}
        return {**head, **self.schema_fields(self.schemas[v.id], fmt)}

    # parsing

    def candidate(self, body: Any) -> _Schema:
        """The schema of a register, lookup or compatibility request, checked to parse."""
        body = body if isinstance(body, dict) else {}
        text = body.get("schema")
        if not isinstance(text, str) or not text.strip():
            raise RegistryError(422, 42201, "Empty schema")
        schema_type = body.get("schemaType") or "AVRO"
        if schema_type not in SCHEMA_TYPES:
            raise RegistryError(422, 42201, f"Invalid schema type {schema_type}")
        references = body.get("references") or []
        try:
            schema = _Schema(
                schema_type, text, references, body.get("metadata"), body.get("ruleSet")
            )
        except ValueError as e:
            raise RegistryError(422, 42201, f"Invalid schema of type {schema_type}: {e}") from e
        if schema_type == "AVRO":
            self.avro(schema)
        else:
            self.dependencies(schema)
        return schema

    def referenced(self, reference: dict[str, Any]) -> _Schema:
        subject, version = reference.get("subject", ""), reference.get("version", -1)
        try:
            return self.schemas[self.find_version(subject, int(version), deleted=True).id]
        except (RegistryError, TypeError, ValueError) as e:
            raise RegistryError(
                422, 42201, f"Invalid schema: reference {reference} names no registered schema"
            ) from e

    def avro(self, schema: _Schema) -> ParsedAvro:
        """The schema parsed by fastavro (422 if it does not parse), with its references."""
        named: dict[str, Any] = {}
        try:
            for dependency in self.dependencies(schema):
                fastavro.parse_schema(json.loads(dependency.text), named_schemas=named)
            return fastavro.parse_schema(json.loads(schema.text), named_schemas=named), named
        except (SchemaParseException, ValueError, TypeError, KeyError, AttributeError) as e:
            raise RegistryError(422, 42201, f"Invalid schema of type AVRO: {e}") from e

    def dependencies(self, schema: _Schema) -> list[_Schema]:
        """The schemas ``schema`` references, transitively, each after those it references."""
        ordered: list[_Schema] = []
        for reference in schema.references:
            target = self.referenced(reference)
            ordered += [*self.dependencies(target), target]
        return ordered

    # compatibility

    def incompatibilities(
        self, subject: str, schema: _Schema, previous: list[_Version]
    ) -> list[str]:
        """Confluent's messages of why ``schema`` may not follow ``previous`` (live versions,
        oldest first) at the subject's level: empty when it may."""
        level = self.levels.get(subject, self.global_level)
        if level == "NONE" or not previous:
            return []
        for old in reversed(previous if level.endswith("_TRANSITIVE") else previous[-1:]):
            messages = self.against(level, schema, old)
            if messages:
                return [*messages, f"{{validateFields: 'false', compatibility: '{level}'}}"]
        return []

    def against(self, level: str, schema: _Schema, old: _Version) -> list[str]:
        """Why ``schema`` and the ``old`` version fail ``level`` (its direction, not its
        transitivity), in Confluent's words and order."""
        existing = self.schemas[old.id]
        if existing.schema_type != schema.schema_type:
            return ["Incompatible because of different schema type"]
        if schema.schema_type != "AVRO":
            return []  # Protobuf and JSON Schema rules are not implemented: compatible
        new_avro, old_avro = self.avro(schema), self.avro(existing)
        about_old = [f"{{oldSchemaVersion: {old.version}}}", f"{{oldSchema: '{existing.text}'}}"]
        messages: list[str] = []
        if not level.startswith("BACKWARD"):  # FORWARD, FULL: the old schema reads the new
            found = avro_incompatibilities(old_avro, new_avro)
            messages += [i.message("old", "new") for i in found]
            messages += about_old if found and level.startswith("FORWARD") else []
        if not level.startswith("FORWARD"):  # BACKWARD, FULL: the new schema reads the old
            found = avro_incompatibilities(new_avro, old_avro)
            messages += [i.message("new", "old") for i in found] + (about_old if found else [])
        return messages

    # endpoints

    def root(self, call: _Call) -> Any:
        return {}

    def schema_types(self, call: _Call) -> Any:
        return list(SCHEMA_TYPES)

    def schema_by_id(self, call: _Call) -> Any:
        schema_id = int(call.params["id"])
        holders = self.holders(schema_id)
        if not holders:
            raise RegistryError(404, 40403, f"Schema {schema_id} not found")
        body = self.schema_fields(self.schemas[schema_id], call.arg("format"))
        subject = call.arg("subject")
        if not subject:
            return body
        holder = next((v for v in holders if v.subject == subject), holders[0])
        return {"subject": holder.subject, "version": holder.version, **body}

    def schema_versions(self, call: _Call) -> Any:
        schema_id = int(call.params["id"])
        if not self.holders(schema_id):
            raise RegistryError(404, 40403, "Schema not found")
        holders = self.holders(schema_id, call.flag("deleted"))
        return [{"subject": v.subject, "version": v.version} for v in holders]

    def schema_subjects(self, call: _Call) -> Any:
        return sorted({v["subject"] for v in self.schema_versions(call)})

    def schema_by_guid(self, call: _Call) -> Any:
        guid = call.params["guid"]
        for schema_id, schema in self.schemas.items():
            if schema.guid == guid and self.holders(schema_id):
                return self.schema_fields(schema, call.arg("format"))
        raise RegistryError(404, 40403, f"Schema {guid} not found")

    def list_subjects(self, call: _Call) -> Any:
        live = {s for s in self.subjects if self.versions_of(s)}
        if call.flag("deletedOnly"):
            subjects = set(self.subjects) - live
        else:
            subjects = set(self.subjects) if call.flag("deleted") else live
        prefix = call.arg("subjectPrefix")
        return sorted(s for s in subjects if prefix in ("", ":*:") or s.startswith(prefix))

    def register(self, call: _Call) -> Any:
        subject, schema = call.params["subject"], self.candidate(call.body)
        live = self.versions_of(subject)
        schema_id = self.ids.get(schema.key)
        existing = next((v for v in live if v.id == schema_id), None)
        if existing is None:
            messages = self.incompatibilities(subject, schema, live)
            if messages:
                raise RegistryError(
                    409,
                    INCOMPATIBLE_ERROR_CODE,
                    "Schema being registered is incompatible with an earlier schema for subject"
                    f' "{subject}", details: [{", ".join(messages)}]',
                )
            if schema_id is None:
                schema_id = self.ids[schema.key] = len(self.ids) + 1
                self.schemas[schema_id] = schema
            versions = self.subjects.setdefault(subject, [])
            existing = _Version(
                subject, max((v.version for v in versions), default=0) + 1, schema_id
            )
            versions.append(existing)
        body = self.version_body(existing, call.arg("format"))
        return {k: v for k, v in body.items() if k != "subject"}  # RegisterSchemaResponse

    def lookup(self, call: _Call) -> Any:
        subject, schema = call.params["subject"], self.candidate(call.body)
        versions = self.versions_of(subject, call.flag("deleted"))
        if not versions:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        schema_id = self.ids.get(schema.key)
        found = next((v for v in reversed(versions) if v.id == schema_id), None)
        if found is None:
            raise RegistryError(404, 40403, "Schema not found")
        return self.version_body(found, call.arg("format"))

    def list_versions(self, call: _Call) -> Any:
        subject = call.params["subject"]
        deleted_only = call.flag("deletedOnly")
        versions = self.versions_of(subject, deleted_only or call.flag("deleted"))
        if not versions:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        return [v.version for v in versions if v.deleted or not deleted_only]

    def get_version(self, call: _Call) -> Any:
        version = _version_id(call.params["version"])
        found = self.find_version(call.params["subject"], version, call.flag("deleted"))
        return self.version_body(found, call.arg("format"))

    def delete_subject(self, call: _Call) -> Any:
        subject = call.params["subject"]
        versions = self.versions_of(subject, deleted=True)
        if not versions:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        if not call.flag("permanent"):
            live = [v for v in versions if not v.deleted]
            if not live:
                raise RegistryError(
                    404,
                    40404,
                    f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently",
                )
            for v in live:
                v.deleted = True
            return [v.version for v in live]
        if any(not v.deleted for v in versions):
            raise RegistryError(
                404,
                40405,
                f"Subject '{subject}' was not deleted first before being permanently deleted",
            )
        del self.subjects[subject]
        self.levels.pop(subject, None)
        return [v.version for v in versions]

    def delete_version(self, call: _Call) -> Any:
        subject, version = call.params["subject"], _version_id(call.params["version"])
        permanent = call.flag("permanent")
        # "latest" is the latest live version for a soft delete, the latest one for a hard one
        found = self.find_version(subject, version, deleted=permanent or version != -1)
        if not permanent:
            if found.deleted:
                raise RegistryError(
                    404,
                    40406,
                    f"Subject '{subject}' Version {found.version} was soft deleted."
                    "Set permanent=true to delete permanently",
                )
            found.deleted = True
            return found.version
        if not found.deleted:
            raise RegistryError(
                404,
                40407,
                f"Subject '{subject}' Version {found.version} was not deleted first before"
                " being permanently deleted",
            )
        self.subjects[subject].remove(found)
        if not self.subjects[subject]:
            del self.subjects[subject]
            self.levels.pop(subject, None)
        return found.version

    def get_config(self, call: _Call) -> Any:
        subject = call.params.get("subject")
        if subject is None:
            return {"compatibilityLevel": self.global_level}
        level = self.levels.get(subject)
        if level is None and not call.flag("defaultToGlobal"):
            raise RegistryError(
                404,
                40408,
                f"Subject '{subject}' does not have subject-level compatibility configured",
            )
        return {"compatibilityLevel": level or self.global_level}

    def put_config(self, call: _Call) -> Any:
        body = call.body if isinstance(call.body, dict) else {}
        level = body.get("compatibility")
        if level is None:
            return {}
        if str(level).upper() not in LEVELS:
            raise RegistryError(
                422,
                42203,
                "Invalid compatibility level. Valid values are none, backward, forward, full,"
                " backward_transitive, forward_transitive, and full_transitive",
            )
        level = str(level).upper()
        subject = call.params.get("subject")
        if subject is None:
            self.global_level = level
        else:
            self.levels[subject] = level
        return {"compatibility": level}

    def delete_config(self, call: _Call) -> Any:
        subject = call.params.get("subject")
        if subject is None:
            old, self.global_level = self.global_level, "BACKWARD"
            return {"compatibilityLevel": old}
        if subject not in self.levels:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        return {"compatibilityLevel": self.levels.pop(subject)}

    def get_mode(self, call: _Call) -> Any:
        subject = call.params.get("subject")
        if subject is not None and not call.flag("defaultToGlobal"):
            raise RegistryError(
                404, 40409, f"Subject '{subject}' does not have subject-level mode configured"
            )
        return {"mode": "READWRITE"}

    def compatibility(self, call: _Call) -> Any:
        subject = call.params["subject"]
        if "version" in call.params:
            version = _version_id(call.params["version"])
            try:
                previous = [self.find_version(subject, version)]
            except RegistryError:
                if version != -1:
                    raise RegistryError(404, 40402, f"Version {version} not found.") from None
                previous = []
        else:
            previous = self.versions_of(subject)
        try:
            messages = self.incompatibilities(subject, self.candidate(call.body), previous)
        except RegistryError as e:
            if not call.flag("verbose") or e.status != 422:
                raise
            messages = [e.body["message"]]
        answer: dict[str, Any] = {"is_compatible": not messages}
        return {**answer, "messages": messages} if call.flag("verbose") else answer

    def contexts(self, call: _Call) -> Any:
        return ["."]

    def associations(self, call: _Call) -> Any:
        return []


def _route(template: str) -> re.Pattern[str]:
    """``{id}`` matches digits, any other ``{name}`` one path segment."""

    def group(match: re.Match[str]) -> str:
        return f"(?P<{match[1]}>{'[0-9]+' if match[1] == 'id' else '[^/]+'})"

    return re.compile(re.sub(r"\{(\w+)\}", group, template))


_ROUTES: list[tuple[str, re.Pattern[str], Callable[[_State, _Call], Any]]] = [
    ("GET", _route("/"), _State.root),
    ("GET", _route("/schemas/types"), _State.schema_types),
    ("GET", _route("/schemas/ids/{id}"), _State.schema_by_id),
    ("GET", _route("/schemas/ids/{id}/versions"), _State.schema_versions),
    ("GET", _route("/schemas/ids/{id}/subjects"), _State.schema_subjects),
    ("GET", _route("/schemas/guids/{guid}"), _State.schema_by_guid),
    ("GET", _route("/subjects"), _State.list_subjects),
    ("POST", _route("/subjects/{subject}"), _State.lookup),
    ("DELETE", _route("/subjects/{subject}"), _State.delete_subject),
    ("GET", _route("/subjects/{subject}/versions"), _State.list_versions),
    ("POST", _route("/subjects/{subject}/versions"), _State.register),
    ("GET", _route("/subjects/{subject}/versions/{version}"), _State.get_version),
    ("DELETE", _route("/subjects/{subject}/versions/{version}"), _State.delete_version),
    ("GET", _route("/config"), _State.get_config),
    ("PUT", _route("/config"), _State.put_config),
    ("DELETE", _route("/config"), _State.delete_config),
    ("GET", _route("/config/{subject}"), _State.get_config),
    ("PUT", _route("/config/{subject}"), _State.put_config),
    ("DELETE", _route("/config/{subject}"), _State.delete_config),
    ("GET", _route("/mode"), _State.get_mode),
    ("GET", _route("/mode/{subject}"), _State.get_mode),
    ("POST", _route("/compatibility/subjects/{subject}/versions"), _State.compatibility),
    ("POST", _route("/compatibility/subjects/{subject}/versions/{version}"), _State.compatibility),
    ("GET", _route("/contexts"), _State.contexts),
    ("GET", _route("/associations/resources/{namespace}/{name}"), _State.associations),
]
"""Confluent's paths (``{id}`` an integer, the others URL-encoded path segments)."""


def _dispatch(state: _State, method: str, path: str, query: dict[str, list[str]], body: Any) -> Any:
    """The answer of the route of ``path`` (raw, URL-encoded), or Jersey's 404 or 405."""
    path = path.rstrip("/") or "/"
    routed = False
    for route_method, pattern, endpoint in _ROUTES:
        match = pattern.fullmatch(path)
        if match is not None:
            if route_method == method:
                params = {name: unquote(value) for name, value in match.groupdict().items()}
                return endpoint(state, _Call(params, query, body))
            routed = True
    if routed:
        raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
    raise RegistryError(404, 404, "HTTP 404 Not Found")


# HTTP ---------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    registry: TestSchemaRegistry

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about clients that hang up before their answer (a timeout, a test's end)."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """One request per connection (HTTP/1.0): a registry taken down refuses the very next
    request, with no kept-alive connection left to answer it."""

    server: _Server

    def answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        status, payload, headers = self.server.registry._answer(
            self.command, self.path, self.headers, self.rfile.read(length)
        )
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in {**headers, "Content-Type": CONTENT_TYPE}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = answer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: :attr:`TestSchemaRegistry.requests` has the requests."""


class TestSchemaRegistry(Started):
    """The registry on 127.0.0.1: :meth:`start` listens on a free port the first time and on
    the same port after a :meth:`stop`; the state (subjects, ids, configs, the requests seen)
    is kept in memory across both, for the object's life.

    ``basic_auth`` (user → password) and ``bearer_token`` make every request need one of
    them (``Authorization: Basic`` or ``Bearer``), else 401 with Confluent's body. Faults:
    :meth:`down` and :meth:`up`, :meth:`slow`, :meth:`failing`."""

    __test__ = False  # not a pytest test class

    def __init__(
        self, *, basic_auth: Mapping[str, str] | None = None, bearer_token: str | None = None
    ) -> None:
        self._basic_auth = dict(basic_auth or {})
        self._bearer_token = bearer_token
        self._state = _State()
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._delay = 0.0
        self._failing: tuple[int, str] | None = None  # status, message
        self._port = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, the same for the object's life once started."""
        if not self._port:
            raise RuntimeError("TestSchemaRegistry was never started")
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> TestSchemaRegistry:
        """Listens (on the port of the last start, if any); returns at once serving."""
        if self._server is None:
            self._server = _Server(("127.0.0.1", self._port), _Handler)
            self._server.registry = self
            self._port = self._server.server_address[1]
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                args=(0.02,),  # the poll interval: how long stop() may wait
                name=f"schema-registry-{self._port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Closes the listening socket (connections are refused from now on); requests being
        answered finish in their own threads. The state is kept."""
        if self._server is not None and self._thread is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
            self._server = self._thread = None

    def down(self) -> None:
        """An outage: :meth:`stop`, to be ended by :meth:`up`."""
        self.stop()

    def up(self) -> TestSchemaRegistry:
        """The end of an outage: :meth:`start`, on the same port, with the same state."""
        return self.start()

    @contextmanager
    def slow(self, seconds: float) -> Iterator[None]:
        """Within the block, every answer (errors too) comes ``seconds`` late."""
        self._delay = seconds
        try:
            yield
        finally:
            self._delay = 0.0

    @contextmanager
    def failing(self, status: int) -> Iterator[None]:
        """Within the block, every request is answered ``status`` (e.g. 500, 503) with
        Confluent's error body, ``error_code`` being ``status`` as Confluent's generic errors."""
        self._failing = status, f"HTTP {status} {HTTPStatus(status).phrase} (injected)"
        try:
            yield
        finally:
            self._failing = None

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far (refused and failed ones too), oldest first."""
        with self._lock:
            return list(self._requests)

    def count(self, path: str, method: str = "GET") -> int:
        """How many ``method`` requests were sent to ``path`` (URL-decoded, no query), e.g.
        ``count("/schemas/ids/1")`` to check what a client cached."""
        return sum(r.method == method and r.path == path for r in self.requests)

    def _answer(
        self, method: str, target: str, headers: Message, body: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        """Status, JSON payload and extra headers of a request (the HTTP handler's side)."""
        split = urlsplit(target)
        query = parse_qs(split.query, keep_blank_values=True)
        with self._lock:
            recorded = {name.lower(): value for name, value in headers.items()}
            self._requests.append(RecordedRequest(method, unquote(split.path), query, recorded))
        if self._delay:
            time.sleep(self._delay)
        if self._failing is not None:
            status, message = self._failing
            return status, {"error_code": status, "message": message}, {}
        if not self._authorized(headers.get("Authorization")):
            challenge = {
                "WWW-Authenticate": 'Basic realm="SchemaRegistry"' if self._basic_auth else "Bearer"
            }
            return 401, {"error_code": 401, "message": "Unauthorized"}, challenge
        try:
            request = json.loads(body or "null")
        except ValueError:
            return 400, {"error_code": 400, "message": "Unrecognized JSON body"}, {}
        try:
            with self._lock:
                payload = _dispatch(self._state, method, split.path, query, request)
        except RegistryError as e:
            return e.status, e.body, {}
        return 200, payload, {}

    def _authorized(self, authorization: str | None) -> bool:
        if not self._basic_auth and self._bearer_token is None:
            return True
        scheme, _, credentials = (authorization or "").partition(" ")
        if scheme.lower() == "bearer":
            return self._bearer_token is not None and credentials == self._bearer_token
        if scheme.lower() != "basic":
            return False
        try:
            user, _, password = base64.b64decode(credentials, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        return user in self._basic_auth and self._basic_auth[user] == password


@contextmanager
def schema_registry(**kwargs: Any) -> Iterator[str]:
    """The URL of a started :class:`TestSchemaRegistry` (``kwargs`` to its constructor),
    stopped after the block; or, when ``SCHEMA_REGISTRY_URL`` is set, that registry's URL
    (then ``kwargs``, which only the stand-in honors, skip the calling test)."""
    external = os.environ.get(URL_ENV)
    if external:
        if kwargs:
            skip_if_external(f"a registry with {', '.join(kwargs)}")
        yield external
        return
    with TestSchemaRegistry(**kwargs) as registry:
        yield registry.url


def skip_if_external(needs: str) -> None:
    """Skips the calling test when ``SCHEMA_REGISTRY_URL`` names a real registry: ``needs``
    (fault injection, auth, recorded requests) is only the stand-in's."""
    external = os.environ.get(URL_ENV)
    if external:
        pytest.skip(f"needs {needs}, which only TestSchemaRegistry has ({URL_ENV}={external})")
