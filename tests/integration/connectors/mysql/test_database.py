"""connectors/mysql/database.py against a private MariaDB 10.11 server per test: each server
problem found with a message naming the setting to change; the catalog; binlog positions;
snapshots consistent with the binlog under concurrent writes (by file and position, and by
GTID), taking no global read lock in MariaDB's ``minimal`` and ``none`` modes and holding
one until the snapshot ends in ``extended``; incremental snapshots' chunks."""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pymysql
import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import HeartbeatLogEvent
from pymysqlreplication.row_event import WriteRowsEvent

from airflow_provider_connect.connectors.mysql.database import BinlogPosition, Database
from tests_common.mariadb import MariaDbServer
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

_replica_ids = itertools.count(7001)


def database(server: MariaDbServer, user: str = "root", password: str = "") -> Database:
    return Database({"host": server.host, "port": server.port, "user": user, "password": password})


@pytest.fixture
def db(mariadb: MariaDbServer) -> Iterator[Database]:
    """The server's ``Database`` as root, with a database ``d`` and its table ``t``."""
    mariadb.execute(
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY, writer INT NOT NULL, note VARCHAR(20))",
    )
    connection = database(mariadb)
    yield connection
    connection.close()


def binlog_ids(server: MariaDbServer, position: BinlogPosition, *, by_gtid: bool) -> list[int]:
    """The ids of the rows inserted into ``d.t`` in the binlog from ``position`` to its
    current end, read with mysql-replication from the file and position or from the GTID set
    (blocking, as change capture reads: MariaDB drops a non-blocking GTID reader midway). The
    end is the first heartbeat: the server sends one when it has nothing more to send."""
    start: dict[str, Any] = (
        {"auto_position": position.gtids, "is_mariadb": True}
        if by_gtid
        else {"log_file": position.file, "log_pos": position.pos}
    )
    stream = BinLogStreamReader(
        connection_settings={
            "host": server.host,
            "port": server.port,
            "user": server.user,
            "password": server.password,
        },
        server_id=next(_replica_ids),
        resume_stream=True,
        blocking=True,
        slave_heartbeat=0.1,
        only_events=[WriteRowsEvent, HeartbeatLogEvent],
        only_schemas=["d"],
        only_tables=["t"],
        pymysql_wrapper=_connect_once(),
        **start,
    )
    ids: list[int] = []
    try:
        for event in stream:
            if isinstance(event, HeartbeatLogEvent):
                return ids
            ids += [row["values"]["id"] for row in event.rows]
    finally:
        stream.close()
    raise AssertionError("the binlog reader stopped before the end")


def _connect_once() -> Callable[..., Any]:
    """mysql-replication's connect function for a reader that fails instead of reconnecting
    (it reconnects forever when the server drops it): its two connections (stream and
    control) and no more."""
    connections = itertools.count()

    def connect(**settings: Any) -> Any:
        if next(connections) >= 2:
            raise AssertionError("the server dropped the binlog reader: see its log")
        return pymysql.connect(**settings)

    return connect


class Writers:
    """Threads inserting rows into ``d.t`` in transactions of three, each on a connection
    of its own, until stopped; ``committed`` counts the rows they have committed."""

    def __init__(self, server: MariaDbServer, count: int = 2) -> None:
        self.server = server
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.committed = 0
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(count)]
        for thread in self.threads:
            thread.start()

    def _run(self, writer: int) -> None:
        try:
            with self.server.connect("d") as connection, connection.cursor() as cursor:
                while not self.stopping.is_set():
                    cursor.execute("BEGIN")
                    for _ in range(3):
                        with self.lock:
                            row_id = next(self.ids)
                        cursor.execute(
                            "INSERT INTO t (id, writer) VALUES (%s, %s)", (row_id, writer)
                        )
                    cursor.execute("COMMIT")
                    with self.lock:
                        self.committed += 3
        except BaseException as e:  # reported by stop()
            self.errors.append(e)

    def wait_for(self, rows: int) -> None:
        wait_until(lambda: self.committed >= rows or self.errors, 60, f"{rows} rows written")

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(60)
        assert not self.errors, self.errors


