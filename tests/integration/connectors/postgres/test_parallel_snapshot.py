"""The PostgreSQL change-capture connector's snapshots beyond the single-threaded initial
one (connectors/postgres/snapshot_source.py), against a private PostgreSQL 15 cluster,
driven by the source task harness: tables read at once on ``snapshot.max.threads``
connections in one consistent view while writers race them, a blocking snapshot of some
tables asked for by a signal, Debezium's ``Initial Snapshot`` notifications on the
notification topic, and ``snapshot.isolation.mode``."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import psycopg
import pytest

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import FakeOffsetReader, SourceTaskHarness
from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.database import Snapshot
from airflow_provider_connect.connectors.postgres.source import PostgresConnectorTask
from tests.integration.connectors.postgres import test_source
from tests.integration.connectors.postgres.test_source import Db, after, ops
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

cluster = test_source.cluster
db = test_source.db
"""The private cluster and a database of each test's own, as test_source.py's."""

NOTES = "notes"
"""The notification topic of these tests."""


def client_backends(db: Db, active_only: bool = False) -> int:
    """The connector's connections to ``db`` (``active_only``: those in a transaction)."""
    busy = " AND xact_start IS NOT NULL" if active_only else ""
    return int(
        db.one(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
            f"AND application_name = 'connect-{db.name}-connector'{busy}"
        )
    )


def markers(records: list[SourceRecord]) -> list[tuple[str, str]]:
    """``(topic, source.snapshot)`` of each data record."""
    return [(r.topic, r.value.get("source").get("snapshot")) for r in records]


def assert_debezium_markers(records: list[SourceRecord], tables: int) -> None:
    """Each table's rows together, marked as Debezium marks a snapshot's rows."""
    runs = [list(run) for _, run in itertools.groupby(markers(records), key=lambda m: m[0])]
    assert len(runs) == len({topic for topic, _ in markers(records)}) == tables
    expected: list[str] = []
    for index, run in enumerate(runs):
        inner = ["true"] * len(run)
        inner[0] = "first" if index == 0 else "first_in_data_collection"
        inner[-1] = "last" if index == len(runs) - 1 else "last_in_data_collection"
        expected += inner
    assert [marker for _, marker in markers(records)] == expected


def polled(harness: SourceTaskHarness, records: list[SourceRecord]) -> bool:
    """Adds the records of one more poll to ``records``."""
    records.extend(harness.poll(polls=1))
    return True


def is_last(record: SourceRecord) -> bool:
    return bool(record.value.get("source").get("snapshot") == "last")


def notifications(records: list[SourceRecord]) -> list[dict[str, Any]]:
    return [
        {
            "type": r.value.get("type"),
            "aggregate_type": r.value.get("aggregate_type"),
            **r.value.get("additional_data"),
        }
        for r in records
        if r.topic == NOTES
    ]


def progress(notification: dict[str, Any]) -> tuple[str, str | None]:
    """A notification's type and table."""
    table = notification.get("current_collection_in_progress")
    return notification["type"], table or notification.get("scanned_collection")


def test_tables_read_at_once_racing_writers_give_each_row_once(db: Db) -> None:
    names = [f"p{i}" for i in range(4)]
    for name in names:
        db.run(
            f"CREATE TABLE {name} (id INT PRIMARY KEY, v INT NOT NULL)",
            f"INSERT INTO {name} SELECT g, 0 FROM generate_series(1, 2000) g",
        )
    stop = threading.Event()

    def writer() -> None:
        with psycopg.connect(db.dsn, autocommit=True) as conn:
            for i in itertools.count(2001):
                if stop.is_set():
                    return
                for name in names:
                    conn.execute(f"INSERT INTO {name} VALUES (%s, 0)", (i,))
                    conn.execute(f"UPDATE {name} SET v = v + 1 WHERE id = %s", (i - 2000,))

    config = {
        **db.config,
        "snapshot.max.threads": "3",
        "snapshot.fetch.size": "100",
        "max.batch.size": "500",
    }
    thread = threading.Thread(target=writer)
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(config)
        thread.start()
        try:
            records = harness.poll(records=100, timeout=60)
            assert client_backends(db, active_only=True) == 3  # the snapshot's, in one view
            wait_until(
                lambda: polled(harness, records) and is_last(records[-1]),
                60,
                "the snapshot's last row",
            )
        finally:
            stop.set()
            thread.join()
        snapshot = [r for r in records if r.value.get("op") == "r"]
        assert len(snapshot) == len(records) >= 4 * 2000  # writes before the slot are read
        assert_debezium_markers(snapshot, 4)
        wait_until(lambda: client_backends(db) == 1, 30, "the snapshot's connections closing")

        expected = {
            name: {
                int(k): v for k, v in db.one(f"SELECT json_object_agg(id, v) FROM {name}").items()
            }
            for name in names
        }
        state: dict[str, dict[int, int]] = {name: {} for name in names}
        created: set[tuple[str, int]] = set()

        def apply(batch: list[SourceRecord]) -> bool:
            for record in batch:
                table, row = record.topic.rsplit(".", 1)[1], after(record)
                if record.value.get("op") in ("r", "c"):
                    assert (table, row["id"]) not in created, f"{table} {row['id']} twice"
                    created.add((table, row["id"]))
                state[table][row["id"]] = row["v"]
            return True

        apply(records)
        wait_until(
            lambda: apply(harness.poll(polls=1)) and state == expected,
            60,
            "the events reaching the tables' state",
        )
        assert created == {(n, i) for n in names for i in expected[n]}
        assert len(created) > len(snapshot)  # rows the writers added after the snapshot's view
    wait_until(lambda: client_backends(db) == 0, 30, "every connection closing at the stop")


