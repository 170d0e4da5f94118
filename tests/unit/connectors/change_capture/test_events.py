"""The change-capture core's change events (connectors/change_capture/events.py) and the
source block's template (envelope.py): Debezium's rules for which events a row change makes,
and streamed source blocks equal to blocks built field by field, for any database."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connectors.change_capture.envelope import (
    SNAPSHOT_FALSE,
    SourceTemplate,
    source_schema_builder,
    source_values,
)
from airflow_provider_connect.connectors.change_capture.events import TOMBSTONE, ChangeRecords


@pytest.mark.parametrize(
    ("skipped", "tombstones", "op", "key_changed", "expected"),
    [
        ((), True, "c", False, ("c",)),
        ((), True, "u", False, ("u",)),
        ((), True, "u", True, ("d", TOMBSTONE, "c")),  # a key change
        ((), False, "u", True, ("d", "c")),
        ((), True, "d", False, ("d", TOMBSTONE)),
        ((), False, "d", False, ("d",)),
        ((), True, "t", False, ("t",)),
        (("d",), True, "d", False, ()),  # a skipped delete has no tombstone either
        (("d",), True, "u", True, ("c",)),
        (("c", "u"), True, "u", True, ("d", TOMBSTONE)),
        (("u",), True, "u", False, ()),
        (("t",), True, "t", False, ()),
    ],
)
def test_the_events_of_a_row_change(
    skipped: tuple[str, ...], tombstones: bool, op: str, key_changed: bool, expected: tuple[str]
) -> None:
    records = ChangeRecords({"server": "db"}, frozenset(skipped), tombstones)
    assert records.events(op, key_changed) == expected


@dataclass(frozen=True)
class Table:
    topic: str
    key_schema: Schema | None
    envelope: Schema


def test_records_and_tombstones_carry_the_tables_topic_and_schemas() -> None:
    key_schema = (
        SchemaBuilder.struct()
        .name("db.inventory.items.Key")
        .field("id", Schema.INT32_SCHEMA)
        .build()
    )
    table = Table("db.inventory.items", key_schema, SchemaBuilder.struct().name("e").build())
    records = ChangeRecords({"server": "db"}, frozenset(), True)
    key = Struct.of(key_schema, {"id": 1})
    record = records.record(table, {"pos": 4}, key, "value")
    assert (record.source_partition, record.source_offset, record.topic) == (
        {"server": "db"},
        {"pos": 4},
        "db.inventory.items",
    )
    assert record.key_schema is key_schema and record.value_schema is table.envelope
    tombstone = records.tombstone(table, {"pos": 4}, key)
    assert tombstone.key == key and tombstone.value is None and tombstone.value_schema is None


MYSQL_SOURCE = (
    source_schema_builder("io.debezium.connector.mysql.Source")
    .field("table", Schema.OPTIONAL_STRING_SCHEMA)
    .field("pos", Schema.INT64_SCHEMA)
    .build()
)


def block(ts_us: int, sequence: str | None, pos: int) -> Struct:
    """A second database's streamed block, built field by field."""
    common = source_values(
        version="1.0",
        connector="mysql",
        name="db",
        ts_ms=ts_us // 1000,
        snapshot=SNAPSHOT_FALSE,
        db="inventory",
        sequence=sequence,
        ts_us=ts_us,
        ts_ns=None,
    )
    return Struct.of(MYSQL_SOURCE, {**common, "table": "items", "pos": pos})


def test_a_template_makes_the_blocks_built_field_by_field() -> None:
    template = SourceTemplate(block(0, None, 0))
    values = template.values(1_704_164_645_123_456, "seq")
    values[MYSQL_SOURCE.field("pos").index] = 154  # type: ignore[union-attr]
    made = template.block_of(values)
    assert made == block(1_704_164_645_123_456, "seq", 154)
    assert made.get("ts_ns") == 1_704_164_645_123_456_000
    assert made.get_without_default("snapshot") is None
    made.validate()
    template.values(5, None)  # each block is a copy: the template stays
    assert made == block(1_704_164_645_123_456, "seq", 154)
