"""The outbox pattern through the runtime, as users run it, judged from the topics: an outbox
table's inserts routed by Debezium's EventRouter to a topic per aggregate, and
``pg_logical_emit_message`` messages, decoded by DecodeLogicalDecodingMessageContent, routed
the same way (an outbox without a table); and the connector's own message records, across a
stop and resume (each delivered once)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.integration.conftest import create
from tests.integration.connectors.postgres import test_pipeline
from tests.integration.connectors.postgres.test_pipeline import (
    new_database,
    new_topic_prefix,
    run,
    source_config,
    streaming,
)
from tests_common.kafka import read_messages
from tests_common.postgres_cluster import PostgresCluster
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

cluster = test_pipeline.cluster
"""The private cluster, as test_pipeline.py's."""


def payload(data: bytes | None) -> Any:
    assert data is not None
    return json.loads(data)["payload"]


def message(aggregate: str, key: str, event_id: str, qty: int) -> str:
    content = {
        "id": event_id,
        "aggregatetype": aggregate,
        "aggregateid": key,
        "type": f"{aggregate}Changed",
        "payload": {"qty": qty},
    }
    return json.dumps(content).replace("'", "''")


def test_an_outbox_table_and_outbox_messages_are_routed_per_aggregate(
    cluster: PostgresCluster, rest: TestClient, bootstrap: str
) -> None:
    database, prefix = new_database(cluster), new_topic_prefix()
    run(
        cluster,
        database,
        "CREATE TABLE outbox (id UUID PRIMARY KEY, aggregatetype VARCHAR(255) NOT NULL, "
        "aggregateid VARCHAR(255) NOT NULL, type VARCHAR(255) NOT NULL, payload JSONB)",
    )
    config = {
        **source_config(cluster, database, prefix),
        "table.include.list": "public.outbox",
        "snapshot.mode": "no_data",
        "message.prefix.include.list": "outbox",
        "transforms": "decode,outbox",
        "transforms.decode.type": "io.debezium.connector.postgresql.transforms."
        "DecodeLogicalDecodingMessageContent",
        "transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
        "transforms.outbox.route.topic.replacement": prefix + ".${routedByValue}",
        "transforms.outbox.table.fields.additional.placement": "type:header:eventType,"
        "aggregateid:envelope:aggregate",
    }
    create(rest, "outbox", config)
    streaming(cluster, database)
    ids = [f"0b0a8c1e-7d35-4b8e-9d6e-{i:012d}" for i in range(2)]
    run(
        cluster,
        database,
        "BEGIN",
        f"INSERT INTO outbox VALUES ('{ids[0]}', 'Order', 'o-1', 'OrderCreated', '{{\"qty\": 1}}')",
        f"INSERT INTO outbox VALUES ('{ids[1]}', 'Customer', 'c-1', 'CustomerCreated', '{{}}')",
        "DELETE FROM outbox",  # an outbox is a queue: its deletes are dropped
        f"SELECT pg_logical_emit_message(true, 'outbox', '{message('Order', 'o-2', 'm1', 2)}')",
        "COMMIT",
        f"SELECT pg_logical_emit_message(false, 'outbox', '{message('Customer', 'c-2', 'm2', 3)}')",
        f"SELECT pg_logical_emit_message(false, 'other', '{message('Order', 'o-3', 'm3', 4)}')",
    )

    def routed(aggregate: str) -> list[tuple[Any, ...]]:
        found = read_messages(bootstrap, f"{prefix}.{aggregate}", 2, timeout_s=120)
        return sorted(  # by key: the keys' partitions are read one after the other
            (
                payload(m.key()),
                dict(m.headers() or ()),
                payload(m.value()),
            )
            for m in found
        )

    order_header = {"id": ids[0].encode(), "eventType": b"OrderCreated"}
    assert routed("Order") == [
        ("o-1", order_header, {"payload": '{"qty": 1}', "aggregate": "o-1"}),
        (
            "o-2",
            {"id": b"m1", "eventType": b"OrderChanged"},
            {"payload": {"qty": 2}, "aggregate": "o-2"},
        ),
    ]
    customer_header = {"id": ids[1].encode(), "eventType": b"CustomerCreated"}
    assert routed("Customer") == [
        ("c-1", customer_header, {"payload": "{}", "aggregate": "c-1"}),
        (
            "c-2",
            {"id": b"m2", "eventType": b"CustomerChanged"},
            {"payload": {"qty": 3}, "aggregate": "c-2"},
        ),
    ]


def test_message_records_are_debeziums_and_each_comes_once_across_a_stop(
    cluster: PostgresCluster, rest: TestClient, bootstrap: str
) -> None:
    database, prefix = new_database(cluster), new_topic_prefix()
    run(cluster, database, "CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL)")
    config = {
        **source_config(cluster, database, prefix),
        "snapshot.mode": "no_data",
        "provide.transaction.metadata": "true",
    }
    create(rest, "messages", config)
    streaming(cluster, database)
    run(
        cluster,
        database,
        "BEGIN",
        "INSERT INTO orders VALUES (1, 'one')",
        "SELECT pg_logical_emit_message(true, 'tx', 'in a transaction')",
        "COMMIT",
        r"SELECT pg_logical_emit_message(false, 'alone', E'\\x00ff'::bytea)",
    )
    topic = f"{prefix}.message"
    first = read_messages(bootstrap, topic, 2, timeout_s=120)
    assert [payload(m.key()) for m in first] == [{"prefix": "tx"}, {"prefix": "alone"}]
    transactional, alone = (payload(m.value()) for m in first)
    assert json.loads(first[0].value())["schema"]["name"] == (  # type: ignore[arg-type]
        "io.debezium.connector.postgresql.MessageValue"
    )
    assert transactional["op"] == alone["op"] == "m"
    assert transactional["message"] == {
        "prefix": "tx",
        "content": base64.b64encode(b"in a transaction").decode(),
    }
    assert alone["message"]["content"] == base64.b64encode(b"\x00\xff").decode()
    assert transactional["transaction"]["total_order"] == 2  # after the insert
    assert alone["transaction"] is None
    assert transactional["source"]["txId"] is not None and alone["source"]["txId"] is None
    assert {transactional["source"]["table"], alone["source"]["table"]} == {""}
    end = payload(read_messages(bootstrap, f"{prefix}.transaction", 2, timeout_s=60)[-1].value())
    assert {c["data_collection"] for c in end["data_collections"]} == {
        "public.orders",
        "LOGICAL_DECODING_MESSAGE",
    }

    # Stopped after the non-transactional message: what is emitted meanwhile comes once
    # after the resume, and nothing before it comes again.
    assert rest.put("/connectors/messages/stop").status_code == 204
    wait_until(
        lambda: rest.get("/connectors/messages/status").json()["connector"]["state"] == "STOPPED",
        60,
        "STOPPED",
    )
    run(
        cluster,
        database,
        "SELECT pg_logical_emit_message(true, 'tx', 'while stopped')",
        "SELECT pg_logical_emit_message(false, 'alone', 'while stopped')",
    )
    assert rest.put("/connectors/messages/resume").status_code == 202
    every = read_messages(bootstrap, topic, 4, timeout_s=120, quiet_s=3)
    assert [
        (payload(m.key())["prefix"], payload(m.value())["message"]["content"]) for m in every
    ] == [
        ("tx", base64.b64encode(b"in a transaction").decode()),
        ("alone", base64.b64encode(b"\x00\xff").decode()),
        ("tx", base64.b64encode(b"while stopped").decode()),
        ("alone", base64.b64encode(b"while stopped").decode()),
    ]
