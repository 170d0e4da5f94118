"""``ValueToKey``: replaces the key with a struct (or map) of fields of the value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import NO_DEFAULT, ConfigDef, Importance, Type
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.transforms import Transformation
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    R,
    SchemaCache,
    distinct_list,
    field_value,
    require_map,
    require_struct,
    with_replace_null_with_default,
)

FIELDS = "fields"
PURPOSE = "copying fields from value to key"
CONFIG_DEF = with_replace_null_with_default(
    ConfigDef().define(
        FIELDS,
        Type.LIST,
        NO_DEFAULT,
        distinct_list(empty_allowed=False),
        Importance.HIGH,
        "Field names on the record value to extract as the record key.",
    )
)


class ValueToKey(Transformation[R]):
    """Replace the record key with a new key formed from a subset of fields in the record
    value (Kafka's ``ValueToKey``)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.fields: list[str] = config[FIELDS]
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        self.schemas: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        if record.value_schema is None:
            value = require_map(record.value, PURPOSE)
            key: Any = {field: value.get(field) for field in self.fields}
            key_schema = None
        else:
            struct = require_struct(record.value, PURPOSE)
            key_schema = self.schemas.get(struct.schema, self._key_schema)
            key = Struct(key_schema)
            for field in self.fields:
                key.put(field, field_value(struct, field, self.replace_null_with_default))
        return record.new_record(
            record.topic,
            record.kafka_partition,
            key_schema,
            key,
            record.value_schema,
            record.value,
            record.timestamp,
        )

    def _key_schema(self, value_schema: Schema) -> Schema:
        builder = SchemaBuilder.struct()
        for name in self.fields:
            field = value_schema.field(name)
            if field is None:
                raise DataException(f"Field does not exist: {name}")
            builder.field(name, field.schema)
        return builder.build()
