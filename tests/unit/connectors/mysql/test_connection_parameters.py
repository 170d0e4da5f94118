"""Every PyMySQL connection of the binlog connectors waits for the server at most
``connect.timeout.ms``: ordinary connections with read and write timeouts, the binlog stream
with a read timeout far above the server's idle heartbeat (so only a dead link trips it)."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connectors.mysql.binlog import HEARTBEAT_S
from airflow_provider_connect.connectors.mysql.config import BinlogConnectorConfig
from airflow_provider_connect.connectors.mysql.flavors import MARIADB, MYSQL, Flavor

PROPS = {
    "database.hostname": "127.0.0.1",
    "database.user": "capture",
    "database.server.id": "5400",
    "topic.prefix": "shop",
}


@pytest.mark.parametrize("flavor", [MYSQL, MARIADB])
def test_reads_and_writes_wait_at_most_the_connect_timeout(flavor: Flavor) -> None:
    parameters = BinlogConnectorConfig.of(flavor, PROPS).parameters
    timeouts = {k: v for k, v in parameters.items() if k.endswith("timeout")}
    assert timeouts == {"connect_timeout": 30, "read_timeout": 30, "write_timeout": 30}


def test_the_timeout_is_whole_seconds_one_at_least() -> None:
    parameters = BinlogConnectorConfig.of(MYSQL, {**PROPS, "connect.timeout.ms": "1500"}).parameters
    assert parameters["read_timeout"] == parameters["write_timeout"] == 1


def test_the_binlog_heartbeat_comes_well_within_the_shortest_read_timeout() -> None:
    """The least connect.timeout.ms (1 s) still leaves room for ten heartbeats: an idle
    stream never times out while its server is there."""
    assert HEARTBEAT_S * 10 <= 1
