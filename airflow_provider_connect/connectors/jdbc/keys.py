"""Primary keys of the rows both JDBC sinks write, by key mode: ``none``, ``kafka`` (the
record's topic, partition and offset), ``record_key`` (the key's fields, or the key itself
under one name) and ``record_value`` (fields of the value)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.sink import SinkRecord

KAFKA_PK_FIELDS = ["__connect_topic", "__connect_partition", "__connect_offset"]
_KAFKA_SCHEMAS = [Schema.STRING_SCHEMA, Schema.INT32_SCHEMA, Schema.INT64_SCHEMA]
PRIMITIVE_KEY_FIELD = "__connect_key"


def outside_key(
    mode: str,
    fields: Sequence[str],
    record: SinkRecord,
    convert: Callable[[Schema, Any], Any],
    mode_config: str,
) -> dict[str, Any]:
    """The key columns and values that do not come from the value: the Kafka coordinates
    (``kafka``, named ``fields`` or ``__connect_topic``, ``__connect_partition``,
    ``__connect_offset``) or the record's key (``record_key``: the struct's ``fields``,
    default all, or a primitive key named ``fields[0]``, default ``__connect_key``); empty
    for the other modes. ``convert(schema, value)`` gives a key field's column value."""
    if mode == "kafka":
        coordinates = (record.topic, record.kafka_partition, record.kafka_offset)
        return dict(zip(fields or KAFKA_PK_FIELDS, coordinates, strict=True))
    if mode != "record_key":
        return {}
    key = record.key
    if isinstance(key, Struct):
        names = fields or [f.name for f in key.schema.fields or ()]
        return {n: convert(field_schema(key.schema, n), key.get(n)) for n in names}
    if key is None:
        raise DataException(
            f"{mode_config} record_key, but {record.topic} has a record without a key"
        )
    schema = record.key_schema or Schema.STRING_SCHEMA
    return {(fields or [PRIMITIVE_KEY_FIELD])[0]: convert(schema, key)}


def key_schemas(
    mode: str, names: Sequence[str], record: SinkRecord, value: Schema | None
) -> dict[str, Schema]:
    """The schemas of the key columns ``names`` (as :func:`outside_key` or the caller named
    them): the coordinates' for ``kafka``, the key's fields' or the key's for ``record_key``,
    the value's (``value``) fields' for ``record_value``."""
    if mode == "kafka":
        return dict(zip(names, _KAFKA_SCHEMAS, strict=True))
    if mode == "record_key" and isinstance(record.key, Struct):
        return {n: field_schema(record.key.schema, n) for n in names}
    if mode == "record_key":
        return {names[0]: record.key_schema or Schema.STRING_SCHEMA}
    assert value is not None
    return {n: field_schema(value, n) for n in names}


def field_schema(struct: Schema, name: str) -> Schema:
    """The schema of ``struct``'s field ``name``; DataException when it has none."""
    field = struct.field(name)
    if field is None:
        raise DataException(
            f"The primary key field {name} is not a field of {struct.name or 'the struct'}"
        )
    return field.schema
