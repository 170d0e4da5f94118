"""Schema'd test records: orders as JsonConverter writes them (schemas on, decimals as
numbers), with optional struct keys."""

from __future__ import annotations

import datetime as dt
import decimal

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.logical import Decimal, Timestamp
from airflow_provider_connect.connect.json import JsonConverter
from tests_common.kafka import produce

KEY = SchemaBuilder.struct().name("key").field("id", Schema.INT32_SCHEMA).build()
VALUE = (
    SchemaBuilder.struct()
    .name("order")
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("amount", Decimal.builder(2).optional().build())
    .field("at", Timestamp.builder().build())
    .build()
)
AT = dt.datetime(2026, 11, 1, 12, 30, tzinfo=dt.timezone.utc)


def converter(is_key: bool) -> JsonConverter:
    json = JsonConverter()
    json.configure({"decimal.format": "NUMERIC"}, is_key)
    return json


def order(i: int, name: str | None = None, schema: Schema = VALUE) -> Struct:
    value = Struct(schema).put("id", i).put("name", name or f"order {i}")
    value.put("amount", None if i % 5 == 0 else decimal.Decimal(i) / 4).put("at", AT)
    return value


def send(
    bootstrap: str,
    topic: str,
    values: list[Struct | None],
    keys: list[int] | None = None,
) -> None:
    """Records as JsonConverter writes them (schemas on); None values are tombstones."""
    value_json, key_json = converter(False), converter(True)
    produce(
        bootstrap,
        topic,
        [None if v is None else value_json.from_connect_data(topic, v.schema, v) for v in values],
        None
        if keys is None
        else [key_json.from_connect_data(topic, KEY, Struct(KEY).put("id", k)) for k in keys],
    )
