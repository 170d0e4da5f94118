"""What every Schema Registry converter does whatever its format: the subject a schema goes
under, registering it (or finding it, or the subject's latest version), Confluent's wire
format (a magic byte and the schema id, or its GUID in the payload or in a
``__key_schema_id``/``__value_schema_id`` header, read with confluent-kafka's own
functions), and the caches that keep the registry off the per-record path.

A format plugs in as a :class:`Codec`: the registry schema of a Connect schema, the bytes of
values, and the Connect data of a registered schema's bytes.
"""

from __future__ import annotations

import io
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from confluent_kafka.schema_registry import RegisteredSchema, dual_schema_id_deserializer
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry.serde import SchemaId
from confluent_kafka.serialization import MessageField, SerializationContext

from airflow_provider_connect.connect.data.schema import Schema, SchemaAndValue
from airflow_provider_connect.connect.errors import ConnectException, DataException
from airflow_provider_connect.schema_registry.config import (
    RECORD_NAME_STRATEGY,
    TOPIC_NAME_STRATEGY,
    RegistrySettings,
)
from airflow_provider_connect.schema_registry.registry import Registry

Encoder = Callable[[list[Any], bytes], list[bytes | None]]
"""Encodes a list of Connect values (None stays None) behind a wire-format prefix."""


@dataclass(frozen=True)
class WritePlan:
    """How a codec writes the values of one Connect schema."""

    schema: RegistrySchema
    """The schema to register (or find) for it."""
    record_name: str | None
    """The full name of its top-level type, for the record name strategies."""
    encode: Encoder
    message_indexes: list[int] | None = None
    """Protobuf's path to the message in its file (None for the other formats)."""


@dataclass(frozen=True)
class ReadPlan:
    """How a codec reads the payloads of one registered schema."""

    schema: Schema | None
    decode: Callable[[io.BytesIO], Any]
    """The Connect value of a payload (the bytes after the wire-format prefix)."""


class Codec(ABC):
    """A format: Avro, Protobuf or JSON Schema. Methods run once per schema, never per record;
    the functions they return run per record."""

    schema_type: str
    """The registry's name of the format: AVRO, PROTOBUF or JSON."""
    registry_format: str | None = None
    """The ``format`` the registry is asked for schemas in (protobuf's ``serialized``)."""

    @abstractmethod
    def write_plan(self, schema: Schema) -> WritePlan:
        """How values of the Connect ``schema`` are written; raises DataException when the
        format cannot hold them."""

    @abstractmethod
    def latest_plan(
        self, schema: Schema, plan: WritePlan, latest: RegisteredSchema, strict: bool
    ) -> WritePlan:
        """``plan`` (of the Connect ``schema``) writing with the subject's ``latest`` schema
        instead (``use.latest.version``); with ``strict``, raises DataException unless
        ``latest`` can read what ``plan``'s schema writes (``latest.compatibility.strict``)."""

    @abstractmethod
    def read_plan(
        self,
        writer: RegistrySchema,
        schema_id: SchemaId,
        version: int | None,
        reader: RegistrySchema | None,
    ) -> ReadPlan:
        """How payloads written with ``writer`` are read (with ``reader`` as the reader
        schema when given: ``use.latest.version``); ``version`` is the registry's version of
        ``writer``, for the Connect schema."""

    @abstractmethod
    def record_name(self, schema: RegistrySchema, schema_id: SchemaId) -> str | None:
        """The full name of the registered schema's top-level type."""


K = TypeVar("K")
V = TypeVar("V")


