"""Change capture from MariaDB's binlog through the runtime, as users run it: the connector
under Debezium's class name created through REST, a replica table kept equal by the JDBC sink
with Debezium's ExtractNewRecordState through pause, resume, restart and reconfiguration; a
backfill by IncrementalSnapshotOperator, after which the connector's delete removes its window
rows from the signal table and nothing else (KIP-901); and kill -9 of the runtime mid-stream,
every change counted afterwards (exactly once on the exactly-once worker, at least once with
its replays bounded otherwise; the long variants, with more kills and more data, run in
``make test-faults``). Each test has a private MariaDB server (the ``mariadb`` fixture)."""

from __future__ import annotations

import collections
import itertools
import json
import threading
from pathlib import Path
from typing import Any

import pymysql
import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.snapshot import IncrementalSnapshotOperator
from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from tests.integration.conftest import create
from tests_common.broker import free_port
from tests_common.kafka import committed_values, wait_until
from tests_common.mariadb import MariaDbServer
from tests_common.processes import kill_tree, rest_get, start_runtime, write_properties

pytestmark = pytest.mark.integration

CLASS = "io.debezium.connector.mariadb.MariaDbConnector"
ORDERS = "SELECT id, item, qty FROM orders ORDER BY id"
SIGNALS = (
    "CREATE TABLE shop.debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
    "data VARCHAR(2048))"
)

_prefixes = itertools.count()


def new_topic_prefix() -> str:
    """A topic prefix no other test of the session's broker uses."""
    return f"maria{next(_prefixes)}x{free_port()}"


def source_config(mariadb: MariaDbServer, prefix: str, **overrides: str) -> dict[str, str]:
    return {
        "connector.class": CLASS,
        **mariadb.connector_config(),
        "topic.prefix": prefix,
        "table.include.list": "shop.orders",
        "poll.interval.ms": "50",
        **overrides,
    }


def rows(mariadb: MariaDbServer, database: str, query: str) -> list[tuple[Any, ...]]:
    """``query``'s rows in ``database``; none while its table does not exist."""
    try:
        return mariadb.query(query, database)
    except pymysql.err.ProgrammingError:  # 1146: the sink has not created the table yet
        return []


def streaming(mariadb: MariaDbServer) -> bool:
    """A binlog reader (the task's stream) is connected to the server."""
    dumps = "SELECT count(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
    return mariadb.query(dumps) == [(1,)]


def test_a_replica_table_follows_the_source_through_pause_restart_and_reconfiguration(
    mariadb: MariaDbServer, rest: TestClient, connection: str
) -> None:
    """The snapshot, then the stream, upserted and deleted by key into a table of another
    database of the server (the JDBC sink's MySQL dialect); what changed while the connector
    was paused, restarted or reconfigured arrives."""
    prefix = new_topic_prefix()
    mariadb.execute(
        "CREATE DATABASE shop",
        "CREATE DATABASE replica",
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, item VARCHAR(40) NOT NULL, qty INT)",
        "INSERT INTO shop.orders SELECT seq, concat('item ', seq), seq FROM shop.seq_1_to_50",
    )
    config = source_config(mariadb, prefix)
    create(rest, "cdc", config)
    create(
        rest,
        "replica",
        {
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "topics": f"{prefix}.shop.orders",
            "connection.url": f"mysql+pymysql://root@127.0.0.1:{mariadb.port}/replica",
            "table.name.format": "orders",
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "delete.enabled": "true",
            "auto.create": "true",
            "transforms": "unwrap",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        },
    )

    def equal(step: str) -> None:
        expected = mariadb.query(ORDERS, "shop")
        wait_until(
            lambda: rows(mariadb, "replica", ORDERS) == expected,
            120,
            f"the replica equal to the source after the {step}",
            state=lambda: len(rows(mariadb, "replica", ORDERS)),
        )

    count = "SELECT count(*) FROM orders"
    wait_until(lambda: rows(mariadb, "replica", count) == [(50,)], 120, "the snapshot replicated")
    mariadb.execute(  # then changes, streamed
        "UPDATE shop.orders SET qty = qty * 10 WHERE id % 3 = 0",
        "DELETE FROM shop.orders WHERE id % 5 = 0",
        "INSERT INTO shop.orders SELECT seq, concat('item ', seq), seq FROM shop.seq_51_to_60",
    )
    equal("stream")
    metrics = wait_until(
        lambda: ConnectHook(connection).plugin_metrics("cdc").get(0, {}),
        60,
        "the task's metrics through the hook",
    )
    assert metrics["milliseconds-behind-source"] >= 0

    def state() -> list[str]:
        status = rest.get("/connectors/cdc/status").json()
        return [status["connector"]["state"], *(t["state"] for t in status["tasks"])]

    assert rest.put("/connectors/cdc/pause").status_code == 202
    wait_until(lambda: state() == ["PAUSED", "PAUSED"], 60, "PAUSED")
    mariadb.execute(
        "UPDATE shop.orders SET item = 'paused' WHERE id = 2",
        "DELETE FROM shop.orders WHERE id = 3",
    )
    assert rest.put("/connectors/cdc/resume").status_code == 202
    mariadb.execute("UPDATE shop.orders SET item = 'resumed' WHERE id = 4")
    equal("pause")
    response = rest.post("/connectors/cdc/restart", params={"includeTasks": "true"})
    assert response.status_code in (200, 202, 204)
    mariadb.execute("INSERT INTO shop.orders VALUES (61, 'after restart', 1)")
    equal("restart")
    assert (
        rest.put("/connectors/cdc/config", json={**config, "heartbeat.interval.ms": "1000"})
    ).status_code == 200
    mariadb.execute("DELETE FROM shop.orders WHERE id = 61")
    equal("reconfiguration")


