"""``ExtractField``: replaces the key or the value with one of its fields, nested ones too
with ``field.syntax.version=V2`` (Kafka's ``ExtractField$Key`` and ``ExtractField$Value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import NO_DEFAULT, ConfigDef, Importance, Type
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.transforms.field_path import (
    FIELD_SYNTAX_VERSION,
    SingleFieldPath,
    with_syntax_version,
)
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    PartTransformation,
    R,
    require_map,
    require_struct,
    with_replace_null_with_default,
)

FIELD = "field"
PURPOSE = "field extraction"
CONFIG_DEF = with_replace_null_with_default(
    with_syntax_version(
        ConfigDef().define(
            FIELD, Type.STRING, NO_DEFAULT, None, Importance.MEDIUM, "Field name to extract."
        )
    )
)


class ExtractField(PartTransformation[R]):
    """Extract the specified field from a Struct when schema present, or a Map in the case
    of schemaless data; any null values are passed through unmodified. Use
    :class:`ExtractFieldKey` or :class:`ExtractFieldValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.original_path: str = config[FIELD]
        self.path = SingleFieldPath(self.original_path, config[FIELD_SYNTAX_VERSION])
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            mapping = None if value is None else require_map(value, PURPOSE)
            return self.new_record(record, None, self.path.value_from_map(mapping))
        struct = None if value is None else require_struct(value, PURPOSE)
        field = self.path.field_from(schema)
        if field is None:
            raise DataException(f"Unknown field: {self.original_path}")
        extracted = self.path.value_from_struct(struct, self.replace_null_with_default)
        return self.new_record(record, field.schema, extracted)


class ExtractFieldKey(ExtractField[R]):
    """Kafka's ``ExtractField$Key``."""

    KEY = True


class ExtractFieldValue(ExtractField[R]):
    """Kafka's ``ExtractField$Value``."""

    KEY = False