def test_a_blocking_snapshot_reads_its_tables_at_the_stream_position_with_notifications(
    db: Db,
) -> None:
    db.run(
        "CREATE TABLE signals (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT)",
        "CREATE TABLE a (id INT PRIMARY KEY)",
        "CREATE TABLE b (id INT PRIMARY KEY)",
        "CREATE TABLE c (id INT PRIMARY KEY)",
        "CREATE TABLE d (id INT PRIMARY KEY)",
        "INSERT INTO a SELECT generate_series(1, 250)",
        "INSERT INTO b SELECT generate_series(1, 5)",
        "INSERT INTO d VALUES (1)",
    )
    config = {
        **db.config,
        "snapshot.mode": "no_data",
        "snapshot.max.threads": "2",
        "snapshot.fetch.size": "50",
        "max.batch.size": "100",
        "signal.data.collection": "public.signals",
        "notification.enabled.channels": "sink",
        "notification.sink.topic.name": NOTES,
    }
    offsets = FakeOffsetReader()
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        harness.poll(polls=3)
        db.run(
            "INSERT INTO a VALUES (1000)",
            "INSERT INTO signals VALUES ('block-1', 'execute-snapshot', "
            '\'{"data-collections": ["public.a", "public.c", "public.d"], "type": "blocking"}\')',
        )

        def completed(records: list[SourceRecord]) -> bool:
            return any(n["type"] == "COMPLETED" for n in notifications(records))

        records: list[SourceRecord] = []
        wait_until(
            lambda: polled(harness, records) and completed(records),
            30,
            "the blocking snapshot's last batch",
        )
        (change,) = [r for r in records if r.topic.startswith("srv.") and r.value.get("op") == "c"]
        reads = [r for r in records if r.topic.startswith("srv.") and r.value.get("op") == "r"]
        assert {r.topic for r in reads} == {"srv.public.a", "srv.public.d"}  # c is empty
        assert sorted(after(r)["id"] for r in reads if r.topic == "srv.public.a") == [
            *range(1, 251),
            1000,
        ]
        assert_debezium_markers(reads, 2)
        # at the stream's position (after the change), without the initial snapshot's keys
        (offset,) = {tuple((r.source_offset or {}).items()) for r in reads}
        assert [k for k, _ in offset] == ["lsn_commit", "event"]
        assert dict(offset)["lsn_commit"] >= (change.source_offset or {})["lsn_commit"]
        assert [progress(n) for n in notifications(records)] == [
            ("STARTED", None),
            ("IN_PROGRESS", "public.a"),
            ("TABLE_SCAN_COMPLETED", "public.a"),
            ("IN_PROGRESS", "public.c"),
            ("TABLE_SCAN_COMPLETED", "public.c"),
            ("IN_PROGRESS", "public.d"),
            ("TABLE_SCAN_COMPLETED", "public.d"),
            ("COMPLETED", None),
        ]
        scans = [n for n in notifications(records) if n["type"] == "TABLE_SCAN_COMPLETED"]
        assert [(n["total_rows_scanned"], n["status"]) for n in scans] == [
            ("251", "SUCCEEDED"),
            ("0", "SUCCEEDED"),
            ("1", "SUCCEEDED"),
        ]
        assert {
            n["data_collections"] for n in notifications(records) if "data_collections" in n
        } == {"public.a,public.c,public.d"}
        assert {(n["aggregate_type"], n["connector_name"]) for n in notifications(records)} == {
            ("Initial Snapshot", "srv")
        }
        harness.commit()
        db.run("INSERT INTO b VALUES (6)")
        assert [after(r)["id"] for r in harness.poll(records=1) if r.topic == "srv.public.b"] == [6]
        wait_until(lambda: client_backends(db, active_only=True) == 0, 30, "snapshot closed")
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        db.run("INSERT INTO b VALUES (7)")
        again = harness.poll(records=2)  # the stream goes on: no snapshot again
        assert [(r.topic, r.value.get("type")) for r in again if r.topic == NOTES] == [
            (NOTES, "SKIPPED")
        ]
        assert [ops([r]) for r in again if r.topic != NOTES] == [["c"]]


