"""The Iceberg sink reading each Schema Registry format (Avro, Protobuf, JSON Schema) through
the real runtime (broker, Spark, metadata database): records written by the converter into
a topic land as the same rows of an auto-created table."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from airflow_provider_connect.connect.data import Date, Schema, SchemaBuilder, Struct, Timestamp
from airflow_provider_connect.connect.storage import Converter
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.schema_registry.avro import AvroConverter
from airflow_provider_connect.schema_registry.json_schema import JsonSchemaConverter
from airflow_provider_connect.schema_registry.protobuf import ProtobufConverter
from tests.integration.connectors.iceberg.conftest import IcebergCatalog
from tests_common.kafka import new_topic, produce
from tests_common.processes import wait_until
from tests_common.schema_registry import schema_registry

pytestmark = pytest.mark.integration

CONVERTERS: dict[str, tuple[str, type[Converter]]] = {
    "avro": ("io.confluent.connect.avro.AvroConverter", AvroConverter),
    "protobuf": ("io.confluent.connect.protobuf.ProtobufConverter", ProtobufConverter),
    "json": ("io.confluent.connect.json.JsonSchemaConverter", JsonSchemaConverter),
}
ROW = (
    SchemaBuilder.struct()
    .name("com.example.Reading")
    .field("id", Schema.INT64_SCHEMA)
    .field("sensor", Schema.STRING_SCHEMA)
    .field("count", Schema.INT32_SCHEMA)
    .field("value", Schema.FLOAT64_SCHEMA)
    .field("ok", Schema.BOOLEAN_SCHEMA)
    .field("day", Date.SCHEMA)
    .field("at", Timestamp.SCHEMA)
    .build()
)
AT = dt.datetime(2026, 3, 1, 8, 0, tzinfo=dt.timezone.utc)


def reading(i: int) -> Struct:
    value = Struct(ROW).put("id", i).put("sensor", f"s-{i % 3}").put("count", i * 7)
    value.put("value", i / 8).put("ok", i % 2 == 0)
    return value.put("day", dt.date(2026, 3, 1 + i % 28)).put("at", AT + dt.timedelta(seconds=i))


@pytest.fixture(scope="module")
def registry_url() -> Iterator[str]:
    with schema_registry() as url:
        yield url


@pytest.mark.parametrize("fmt", list(CONVERTERS))
def test_records_of_each_format_land_as_rows_of_an_auto_created_table(
    fmt: str, connect: Connect, bootstrap: str, local_catalog: IcebergCatalog, registry_url: str
) -> None:
    class_name, converter_class = CONVERTERS[fmt]
    writer = converter_class()
    writer.configure({"schema.registry.url": registry_url}, False)
    topic = new_topic(bootstrap)
    values = [reading(i) for i in range(30)]
    produce(bootstrap, topic, [writer.from_connect_data(topic, ROW, v) for v in values])
    table = f"db.readings_{fmt}"
    connect.add_connector(
        f"iceberg-{topic}",
        {
            "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
            "topics": topic,
            "value.converter": class_name,
            "value.converter.schema.registry.url": registry_url,
            "iceberg.tables": table,
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.commit.interval-ms": "500",
            **local_catalog.config(),
        },
    )
    wait_until(lambda: len(local_catalog.rows(table)) >= len(values), 90, "every row in the table")
    got = sorted(local_catalog.rows(table), key=lambda r: r["id"])
    assert got == [{f.name: v.get(f.name) for f in ROW.fields or ()} for v in values]