def test_a_backfill_reads_the_table_again_and_delete_removes_only_its_window_rows(
    mariadb: MariaDbServer, rest: TestClient, connection: str, bootstrap: str
) -> None:
    """IncrementalSnapshotOperator asks the streaming connector for an incremental snapshot
    (its signal written on a mysql+pymysql connection, as the connector reaches the server):
    every row is read once more while a change streams; deleting the connector (REST) then
    removes the window rows it wrote to the signal table, and keeps the signals users wrote,
    the tables and the binlog."""
    prefix = new_topic_prefix()
    mariadb.execute(
        "CREATE DATABASE shop",
        SIGNALS,
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, item VARCHAR(40) NOT NULL)",
        "INSERT INTO shop.orders SELECT seq, concat('item ', seq) FROM shop.seq_1_to_300",
        "INSERT INTO shop.debezium_signal VALUES ('user-note', 'log', '{\"message\": \"kept\"}')",
    )
    config = source_config(
        mariadb,
        prefix,
        **{
            "snapshot.mode": "no_data",
            "signal.data.collection": "shop.debezium_signal",
            "incremental.snapshot.chunk.size": "64",
        },
    )
    create(rest, "cdc", config)
    wait_until(lambda: streaming(mariadb), 120, "the task streaming")
    result = IncrementalSnapshotOperator(
        task_id="backfill", connector_name="cdc", data_collections=["shop.orders"]
    ).execute(context={})
    assert result["signal_id"].startswith("airflow-")
    mariadb.execute("UPDATE shop.orders SET item = 'changed' WHERE id = 7")
    topic = f"{prefix}.shop.orders"

    def reads() -> collections.Counter[int]:
        events = [json.loads(v)["payload"] for v in committed_values(bootstrap, topic) if v]
        return collections.Counter(e["after"]["id"] for e in events if e["op"] == "r")

    wait_until(lambda: set(reads()) >= set(range(1, 301)) - {7}, 120, "every row read again")
    assert max(reads().values()) == 1
    signals = "SELECT id, type FROM shop.debezium_signal ORDER BY id"
    windows = [(i, t) for i, t in mariadb.query(signals) if t.startswith("snapshot-window-")]
    assert len(windows) >= 2 * 5  # a window (open, close) a chunk of 64 rows
    tables = "SELECT table_schema, table_name FROM information_schema.tables ORDER BY 1, 2"
    before = mariadb.query(tables)
    binlogs = [row[0] for row in mariadb.query("SHOW BINARY LOGS")]

    assert rest.delete("/connectors/cdc").status_code == 204
    wait_until(
        lambda: (
            mariadb.query(signals)
            == sorted([(result["signal_id"], "execute-snapshot"), ("user-note", "log")])
        ),
        60,
        "the window rows deleted (KIP-901)",
        state=lambda: mariadb.query(signals),
    )
    wait_until(lambda: not streaming(mariadb), 60, "the binlog reader gone")
    assert mariadb.query(tables) == before
    assert mariadb.query("SELECT count(*) FROM shop.orders") == [(300,)]
    assert [row[0] for row in mariadb.query("SHOW BINARY LOGS")][: len(binlogs)] == binlogs


