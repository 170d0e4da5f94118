"""Kafka Connect's JSON converter; see :mod:`.converter`."""

from airflow_provider_connect.connect.json.converter import (
    DECIMAL_FORMAT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    SCHEMA_CONTENT_CONFIG,
    SCHEMAS_CACHE_SIZE_CONFIG,
    SCHEMAS_ENABLE_CONFIG,
    DecimalFormat,
    JsonConverter,
    json_converter_config_def,
)

__all__ = [
    "DECIMAL_FORMAT_CONFIG",
    "REPLACE_NULL_WITH_DEFAULT_CONFIG",
    "SCHEMAS_CACHE_SIZE_CONFIG",
    "SCHEMAS_ENABLE_CONFIG",
    "SCHEMA_CONTENT_CONFIG",
    "DecimalFormat",
    "JsonConverter",
    "json_converter_config_def",
]
