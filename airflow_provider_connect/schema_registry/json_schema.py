"""``io.confluent.connect.json.JsonSchemaConverter``: Connect data as JSON with its JSON
Schema in a Schema Registry, in Confluent's wire format (see :mod:`.json_schema_data` for
the mapping)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type, ValidString
from airflow_provider_connect.connect.json.converter import DECIMAL_FORMAT_CONFIG, DecimalFormat
from airflow_provider_connect.schema_registry.config import IGNORE_DEFAULT_FOR_NULLABLES_CONFIG
from airflow_provider_connect.schema_registry.converter import SchemaRegistryConverter
from airflow_provider_connect.schema_registry.json_schema_data import (
    JsonSchemaData,
    JsonSchemaDataConfig,
)

if TYPE_CHECKING:
    from airflow_provider_connect.schema_registry.registry import Registry
    from airflow_provider_connect.schema_registry.serde import Codec

OBJECT_ADDITIONAL_PROPERTIES_CONFIG = "object.additional.properties"
USE_OPTIONAL_FOR_NONREQUIRED_CONFIG = "use.optional.for.nonrequired"
FAIL_INVALID_SCHEMA_CONFIG = "json.fail.invalid.schema"


class JsonSchemaConverter(SchemaRegistryConverter):
    """Connect data as JSON through a Schema Registry, as Confluent's ``JsonSchemaConverter``."""

    def format_config_def(self) -> ConfigDef:
        group = "JSON Schema"
        return (
            ConfigDef()
            .define(
                OBJECT_ADDITIONAL_PROPERTIES_CONFIG,
                Type.BOOLEAN,
                True,
                None,
                Importance.MEDIUM,
                "Whether to allow additional properties for object schemas.",
                group=group,
                order_in_group=0,
            )
            .define(
                USE_OPTIONAL_FOR_NONREQUIRED_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.MEDIUM,
                "Whether to set non-required properties to be optional.",
                group=group,
                order_in_group=1,
            )
            .define(
                DECIMAL_FORMAT_CONFIG,
                Type.STRING,
                DecimalFormat.BASE64.value,
                ValidString(*(f.value for f in DecimalFormat), case_sensitive=False),
                Importance.LOW,
                "Controls which format this converter will serialize decimals in: BASE64 "
                "(the unscaled bytes) or NUMERIC (a JSON number).",
                group=group,
                order_in_group=2,
            )
            .define(
                FAIL_INVALID_SCHEMA_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.MEDIUM,
                "Whether to fail a record whose JSON does not validate against its schema "
                "(written or read).",
                group=group,
                order_in_group=3,
            )
        )

    def codec(self, parsed: Mapping[str, Any], registry: Registry) -> Codec:
        from airflow_provider_connect.schema_registry.json_schema_codec import (  # jsonschema
            JsonSchemaCodec,
        )

        data = JsonSchemaData(
            JsonSchemaDataConfig(
                object_additional_properties=parsed[OBJECT_ADDITIONAL_PROPERTIES_CONFIG],
                use_optional_for_nonrequired=parsed[USE_OPTIONAL_FOR_NONREQUIRED_CONFIG],
                decimal_numeric=parsed[DECIMAL_FORMAT_CONFIG].upper()
                == DecimalFormat.NUMERIC.value,
                ignore_default_for_nullables=parsed[IGNORE_DEFAULT_FOR_NULLABLES_CONFIG],
            )
        )
        return JsonSchemaCodec(data, parsed[FAIL_INVALID_SCHEMA_CONFIG])
