"""The private MariaDB server of tests_common/mariadb.py: it starts with the binlog change
capture needs, keeps its data through a crash and a restart, purges binlogs, hands out
distinct connector server ids, and leaves nothing behind."""

from __future__ import annotations

import psutil
import pymysql
import pytest

from tests_common.mariadb import mariadb_server_or_skip

pytestmark = pytest.mark.integration


def test_a_server_of_its_own_through_crash_restart_and_stop() -> None:
    server = mariadb_server_or_skip(server_id=7, settings={"binlog-row-image": "MINIMAL"})
    with server:
        assert server.query(
            "SELECT @@server_id, @@log_bin, @@binlog_format, @@binlog_row_image, "
            "@@binlog_row_metadata, @@port, @@character_set_server"
        ) == [(7, 1, "ROW", "MINIMAL", "FULL", server.port, "utf8mb4")]
        server.execute("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)")
        server.execute("INSERT INTO t VALUES (1)", database="d")
        process = psutil.Process(server.pid)

        server.crash()
        assert not process.is_running() and not server.running
        with pytest.raises(pymysql.err.OperationalError):
            server.query("SELECT 1")
        server.restart()
        assert server.query("SELECT id FROM d.t") == [(1,)]
        server.restart()  # a clean shutdown, then a start
        assert server.query("SELECT id FROM d.t") == [(1,)]

        server.purge_binlogs()
        assert len(server.query("SHOW BINARY LOGS")) == 1

        first, second = server.connector_config(), server.connector_config(**{"topic.prefix": "x"})
        assert first["database.port"] == str(server.port) and second["topic.prefix"] == "x"
        assert first["database.server.id"] != second["database.server.id"] != "7"
        directory, process = server.directory, psutil.Process(server.pid)
    assert directory is not None and not directory.exists()
    assert not process.is_running()


def test_settings_of_none_leave_an_option_out() -> None:
    with mariadb_server_or_skip(settings={"log-bin": None}) as server:
        assert server.query("SELECT @@log_bin") == [(0,)]
