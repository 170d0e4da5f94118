"""The binlog change-capture connectors (connectors/mysql) against a MariaDB server of each
test's own (binlog on, ROW, FULL row image and metadata), driven by the connector API's source
task harness as the runtime drives it: Debezium's envelope, topics and ``source`` block,
snapshots without gap or double (also racing writers), resuming inside a transaction from
stored offsets, every snapshot mode (``when_needed`` after the binlog was purged), schema
changes mid-stream and while stopped, transaction metadata, heartbeats, incremental
snapshots, a blocking snapshot asked for on the file signal channel, KIP-901's cleanup, and
the connector's validation."""

from __future__ import annotations

import decimal
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.signals import SOURCE_CHANNEL, Signal, execute_snapshot
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import FakeOffsetReader, SourceTaskHarness
from airflow_provider_connect.connectors.mysql.source import (
    BinlogConnectorTask,
    MariaDbConnector,
    MySqlConnector,
)
from tests_common.mariadb import MariaDbServer
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

CLASS = "io.debezium.connector.mariadb.MariaDbConnector"
MYSQL_CLASS = "io.debezium.connector.mysql.MySqlConnector"


def config(server: MariaDbServer, **overrides: str) -> dict[str, str]:
    return {
        "name": "shop-cdc",
        "connector.class": CLASS,
        **server.connector_config(),
        "topic.prefix": "srv",
        "database.include.list": "shop",
        "poll.interval.ms": "50",
        **overrides,
    }


def ops(records: list[SourceRecord]) -> list[str | None]:
    return [r.value.get("op") if isinstance(r.value, Struct) else None for r in records]


def after(record: SourceRecord) -> dict[str, Any]:
    row = record.value.get("after")
    return {f.name: row.get(f.name) for f in row.schema.fields}


def changes(records: list[SourceRecord]) -> list[SourceRecord]:
    """The change events among ``records`` (no tombstones, schema changes or heartbeats)."""
    return [r for r in records if r.topic.startswith("srv.shop.")]


def test_snapshot_then_stream_in_debeziums_envelope(mariadb: MariaDbServer) -> None:
    mariadb.execute(
        "CREATE DATABASE shop",
        "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, "
        "price DECIMAL(8,2), qty INT UNSIGNED)",
        "INSERT INTO shop.items VALUES (1, 'a', 1.50, 1), (2, 'b', NULL, 2), (3, 'c', 3.25, 3)",
    )
    with SourceTaskHarness(BinlogConnectorTask) as harness:
        harness.start(config(mariadb))
        records = harness.poll(records=4, timeout=30)
        schema_change, *snapshot = records
        assert schema_change.topic == "srv"
        assert schema_change.value.get("ddl").upper().startswith("CREATE TABLE")
        assert schema_change.value.get("databaseName") == "shop"
        assert ops(snapshot) == ["r", "r", "r"]
        assert [r.value.get("source").get("snapshot") for r in snapshot] == [
            "first",
            "true",
            "last",
        ]
        assert {r.topic for r in snapshot} == {"srv.shop.items"}
        first = snapshot[0]
        assert first.key_schema.name == "srv.shop.items.Key"
        assert first.value_schema.name == "srv.shop.items.Envelope"
        assert first.value.get("source").schema.name == "io.debezium.connector.mariadb.Source"
        assert after(first) == {"id": 1, "name": "a", "price": decimal.Decimal("1.50"), "qty": 1}

        mariadb.execute(
            "INSERT INTO shop.items VALUES (4, 'd', 4.00, 4294967295)",
            "UPDATE shop.items SET name = 'bb' WHERE id = 2",
            "DELETE FROM shop.items WHERE id = 1",
        )
        stream = harness.poll(records=4, timeout=30)
        assert ops(stream) == ["c", "u", "d", None]
        create, update, delete, tombstone = stream
        assert after(create)["qty"] == 4294967295  # INT UNSIGNED as int64
        assert update.value.get("before").get("name") == "b" and after(update)["name"] == "bb"
        assert delete.value.get("before").get("id") == 1 and delete.value.get("after") is None
        assert tombstone.value is None and tombstone.key.get("id") == 1
        source = create.value.get("source")
        assert source.get("connector") == "mariadb"
        assert (source.get("name"), source.get("db"), source.get("table")) == (
            "srv",
            "shop",
            "items",
        )
        assert source.get("snapshot") == "false"
        assert source.get("gtid").startswith("0-1-")
        assert source.get("file").startswith("bin.") and source.get("pos") > 0
        assert source.get("server_id") == 1
        assert create.source_offset["file"] == source.get("file")


