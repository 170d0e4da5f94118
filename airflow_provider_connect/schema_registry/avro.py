"""``io.confluent.connect.avro.AvroConverter``: Connect data as Avro in Confluent's wire
format, its schemas in a Schema Registry (see :mod:`.avro_data` for the mapping)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type
from airflow_provider_connect.schema_registry.avro_data import AvroData, AvroDataConfig
from airflow_provider_connect.schema_registry.config import (
    IGNORE_DEFAULT_FOR_NULLABLES_CONFIG,
    only_false,
)
from airflow_provider_connect.schema_registry.converter import SchemaRegistryConverter

if TYPE_CHECKING:
    from airflow_provider_connect.schema_registry.registry import Registry
    from airflow_provider_connect.schema_registry.serde import Codec

CONNECT_META_DATA_CONFIG = "connect.meta.data"
ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG = "enhanced.avro.schema.support"
SCRUB_INVALID_NAMES_CONFIG = "scrub.invalid.names"
ALLOW_OPTIONAL_MAP_KEYS_CONFIG = "allow.optional.map.keys"
FLATTEN_SINGLETON_UNIONS_CONFIG = "flatten.singleton.unions"
DISCARD_TYPE_DOC_DEFAULT_CONFIG = "discard.type.doc.default"
USE_LOGICAL_TYPE_CONVERTERS_CONFIG = "avro.use.logical.type.converters"


class AvroConverter(SchemaRegistryConverter):
    """Connect data as Avro through a Schema Registry, as Confluent's ``AvroConverter``."""

    def format_config_def(self) -> ConfigDef:
        group = "Avro"
        return (
            ConfigDef()
            .define(
                CONNECT_META_DATA_CONFIG,
                Type.BOOLEAN,
                True,
                None,
                Importance.LOW,
                "Toggle for enabling/disabling connect converter to add its meta data to the "
                "output schema or not",
                group=group,
                order_in_group=0,
            )
            .define(
                ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.MEDIUM,
                "Toggle for enabling/disabling enhanced avro schema support: Enum symbol "
                "preservation and Package Name awareness",
                group=group,
                order_in_group=1,
            )
            .define(
                SCRUB_INVALID_NAMES_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.MEDIUM,
                "Whether to scrub invalid names by replacing invalid characters with valid ones",
                group=group,
                order_in_group=2,
            )
            .define(
                ALLOW_OPTIONAL_MAP_KEYS_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.LOW,
                "Allow optional string map key when converting from Connect Schema to Avro Schema.",
                group=group,
                order_in_group=3,
            )
            .define(
                FLATTEN_SINGLETON_UNIONS_CONFIG,
                Type.BOOLEAN,
                True,
                None,
                Importance.LOW,
                "Whether to flatten singleton unions",
                group=group,
                order_in_group=4,
            )
            .define(
                DISCARD_TYPE_DOC_DEFAULT_CONFIG,
                Type.BOOLEAN,
                False,
                only_false(DISCARD_TYPE_DOC_DEFAULT_CONFIG),
                Importance.LOW,
                "Deprecated; only false is supported here.",
                group=group,
                order_in_group=5,
            )
            .define(
                USE_LOGICAL_TYPE_CONVERTERS_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.LOW,
                "Accepted for compatibility: Connect's logical types are always converted "
                "(Decimal, Date, Time, Timestamp), whatever its value.",
                group=group,
                order_in_group=6,
            )
        )

    def codec(self, parsed: Mapping[str, Any], registry: Registry) -> Codec:
        from airflow_provider_connect.schema_registry.avro_codec import AvroCodec  # fastavro

        data = AvroData(
            AvroDataConfig(
                connect_meta_data=parsed[CONNECT_META_DATA_CONFIG],
                enhanced_schema_support=parsed[ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG],
                scrub_invalid_names=parsed[SCRUB_INVALID_NAMES_CONFIG],
                allow_optional_map_keys=parsed[ALLOW_OPTIONAL_MAP_KEYS_CONFIG],
                flatten_singleton_unions=parsed[FLATTEN_SINGLETON_UNIONS_CONFIG],
                ignore_default_for_nullables=parsed[IGNORE_DEFAULT_FOR_NULLABLES_CONFIG],
            )
        )
        return AvroCodec(data, registry)
