"""``HoistField``: wraps the key or the value in a struct (or a map) of one field (Kafka's
``HoistField$Key`` and ``HoistField$Value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import NO_DEFAULT, ConfigDef, Importance, Type
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.transforms.util import PartTransformation, R, SchemaCache

FIELD = "field"
CONFIG_DEF = ConfigDef().define(
    FIELD,
    Type.STRING,
    NO_DEFAULT,
    None,
    Importance.MEDIUM,
    "Field name for the single field that will be created in the resulting Struct or Map.",
)


class HoistField(PartTransformation[R]):
    """Wrap data using the specified field name in a Struct when schema present, or a Map
    in the case of schemaless data. Use :class:`HoistFieldKey` or :class:`HoistFieldValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.field: str = CONFIG_DEF.parse(configs)[FIELD]
        self.schemas: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self.field: value})
        updated = self.schemas.get(schema, self._updated_schema)
        return self.new_record(record, updated, Struct(updated).put(self.field, value))

    def _updated_schema(self, schema: Schema) -> Schema:
        return SchemaBuilder.struct().field(self.field, schema).build()


class HoistFieldKey(HoistField[R]):
    """Kafka's ``HoistField$Key``."""

    KEY = True


class HoistFieldValue(HoistField[R]):
    """Kafka's ``HoistField$Value``."""

    KEY = False
