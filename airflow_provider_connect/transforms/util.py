"""What the transformations share, as Kafka's ``transforms.util``: checks of what a record
holds, schema copies, a bounded cache of derived schemas, and the $Key/$Value split."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from airflow_provider_connect.connect.config import ConfigDef, Importance, LambdaValidator, Type
from airflow_provider_connect.connect.connector import ConnectRecord
from airflow_provider_connect.connect.data import Field, Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.transforms import Transformation

R = TypeVar("R", bound=ConnectRecord)
K = TypeVar("K")
V = TypeVar("V")


def type_name(value: object) -> str:
    """What Kafka's messages call ``nullSafeClassName``."""
    return "null" if value is None else type(value).__name__


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataException(f"Schema required for [{purpose}]")
    return schema


def require_map(value: object, purpose: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataException(
            f"Only Map objects supported in absence of schema for [{purpose}], "
            f"found: {type_name(value)}"
        )
    return value


def require_struct(value: object, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(
            f"Only Struct objects supported for [{purpose}], found: {type_name(value)}"
        )
    return value


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataException(
            f"Only SinkRecord supported for [{purpose}], found: {type_name(record)}"
        )
    return record


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """``builder`` with ``source``'s name, version, doc and parameters."""
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    return builder


class SchemaCache(Generic[K, V]):
    """The last few schemas a transformation derived, by their input (Kafka keeps 16): a
    record whose schema was seen costs one dictionary lookup. Oldest out first."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.entries: dict[K, V] = {}

    def get(self, key: K, derive: Callable[[K], V]) -> V:
        found = self.entries.get(key)
        if found is None:
            found = derive(key)
            if len(self.entries) >= self.size:
                del self.entries[next(iter(self.entries))]
            self.entries[key] = found
        return found


REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"


def with_replace_null_with_default(definition: ConfigDef) -> ConfigDef:
    """``definition`` with ``replace.null.with.default``, which Kafka's transformations of
    struct fields share."""
    return definition.define(
        REPLACE_NULL_WITH_DEFAULT,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Whether to replace fields that have a default value and that are null to the default "
        "value. When set to true, the default value is used, otherwise null is used.",
    )


def field_value(struct: Struct, field: str | Field, with_default: bool) -> Any:
    """A field's value, its schema default standing for null when ``with_default``."""
    return struct.get(field) if with_default else struct.get_without_default(field)


def non_empty_list() -> LambdaValidator:
    def check(name: str, value: Any) -> None:
        if not value:
            raise ConfigException.invalid(name, value, "Empty list")

    return LambdaValidator(check, "non-empty list")


def distinct_list(*, empty_allowed: bool) -> LambdaValidator:
    """Kafka 4.2's ``ValidList.anyNonDuplicateValues`` (KIP-1161), with its messages: no
    item twice, no empty item, and at least one unless ``empty_allowed``."""

    def check(name: str, value: Any) -> None:
        def refuse(reason: str) -> None:
            raise ConfigException(f"Configuration '{name}' {reason}", name=name)

        if value is None:
            refuse("values must not be null.")
        if not value and not empty_allowed:
            refuse("must not be empty. Valid values include: any non-empty value")
        if len(set(value)) != len(value):
            refuse("values must not be duplicated.")
        if "" in value:
            refuse("values must not be empty.")

    return LambdaValidator(check, "")


def with_topic(record: R, topic: str) -> R:
    """``record`` in ``topic`` instead of its own."""
    return record.new_record(
        topic,
        record.kafka_partition,
        record.key_schema,
        record.key,
        record.value_schema,
        record.value,
        record.timestamp,
    )


def with_headers(record: R, headers: Headers) -> R:
    """``record`` with ``headers`` instead of its own."""
    return record.new_record(
        record.topic,
        record.kafka_partition,
        record.key_schema,
        record.key,
        record.value_schema,
        record.value,
        record.timestamp,
        headers,
    )


class PartTransformation(Transformation[R]):
    """A transformation of one part of a record, the key or the value: the $Key and $Value
    variants of a Kafka transformation set :attr:`KEY` (True for the key)."""

    KEY: ClassVar[bool]

    def operating_schema(self, record: R) -> Schema | None:
        return record.key_schema if self.KEY else record.value_schema

    def operating_value(self, record: R) -> Any:
        return record.key if self.KEY else record.value

    def new_record(
        self, record: R, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> R:
        """``record`` with this part replaced (and its headers, when given)."""
        if self.KEY:
            return record.new_record(
                record.topic,
                record.kafka_partition,
                schema,
                value,
                record.value_schema,
                record.value,
                record.timestamp,
                headers,
            )
        return record.new_record(
            record.topic,
            record.kafka_partition,
            record.key_schema,
            record.key,
            schema,
            value,
            record.timestamp,
            headers,
        )
