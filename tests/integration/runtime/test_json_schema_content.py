"""KIP-1054 on the runtime (real broker, Spark, SQLite): a JDBC sink reads messages that are
payloads alone, as Kafka's JsonConverter expects them with ``schema.content``, and gets the
schema from its config; a schema.content that is not JSON is refused where the connector is
created."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine

from airflow_provider_connect.connect.json import JsonConverter
from tests.integration.conftest import create
from tests.integration.connectors.jdbc.test_sink import row_count, rows
from tests.records import VALUE, order
from tests_common.kafka import new_topic, produce
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration
JSON = "org.apache.kafka.connect.json.JsonConverter"


def test_a_sink_reads_payloads_alone_with_the_schema_from_its_config(
    rest: TestClient, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    bare = JsonConverter()  # what a producer of plain JSON writes: no envelope
    bare.configure({"schemas.enable": "false", "decimal.format": "NUMERIC"}, False)
    payloads = [bare.from_connect_data(topic, VALUE, order(i)) for i in range(1, 201)]
    assert payloads[0] == (
        b'{"id":1,"name":"order 1","amount":0.25,"at":1793536200000}'
    )  # no "schema" in the message
    produce(bootstrap, topic, payloads)
    db = f"sqlite:///{tmp_path / 'orders.db'}"
    config = {
        "connector.class": "JdbcSinkConnector",
        "connection.url": db,
        "topics": topic,
        "auto.create": "true",
        "value.converter": JSON,
        "value.converter.decimal.format": "NUMERIC",
        "value.converter.schema.content": orjson.dumps(
            JsonConverter().as_json_schema(VALUE)
        ).decode(),
    }
    refused = rest.post(
        "/connectors",
        json={
            "name": "bad",
            "config": {**config, "value.converter.schema.content": '{ "string" }'},
        },
    )
    assert refused.status_code == 400
    assert (
        'value.converter.schema.content: Invalid value { "string" } for configuration '
        "schema.content: Failed to parse schema in converter config due to serialization error"
    ) in refused.json()["message"]

    create(rest, "orders-to-db", config)
    engine = create_engine(db)
    try:
        wait_until(lambda: row_count(engine, topic) == 200, 90, "200 rows")
        stored = rows(engine, topic)
    finally:
        engine.dispose()
    # The table was made from the configured schema: typed columns, decimals and timestamps.
    assert [r["id"] for r in stored] == list(range(1, 201))
    assert stored[0]["name"] == "order 1" and stored[0]["amount"] == decimal.Decimal("0.25")
    assert stored[4]["amount"] is None
    assert stored[0]["at"] == dt.datetime(2026, 11, 1, 12, 30)
