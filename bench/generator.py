"""A source of generated orders for the benchmarks: ``generator.records`` schemaless records
(a dict of five fields, about 100 bytes as JSON) with timestamps, ``batch.size`` a poll; the
offset is the number of records emitted, so progress reads ``{"next": n}``. With
``generator.structs`` the values are structs of :data:`ORDER` (eight fields), built as
connectors build them (``Struct.of``: each value checked)."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.config import ConfigDef, Type
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.source import SourceConnector, SourceRecord, SourceTask

RECORDS = "generator.records"
STRUCTS = "generator.structs"
TOPIC = "topic"
BATCH = 2000
FIRST_TIMESTAMP = 1_700_000_000_000


def order(i: int) -> dict[str, Any]:
    """The ``i``-th generated order (the hand-written peers build the same)."""
    return {
        "id": i,
        "customer": f"customer-{i % 997:04d}",
        "amount": i / 4,
        "currency": "EUR",
        "note": f"order {i:09d}",
    }


ORDER = (
    SchemaBuilder.struct()
    .name("bench.Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("customer", Schema.STRING_SCHEMA)
    .field("amount", Schema.FLOAT64_SCHEMA)
    .field("quantity", Schema.INT32_SCHEMA)
    .field("currency", Schema.STRING_SCHEMA)
    .field("paid", Schema.BOOLEAN_SCHEMA)
    .field("created", Schema.INT64_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)
"""The schema of the generated structs: eight fields of the common types."""


def order_fields(i: int) -> dict[str, Any]:
    """The fields of the ``i``-th generated struct (the hand-written peers write this dict)."""
    return {
        "id": i,
        "customer": f"customer-{i % 997:04d}",
        "amount": i / 4,
        "quantity": i % 17,
        "currency": "EUR",
        "paid": i % 2 == 0,
        "created": FIRST_TIMESTAMP + i,
        "note": None if i % 3 else f"order {i:09d}",
    }


def order_struct(i: int) -> Struct:
    return Struct.of(ORDER, order_fields(i))


class GeneratorSourceConnector(SourceConnector):
    def version(self) -> str:
        return "bench"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return GeneratorSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(RECORDS, Type.INT)
            .define(TOPIC, Type.STRING)
            .define(STRUCTS, Type.BOOLEAN, False)
        )


class GeneratorSourceTask(SourceTask):
    def version(self) -> str:
        return "bench"

    def start(self, props: dict[str, str]) -> None:
        self.total = int(props[RECORDS])
        self.topic = props[TOPIC]
        self.partition = {"generator": self.topic}
        structs = props.get(STRUCTS) == "true"
        self.value = order_struct if structs else order
        self.schema = ORDER if structs else None
        offset = self.context.offset_storage_reader().offset(self.partition)
        self.next = offset["next"] if offset else 0

    def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.total:
            return None
        end = min(self.next + BATCH, self.total)
        records = [
            SourceRecord(
                self.partition,
                {"next": i + 1},
                self.topic,
                value_schema=self.schema,
                value=self.value(i),
                timestamp=FIRST_TIMESTAMP + i,
            )
            for i in range(self.next, end)
        ]
        self.next = end
        return records