# -- server problems --------------------------------------------------------------------------


def test_a_server_set_up_for_change_capture_has_no_problem(
    mariadb: MariaDbServer, db: Database
) -> None:
    assert db.mariadb
    assert db.server_problems("mariadb", 5400) == []
    assert db.server_problems("mysql", 5400) == []


@pytest.mark.parametrize(
    ("mariadb", "setting"),
    [
        ({"log-bin": None}, "log_bin=OFF"),
        ({"binlog-format": "STATEMENT"}, "binlog_format=ROW"),
        ({"binlog-row-image": "MINIMAL"}, "binlog_row_image=FULL"),
        ({"binlog-row-metadata": "MINIMAL"}, "binlog_row_metadata=FULL"),
        ({"log-bin-compress": "ON"}, "log_bin_compress=OFF"),
    ],
    indirect=["mariadb"],
    ids=["binlog-off", "statement-format", "minimal-row-image", "minimal-metadata", "compressed"],
)
def test_each_binlog_setting_change_capture_cannot_work_with_is_named(
    mariadb: MariaDbServer, db: Database, setting: str
) -> None:
    [(key, message)] = db.server_problems("mariadb", 5400)
    assert key == "database.hostname"
    assert setting in message


@pytest.mark.parametrize("mariadb", [{"log-bin": None}], indirect=True)
def test_without_binlog_there_are_no_files_and_no_position(db: Database) -> None:
    assert db.binlog_files() == []
    with pytest.raises(Exception, match="Cannot read the binlog filename and position"):
        db.position()


def test_a_user_missing_a_privilege_is_told_which_and_how_to_grant_it(
    mariadb: MariaDbServer, db: Database
) -> None:
    mariadb.execute(
        "CREATE USER 'cdc'@'%' IDENTIFIED BY 'secret'",
        "GRANT SELECT ON d.* TO 'cdc'@'%'",
        "GRANT RELOAD, REPLICATION CLIENT ON *.* TO 'cdc'@'%'",
    )
    cdc = database(mariadb, "cdc", "secret")
    [(key, message)] = cdc.server_problems("mariadb", 5400)
    assert key == "database.user"
    assert "lacks the privileges REPLICATION SLAVE" in message
    assert "GRANT REPLICATION SLAVE ON *.* TO 'cdc'@'%'" in message

    # Granted through a role, active by default: MariaDB's SHOW GRANTS lists the role's grants.
    mariadb.execute(
        "CREATE ROLE replicator",
        "GRANT REPLICATION SLAVE ON *.* TO replicator",
        "GRANT replicator TO 'cdc'@'%'",
        "SET DEFAULT ROLE replicator FOR 'cdc'@'%'",
    )
    cdc.close()
    cdc = database(mariadb, "cdc", "secret")
    assert cdc.server_problems("mariadb", 5400) == []
    cdc.close()


def test_a_server_id_in_use_is_named(mariadb: MariaDbServer, db: Database) -> None:
    [(key, message)] = db.server_problems("mariadb", mariadb.server_id)
    assert key == "database.server.id"
    assert "server's own server_id" in message

    replica_id = next(_replica_ids)
    replica = BinLogStreamReader(
        connection_settings={"host": mariadb.host, "port": mariadb.port, "user": "root"},
        server_id=replica_id,
        resume_stream=True,
        blocking=True,
        report_slave="127.0.0.1",
    )
    try:
        replica.fetchone()  # connects and registers; the first event is the fake rotate
        wait_until(
            lambda: mariadb.query("SHOW SLAVE HOSTS"), 30, "the replica shows in SHOW SLAVE HOSTS"
        )
        [(key, message)] = db.server_problems("mariadb", replica_id)
        assert key == "database.server.id"
        assert f"database.server.id {replica_id} is the server_id of a replica" in message
        assert db.server_problems("mariadb", replica_id + 1) == []
    finally:
        replica.close()


# -- the catalog and the binlog ---------------------------------------------------------------


