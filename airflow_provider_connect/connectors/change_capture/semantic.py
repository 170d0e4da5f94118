"""Debezium's semantic schemas that every database's type mapping uses (``io.debezium.data.*``,
``io.debezium.time.*``, Kafka Connect's ``Decimal`` with Debezium's precision parameter), built
once, as Debezium's ``SchemaBuilder``s build them (name, version, parameters, fields)."""

from __future__ import annotations

from airflow_provider_connect.connect.data import Decimal, Schema, SchemaBuilder


def named(builder: SchemaBuilder, name: str, version: int = 1) -> SchemaBuilder:
    """``builder`` with Debezium's semantic ``name`` and its ``version``."""
    return builder.name(name).version(version)


STRING = Schema.STRING_SCHEMA
JSON = named(SchemaBuilder.string(), "io.debezium.data.Json").build()
UUID = named(SchemaBuilder.string(), "io.debezium.data.Uuid").build()
DATE = named(SchemaBuilder.int32(), "io.debezium.time.Date").build()
MICRO_TIME = named(SchemaBuilder.int64(), "io.debezium.time.MicroTime").build()
TIMESTAMP = named(SchemaBuilder.int64(), "io.debezium.time.Timestamp").build()
MICRO_TIMESTAMP = named(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp").build()
ZONED_TIMESTAMP = named(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp").build()
POINT = (
    named(SchemaBuilder.struct(), "io.debezium.data.geometry.Point")
    .doc("Geometry (POINT)")
    .field("x", Schema.FLOAT64_SCHEMA)
    .field("y", Schema.FLOAT64_SCHEMA)
    .field("wkb", Schema.OPTIONAL_BYTES_SCHEMA)
    .field("srid", Schema.OPTIONAL_INT32_SCHEMA)
    .build()
)
GEOMETRY = (  # optional whatever the column, as Debezium's builder makes it
    named(SchemaBuilder.struct(), "io.debezium.data.geometry.Geometry", 2)
    .doc("Geometry")
    .optional()
    .field("wkb", Schema.BYTES_SCHEMA)
    .field("srid", Schema.OPTIONAL_INT32_SCHEMA)
    .field("extensions", SchemaBuilder.map(STRING, STRING).optional())
    .build()
)
PRECISION_PARAMETER = "connect.decimal.precision"


def decimal_schema(scale: int, precision: int | None) -> Schema:
    """Kafka Connect's ``Decimal`` of ``scale``, with Debezium's precision parameter when
    the precision is known."""
    builder = Decimal.builder(scale)
    if precision is not None:
        builder.parameter(PRECISION_PARAMETER, str(precision))
    return builder.build()


def bits_schema(length: int) -> Schema:
    """``io.debezium.data.Bits`` of ``length`` bits."""
    return (
        named(SchemaBuilder.bytes(), "io.debezium.data.Bits")
        .parameter("length", str(length))
        .build()
    )
