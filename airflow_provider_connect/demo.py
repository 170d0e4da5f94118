"""``make demo``: what the project does today, on the embedded defaults.

The connector API layer: a connector configuration validated as Kafka Connect's REST API
reports it (per-field errors in the ``ConfigInfos`` shape, passwords hidden), and a record
converted to Kafka Connect's JSON wire format, byte-compatible with Java workers, and back.
"""

from __future__ import annotations

import datetime as dt
import decimal

from airflow_provider_connect.connect.config import ConfigDef, Importance, Range, Type, config_infos
from airflow_provider_connect.connect.connector_config import CONNECTOR_CONFIG_DEF
from airflow_provider_connect.connect.data import Decimal, Schema, SchemaBuilder, Struct, Timestamp
from airflow_provider_connect.connect.json import JsonConverter

JDBC_LIKE = (
    ConfigDef()
    .define(
        "connection.url", Type.STRING, importance=Importance.HIGH, documentation="Database URL."
    )
    .define(
        "connection.password",
        Type.PASSWORD,
        None,
        importance=Importance.HIGH,
        documentation="Password.",
    )
    .define("batch.max.rows", Type.INT, 100, Range.at_least(1), documentation="Rows per poll.")
)


def main() -> None:
    definition = CONNECTOR_CONFIG_DEF.merged(JDBC_LIKE)
    submitted = {
        "name": "orders",
        "connector.class": "example.JdbcSource",
        "tasks.max": "zero",
        "connection.password": "s3cret",
        "batch.max.rows": "0",
    }
    infos = config_infos("JdbcSource", definition, definition.validate(submitted))
    print(f"1. Validating a connector config: {infos['error_count']} errors, as REST reports them")
    for config in infos["configs"]:
        value = config["value"]
        if value["errors"] or value["name"] == "connection.password":
            print(f"   {value['name']:22} value={value['value']!r:10} errors={value['errors']}")

    schema = (
        SchemaBuilder.struct()
        .name("shop.order")
        .field("id", Schema.INT64_SCHEMA)
        .field("amount", Decimal.schema(2))
        .field("placed", Timestamp.SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    order = (
        Struct(schema)
        .put("id", 42)
        .put("amount", decimal.Decimal("19.90"))
        .put("placed", dt.datetime(2026, 11, 22, 9, 30, tzinfo=dt.timezone.utc))
    )
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key=False)
    wire = converter.from_connect_data("orders", schema, order)
    print("\n2. A record in Kafka Connect's JSON wire format (what a Java worker writes too):")
    print("   " + wire.decode())
    back = converter.to_connect_data("orders", wire)
    print(f"   read back equal: {back.value == order}; value: {back.value}")
    print("\n3. The same converter with schemas.enable=false (plain JSON):")
    plain = JsonConverter()
    plain.configure({"schemas.enable": "false"})
    print("   " + plain.from_connect_data("orders", None, {"id": 42, "tags": ["a", "b"]}).decode())


if __name__ == "__main__":
    main()