def test_the_catalog(mariadb: MariaDbServer, db: Database) -> None:
    mariadb.execute(
        "CREATE DATABASE e",
        "CREATE TABLE e.`odd``name` (b VARCHAR(5) COMMENT 'second', a INT UNSIGNED "
        "AUTO_INCREMENT, j JSON, x LONGTEXT, PRIMARY KEY (b, a), KEY (a))",
        "CREATE VIEW e.v AS SELECT 1",
        "CREATE SEQUENCE e.s",
    )
    assert db.tables() == [("d", "t"), ("e", "odd`name")]
    assert ("mysql", "user") not in db.tables() and ("mysql", "global_priv") in db.tables(True)
    assert db.primary_key("e", "odd`name") == ["b", "a"]
    assert db.primary_key("d", "t") == ["id"]
    columns = db.columns("e", "odd`name")
    assert [c["column_name"] for c in columns] == ["b", "a", "j", "x"]
    b, a, j, x = columns
    assert b["column_type"] == "varchar(5)" and b["column_comment"] == "second"
    assert b["character_set_name"] == "utf8mb4" and b["character_maximum_length"] == 5
    assert a["column_type"] == "int(10) unsigned" and a["extra"] == "auto_increment"
    assert a["is_nullable"] == "NO" and a["column_key"] == "PRI"
    assert (j["data_type"], j["json"], x["data_type"], x["json"]) == (
        "longtext",
        True,
        "longtext",
        False,
    )
    assert "CHECK (json_valid(`j`))" in db.create_table("e", "odd`name")


def test_positions_follow_the_binlog(mariadb: MariaDbServer, db: Database) -> None:
    first = db.position()
    assert first.file == db.binlog_files()[-1]
    mariadb.execute("INSERT INTO d.t VALUES (1, 0, 'a')")
    second = db.position()
    assert (second.file, second.gtids) == (first.file, f"0-{mariadb.server_id}-3")
    assert second.pos > first.pos
    assert binlog_ids(mariadb, first, by_gtid=False) == [1]
    assert binlog_ids(mariadb, first, by_gtid=True) == [1]
    assert binlog_ids(mariadb, second, by_gtid=True) == []

    mariadb.purge_binlogs()
    assert db.binlog_files() == [db.position().file] != [first.file]
    assert db.position().gtids == second.gtids


# -- snapshots --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "mariadb_flavor"),
    [("minimal", True), ("extended", True), ("minimal", False)],
    ids=["minimal", "extended", "mysql-minimal"],
)
def test_a_snapshot_under_concurrent_writes_and_the_binlog_from_its_position_give_every_row_once(
    mariadb: MariaDbServer, db: Database, mode: str, mariadb_flavor: bool
) -> None:
    """Several snapshots, each taken while three writers commit: the later a snapshot's
    position is read, the more rows of its transaction's view the binlog from there repeats
    (read before it starts: the binlog misses rows). ``mysql-minimal`` is MySQL's way (the
    global read lock while the transaction starts and the position is read), on MariaDB."""
    snapshots: list[tuple[BinlogPosition, list[int]]] = []
    writers = Writers(mariadb, count=3)
    try:
        for _ in range(8):
            writers.wait_for(writers.committed + 30)
            position = db.consistent_snapshot(mode, mariadb=mariadb_flavor, lock_timeout_ms=30_000)
            rows = [row[0] for row in db.rows("d", "t", ["id", "writer"], fetch_size=7)]
            db.end_snapshot()
            snapshots.append((position, rows))
        writers.wait_for(writers.committed + 30)
    finally:
        writers.stop()
    written = {row[0] for row in mariadb.query("SELECT id FROM d.t")}
    for position, rows in snapshots:
        assert len(written) >= len(rows) + 30
        for by_gtid in (False, True):
            seen = collections.Counter(rows + binlog_ids(mariadb, position, by_gtid=by_gtid))
            assert set(seen) == written
            assert set(seen.values()) == {1}