def test_an_initial_snapshot_notifies_each_table_in_order(db: Db) -> None:
    db.run(
        "CREATE TABLE n1 (id INT PRIMARY KEY)",
        "CREATE TABLE n2 (id INT PRIMARY KEY)",
        "CREATE TABLE n3 (id INT PRIMARY KEY)",
        "INSERT INTO n1 SELECT generate_series(1, 30)",
        "INSERT INTO n3 SELECT generate_series(1, 3)",
    )
    config = {
        **db.config,
        "snapshot.max.threads": "2",
        "max.batch.size": "20",
        "notification.enabled.channels": "sink",
        "notification.sink.topic.name": NOTES,
    }
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(config)
        records = harness.poll(records=33 + 8, timeout=30)
    assert [progress(n) for n in notifications(records)] == [
        ("STARTED", None),
        ("IN_PROGRESS", "public.n1"),
        ("TABLE_SCAN_COMPLETED", "public.n1"),
        ("IN_PROGRESS", "public.n2"),
        ("TABLE_SCAN_COMPLETED", "public.n2"),
        ("IN_PROGRESS", "public.n3"),
        ("TABLE_SCAN_COMPLETED", "public.n3"),
        ("COMPLETED", None),
    ]
    # a table's scan is told after its last row; the end with the snapshot's last record
    told = [i for i, r in enumerate(records) if r.topic == NOTES]
    assert told[2] > max(i for i, r in enumerate(records) if r.topic == "srv.public.n1")
    assert (records[told[-1]].source_offset or {}).get("last_snapshot_record") is True
    assert_debezium_markers([r for r in records if r.topic != NOTES], 2)


def test_a_stop_or_a_readers_failure_mid_snapshot_closes_every_connection(db: Db) -> None:
    for name in ("f1", "f2", "f3"):
        db.run(
            f"CREATE TABLE {name} (id INT PRIMARY KEY)",
            f"INSERT INTO {name} SELECT generate_series(1, 20000)",
        )
    config = {**db.config, "snapshot.max.threads": "3", "snapshot.fetch.size": "100"}
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start({**config, "max.batch.size": "100"})
        harness.poll(records=100)
        assert client_backends(db, active_only=True) == 3
    wait_until(lambda: client_backends(db) == 0, 30, "every connection closing at the stop")
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start({**config, "max.batch.size": "100"})
        harness.poll(records=100)
        db.run(  # one reader's connection lost
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = (SELECT min(pid) "
            f"FROM pg_stat_activity WHERE application_name = 'connect-{db.name}-connector' "
            "AND xact_start IS NOT NULL)"
        )
        with pytest.raises(ConnectException, match="The snapshot's connection failed") as failed:
            harness.poll(records=60000, timeout=30)
        assert "terminat" in str(failed.value.__cause__)
    wait_until(lambda: client_backends(db) == 0, 30, "every connection closing after the failure")


@pytest.mark.parametrize(
    ("mode", "level", "one_view"),
    [
        ("serializable", "serializable", True),
        ("repeatable_read", "repeatable read", True),
        ("read_committed", "read committed", False),
    ],
)
def test_snapshot_isolation_mode_sets_the_level_of_a_snapshot_of_its_own(
    db: Db, mode: str, level: str, one_view: bool
) -> None:
    """``snapshot.isolation.mode``, as Debezium's PostgreSQL connector reads it: the level of
    a snapshot without the slot's (blocking, ``initial_only``); its connections share one
    view at the levels that can import a snapshot."""
    parameters = PostgresConnectorConfig.of(db.config).parameters
    db.run("CREATE TABLE later (id INT)")
    snapshot = Snapshot(parameters, None, 100, 2, mode)
    try:
        db.run("INSERT INTO later VALUES (1)")  # after the first connection's view was taken
        seen = []
        for connection in snapshot.connections:
            with connection.cursor() as cursor:
                cursor.execute("SHOW transaction_isolation")
                assert cursor.fetchone()[0] == level
                cursor.execute("SELECT count(*) FROM later")
                seen.append(int(cursor.fetchone()[0]))
        assert seen == ([0, 0] if one_view else [1, 1])  # read committed: each query's own
    finally:
        snapshot.close()