SHORT = pytest.param(1, 1500, id="short")
LONG = pytest.param(4, 10_000, id="long", marks=pytest.mark.faults)
"""make test runs the short variants (one kill, ~35 s each), make test-faults the long ones."""


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
@pytest.mark.parametrize(("kills", "total"), [SHORT, LONG])
def test_kill_9_of_the_runtime_mid_stream_loses_no_change(
    mariadb: MariaDbServer,
    bootstrap: str,
    tmp_path: Path,
    exactly_once: bool,
    kills: int,
    total: int,
) -> None:
    """A writer commits transactions of 10 inserts and an update while the runtime is killed
    (SIGKILL) and started again ``kills`` times: every change arrives; exactly once on the
    exactly-once worker (the task resumes inside a transaction by its stored row count), and
    otherwise replayed only from where a killed run's last stored offset was: one rewind a
    kill at most, no change more than once a run."""
    prefix = new_topic_prefix()
    mariadb.execute(
        "CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY, qty INT NOT NULL)"
    )
    port = free_port()
    worker = {
        "bootstrap.servers": bootstrap,
        "offset.storage.file.filename": str(tmp_path / "offsets.db"),
        "listeners": f"http://127.0.0.1:{port}",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "offset.flush.interval.ms": "300",
        "task.heartbeat.interval.ms": "200",
        "spark.master": "local[2]",
    }
    if exactly_once:
        worker["exactly.once.source.support"] = "enabled"
        worker["offset.storage.topic"] = f"offsets-{prefix}"
        worker["offset.storage.partitions"] = "1"
    # stream only: every change is a c or u event, whatever the kills interrupt
    connector = {"name": "cdc", **source_config(mariadb, prefix, **{"snapshot.mode": "no_data"})}
    args = [
        "standalone",
        str(write_properties(tmp_path / "worker.properties", worker)),
        str(write_properties(tmp_path / "cdc.properties", connector)),
    ]
    log = tmp_path / "runtime.log"
    topic = f"{prefix}.shop.orders"
    done = threading.Event()
    pause_s = 10 * (kills + 1) / (total / 10)  # changes keep coming while the runtime dies

    def writer() -> None:  # transactions of 10 inserts and an update, until the total
        with mariadb.connect("shop") as conn, conn.cursor() as cursor:
            for start in range(0, total, 10):
                conn.begin()
                cursor.execute("INSERT INTO orders SELECT seq + %s, 0 FROM seq_0_to_9", (start,))
                cursor.execute("UPDATE orders SET qty = 1 WHERE id = %s", (start,))
                conn.commit()
                if done.wait(pause_s):
                    return

    def by_partition() -> list[list[dict[str, Any]]]:
        """The committed changes, each partition's in its order."""
        reader = CommittedLogReader({"bootstrap.servers": bootstrap})
        try:
            return [
                [json.loads(r.value) for r in reader.read(topic, p) if r.value is not None]
                for p in reader.partitions(topic)
            ]
        finally:
            reader.close()

    def changes() -> list[dict[str, Any]]:
        return [change for partition in by_partition() for change in partition]

    runtime = start_runtime(args, log)
    feeding = threading.Thread(target=writer)
    try:
        wait_until(
            lambda: rest_get(f"http://127.0.0.1:{port}/connectors") == ["cdc"],
            120,
            "the runtime up",
        )
        # stream only (no_data): from the binlog's end when the reader connects
        wait_until(lambda: streaming(mariadb), 120, "the task streaming")
        feeding.start()
        for kill in range(1, kills + 1):
            seen = len(changes())
            wait_until(
                lambda seen=seen: len(changes()) > seen + 100,
                120,
                f"changes flowing before kill {kill}",
            )
            kill_tree(runtime)
            runtime = start_runtime(args, log)
        feeding.join()
        wanted = {("c", i) for i in range(total)} | {("u", i) for i in range(0, total, 10)}
        wait_until(
            lambda: {(c["op"], c["after"]["id"]) for c in changes()} == wanted,
            180,
            "every change",
            state=lambda: sorted(wanted - {(c["op"], c["after"]["id"]) for c in changes()})[:20],
        )
    finally:
        done.set()
        if feeding.is_alive():
            feeding.join()
        kill_tree(runtime)
    partitions = by_partition()
    seen = collections.Counter((c["op"], c["after"]["id"]) for p in partitions for c in p)
    repeated = sum(n - 1 for n in seen.values())
    # A partition holds each run's records after the run before's, and a run's inserts in
    # the writer's order: every step back in it is a run starting again from a stored offset
    # older than what the run before delivered.
    rewinds = max(
        sum(1 for a, b in itertools.pairwise(ids) if b <= a)
        for ids in ([c["after"]["id"] for c in p if c["op"] == "c"] for p in partitions)
    )
    print(
        f"{kills} x kill -9 runtime, {'exactly' if exactly_once else 'at-least'}-once: "
        f"{len(seen)} changes, {repeated} delivered twice, at most {rewinds} rewinds a partition"
    )
    assert set(seen) == wanted
    if exactly_once:
        assert repeated == 0
    else:
        # Replays only where a kill interrupted a run (what it delivered after its last
        # stored offset, however much that was: a run catching up a backlog delivers
        # thousands of changes between two offset flushes), never within a run.
        assert rewinds <= kills and max(seen.values()) <= kills + 1