@pytest.mark.parametrize("mode", ["minimal", "none"])
def test_mariadb_takes_no_global_read_lock_in_minimal_and_none(
    mariadb: MariaDbServer, db: Database, mode: str
) -> None:
    mariadb.execute("INSERT INTO d.t VALUES (1, 0, 'before')")
    position = db.consistent_snapshot(mode, mariadb=True)
    try:
        # A lock would make this write wait, and fail after a second.
        mariadb.execute(
            "SET SESSION lock_wait_timeout = 1", "INSERT INTO d.t VALUES (2, 0, 'during')"
        )
        assert db.query("SELECT id FROM d.t") == [(1,)]
    finally:
        db.end_snapshot()
    assert db.query("SELECT id FROM d.t") == [(1,), (2,)]
    assert binlog_ids(mariadb, position, by_gtid=True) == [2]


def test_extended_holds_the_global_read_lock_until_the_snapshot_ends(
    mariadb: MariaDbServer, db: Database
) -> None:
    position = db.consistent_snapshot("extended", mariadb=True)
    done = threading.Event()
    with mariadb.connect("d") as writer, writer.cursor() as cursor:
        cursor.execute("SELECT CONNECTION_ID()")
        (writer_id,) = cursor.fetchone()

        def write() -> None:
            cursor.execute("INSERT INTO t VALUES (1, 0, 'waited')")
            done.set()

        thread = threading.Thread(target=write)
        thread.start()
        try:
            wait_until(
                lambda: mariadb.query(
                    "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = "
                    f"{writer_id} AND STATE LIKE 'Waiting for %lock'"
                ),
                30,
                "the write waits for the snapshot's lock",
            )
            assert not done.is_set()
            assert db.query("SELECT COUNT(*) FROM d.t") == [(0,)]
        finally:
            db.end_snapshot()
            thread.join(30)
    assert done.is_set()
    assert binlog_ids(mariadb, position, by_gtid=False) == [1]


def test_a_snapshot_that_fails_releases_its_lock(mariadb: MariaDbServer, db: Database) -> None:
    """MySQL's ``minimal`` takes the global read lock, then reads the position: a user who may
    take the lock (RELOAD) but not read the position (REPLICATION CLIENT) fails there."""
    mariadb.execute("CREATE USER 'cdc'@'%'", "GRANT SELECT, RELOAD ON *.* TO 'cdc'@'%'")
    cdc = database(mariadb, "cdc")
    with pytest.raises(pymysql.MySQLError, match="BINLOG MONITOR"):
        cdc.consistent_snapshot("minimal", mariadb=False)
    mariadb.execute("SET SESSION lock_wait_timeout = 1", "INSERT INTO d.t VALUES (1, 0, 'free')")
    cdc.close()


# -- incremental snapshots --------------------------------------------------------------------


def test_chunks_in_key_order_between_bounds(mariadb: MariaDbServer, db: Database) -> None:
    mariadb.execute(
        "CREATE TABLE d.k (a VARCHAR(3), b INT, v INT, PRIMARY KEY (a, b))",
        "INSERT INTO d.k VALUES ('x', 2, 1), ('x', 1, 2), ('y', 1, 3), ('w', 9, 4), ('y', 0, 5)",
    )
    keys = ["a", "b"]
    assert db.max_key("d", "k", keys) == ("y", 1)
    assert db.max_key("d", "k", keys, condition="v < 3") == ("x", 2)
    assert db.chunk("d", "k", ["v"], keys, None, None, 2) == [(4,), (2,)]
    assert db.chunk("d", "k", ["v"], keys, ("x", 1), ("y", 0), 10) == [(1,), (5,)]
    assert db.chunk("d", "k", ["v"], keys, ("w", 9), None, 10, condition="v <> 1") == [
        (2,),
        (5,),
        (3,),
    ]
    db.execute("INSERT INTO d.k VALUES (%s, %s, %s)", ("z", 0, 6))
    assert db.max_key("d", "k", keys) == ("z", 0)
    mariadb.execute("CREATE TABLE d.empty (id INT PRIMARY KEY)")
    assert db.max_key("d", "empty", ["id"]) is None
