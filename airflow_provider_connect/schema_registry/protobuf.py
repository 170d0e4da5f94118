"""``io.confluent.connect.protobuf.ProtobufConverter``: Connect data as Protobuf messages in
Confluent's wire format, their schemas in a Schema Registry (see :mod:`.protobuf_data` for
the mapping)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type
from airflow_provider_connect.schema_registry.config import (
    IGNORE_DEFAULT_FOR_NULLABLES_CONFIG,
    only_false,
)
from airflow_provider_connect.schema_registry.converter import SchemaRegistryConverter

if TYPE_CHECKING:
    from airflow_provider_connect.schema_registry.registry import Registry
    from airflow_provider_connect.schema_registry.serde import Codec

ENHANCED_SCHEMA_SUPPORT_CONFIG = "enhanced.protobuf.schema.support"
SCRUB_INVALID_NAMES_CONFIG = "scrub.invalid.names"
OPTIONAL_FOR_NULLABLES_CONFIG = "optional.for.nullables"
WRAPPER_FOR_NULLABLES_CONFIG = "wrapper.for.nullables"
WRAPPER_FOR_RAW_PRIMITIVES_CONFIG = "wrapper.for.raw.primitives"
GENERATE_INDEX_FOR_UNIONS_CONFIG = "generate.index.for.unions"
INT_FOR_ENUMS_CONFIG = "int.for.enums"


class ProtobufConverter(SchemaRegistryConverter):
    """Connect data as Protobuf through a Schema Registry, as Confluent's
    ``ProtobufConverter``."""

    def format_config_def(self) -> ConfigDef:
        group = "Protobuf"
        d = ConfigDef()
        for order, (name, default, validator, doc) in enumerate(
            [
                (
                    ENHANCED_SCHEMA_SUPPORT_CONFIG,
                    False,
                    None,
                    "Toggle for enabling/disabling enhanced protobuf schema support: package "
                    "name awareness.",
                ),
                (
                    SCRUB_INVALID_NAMES_CONFIG,
                    False,
                    None,
                    "Whether to scrub invalid names by replacing invalid characters with valid "
                    "ones.",
                ),
                (
                    OPTIONAL_FOR_NULLABLES_CONFIG,
                    False,
                    None,
                    "Whether nullable fields should be specified with an optional label.",
                ),
                (
                    WRAPPER_FOR_NULLABLES_CONFIG,
                    False,
                    only_false(WRAPPER_FOR_NULLABLES_CONFIG),
                    "Whether nullable fields should use primitive wrapper messages. Only false "
                    "is supported here.",
                ),
                (
                    WRAPPER_FOR_RAW_PRIMITIVES_CONFIG,
                    True,
                    None,
                    "Whether a wrapper message should be interpreted as a raw primitive at the "
                    "root level.",
                ),
                (
                    GENERATE_INDEX_FOR_UNIONS_CONFIG,
                    True,
                    None,
                    "Whether to suffix union names with an underscore followed by an index.",
                ),
                (
                    INT_FOR_ENUMS_CONFIG,
                    False,
                    only_false(INT_FOR_ENUMS_CONFIG),
                    "Whether to represent enums as integers. Only false is supported here.",
                ),
            ]
        ):
            d.define(
                name,
                Type.BOOLEAN,
                default,
                validator,
                Importance.LOW,
                doc,
                group=group,
                order_in_group=order,
            )
        return d

    def codec(self, parsed: Mapping[str, Any], registry: Registry) -> Codec:
        from airflow_provider_connect.schema_registry.protobuf_codec import (  # protobuf
            ProtobufCodec,
        )
        from airflow_provider_connect.schema_registry.protobuf_data import (
            ProtobufData,
            ProtobufDataConfig,
        )

        data = ProtobufData(
            ProtobufDataConfig(
                optional_for_nullables=parsed[OPTIONAL_FOR_NULLABLES_CONFIG],
                enhanced_schema_support=parsed[ENHANCED_SCHEMA_SUPPORT_CONFIG],
                scrub_invalid_names=parsed[SCRUB_INVALID_NAMES_CONFIG],
                ignore_default_for_nullables=parsed[IGNORE_DEFAULT_FOR_NULLABLES_CONFIG],
                wrapper_for_raw_primitives=parsed[WRAPPER_FOR_RAW_PRIMITIVES_CONFIG],
                generate_index_for_unions=parsed[GENERATE_INDEX_FOR_UNIONS_CONFIG],
            )
        )
        return ProtobufCodec(data, registry)
