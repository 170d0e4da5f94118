"""Every libpq connection of the PostgreSQL connector gets TCP keepalives and a
tcp_user_timeout bounding how long a dead network goes unnoticed by database.connect.timeout.ms
(``database.tcpKeepAlive``, Debezium's name, on by default)."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connectors.postgres.config import (
    CONFIG_DEF,
    PostgresConnectorConfig,
    connection_parameters,
    keepalive_parameters,
)

PROPS = {
    "name": "orders",
    "topic.prefix": "shop",
    "database.hostname": "127.0.0.1",
    "database.user": "postgres",
    "database.dbname": "shop",
}


def test_the_default_fails_a_silent_connection_within_the_connect_timeout() -> None:
    parameters = PostgresConnectorConfig.of(PROPS).parameters
    assert {k: v for k, v in parameters.items() if "keepalive" in k or "timeout" in k} == {
        "keepalives": 1,
        "keepalives_idle": 10,
        "keepalives_interval": 5,
        "keepalives_count": 4,
        "tcp_user_timeout": 30_000,
        "connect_timeout": 30,
    }


@pytest.mark.parametrize("timeout_ms", [1000, 1500, 2000, 7000, 30_000, 61_000, 600_000])
def test_keepalive_probes_end_by_the_bound(timeout_ms: int) -> None:
    """The last unanswered probe falls at the bound, rounded up to whole seconds, and
    never later than 2 s for the shortest timeouts."""
    p = keepalive_parameters(timeout_ms)
    given_up_s = p["keepalives_idle"] + p["keepalives_count"] * p["keepalives_interval"]
    bound_s = -(-timeout_ms // 1000)
    assert bound_s <= given_up_s <= max(2, bound_s + p["keepalives_interval"] - 1)
    assert p["tcp_user_timeout"] == timeout_ms
    assert min(p["keepalives_idle"], p["keepalives_interval"], p["keepalives_count"]) >= 1


def test_tcp_keepalive_false_turns_them_off() -> None:
    parsed = CONFIG_DEF.parse({**PROPS, "database.tcpKeepAlive": "false"})
    parameters = connection_parameters(parsed, "connect-orders")
    assert parameters["keepalives"] == 0
    assert not any(k.startswith("keepalives_") or k == "tcp_user_timeout" for k in parameters)


def test_the_timeout_sets_the_bound() -> None:
    config = PostgresConnectorConfig.of({**PROPS, "database.connect.timeout.ms": "12000"})
    assert keepalive_parameters(12_000).items() <= config.parameters.items()
    assert config.parameters["tcp_user_timeout"] == 12_000