def test_a_restart_inside_a_transaction_resumes_after_the_stored_row(
    mariadb: MariaDbServer,
) -> None:
    """A transaction of 10 rows read 4 at a time: stored after the first 4, a crash; the next
    run resumes inside the transaction (its start read again, 4 rows skipped) and gives
    rows 5-10 once; a clean stop then gives nothing twice."""
    mariadb.execute("CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY)")
    props = config(mariadb, **{"snapshot.mode": "no_data", "max.batch.size": "4"})
    offsets = FakeOffsetReader()
    with SourceTaskHarness(BinlogConnectorTask, offsets) as harness:
        harness.start(props)
        harness.poll(polls=3)  # the stream is open at the server's position
        mariadb.execute(
            "BEGIN", *(f"INSERT INTO shop.t VALUES ({i})" for i in range(1, 11)), "COMMIT"
        )
        first = changes(harness.poll(records=4, timeout=30))
        assert [after(r)["id"] for r in first[:4]] == [1, 2, 3, 4]
        harness.commit()
        stored = FakeOffsetReader(offsets.items())
    with SourceTaskHarness(BinlogConnectorTask, stored) as harness:
        harness.start(props)
        rest = changes(harness.poll(records=6, timeout=30))
        assert [after(r)["id"] for r in rest] == [5, 6, 7, 8, 9, 10]
        assert changes(harness.poll(polls=5)) == []


def test_a_snapshot_racing_writers_gives_each_row_once_as_read_or_change(
    mariadb: MariaDbServer,
) -> None:
    mariadb.execute(
        "CREATE DATABASE shop",
        "CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO shop.t SELECT seq, 0 FROM shop.seq_1_to_2000",
    )
    stop = threading.Event()
    written: list[int] = []

    def write() -> None:
        next_id = 2001
        while not stop.is_set() and next_id < 2600:
            mariadb.execute(f"INSERT INTO shop.t VALUES ({next_id}, 1)")
            written.append(next_id)
            next_id += 1

    writer = threading.Thread(target=write)
    with SourceTaskHarness(BinlogConnectorTask) as harness:
        harness.start(config(mariadb, **{"max.batch.size": "100", "snapshot.fetch.size": "50"}))
        writer.start()
        try:
            harness.poll(records=300, timeout=60)
        finally:
            stop.set()
            writer.join()
        total = 2000 + len(written)
        acknowledged = changes([r for r, _ in harness.acknowledged])
        harness.poll(records=total - len(acknowledged), timeout=60)
        seen = [after(r)["id"] for r in changes([r for r, _ in harness.acknowledged])]
        assert sorted(seen) == list(range(1, total + 1))


def test_snapshot_modes(mariadb: MariaDbServer) -> None:
    mariadb.execute(
        "CREATE DATABASE shop",
        "CREATE TABLE shop.t (id INT PRIMARY KEY)",
        "INSERT INTO shop.t VALUES (1), (2)",
    )

    def first_run(mode: str, offsets: FakeOffsetReader) -> list[int]:
        with SourceTaskHarness(BinlogConnectorTask, offsets) as harness:
            harness.start(config(mariadb, **{"snapshot.mode": mode}))
            return [after(r)["id"] for r in changes(harness.poll(polls=10))]

    assert first_run("no_data", FakeOffsetReader()) == []
    assert first_run("initial_only", FakeOffsetReader()) == [1, 2]
    stored = FakeOffsetReader()
    assert first_run("initial", stored) == [1, 2]
    assert first_run("initial", stored) == []  # done once
    assert first_run("always", stored) == [1, 2]
    # the binlog holding the stored position purged: when_needed reads the tables again
    mariadb.execute("INSERT INTO shop.t VALUES (3)")
    mariadb.purge_binlogs()
    assert first_run("when_needed", stored) == [1, 2, 3]


