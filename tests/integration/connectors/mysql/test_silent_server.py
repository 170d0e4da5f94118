"""The binlog connectors' connections to a server that stops answering (a private MariaDB
frozen with SIGSTOP: its kernel still accepts and acknowledges, nothing comes back, as
across a partition): an ordinary statement and a binlog read fail within
``connect.timeout.ms`` (PyMySQL's read timeout) instead of waiting forever, and an idle
binlog stream of a server that is there never does (its heartbeat comes every 0.1 s)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import psutil
import pymysql
import pytest
from pymysqlreplication.event import RotateEvent

from airflow_provider_connect.connectors.mysql.binlog import BinlogStream
from airflow_provider_connect.connectors.mysql.config import BinlogConnectorConfig
from airflow_provider_connect.connectors.mysql.database import Database
from airflow_provider_connect.connectors.mysql.flavors import MARIADB
from tests_common.mariadb import MariaDbServer
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

TIMEOUT_S = 2
"""connect.timeout.ms, in seconds."""
SLACK_S = 3


@contextlib.contextmanager
def frozen(server: MariaDbServer) -> Iterator[None]:
    """The server stopped (SIGSTOP) for the block, resumed however it ends."""
    assert server.pid is not None
    process = psutil.Process(server.pid)
    os.kill(server.pid, signal.SIGSTOP)
    try:
        wait_until(lambda: process.status() == psutil.STATUS_STOPPED, 10, "the server stopped")
        yield
    finally:
        os.kill(server.pid, signal.SIGCONT)


def config(server: MariaDbServer) -> BinlogConnectorConfig:
    props = server.connector_config(**{"connect.timeout.ms": str(TIMEOUT_S * 1000)})
    return BinlogConnectorConfig.of(MARIADB, props)


def test_a_statement_fails_within_the_timeout(mariadb: MariaDbServer) -> None:
    database = Database(config(mariadb).parameters)
    try:
        with frozen(mariadb):
            started = time.monotonic()
            with pytest.raises(pymysql.err.OperationalError):
                database.query("SELECT 1")
            took = time.monotonic() - started
    finally:
        database.close()
    assert TIMEOUT_S <= took < TIMEOUT_S + SLACK_S


def test_an_idle_stream_lives_and_a_silent_one_fails_within_the_timeout(
    mariadb: MariaDbServer,
) -> None:
    parsed = config(mariadb)
    database = Database(parsed.parameters)
    position = database.position()
    database.close()
    stream = BinlogStream(
        parsed.parameters,
        parsed.server_id,
        mariadb=True,
        file=position.file,
        pos=position.pos,
        gtids=position.gtids,
        annotate=False,
        timeout_s=parsed.parameters["connect_timeout"],
    )
    try:
        idle_until = time.monotonic() + TIMEOUT_S * 2
        while time.monotonic() < idle_until:  # idle past the timeout: the heartbeats come
            events = list(stream.read(idle_until))
            assert all(isinstance(e, RotateEvent) for e in events)  # the session's first
        with frozen(mariadb):
            started = time.monotonic()
            with pytest.raises(pymysql.err.OperationalError):
                list(stream.read(time.monotonic() + 60))
            took = time.monotonic() - started
    finally:
        stream.close()
    assert took < TIMEOUT_S + SLACK_S