class _Bounded(Generic[K, V]):
    """A map of at most ``size`` entries that forgets its oldest entries first (first in,
    first out: the caches here hold a few schemas, and a lookup stays a dict lookup)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        return self.entries.get(key)

    def put(self, key: K, value: V) -> V:
        self.entries[key] = value
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return value


@dataclass
class _Latest:
    """The subject's latest version a plan was made with (``use.latest.version``), when
    that version can change under it (``latest.cache.ttl.sec``)."""

    subject: str
    schema_id: int | None
    ttl_s: float
    check_at: float

    def changed(self, registry: Registry) -> bool:
        """Whether the subject's latest version is another now, asked of the registry
        once ``latest.cache.ttl.sec`` passed since the last time (a clock read before)."""
        now = time.monotonic()
        if now < self.check_at:
            return False
        self.check_at = now + self.ttl_s
        return registry.latest(self.subject).schema_id != self.schema_id


@dataclass(frozen=True)
class _Writer:
    prefix: bytes
    encode: Encoder
    latest: _Latest | None


@dataclass(frozen=True)
class _Reader:
    plan: ReadPlan
    latest: _Latest | None


class Serde:
    """One converter's reading and writing; one instance serves one task thread."""

    def __init__(
        self, codec: Codec, registry: Registry, settings: RegistrySettings, is_key: bool
    ) -> None:
        self.codec = codec
        self.registry = registry
        self.settings = settings
        self.field = MessageField.KEY if is_key else MessageField.VALUE
        self.strategy = settings.key_strategy if is_key else settings.value_strategy
        self.writers: _Bounded[tuple[str, Schema], _Writer] = _Bounded(settings.schemas_cache_size)
        self.readers: _Bounded[tuple[Any, ...], _Reader] = _Bounded(settings.schemas_cache_size)

    def subject(self, topic: str, record_name: str | None) -> str:
        """The subject of a schema whose top-level type is ``record_name`` on ``topic``."""
        if self.strategy == TOPIC_NAME_STRATEGY:
            return f"{topic}-{self.field.value}"
        if record_name is None:
            raise DataException(
                f"{self.strategy} needs a named schema (a record, message or titled object)"
            )
        return record_name if self.strategy == RECORD_NAME_STRATEGY else f"{topic}-{record_name}"

    # -- writing -----------------------------------------------------------------------------
    def write(self, topic: str, schema: Schema | None, values: list[Any]) -> list[bytes | None]:
        """The wire bytes of ``values`` (of ``schema``, for ``topic``), None for None."""
        if schema is None:
            if all(v is None for v in values):
                return [None] * len(values)
            raise DataException(
                f"The {self.codec.schema_type} converters need a schema: the record for topic "
                f"{topic} has a value without one"
            )
        writer = self.writers.get((topic, schema))
        if writer is None or (writer.latest is not None and writer.latest.changed(self.registry)):
            writer = self.writers.put((topic, schema), self._writer(topic, schema))
        try:
            return writer.encode(values, writer.prefix)
        except ConnectException:
            raise
        except Exception as e:  # the encoder's own errors (fastavro's, protobuf's): the data's
            raise DataException(
                f"Failed to serialize {self.codec.schema_type} data for topic {topic}: "
                f"{type(e).__name__}: {e}"
            ) from e

    def _writer(self, topic: str, schema: Schema) -> _Writer:
        plan = self.codec.write_plan(schema)
        subject = self.subject(topic, plan.record_name)
        settings = self.settings
        latest = None
        if settings.use_latest_version:
            registered: RegisteredSchema = self.registry.latest(subject)
            self._check_latest(registered, subject)
            plan = self.codec.latest_plan(
                schema, plan, registered, settings.latest_compatibility_strict
            )
            latest = self._latest(subject, registered)
        elif settings.auto_register:
            registered = self.registry.register(subject, plan.schema, settings.normalize)
        else:
            registered = self.registry.lookup(subject, plan.schema, settings.normalize)
        schema_id = SchemaId(
            self.codec.schema_type, registered.schema_id, message_indexes=plan.message_indexes
        )
        return _Writer(schema_id.id_to_bytes(), plan.encode, latest)

    def _check_latest(self, registered: RegisteredSchema, subject: str) -> None:
        """Raises DataException unless the subject's latest version is of this format and
        has no data contract rules."""
        found = registered.schema.schema_type or "AVRO"  # the registry's default type
        if found != self.codec.schema_type:
            raise DataException(
                f"The latest version of subject {subject} is a {found} schema, not "
                f"{self.codec.schema_type}"
            )
        _refuse_rules(registered.schema, subject)

    def _latest(self, subject: str, registered: RegisteredSchema) -> _Latest | None:
        ttl_s = self.settings.latest_ttl_s
        if ttl_s is None:
            return None
        return _Latest(subject, registered.schema_id, ttl_s, time.monotonic() + ttl_s)

    # -- reading -----------------------------------------------------------------------------
    def read(
        self, topic: str, data: bytes, headers: list[tuple[str, bytes | None]] | None
    ) -> SchemaAndValue:
        """The Connect data of wire bytes written by any Schema Registry serializer."""
        schema_id = SchemaId(self.codec.schema_type)
        try:
            context = SerializationContext(topic, self.field, headers)  # type: ignore[arg-type]
            payload = dual_schema_id_deserializer(data, context, schema_id)
        except Exception as e:
            raise DataException(
                f"The {self.field.value} for topic {topic} is not in the Schema Registry's wire "
                f"format (a magic byte 0 or 1, then the schema id or GUID): {e}"
            ) from e
        key = (
            schema_id.id,
            schema_id.guid,
            tuple(schema_id.message_indexes) if schema_id.message_indexes else None,
            topic,
        )
        reader = self.readers.get(key)
        if reader is None or (reader.latest is not None and reader.latest.changed(self.registry)):
            reader = self.readers.put(key, self._reader(topic, schema_id))
        plan = reader.plan
        try:
            return SchemaAndValue(plan.schema, plan.decode(payload))
        except ConnectException:
            raise
        except Exception as e:  # the decoder's own errors: malformed or truncated bytes
            raise DataException(
                f"Failed to deserialize {self.codec.schema_type} data for topic {topic} "
                f"(schema {schema_id.id if schema_id.id is not None else schema_id.guid}): "
                f"{type(e).__name__}: {e}"
            ) from e

    def _reader(self, topic: str, schema_id: SchemaId) -> _Reader:
        guid = str(schema_id.guid) if schema_id.guid is not None else None
        writer = self.registry.schema(schema_id.id, guid, self.codec.registry_format)
        subject = self.subject(topic, self.codec.record_name(writer, schema_id))
        _refuse_rules(writer, subject)
        reader, latest = None, None
        if self.settings.use_latest_version:
            registered = self.registry.latest(subject)
            self._check_latest(registered, subject)
            reader, latest = registered.schema, self._latest(subject, registered)
        version = self.registry.version(subject, writer)
        return _Reader(self.codec.read_plan(writer, schema_id, version, reader), latest)


def _refuse_rules(schema: RegistrySchema, subject: str) -> None:
    """Raises DataException for a schema with data contract rules (its ``ruleSet``: field
    encryption, transforms, migrations), which the converters do not run: the data would be
    read or written other than its contract says."""
    rules = schema.rule_set
    if rules is not None and (rules.domain_rules or rules.migration_rules or rules.encoding_rules):
        raise DataException(
            f"A schema of subject {subject} has data contract rules, which the Schema "
            "Registry converters here do not run"
        )