def test_schema_changes_mid_stream_and_while_stopped(mariadb: MariaDbServer) -> None:
    """Columns added, renamed, changed and dropped while streaming and while stopped: each
    row comes with the columns it was written with, and each DDL with its schema change
    event on <topic.prefix>."""
    mariadb.execute("CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY, a INT)")
    props = config(mariadb, **{"snapshot.mode": "no_data"})
    offsets = FakeOffsetReader()
    with SourceTaskHarness(BinlogConnectorTask, offsets) as harness:
        harness.start(props)
        harness.poll(polls=3)
        mariadb.execute(
            "INSERT INTO shop.t VALUES (1, 10)",
            "ALTER TABLE shop.t ADD COLUMN b VARCHAR(10) DEFAULT 'x'",
            "INSERT INTO shop.t VALUES (2, 20, 'y')",
        )
        records = harness.poll(records=3, timeout=30)
        assert [r.topic for r in records] == ["srv.shop.t", "srv", "srv.shop.t"]
        assert after(records[0]) == {"id": 1, "a": 10}
        ddl = records[1].value
        assert "ADD COLUMN b" in ddl.get("ddl")
        (change,) = ddl.get("tableChanges")
        assert change.get("type") == "ALTER" and change.get("id") == '"shop"."t"'
        assert [c.get("name") for c in change.get("table").get("columns")] == ["id", "a", "b"]
        assert after(records[2]) == {"id": 2, "a": 20, "b": "y"}
        harness.commit()
    # while stopped: a row, a rename, a row, a type change, a row, a drop, a row
    mariadb.execute(
        "INSERT INTO shop.t VALUES (3, 30, 'z')",
        "ALTER TABLE shop.t RENAME COLUMN a TO aa",
        "INSERT INTO shop.t VALUES (4, 40, 'w')",
        "ALTER TABLE shop.t MODIFY COLUMN aa BIGINT",
        "INSERT INTO shop.t VALUES (5, 50, 'v')",
        "ALTER TABLE shop.t DROP COLUMN b",
        "INSERT INTO shop.t VALUES (6, 60)",
    )
    with SourceTaskHarness(BinlogConnectorTask, offsets) as harness:
        harness.start(props)
        rows = changes(harness.poll(records=7, timeout=30))
        assert [after(r) for r in rows] == [
            {"id": 3, "a": 30, "b": "z"},
            {"id": 4, "aa": 40, "b": "w"},
            {"id": 5, "aa": 50, "b": "v"},
            {"id": 6, "aa": 60},
        ]
        types = [
            r.value.get("after").schema.field(name).schema.type.name
            for r, name in zip(rows, ["a", "aa", "aa", "aa"], strict=True)
        ]
        assert types == ["INT32", "INT32", "INT64", "INT64"]


def test_transaction_metadata_and_truncate(mariadb: MariaDbServer) -> None:
    mariadb.execute("CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY)")
    props = config(
        mariadb,
        **{
            "snapshot.mode": "no_data",
            "provide.transaction.metadata": "true",
            "skipped.operations": "none",
        },
    )
    with SourceTaskHarness(BinlogConnectorTask) as harness:
        harness.start(props)
        harness.poll(polls=3)
        mariadb.execute(
            "BEGIN", "INSERT INTO shop.t VALUES (1)", "INSERT INTO shop.t VALUES (2)", "COMMIT"
        )
        mariadb.execute("TRUNCATE TABLE shop.t")
        records = harness.poll(records=4, timeout=30)
        assert [r.topic for r in records[:4]] == [
            "srv.transaction",
            "srv.shop.t",
            "srv.shop.t",
            "srv.transaction",
        ]
        begin, one, two, end = records[:4]
        tx_id = begin.value.get("id")
        assert begin.value.get("status") == "BEGIN" and end.value.get("status") == "END"
        assert tx_id.startswith("0-1-") and end.value.get("event_count") == 2
        assert [r.value.get("transaction").get("total_order") for r in (one, two)] == [1, 2]
        # the TRUNCATE, a transaction of its own
        truncate = harness.poll(records=3, timeout=30) if len(records) < 7 else records[4:]
        assert [r.topic for r in truncate] == ["srv.transaction", "srv.shop.t", "srv.transaction"]
        assert truncate[1].value.get("op") == "t"


def test_heartbeats_carry_the_position_of_an_idle_server(mariadb: MariaDbServer) -> None:
    mariadb.execute("CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY)")
    mariadb.execute("CREATE DATABASE other", "CREATE TABLE other.x (id INT PRIMARY KEY)")
    props = config(mariadb, **{"snapshot.mode": "no_data", "heartbeat.interval.ms": "100"})
    with SourceTaskHarness(BinlogConnectorTask) as harness:
        harness.start(props)
        first = [r for r in harness.poll(records=1, timeout=30) if r.topic.startswith("__debezium")]
        mariadb.execute("INSERT INTO other.x VALUES (1)")  # not captured: moves the binlog

        def moved() -> bool:
            beats = [r for r in harness.poll(polls=2) if r.topic == "__debezium-heartbeat.srv"]
            return bool(beats) and beats[-1].source_offset["pos"] > first[0].source_offset["pos"]

        wait_until(moved, 30, "a heartbeat carries a position past the uncaptured insert")


def test_validation_names_the_field(mariadb: MariaDbServer) -> None:
    connector = MariaDbConnector()
    valid = config(mariadb)
    assert connector.validate(valid).error_count == 0
    bad = connector.validate(
        {**valid, "table.exclude.list": "shop.x", "table.include.list": "shop.t"}
    )
    errors = {v.name: v.error_messages for v in bad.config_values if v.error_messages}
    assert errors == {"table.exclude.list": ['"table.include.list" is already specified']}
    missing = connector.validate({**valid, "database.server.id": ""})
    assert {v.name for v in missing.config_values if v.error_messages} == {"database.server.id"}
    wrong = connector.validate({**valid, "time.precision.mode": "adaptive"})
    assert {v.name for v in wrong.config_values if v.error_messages} == {"time.precision.mode"}
    assert MySqlConnector().config().names() == connector.config().names()


