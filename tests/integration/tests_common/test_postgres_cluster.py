"""The private PostgreSQL cluster of tests_common/postgres_cluster.py: it starts, crashes,
restarts with its data, freezes and resumes, and leaves nothing behind."""

from __future__ import annotations

import socket
import time

import psutil
import psycopg
import pytest
from sqlalchemy import create_engine, text

from tests_common import netns
from tests_common.postgres_cluster import postgres_cluster_or_skip

pytestmark = pytest.mark.integration


def select_one(dsn: str) -> int:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        row = conn.execute("SELECT 1").fetchone()
    assert row is not None
    return int(row[0])


def gone(process: psutil.Process) -> bool:
    """Exited (a zombie waiting for its parent to reap it counts)."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def frozen(process: psutil.Process) -> bool:
    """Stopped by SIGSTOP (or a backend that had already exited when its parent stopped)."""
    return process.status() in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE)


def test_start_accepts_connections_and_stop_removes_everything() -> None:
    with postgres_cluster_or_skip() as pg:
        assert pg.port != 5432
        assert select_one(pg.dsn) == 1
        engine = create_engine(pg.url)  # the URL stores and benchmarks use
        with engine.connect() as conn:
            assert conn.execute(text("SELECT current_database()")).scalar() == "postgres"
        engine.dispose()
        directory, processes = pg.directory, pg.processes()
        assert processes
    assert directory is not None and not directory.exists()
    assert all(gone(p) for p in processes)
    pg.stop()  # idempotent


def test_crash_refuses_connections_and_restart_keeps_the_data() -> None:
    with postgres_cluster_or_skip() as pg:
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (x int)")
            conn.execute("INSERT INTO kept VALUES (42)")
        with pg.crashed():  # crash(), then restart() when the block ends
            assert not pg.running and pg.processes() == []
            started = time.monotonic()
            with pytest.raises(psycopg.OperationalError, match="refused"):
                psycopg.connect(pg.dsn, connect_timeout=2)
            assert time.monotonic() - started < 15
        assert pg.running
        with psycopg.connect(pg.dsn) as conn:
            assert conn.execute("SELECT x FROM kept").fetchall() == [(42,)]


def test_a_frozen_cluster_times_connections_out_until_resumed() -> None:
    with postgres_cluster_or_skip() as pg:
        with pg.frozen():
            # the kernel still completes the TCP handshake; libpq then waits for an answer
            socket.create_connection(("127.0.0.1", pg.port), timeout=2).close()
            started = time.monotonic()
            with pytest.raises(psycopg.OperationalError):
                psycopg.connect(pg.dsn, connect_timeout=2)
            assert time.monotonic() - started < 15
        assert not pg.is_frozen
        assert select_one(pg.dsn) == 1


def test_stop_resumes_and_stops_a_frozen_cluster() -> None:
    pg = postgres_cluster_or_skip()
    try:
        pg.start()
        pg.freeze()
        processes = pg.processes()
        assert len(processes) > 1
        assert all(frozen(p) for p in processes)
    finally:
        pg.stop()
    assert all(gone(p) for p in processes)
    assert pg.directory is None and not pg.running


@pytest.mark.skipif(netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason()))
def test_a_cluster_in_a_host_of_its_own_is_cut_off_and_back() -> None:
    """In a network host, the cluster answers at the host's address; while its link is cut a
    new connection times out and an open one stays open, to answer again after the heal."""
    with netns.NetworkHost() as host, postgres_cluster_or_skip(host=host) as pg:
        assert pg.dsn.startswith(f"postgresql://postgres@{host.address}:")
        with psycopg.connect(pg.dsn, connect_timeout=5, autocommit=True) as opened:
            with host.partitioned(), pytest.raises(psycopg.OperationalError, match="timeout"):
                psycopg.connect(pg.dsn, connect_timeout=2)
            assert opened.execute("SELECT 1").fetchone() == (1,)
