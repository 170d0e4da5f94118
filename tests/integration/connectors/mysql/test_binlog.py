"""connectors/mysql/binlog.py against a private MariaDB 10.11 server per test: a TABLE_MAP read
again is the parse of the first one (not parsed again), one after an ``ALTER TABLE`` is
parsed anew and its rows carry the new columns, and a reader of the library's own in the same
process still parses every TABLE_MAP."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import HeartbeatLogEvent
from pymysqlreplication.row_event import TableMapEvent, WriteRowsEvent

from airflow_provider_connect.connectors.mysql.binlog import BinlogStream, ParsedTables
from tests_common.mariadb import MariaDbServer

pytestmark = pytest.mark.integration

_replica_ids = itertools.count(7101)


def _parameters(server: MariaDbServer) -> dict[str, Any]:
    return {"host": server.host, "port": server.port, "user": server.user, "password": ""}


def _events(server: MariaDbServer, gtids: str) -> list[Any]:
    """The TABLE_MAP and WRITE_ROWS events after ``gtids`` to the log's end, read as the task
    reads them."""
    stream = BinlogStream(
        _parameters(server),
        next(_replica_ids),
        mariadb=True,
        file="",
        pos=0,
        gtids=gtids,
        annotate=False,
        timeout_s=10,
    )
    try:
        events = list(stream.read(time.monotonic() + 30))
    finally:
        stream.close()
    return [e for e in events if isinstance(e, (TableMapEvent, WriteRowsEvent))]


def _gtids(server: MariaDbServer) -> str:
    ((gtids,),) = server.query("SELECT @@gtid_binlog_pos")
    return str(gtids)


def test_a_table_map_read_again_is_not_parsed_again_and_one_after_a_change_is(
    mariadb: MariaDbServer,
) -> None:
    mariadb.execute("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, a VARCHAR(9))")
    start = _gtids(mariadb)
    mariadb.execute(
        "INSERT INTO d.t VALUES (1, 'one')",
        "INSERT INTO d.t VALUES (2, 'two')",
        "ALTER TABLE d.t ADD COLUMN b INT, CHANGE a c VARCHAR(9)",
        "INSERT INTO d.t VALUES (3, 'three', 33)",
        "INSERT INTO d.t VALUES (4, 'four', 44)",
    )

    events = _events(mariadb, start)
    maps = [e for e in events if isinstance(e, TableMapEvent)]
    rows = [row["values"] for e in events if isinstance(e, WriteRowsEvent) for row in e.rows]

    assert [[c.name for c in m.columns] for m in maps] == [["id", "a"]] * 2 + [["id", "c", "b"]] * 2
    assert maps[1].columns is maps[0].columns  # the first one's parse
    assert maps[2].columns is not maps[1].columns  # a new table id: parsed
    assert maps[3].columns is maps[2].columns
    assert rows == [
        {"id": 1, "a": "one"},
        {"id": 2, "a": "two"},
        {"id": 3, "c": "three", "b": 33},
        {"id": 4, "c": "four", "b": 44},
    ]
    assert maps[1].table_id != maps[2].table_id
    assert all(m.timestamp and m.packet.log_pos for m in maps)  # each event's own header
    assert len({m.packet.log_pos for m in maps}) == 4


def test_a_reader_of_the_library_own_still_parses_every_table_map(
    mariadb: MariaDbServer,
) -> None:
    mariadb.execute("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)")
    start = _gtids(mariadb)
    mariadb.execute("INSERT INTO d.t VALUES (1)", "INSERT INTO d.t VALUES (2)")
    assert len([e for e in _events(mariadb, start) if isinstance(e, TableMapEvent)]) == 2

    reader = BinLogStreamReader(
        connection_settings=_parameters(mariadb),
        server_id=next(_replica_ids),
        blocking=True,
        auto_position=start,
        is_mariadb=True,
        slave_heartbeat=0.1,
        only_events=[TableMapEvent, HeartbeatLogEvent],
    )
    try:
        maps = []
        for event in reader:
            if isinstance(event, HeartbeatLogEvent):
                break
            maps.append(event)
    finally:
        reader.close()

    assert type(reader.table_map) is not ParsedTables
    assert len(maps) == 2
    assert maps[1].columns is not maps[0].columns
    assert [c.name for c in maps[1].columns] == ["id"]