def test_an_incremental_snapshot_backfills_and_delete_removes_its_window_rows(
    mariadb: MariaDbServer,
) -> None:
    mariadb.execute(
        "CREATE DATABASE shop",
        "CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE shop.debezium_signal (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
        "data VARCHAR(2048))",
        "INSERT INTO shop.t SELECT seq, 0 FROM shop.seq_1_to_25",
    )
    props = config(
        mariadb,
        **{
            "snapshot.mode": "no_data",
            "signal.data.collection": "shop.debezium_signal",
            "incremental.snapshot.chunk.size": "10",
        },
    )
    connector = MariaDbConnector()
    with SourceTaskHarness(BinlogConnectorTask) as harness:
        harness.start(props)
        harness.poll(polls=3)
        signal = connector.signal_channels(props).deliver(
            execute_snapshot("backfill-1", ["shop.t"]), SOURCE_CHANNEL
        )
        assert isinstance(signal, Signal)
        mariadb.execute(
            f"INSERT INTO shop.debezium_signal VALUES ('{signal.row['id']}', "
            f"'{signal.row['type']}', '{signal.row['data']}')"
        )
        rows = [r for r in changes(harness.poll(records=25, timeout=60))]
        assert sorted(after(r)["id"] for r in rows) == list(range(1, 26))
        assert {r.value.get("source").get("snapshot") for r in rows} == {"incremental"}
        assert (
            mariadb.query(
                "SELECT count(*) FROM shop.debezium_signal WHERE type LIKE 'snapshot-window%'"
            )[0][0]
            > 0
        )
        harness.stop(connector_deleted=True)
    assert mariadb.query("SELECT id FROM shop.debezium_signal") == [("backfill-1",)]


def test_a_blocking_snapshot_from_the_file_channel_reads_tables_then_streams_on(
    mariadb: MariaDbServer, tmp_path: Path
) -> None:
    mariadb.execute(
        "CREATE DATABASE shop",
        "CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE shop.u (id INT PRIMARY KEY)",
        "INSERT INTO shop.t SELECT seq, 0 FROM shop.seq_1_to_30",
        "INSERT INTO shop.u VALUES (1)",
    )
    signals = tmp_path / "signals.txt"
    props = config(
        mariadb,
        **{
            "snapshot.mode": "no_data",
            "signal.enabled.channels": "file",
            "signal.file": str(signals),
            "signal.poll.interval.ms": "10",
            "notification.enabled.channels": "sink",
            "notification.sink.topic.name": "notes",
        },
    )
    with SourceTaskHarness(BinlogConnectorTask) as harness:
        harness.start(props)
        harness.poll(polls=3)
        data = {"data-collections": ["shop\\.t"], "type": "blocking"}
        signals.write_text(json.dumps({"id": "b1", "type": "execute-snapshot", "data": data}))
        records = harness.poll(records=31, timeout=60)
        mariadb.execute("UPDATE shop.t SET v = 1 WHERE id = 3")
        records += harness.poll(records=1, timeout=60)
    reads = [r for r in changes(records) if r.value.get("op") == "r"]
    assert sorted(after(r)["id"] for r in reads) == list(range(1, 31))  # shop.t only
    assert reads[0].value.get("source").get("snapshot") == "first"
    assert reads[-1].value.get("source").get("snapshot") == "last"
    assert [after(r) for r in changes(records) if r.value.get("op") == "u"] == [{"id": 3, "v": 1}]
    notes = [r.value.get("type") for r in records if r.topic == "notes"]
    assert notes == ["STARTED", "IN_PROGRESS", "TABLE_SCAN_COMPLETED", "COMPLETED"]
    assert signals.read_text() == ""


def test_a_required_tls_the_server_does_not_offer_fails_the_task(mariadb: MariaDbServer) -> None:
    """``database.ssl.mode=required`` against a server without TLS, where PyMySQL would
    fall back to a plain connection: the task fails, naming the setting."""
    mariadb.execute("CREATE DATABASE shop")
    props = config(mariadb, **{"connector.class": MYSQL_CLASS, "database.ssl.mode": "required"})
    with SourceTaskHarness(BinlogConnectorTask) as harness:
        harness.start(props)
        with pytest.raises(ConnectException, match="database.ssl.mode is required"):
            harness.poll(polls=1)
