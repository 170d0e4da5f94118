"""Debezium's JDBC sink end to end through the REST runtime: PostgreSQL → Kafka (Debezium's
PostgresConnector) → a PostgreSQL replica, the change events taken as they are (no unwrap
SMT), on a private cluster, truncates included; and its config errors per field through
REST."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.integration.conftest import create
from tests.integration.connectors.postgres.test_pipeline import (
    new_database,
    rows,
    run,
    source_config,
)
from tests_common.broker import free_port
from tests_common.kafka import wait_until
from tests_common.postgres_cluster import PostgresCluster, postgres_cluster_or_skip

pytestmark = pytest.mark.integration

DEBEZIUM_JDBC_SINK = "io.debezium.connector.jdbc.JdbcSinkConnector"


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster_or_skip() as pg:
        yield pg


def table(cluster: PostgresCluster, database: str) -> list[tuple[Any, ...]]:
    return rows(
        cluster, database, "SELECT id, item, qty, price, placed, day FROM orders ORDER BY id"
    )


def sink_config(cluster: PostgresCluster, database: str, topic: str) -> dict[str, str]:
    return {
        "connector.class": DEBEZIUM_JDBC_SINK,
        "topics": topic,
        "connection.url": f"jdbc:postgresql://127.0.0.1:{cluster.port}/{database}",
        "connection.username": "postgres",
        "insert.mode": "upsert",
        "primary.key.mode": "record_key",
        "delete.enabled": "true",
        "truncate.enabled": "true",
        "schema.evolution": "basic",
        "collection.name.format": "${source.table}",
    }


def test_a_replica_follows_inserts_updates_key_changes_deletes_and_truncates(
    cluster: PostgresCluster, rest: TestClient, bootstrap: str
) -> None:
    source, replica = new_database(cluster), new_database(cluster)
    prefix = f"dbz{free_port()}"
    run(
        cluster,
        source,
        "CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL, qty INT, "
        "price NUMERIC(10, 2), placed TIMESTAMPTZ, day DATE)",
        "INSERT INTO orders SELECT g, 'item ' || g, g, g * 1.25, "
        "'2026-11-01 12:00:00+01'::timestamptz + g * interval '1 hour', "
        "DATE '2026-11-01' + g FROM generate_series(1, 30) g",
    )
    create(rest, "cdc", {**source_config(cluster, source, prefix), "skipped.operations": "none"})
    topic = f"{prefix}.public.orders"
    create(rest, "replica", sink_config(cluster, replica, topic))

    def equal(step: str) -> None:
        expected = table(cluster, source)
        wait_until(lambda: table(cluster, replica) == expected, 120, f"the replica after {step}")

    equal("the snapshot")
    run(
        cluster,
        source,
        "UPDATE orders SET qty = qty * 10, price = NULL WHERE id % 3 = 0",
        "UPDATE orders SET id = id + 100 WHERE id IN (4, 7)",  # key changes: d, tombstone, c
        "DELETE FROM orders WHERE id % 5 = 0",
        "INSERT INTO orders VALUES (31, 'late', 1, 9.99, now(), NULL)",
    )
    equal("updates, key changes and deletes")
    ids = {r[0] for r in table(cluster, replica)}
    assert {104, 107} <= ids and not {4, 7} & ids
    run(cluster, source, "TRUNCATE orders")
    wait_until(lambda: table(cluster, replica) == [], 120, "the replica truncated")
    run(cluster, source, "INSERT INTO orders VALUES (1, 'again', 2, 1, now())")
    equal("a truncate")
    assert rest.delete("/connectors/cdc").status_code == 204


def test_config_errors_are_per_field_through_rest(
    cluster: PostgresCluster, rest: TestClient
) -> None:
    database = new_database(cluster)
    base = sink_config(cluster, database, "orders")
    plugin = f"/connector-plugins/{DEBEZIUM_JDBC_SINK}/config/validate"

    def errors(**changes: str) -> dict[str, list[str]]:
        answer = rest.put(plugin, json={"name": "checked", **base, **changes})
        assert answer.status_code == 200, answer.text
        configs = answer.json()["configs"]
        return {c["value"]["name"]: c["value"]["errors"] for c in configs if c["value"]["errors"]}

    assert errors() == {}
    assert errors(**{"primary.key.mode": "kafka"}) == {
        "delete.enabled": [
            "When 'delete.enabled' is set to 'true', the 'primary.key.mode' option must be set "
            "to 'record_key' or 'record_value'."
        ]
    }
    zone = errors(**{"schema.evolution": "validate-only", "use.time.zone": "Mars/Olympus"})
    assert list(zone) == ["use.time.zone"]
    absent = errors(**{"schema.evolution": "validate-only", "collection.name.format": "${topic}"})
    assert (
        list(absent) == ["schema.evolution"]
        and "'orders' does not exist" in absent["schema.evolution"][0]
    )
    unreachable = errors(**{"connection.url": "jdbc:postgresql://127.0.0.1:1/nowhere"})
    assert list(unreachable) == ["connection.url"]

    config = {**base, "primary.key.mode": "kafka"}
    refused = rest.post("/connectors", json={"name": "bad", "config": config})
    assert refused.status_code == 400 and "delete.enabled" in refused.json()["message"]
