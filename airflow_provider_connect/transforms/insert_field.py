"""``InsertField``: adds fields from the record's metadata (topic, partition, offset,
timestamp) or a static value, to the key or the value (Kafka's ``InsertField$Key`` and
``InsertField$Value``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, NamedTuple

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type
from airflow_provider_connect.connect.connector import ConnectRecord
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct, Timestamp
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    PartTransformation,
    R,
    SchemaCache,
    copy_schema_basics,
    require_map,
    require_sink_record,
    require_struct,
    with_replace_null_with_default,
)

TOPIC_FIELD = "topic.field"
PARTITION_FIELD = "partition.field"
OFFSET_FIELD = "offset.field"
TIMESTAMP_FIELD = "timestamp.field"
STATIC_FIELD = "static.field"
STATIC_VALUE = "static.value"
_OPTIONALITY = (
    "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it "
    "optional (the default)."
)
CONFIG_DEF = with_replace_null_with_default(
    ConfigDef()
    .define(
        TOPIC_FIELD,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        f"Field name for Kafka topic. {_OPTIONALITY}",
    )
    .define(
        PARTITION_FIELD,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        f"Field name for Kafka partition. {_OPTIONALITY}",
    )
    .define(
        OFFSET_FIELD,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        f"Field name for Kafka offset - only applicable to sink connectors.<br/>{_OPTIONALITY}",
    )
    .define(
        TIMESTAMP_FIELD,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        f"Field name for record timestamp. {_OPTIONALITY}",
    )
    .define(
        STATIC_FIELD,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        f"Field name for static data field. {_OPTIONALITY}",
    )
    .define(
        STATIC_VALUE,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "Static field value, if field name configured.",
    )
)
PURPOSE = "field insertion"
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


class Insertion(NamedTuple):
    """A field to insert: its name, and whether its schema is optional (``name?``, the
    default) or required (``name!``)."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> Insertion | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return Insertion(spec[:-1], True)
        if spec.endswith("!"):
            return Insertion(spec[:-1], False)
        return Insertion(spec, True)


class InsertField(PartTransformation[R]):
    """Insert field(s) using attributes from the record metadata or a configured static
    value. Use :class:`InsertFieldKey` or :class:`InsertFieldValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.topic_field = Insertion.parse(config[TOPIC_FIELD])
        self.partition_field = Insertion.parse(config[PARTITION_FIELD])
        self.offset_field = Insertion.parse(config[OFFSET_FIELD])
        self.timestamp_field = Insertion.parse(config[TIMESTAMP_FIELD])
        self.static_field = Insertion.parse(config[STATIC_FIELD])
        self.static_value: str | None = config[STATIC_VALUE]
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        if not any(
            (
                self.topic_field,
                self.partition_field,
                self.offset_field,
                self.timestamp_field,
                self.static_field,
            )
        ):
            raise ConfigException("No field insertion configured")
        if self.static_field is not None and self.static_value is None:
            raise ConfigException.invalid(
                STATIC_VALUE, None, f"No value specified for static field: {self.static_field.name}"
            )
        self.schemas: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record, value)
        return self._apply_with_schema(record, value)

    def _inserted(self, record: ConnectRecord, timestamp: Any) -> list[tuple[str, Any]]:
        """The fields to add, in Kafka's order: topic, partition, offset, timestamp, static."""
        added: list[tuple[str, Any]] = []
        if self.topic_field is not None:
            added.append((self.topic_field.name, record.topic))
        if self.partition_field is not None and record.kafka_partition is not None:
            added.append((self.partition_field.name, record.kafka_partition))
        if self.offset_field is not None:
            added.append(
                (self.offset_field.name, require_sink_record(record, PURPOSE).kafka_offset)
            )
        if self.timestamp_field is not None and record.timestamp is not None:
            added.append((self.timestamp_field.name, timestamp))
        if self.static_field is not None and self.static_value is not None:
            added.append((self.static_field.name, self.static_value))
        return added

    def _apply_schemaless(self, record: R, value: Any) -> R:
        updated = dict(require_map(value, PURPOSE))
        if self.topic_field is not None:
            updated[self.topic_field.name] = record.topic
        if self.partition_field is not None or self.offset_field is not None:
            updated.update(self._inserted(record, record.timestamp))
        else:  # the usual case, without the list: topic above, timestamp and static here
            if self.timestamp_field is not None and record.timestamp is not None:
                updated[self.timestamp_field.name] = record.timestamp
            if self.static_field is not None:
                updated[self.static_field.name] = self.static_value
        return self.new_record(record, None, updated)

    def _apply_with_schema(self, record: R, value: Any) -> R:
        struct = require_struct(value, PURPOSE)
        schema = self.schemas.get(struct.schema, self._updated_schema)
        updated = Struct(schema)
        for name, field_value in (
            struct.items() if self.replace_null_with_default else _raw_items(struct)
        ):
            updated.put(name, field_value)
        timestamp = (
            None
            if record.timestamp is None
            else _EPOCH + dt.timedelta(milliseconds=record.timestamp)
        )
        for name, field_value in self._inserted(record, timestamp):
            updated.put(name, field_value)
        return self.new_record(record, schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields or ():
            builder.field(field.name, field.schema)
        for insertion, optional_schema, required_schema in (
            (self.topic_field, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
            (self.partition_field, Schema.OPTIONAL_INT32_SCHEMA, Schema.INT32_SCHEMA),
            (self.offset_field, Schema.OPTIONAL_INT64_SCHEMA, Schema.INT64_SCHEMA),
            (self.timestamp_field, OPTIONAL_TIMESTAMP_SCHEMA, Timestamp.SCHEMA),
            (self.static_field, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
        ):
            if insertion is not None:
                builder.field(
                    insertion.name, optional_schema if insertion.optional else required_schema
                )
        return builder.build()


def _raw_items(struct: Struct) -> list[tuple[str, Any]]:
    """Every field's value as set (None kept where Kafka's ``getWithoutDefault`` keeps it)."""
    return [(f.name, struct.get_without_default(f)) for f in struct.schema.fields or ()]


class InsertFieldKey(InsertField[R]):
    """Kafka's ``InsertField$Key``."""

    KEY = True


class InsertFieldValue(InsertField[R]):
    """Kafka's ``InsertField$Value``."""

    KEY = False
