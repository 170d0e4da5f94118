"""``SetSchemaMetadata``: sets the name and/or version of the key's or the value's schema
(Kafka's ``SetSchemaMetadata$Key`` and ``SetSchemaMetadata$Value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type
from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    PartTransformation,
    R,
    field_value,
    require_schema,
    with_replace_null_with_default,
)

SCHEMA_NAME = "schema.name"
SCHEMA_VERSION = "schema.version"
CONFIG_DEF = with_replace_null_with_default(
    ConfigDef()
    .define(SCHEMA_NAME, Type.STRING, None, None, Importance.HIGH, "Schema name to set.")
    .define(SCHEMA_VERSION, Type.INT, None, None, Importance.HIGH, "Schema version to set.")
)


class SetSchemaMetadata(PartTransformation[R]):
    """Set the schema name, version or both on the record's key or value schema. Use
    :class:`SetSchemaMetadataKey` or :class:`SetSchemaMetadataValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.schema_name: str | None = config[SCHEMA_NAME]
        self.schema_version: int | None = config[SCHEMA_VERSION]
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        if self.schema_name is None and self.schema_version is None:
            raise ConfigException("Neither schema name nor version configured")

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, "updating schema metadata")
        updated = schema.replace(
            name=self.schema_name if self.schema_name is not None else schema.name,
            version=self.schema_version if self.schema_version is not None else schema.version,
        )
        if isinstance(value, Struct):  # the same fields, under the renamed schema
            struct = Struct(updated)
            for field in updated.fields or ():
                struct.put(
                    field.name, field_value(value, field.name, self.replace_null_with_default)
                )
            value = struct
        return self.new_record(record, updated, value)


class SetSchemaMetadataKey(SetSchemaMetadata[R]):
    """Kafka's ``SetSchemaMetadata$Key``."""

    KEY = True


class SetSchemaMetadataValue(SetSchemaMetadata[R]):
    """Kafka's ``SetSchemaMetadata$Value``."""

    KEY = False
