"""What Debezium's JDBC sink makes of records (pure logic: no database is reached): change
events by ``op``, tombstones, flat records, table names, key modes and Debezium's types."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.jdbc.config import sqlalchemy_url
from airflow_provider_connect.connectors.jdbc.debezium_sink import DebeziumJdbcSinkTask
from airflow_provider_connect.connectors.jdbc.writer import TableId

AMOUNT = (
    SchemaBuilder.struct()
    .name("io.debezium.data.VariableScaleDecimal")
    .optional()
    .field("scale", Schema.INT32_SCHEMA)
    .field("value", Schema.BYTES_SCHEMA)
    .build()
)
ROW = (
    SchemaBuilder.struct()
    .name("srv.public.Orders.Value")
    .optional()
    .field("ID", Schema.INT32_SCHEMA)
    .field("placed", SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").build())
    .field("at", SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").optional().build())
    .field("day", SchemaBuilder.int32().name("io.debezium.time.Date").optional().build())
    .field("amount", AMOUNT)
    .build()
)
SOURCE = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.postgresql.Source")
    .field("schema", Schema.STRING_SCHEMA)
    .field("table", Schema.STRING_SCHEMA)
    .build()
)
ENVELOPE = (
    SchemaBuilder.struct()
    .name("srv.public.Orders.Envelope")
    .field("before", ROW)
    .field("after", ROW)
    .field("source", SOURCE)
    .field("op", Schema.STRING_SCHEMA)
    .build()
)
KEY = SchemaBuilder.struct().name("srv.public.Orders.Key").field("ID", Schema.INT32_SCHEMA).build()


def row(i: int) -> Struct:
    amount = Struct(AMOUNT).put("scale", 2).put("value", (-1234).to_bytes(2, "big", signed=True))
    return (
        Struct(ROW)
        .put("ID", i)
        .put("placed", 1_796_558_400_000_000)  # 2026-12-06 12:00:00 UTC
        .put("at", "2026-12-06T12:00:00.5Z")
        .put("day", 1)
        .put("amount", amount)
    )


def event(op: str, i: int = 1) -> SinkRecord:
    value = Struct(ENVELOPE).put("op", op)
    value.put("source", Struct(SOURCE).put("schema", "public").put("table", "Orders"))
    if op in ("c", "r", "u"):
        value.put("after", row(i))
    if op == "d":
        value.put("before", row(i))
    key = None if op == "t" else Struct(KEY).put("ID", i)
    return SinkRecord("srv.public.Orders", 0, KEY if key else None, key, ENVELOPE, value, i)


def task(**config: str) -> DebeziumJdbcSinkTask:
    sink = DebeziumJdbcSinkTask()
    sink.start(
        {
            "connection.url": "sqlite://",
            "connection.username": "u",
            "primary.key.mode": "record_key",
            **config,
        }
    )
    return sink


def writes(sink: DebeziumJdbcSinkTask, *records: SinkRecord) -> list[tuple[Any, ...]]:
    return [(w.op, w.table, w.row, w.key) for w in sink.writes_of(list(records))]


def test_change_events_write_after_delete_by_key_and_truncate() -> None:
    sink = task(**{"delete.enabled": "true", "truncate.enabled": "true"})
    table = TableId(None, "srv_public_orders")  # ${topic}, its dots as _, lower case
    [(op, at, values, key)] = writes(sink, event("c"))
    assert (op, at, key) == ("write", table, ["id"])
    assert values == {
        "id": 1,
        "placed": dt.datetime(2026, 12, 6, 12),
        "at": dt.datetime(2026, 12, 6, 12, 0, 0, 500_000, tzinfo=dt.timezone.utc),
        "day": dt.date(1970, 1, 2),
        "amount": decimal.Decimal("-12.34"),
    }
    tombstone = SinkRecord("srv.public.Orders", 0, KEY, Struct(KEY).put("ID", 1), None, None, 2)
    assert writes(sink, event("d"), tombstone, event("t")) == [
        ("delete", table, {"id": 1}, ["id"]),
        ("delete", table, {"id": 1}, ["id"]),
        ("truncate", table, {}, []),
    ]


def test_what_is_not_enabled_or_not_a_row_is_skipped() -> None:
    sink = task(**{"primary.key.mode": "record_value", "primary.key.fields": "ID"})
    tombstone = SinkRecord("srv.public.Orders", 0, KEY, Struct(KEY).put("ID", 1), None, None, 2)
    assert writes(sink, event("d"), event("t"), event("m"), tombstone) == []
    deleting = task(**{"primary.key.mode": "record_value", "delete.enabled": "true"})
    assert [w[0] for w in writes(deleting, event("d"), tombstone)] == ["delete"]


def test_table_names_from_the_source_block_keep_case_when_quoted() -> None:
    sink = task(
        **{
            "collection.name.format": "${source.schema}.${source.table}_copy",
            "quote.identifiers": "true",
            "use.time.zone": "Europe/Paris",
        }
    )
    [(_, table, values, key)] = writes(sink, event("u"))
    assert table == TableId("public", "Orders_copy") and key == ["ID"]
    assert values["placed"] == dt.datetime(2026, 12, 6, 13)  # the wall clock in Paris
    flat = SinkRecord("t", 0, None, None, ROW, row(2), 3)
    assert writes(sink, flat) == []  # no source block to name its table


@pytest.mark.parametrize("mode", ["kafka", "none"])
def test_flat_records_and_other_key_modes(mode: str) -> None:
    sink = task(**{"primary.key.mode": mode, "table.name.format": "orders"})
    [(op, table, values, key)] = writes(sink, SinkRecord("t", 3, None, None, ROW, row(2), 7))
    assert (op, table, values["id"]) == ("write", TableId(None, "orders"), 2)
    if mode == "kafka":
        assert key == ["__connect_topic", "__connect_partition", "__connect_offset"]
        assert [values[k] for k in key] == ["t", 3, 7]
    else:
        assert key == []


@pytest.mark.parametrize(
    ("jdbc", "sqlalchemy"),
    [
        (
            "jdbc:postgresql://db:5432/shop?sslmode=require",
            "postgresql+psycopg://db:5432/shop?sslmode=require",
        ),
        ("jdbc:mariadb://db/shop", "mysql+pymysql://db/shop"),
        ("jdbc:sqlite:/tmp/shop.db", "sqlite:////tmp/shop.db"),
        ("postgresql+psycopg://db/shop", "postgresql+psycopg://db/shop"),
    ],
)
def test_jdbc_urls_name_the_same_database(jdbc: str, sqlalchemy: str) -> None:
    assert sqlalchemy_url(jdbc) == sqlalchemy
