"""The transaction monitor of the change-capture core (connectors/change_capture/
transactions.py): the ``transaction`` block of each emitted event, a BEGIN record before a
transaction's first emitted event and an END record after its last, as Debezium's
``TransactionMonitor`` writes them."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.transactions import (
    TRANSACTION_BLOCK_SCHEMA,
    TRANSACTION_KEY_SCHEMA,
    TRANSACTION_VALUE_SCHEMA,
    TransactionContext,
    TransactionMonitor,
)

PARTITION = {"server": "srv"}


def block(struct: Any) -> tuple[str, int, int]:
    assert struct.schema is TRANSACTION_BLOCK_SCHEMA
    return struct.get("id"), struct.get("total_order"), struct.get("data_collection_order")


def test_disabled_it_writes_nothing() -> None:
    monitor = TransactionMonitor(False, "srv.transaction", PARTITION)
    transaction = TransactionContext("767:500", 1_704_164_645_123, begun=False)
    records: list[SourceRecord] = []
    assert monitor.event(transaction, "public.a", {"event": 1}, records) is None
    monitor.end(transaction, 1_704_164_645_124, {"event": 2}, records)
    assert records == [] and not transaction.begun


def test_begin_before_the_first_event_blocks_numbered_end_with_the_counts() -> None:
    monitor = TransactionMonitor(True, "srv.transaction", PARTITION)
    transaction = TransactionContext("767:500", 1_704_164_645_123, begun=False)
    records: list[SourceRecord] = []
    first = {"lsn_commit": 500, "event": 1}
    assert block(monitor.event(transaction, "public.a", first, records)) == ("767:500", 1, 1)
    (begin,) = records
    assert (begin.topic, begin.source_partition, begin.source_offset) == (
        "srv.transaction",
        PARTITION,
        first,
    )
    assert begin.key_schema is TRANSACTION_KEY_SCHEMA and begin.key.get("id") == "767:500"
    assert begin.value_schema is TRANSACTION_VALUE_SCHEMA
    assert (begin.value.get("status"), begin.value.get("ts_ms")) == ("BEGIN", 1_704_164_645_123)
    assert begin.value.get("event_count") is None
    assert block(monitor.event(transaction, "public.b", {"event": 2}, records)) == ("767:500", 2, 1)
    assert block(monitor.event(transaction, "public.a", {"event": 3}, records)) == ("767:500", 3, 2)
    assert len(records) == 1  # one BEGIN
    end_offset = {"lsn_commit": 500, "event": 4}
    monitor.end(transaction, 1_704_164_645_999, end_offset, records)
    end = records[-1]
    assert end.source_offset == end_offset and end.key.get("id") == "767:500"
    assert (end.value.get("status"), end.value.get("event_count")) == ("END", 3)
    assert end.value.get("ts_ms") == 1_704_164_645_999
    assert [
        (c.get("data_collection"), c.get("event_count")) for c in end.value.get("data_collections")
    ] == [
        ("public.a", 2),
        ("public.b", 1),
    ]


def test_a_transaction_with_no_emitted_event_has_neither_begin_nor_end() -> None:
    monitor = TransactionMonitor(True, "srv.transaction", PARTITION)
    records: list[SourceRecord] = []
    monitor.end(TransactionContext("1:2", 3, begun=False), 4, {"event": 1}, records)
    assert records == []


def test_a_transaction_resumed_after_its_begin_was_stored_gets_no_second_begin() -> None:
    monitor = TransactionMonitor(True, "srv.transaction", PARTITION)
    transaction = TransactionContext("767:500", 5, begun=True)
    records: list[SourceRecord] = []
    assert block(monitor.event(transaction, "public.a", {"event": 3}, records)) == ("767:500", 1, 1)
    assert records == []
    monitor.end(transaction, 6, {"event": 4}, records)
    assert [r.value.get("status") for r in records] == ["END"]
