"""``Flatten``: turns nested structs (or maps) of the key or the value into one level, the
names joined by a delimiter (Kafka's ``Flatten$Key`` and ``Flatten$Value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.transforms.util import (
    PartTransformation,
    R,
    SchemaCache,
    copy_schema_basics,
    require_map,
    require_struct,
    type_name,
)

DELIMITER = "delimiter"
PURPOSE = "flattening"
CONFIG_DEF = ConfigDef().define(
    DELIMITER,
    Type.STRING,
    ".",
    None,
    Importance.MEDIUM,
    "Delimiter to insert between field names from the input record when generating field "
    "names for the output record",
)
_KEPT = {
    SchemaType.INT8,
    SchemaType.INT16,
    SchemaType.INT32,
    SchemaType.INT64,
    SchemaType.FLOAT32,
    SchemaType.FLOAT64,
    SchemaType.BOOLEAN,
    SchemaType.STRING,
    SchemaType.BYTES,
    SchemaType.ARRAY,
}
_KEPT_SCHEMALESS = (bool, int, float, str, bytes, bytearray, list)


class Flatten(PartTransformation[R]):
    """Flatten a nested data structure, generating names for each field by concatenating the
    field names at each level with a configurable delimiter character. Applies to Struct when
    schema present, or a Map in the case of schemaless data. Array fields and their contents
    are not modified. Use :class:`FlattenKey` or :class:`FlattenValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.delimiter: str = CONFIG_DEF.parse(configs)[DELIMITER]
        self.schemas: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def _name(self, prefix: str, name: str) -> str:
        return f"{prefix}{self.delimiter}{name}" if prefix else name

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct(value, PURPOSE)
        updated_schema = self.schemas.get(schema, self._updated_schema)
        updated = Struct(updated_schema)
        self._flatten_struct(struct, "", updated)
        return self.new_record(record, updated_schema, updated)

    def _flatten_map(self, value: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, field_value in value.items():
            name = self._name(prefix, key)
            if field_value is None or isinstance(field_value, _KEPT_SCHEMALESS):
                out[name] = field_value
            elif isinstance(field_value, dict):
                self._flatten_map(field_value, name, out)
            elif isinstance(field_value, Struct):
                raise DataException(
                    f"Flatten transformation does not support {type_name(field_value)} for "
                    f"record without schemas (for field {name})."
                )
            else:
                raise DataException(
                    f"Flatten transformation was passed a value of type {type_name(field_value)} "
                    "which is not supported by Connect's data API"
                )

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        self._add_fields(schema, "", builder, schema.optional, schema.default_value)
        return builder.build()

    def _add_fields(
        self,
        schema: Schema,
        prefix: str,
        builder: SchemaBuilder,
        optional: bool,
        parent_default: Struct | None,
    ) -> None:
        for field in schema.fields or ():
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            if field.schema.type in _KEPT:
                builder.field(name, _field_schema(field.schema, field_optional, default))
            elif field.schema.type is SchemaType.STRUCT:
                self._add_fields(field.schema, name, builder, field_optional, default)
            else:
                raise DataException(
                    f"Flatten transformation does not support {field.schema.type.value} for "
                    f"record with schemas (for field {name})."
                )

    def _flatten_struct(self, struct: Struct | None, prefix: str, out: Struct) -> None:
        if struct is None:
            return
        for field in struct.schema.fields or ():
            name = self._name(prefix, field.name)
            if field.schema.type in _KEPT:
                out.put(name, struct.get(field))
            elif field.schema.type is SchemaType.STRUCT:
                self._flatten_struct(struct.get(field), name, out)
            else:
                raise DataException(
                    f"Flatten transformation does not support {field.schema.type.value} for "
                    f"record with schemas (for field {name})."
                )


def _field_schema(original: Schema, optional: bool, default: Any) -> Schema:
    builder = (
        SchemaBuilder.array(original.value_schema)
        if original.type is SchemaType.ARRAY and original.value_schema is not None
        else SchemaBuilder(original.type)
    )
    copy_schema_basics(original, builder)
    if optional:
        builder.optional()
    if default is not None:
        builder.default_value(default)
    return builder.build()


class FlattenKey(Flatten[R]):
    """Kafka's ``Flatten$Key``."""

    KEY = True


class FlattenValue(Flatten[R]):
    """Kafka's ``Flatten$Value``."""

    KEY = False
