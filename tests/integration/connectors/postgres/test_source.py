"""The PostgreSQL change-capture connector (connectors/postgres) against a private PostgreSQL
15 cluster with wal_level=logical, driven by the connector API's source task harness (as the
runtime drives it, without broker or Spark): Debezium's envelope and topics, snapshots
without gap or double (also racing writers), resuming from stored offsets and after a
database crash, every snapshot mode, incremental snapshots, heartbeats advancing an idle
slot, KIP-901's slot and publication cleanup, and the connector's validation."""

from __future__ import annotations

import collections
import decimal
import itertools
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url

from airflow_provider_connect.assets import connector_assets
from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.testing import (
    ConnectorHarness,
    FakeOffsetReader,
    SourceTaskHarness,
)
from airflow_provider_connect.connectors.postgres.source import (
    PostgresConnector,
    PostgresConnectorTask,
)
from tests.databases import POSTGRES_ADMIN_URL
from tests_common.postgres_cluster import PostgresCluster, postgres_cluster_or_skip
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

_names = itertools.count()


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster_or_skip() as pg:
        yield pg


class Db:
    """A database of its own on the cluster, with the connector's config for it."""

    def __init__(self, cluster: PostgresCluster) -> None:
        self.name = f"cdc{next(_names)}"
        self.cluster = cluster
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {self.name}")
        self.dsn = cluster.dsn.rsplit("/", 1)[0] + "/" + self.name
        self.config = {
            "name": f"{self.name}-connector",
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": "127.0.0.1",
            "database.port": str(cluster.port),
            "database.user": "postgres",
            "database.dbname": self.name,
            "topic.prefix": "srv",
            "slot.name": f"slot_{self.name}",
            "publication.name": f"pub_{self.name}",
            "poll.interval.ms": "50",
        }

    def run(self, *statements: str) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def one(self, query: str) -> Any:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            row = conn.execute(query).fetchone()
        return None if row is None else row[0]

    def slot_exists(self) -> bool:
        return bool(
            self.one(
                f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'slot_{self.name}'"
            )
        )

    def drop_slot_when_released(self) -> None:
        """Drops the connector's slot once the stopped task's walsender has let go of it (the
        server ends that session asynchronously, after the task closed its connection)."""
        wait_until(
            lambda: self.one(
                "SELECT count(*) FROM pg_replication_slots "
                f"WHERE slot_name = 'slot_{self.name}' AND NOT active"
            ),
            30,
            "the stopped task's walsender releasing the slot",
        )
        self.run(f"SELECT pg_drop_replication_slot('slot_{self.name}')")

    def publication_exists(self) -> bool:
        return bool(
            self.one(f"SELECT count(*) FROM pg_publication WHERE pubname = 'pub_{self.name}'")
        )


@pytest.fixture
def db(cluster: PostgresCluster) -> Iterator[Db]:
    """A database of the test's own; its slots go with it (the cluster has 10)."""
    database = Db(cluster)
    yield database
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
            "WHERE database = %s AND NOT active",
            (database.name,),
        )


def values(records: list[SourceRecord]) -> list[Struct | None]:
    return [r.value for r in records]


def ops(records: list[SourceRecord]) -> list[str | None]:
    return [r.value.get("op") if r.value is not None else None for r in records]


def after(record: SourceRecord) -> dict[str, Any]:
    row = record.value.get("after")
    return {f.name: row.get(f.name) for f in row.schema.fields}


def poll_until(harness: SourceTaskHarness, count: int, timeout: float = 20) -> list[SourceRecord]:
    return harness.poll(records=count, timeout=timeout)


def test_snapshot_then_stream_in_debeziums_envelope(db: Db) -> None:
    db.run(
        "CREATE TABLE public.items (id INT PRIMARY KEY, name TEXT NOT NULL, price NUMERIC(8,2), "
        "weight NUMERIC(6,1) NOT NULL DEFAULT 2.5)",
        "INSERT INTO items VALUES (1, 'a', 1.50), (2, 'b', NULL), (3, 'c', 3.25)",
    )
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(db.config)
        snapshot = poll_until(harness, 3)
        assert ops(snapshot) == ["r", "r", "r"]
        assert [r.value.get("source").get("snapshot") for r in snapshot] == [
            "first",
            "true",
            "last",
        ]
        assert {r.topic for r in snapshot} == {"srv.public.items"}
        assert sorted(after(r)["id"] for r in snapshot) == [1, 2, 3]
        first = snapshot[0]
        assert first.key_schema.name == "srv.public.items.Key"
        assert first.value_schema.name == "srv.public.items.Envelope"
        assert first.value_schema.field("after").schema.name == "srv.public.items.Value"
        assert first.value.get("source").schema.name == "io.debezium.connector.postgresql.Source"

        db.run(
            "INSERT INTO items VALUES (4, 'd', 4.00)",
            "UPDATE items SET name = 'bb' WHERE id = 2",
            "DELETE FROM items WHERE id = 1",
        )
        stream = poll_until(harness, 4)
        assert ops(stream) == ["c", "u", "d", None]
        create, update, delete, tombstone = stream
        assert after(create) == {
            "id": 4,
            "name": "d",
            "price": decimal.Decimal("4.00"),
            "weight": decimal.Decimal("2.5"),
        }
        assert after(update)["name"] == "bb" and update.value.get("before") is None
        assert delete.value.get("before").get("id") == 1 and delete.value.get("after") is None
        # a delete carries the key only: required columns hold their type's zero, as Debezium's
        assert delete.value.get("before").get("weight") == decimal.Decimal("0.0")
        assert tombstone.value is None and tombstone.key.get("id") == 1
        source = create.value.get("source")
        assert source.get("connector") == "postgresql"
        assert source.get("name") == "srv"
        assert source.get("db") == db.name
        assert (source.get("schema"), source.get("table")) == ("public", "items")
        assert source.get("snapshot") == "false"
        assert source.get("txId") > 0 and source.get("lsn") > 0
        assert source.get("sequence").startswith("[")
        assert create.key.get("id") == 4


def test_a_restart_resumes_at_the_stored_offset_and_replays_what_was_not_stored(db: Db) -> None:
    db.run("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    offsets = FakeOffsetReader()
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(db.config)
        harness.poll(polls=3)  # empty snapshot
        db.run("INSERT INTO t SELECT g, g FROM generate_series(1, 10) g")
        assert len(poll_until(harness, 10)) == 10
        harness.commit()
        db.run("INSERT INTO t SELECT g, g FROM generate_series(11, 15) g")
        assert len(poll_until(harness, 5)) == 5
        stored = FakeOffsetReader(offsets.items())  # what a crash now leaves: ids 1-10 stored
        harness.commit()
    db.run("INSERT INTO t VALUES (16, 16)")
    # after a clean stop: only the new change
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(db.config)
        assert [after(r)["id"] for r in poll_until(harness, 1)] == [16]
        assert harness.poll(polls=3) == []
    # after a crash before the second commit: 11-16 again (at least once), nothing lost
    with SourceTaskHarness(PostgresConnectorTask, stored) as harness:
        harness.start(db.config)
        assert [after(r)["id"] for r in poll_until(harness, 6)] == [11, 12, 13, 14, 15, 16]
        assert harness.poll(polls=3) == []


def test_a_snapshot_racing_writers_gives_each_row_once_as_read_or_change(db: Db) -> None:
    db.run(
        "CREATE TABLE race (id INT PRIMARY KEY, v INT NOT NULL)",
        "INSERT INTO race SELECT g, 0 FROM generate_series(1, 20000) g",
    )
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        with psycopg.connect(db.dsn, autocommit=True) as conn:
            for i in itertools.count(20001):
                if stop.is_set():
                    return
                conn.execute("INSERT INTO race VALUES (%s, 0)", (i,))
                conn.execute("UPDATE race SET v = v + 1 WHERE id = %s", (i - 20000,))
                written.append(i)

    thread = threading.Thread(target=writer)
    config = {**db.config, "snapshot.fetch.size": "100", "max.batch.size": "100"}
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(config)
        thread.start()
        try:
            records = poll_until(harness, 20000, timeout=60)
        finally:
            stop.set()
            thread.join()
        expected = {int(k): v for k, v in db.one("SELECT json_object_agg(id, v) FROM race").items()}
        state: dict[int, int] = {}
        created: set[int] = set()

        def apply(batch: list[SourceRecord]) -> None:
            for record in batch:
                row = after(record)
                if record.value.get("op") in ("r", "c"):
                    assert row["id"] not in created, f"row {row['id']} delivered twice"
                    created.add(row["id"])
                state[row["id"]] = row["v"]

        apply(records)
        wait_until(
            lambda: apply(harness.poll(polls=1)) or state == expected,
            30,
            "the events reaching the table's state",
        )
        assert created == set(expected) and len(written) > 0


def test_snapshot_modes(db: Db) -> None:
    db.run("CREATE TABLE m (id INT PRIMARY KEY)", "INSERT INTO m VALUES (1), (2)")

    def first_ops(mode: str, offsets: FakeOffsetReader) -> list[str | None]:
        with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
            harness.start({**db.config, "snapshot.mode": mode})
            return ops(harness.poll(polls=5))

    assert first_ops("no_data", FakeOffsetReader()) == []
    offsets = FakeOffsetReader()
    assert first_ops("initial", offsets) == ["r", "r"]
    assert first_ops("initial", offsets) == []  # done: stream only
    assert first_ops("always", offsets) == ["r", "r"]
    assert first_ops("when_needed", offsets) == []
    db.drop_slot_when_released()
    assert first_ops("when_needed", offsets) == ["r", "r"]  # the slot was lost: read again
    db.run("INSERT INTO m VALUES (3)")
    assert first_ops("initial_only", FakeOffsetReader()) == ["r", "r", "r"]


def test_transactions_truncate_and_a_schema_change_mid_stream(db: Db) -> None:
    db.run("CREATE TABLE s (id INT PRIMARY KEY, a TEXT)")
    config = {
        **db.config,
        "snapshot.mode": "no_data",
        "skipped.operations": "none",
        "provide.transaction.metadata": "true",
    }
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(config)
        harness.poll(polls=3)
        db.run(
            "BEGIN; INSERT INTO s VALUES (1, 'x'); INSERT INTO s VALUES (2, 'y'); COMMIT",
            "ALTER TABLE s ADD COLUMN b INT",
            "INSERT INTO s VALUES (3, 'z', 7)",
            "TRUNCATE s",
        )
        records = poll_until(harness, 10)
        topics = [r.topic for r in records]
        assert topics.count("srv.transaction") == 6
        changes = [r for r in records if r.topic == "srv.public.s"]
        assert ops(changes) == ["c", "c", "c", "t"]
        assert changes[3].key is None and changes[3].key_schema is None  # as Debezium sends it
        assert changes[0].value.get("transaction").get("total_order") == 1
        assert changes[1].value.get("transaction").get("total_order") == 2
        assert "b" not in after(changes[0]) and after(changes[2])["b"] == 7
        begin, end = records[0], records[3]
        assert begin.value.get("status") == "BEGIN" and end.value.get("status") == "END"
        assert end.value.get("event_count") == 2


def test_heartbeats_move_an_idle_slot(db: Db) -> None:
    db.run("CREATE TABLE idle (id INT PRIMARY KEY)", "CREATE TABLE other (id INT PRIMARY KEY)")
    config = {
        **db.config,
        "table.include.list": "public.idle",
        "heartbeat.interval.ms": "100",
        "publication.autocreate.mode": "filtered",
    }
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(config)
        harness.poll(polls=3)
        harness.commit()
        start = db.one(
            f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'slot_{db.name}'"
        )
        db.run("INSERT INTO other SELECT generate_series(1, 1000)")
        current = db.one("SELECT pg_current_wal_lsn()::text")

        def confirmed_past() -> bool:
            beats = harness.poll(polls=2)
            assert all(r.topic == "__debezium-heartbeat.srv" for r in beats)
            harness.commit()
            return bool(
                db.one(
                    f"SELECT confirmed_flush_lsn >= '{current}' FROM pg_replication_slots "
                    f"WHERE slot_name = 'slot_{db.name}'"
                )
            )

        wait_until(confirmed_past, 20, f"the idle slot advancing from {start} past {current}")


def test_delete_drops_the_slot_and_the_publication_it_created_other_stops_keep_them(db: Db) -> None:
    db.run("CREATE TABLE k (id INT PRIMARY KEY)")
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(db.config)
        harness.poll(polls=2)
        harness.stop()
        assert db.slot_exists() and db.publication_exists()
        harness.start(db.config)
        harness.poll(polls=2)
        harness.stop(connector_deleted=True)
        assert not db.slot_exists() and not db.publication_exists()


def test_delete_keeps_a_publication_it_found(db: Db) -> None:
    db.run("CREATE TABLE k (id INT PRIMARY KEY)", f"CREATE PUBLICATION pub_{db.name} FOR TABLE k")
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start({**db.config, "publication.autocreate.mode": "disabled"})
        harness.poll(polls=2)
        harness.stop(connector_deleted=True)
    assert not db.slot_exists() and db.publication_exists()


def test_validation_names_the_field(db: Db) -> None:
    with ConnectorHarness(PostgresConnector) as harness:
        errors = harness.validate({**db.config, "slot.name": "Bad-Name", "table.include.list": "("})
        assert set(errors) == {"slot.name", "table.include.list"}
        assert "lower-case letters" in errors["slot.name"][0]
        assert harness.validate(db.config) == {}
        missing = harness.validate({**db.config, "publication.autocreate.mode": "disabled"})
        assert "does not exist" in missing["publication.name"][0]
        channels = harness.validate(
            {
                **db.config,
                "signal.enabled.channels": "source,kafka",
                "notification.enabled.channels": "sink",
            }
        )
        assert set(channels) == {"signal.kafka.bootstrap.servers", "notification.sink.topic.name"}
        assert "must be provided" in channels["notification.sink.topic.name"][0]
        unknown = harness.validate({**db.config, "signal.enabled.channels": "jmx"})
        assert "must be one of: source, kafka, file" in unknown["signal.enabled.channels"][0]
        url = make_url(POSTGRES_ADMIN_URL)  # the shared server runs wal_level=replica
        shared = {
            **db.config,
            "database.port": str(url.port or 5432),
            "database.dbname": url.database or "postgres",
            "database.user": url.username or "postgres",
        }
        assert "wal_level" in harness.validate(shared)["database.hostname"][0]


def test_an_incremental_snapshot_backfills_while_changes_stream(db: Db) -> None:
    db.run(
        "CREATE TABLE signals (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))",
        "CREATE TABLE back (id INT PRIMARY KEY, v INT NOT NULL)",
        "INSERT INTO back SELECT g, 0 FROM generate_series(1, 2000) g",
    )
    config = {
        **db.config,
        "snapshot.mode": "no_data",
        "signal.data.collection": "public.signals",
        "incremental.snapshot.chunk.size": "150",
    }
    offsets = FakeOffsetReader()
    state: dict[int, int] = {}
    reads: collections.Counter[int] = collections.Counter()

    def apply(batch: list[SourceRecord]) -> None:
        for record in batch:
            if record.value is None:
                continue
            op, source = record.value.get("op"), record.value.get("source")
            assert record.topic == "srv.public.back"
            if op == "d":
                state.pop(record.value.get("before").get("id"), None)
                continue
            row = after(record)
            state[row["id"]] = row["v"]
            if op == "r":
                assert source.get("snapshot") == "incremental"
                reads[row["id"]] += 1

    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        harness.poll(polls=3)
        db.run(
            "INSERT INTO signals VALUES ('backfill-1', 'execute-snapshot', "
            '\'{"data-collections": ["public.back"], "type": "incremental"}\')'
        )
        for step in range(1, 8):  # changes interleaved with the chunks
            apply(harness.poll(polls=3))
            db.run(
                f"UPDATE back SET v = v + 1 WHERE id % 7 = {step}",
                f"DELETE FROM back WHERE id = {step * 250}",
                f"INSERT INTO back VALUES ({2000 + step}, 9)",
            )
        harness.commit()
        expected = {int(k): v for k, v in db.one("SELECT json_object_agg(id, v) FROM back").items()}
        wait_until(
            lambda: apply(harness.poll(polls=2)) or state == expected,
            60,
            "the backfill and the changes reaching the table's state",
        )
    # each row read at most once; rows a change superseded in their chunk's window are not read
    assert set(reads) <= set(range(1, 2008)) and len(reads) >= 1500
    assert max(reads.values()) == 1
    assert all(i in state for i in range(1, 2001) if i % 250)  # every row came, as r or as a change


TYPES = {
    "b": ("boolean", "true"),
    "i2": ("smallint", "-7"),
    "i4": ("integer", "2147483647"),
    "i8": ("bigint", "-9223372036854775808"),
    "f4": ("real", "1.5"),
    "f8": ("double precision", "'Infinity'"),
    "n": ("numeric(10,3)", "1234.567"),
    "nv": ("numeric", "3.14159"),
    "m": ("money", "12.34"),
    "c": ("char(4)", "'ab'"),
    "vc": ("varchar(20)", "'hello'"),
    "t": ("text", "'long text é'"),
    "by": ("bytea", "'\\x00ff'"),
    "j": ("json", """'{"a": 1}'"""),
    "jb": ("jsonb", """'{"b": [1, 2]}'"""),
    "x": ("xml", "'<a>1</a>'"),
    "u": ("uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"),
    "d": ("date", "'2024-02-29'"),
    "tm": ("time(3)", "'12:34:56.789'"),
    "tmu": ("time", "'12:34:56.123456'"),
    "ttz": ("timetz", "'12:34:56+02'"),
    "ts": ("timestamp(3)", "'2024-01-02 03:04:05.678'"),
    "tsu": ("timestamp", "'2024-01-02 03:04:05.123456'"),
    "tstz": ("timestamptz", "'2024-01-02 03:04:05.5+01'"),
    "iv": ("interval", "'1 year 2 mons 3 days 04:05:06.5'"),
    "bt": ("bit(1)", "B'1'"),
    "vb": ("bit varying(16)", "B'101'"),
    "inet": ("inet", "'192.168.0.1'"),
    "cidr": ("cidr", "'10.0.0.0/8'"),
    "mac": ("macaddr", "'08:00:2b:01:02:03'"),
    "en": ("mood", "'happy'"),
    "dm": ("positive", "5"),
    "ai": ("integer[]", "'{1,NULL,3}'"),
    "at": ("text[]", """'{"a b","c,d"}'"""),
    "r": ("int4range", "'[1,10)'"),
    "pt": ("point", "'(1.5,2.5)'"),
    "nul": ("integer", "NULL"),
}


def test_every_type_reads_the_same_from_a_snapshot_and_the_stream(db: Db) -> None:
    columns = ", ".join(f"{name} {kind}" for name, (kind, _) in TYPES.items())
    literals = ", ".join(value for _, value in TYPES.values())
    db.run(
        "CREATE TYPE mood AS ENUM ('sad', 'happy')",
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 0)",
        f"CREATE TABLE typed (id INT PRIMARY KEY, {columns})",
        f"INSERT INTO typed VALUES (1, {literals})",
    )
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(db.config)
        (read,) = poll_until(harness, 1)
        db.run(f"INSERT INTO typed VALUES (2, {literals})")
        (created,) = poll_until(harness, 1)
    assert (read.value.get("op"), created.value.get("op")) == ("r", "c")
    assert read.value_schema == created.value_schema
    snapshot, stream = after(read), after(created)
    assert {k: v for k, v in snapshot.items() if k != "id"} == {
        k: v for k, v in stream.items() if k != "id"
    }
    row = read.value_schema.field("after").schema
    assert row.field("en").schema.name == "io.debezium.data.Enum"
    assert row.field("tsu").schema.name == "io.debezium.time.MicroTimestamp"
    assert row.field("nv").schema.name == "io.debezium.data.VariableScaleDecimal"
    assert snapshot["c"] == "ab  " and snapshot["inet"] == "192.168.0.1"
    assert snapshot["ai"] == [1, None, 3] and snapshot["at"] == ["a b", "c,d"]
    assert snapshot["tstz"] == "2024-01-02T02:04:05.500000Z"
    assert snapshot["nul"] is None and snapshot["dm"] == 5 and snapshot["bt"] is True


def ids(records: list[SourceRecord]) -> list[int]:
    """The ids of the rows of data events (not tombstones, heartbeats, transaction records)."""
    return [
        after(r)["id"] for r in records if r.value is not None and r.topic.startswith("srv.public.")
    ]


def test_a_transaction_split_across_polls_resumes_inside_it(db: Db) -> None:
    db.run("CREATE TABLE split (id INT PRIMARY KEY)")
    offsets = FakeOffsetReader()
    config = {**db.config, "snapshot.mode": "no_data", "max.batch.size": "3"}
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        harness.poll(polls=3)
        db.run("INSERT INTO split SELECT generate_series(1, 10)")
        first = ids(harness.poll(records=3))  # polls of 3 messages: part of the transaction
        assert first == list(range(1, len(first) + 1)) and len(first) < 10
        harness.commit()
        stored = FakeOffsetReader(offsets.items())  # a crash now: 1-3 stored, mid-transaction
    with SourceTaskHarness(PostgresConnectorTask, stored) as harness:
        harness.start(config)
        assert ids(poll_until(harness, 10 - len(first))) == list(range(len(first) + 1, 11))
        assert harness.poll(polls=5) == []


def test_a_database_crash_mid_stream_loses_and_repeats_nothing(db: Db) -> None:
    db.run("CREATE TABLE bounce (id INT PRIMARY KEY)")
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start({**db.config, "snapshot.mode": "no_data"})
        harness.poll(polls=3)
        db.run("INSERT INTO bounce SELECT generate_series(1, 5)")
        seen = ids(poll_until(harness, 5))
        db.cluster.crash()  # (a clean restart would wait for the walsender to be answered)
        db.cluster.start()
        db.run("INSERT INTO bounce SELECT generate_series(6, 10)")
        seen += ids(harness.poll(records=5, timeout=60))
        assert seen == list(range(1, 11))


def test_replica_identity_full_keys_by_primary_key_and_gives_before_images(db: Db) -> None:
    db.run(
        "CREATE TABLE full_id (id INT PRIMARY KEY, v INT)",
        "ALTER TABLE full_id REPLICA IDENTITY FULL",
        "INSERT INTO full_id VALUES (1, 1)",
    )
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(db.config)
        (read,) = poll_until(harness, 1)
        assert read.key.get("id") == 1 and read.key_schema.field("v") is None
        db.run("UPDATE full_id SET v = 2 WHERE id = 1", "UPDATE full_id SET id = 5 WHERE id = 1")
        update, delete, tombstone, create = poll_until(harness, 4)
        assert ops([update, delete, tombstone, create]) == ["u", "d", None, "c"]
        assert update.value.get("before").get("v") == 1 and after(update)["v"] == 2
        assert (delete.key.get("id"), tombstone.key.get("id"), create.key.get("id")) == (1, 1, 5)


def test_an_incremental_snapshot_resumes_after_a_restart(db: Db) -> None:
    db.run(
        "CREATE TABLE signals (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT)",
        "CREATE TABLE resumed (id INT PRIMARY KEY)",
        "INSERT INTO resumed SELECT generate_series(1, 1000)",
    )
    config = {
        **db.config,
        "snapshot.mode": "no_data",
        "signal.data.collection": "public.signals",
        "incremental.snapshot.chunk.size": "100",
        "provide.transaction.metadata": "true",
    }
    offsets = FakeOffsetReader()
    reads: list[int] = []
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        harness.poll(polls=3)
        db.run(
            "INSERT INTO signals VALUES ('s1', 'execute-snapshot', "
            '\'{"data-collections": ["public.resumed"]}\')'
        )
        reads += [i for i in ids(harness.poll(records=300)) if i <= 1000]
        harness.commit()
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        wait_until(
            lambda: (
                reads.extend(i for i in ids(harness.poll(polls=2)) if i <= 1000)
                or set(reads) == set(range(1, 1001))
            ),
            60,
            "the rest of the table read after the restart",
        )
    assert len(reads) < 1100  # resumed where it stopped, not from the start


def test_when_needed_keeps_streaming_after_changes_it_does_not_capture(db: Db) -> None:
    db.run("CREATE TABLE wanted (id INT PRIMARY KEY)", "CREATE TABLE other (id INT PRIMARY KEY)")
    config = {**db.config, "snapshot.mode": "when_needed", "table.include.list": "public.wanted"}
    offsets = FakeOffsetReader()
    db.run("INSERT INTO wanted VALUES (1)")
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        assert ops(poll_until(harness, 1)) == ["r"]
        db.run("INSERT INTO other SELECT generate_series(1, 100)", "INSERT INTO wanted VALUES (2)")
        assert ops(poll_until(harness, 1)) == ["c"]
        db.run("INSERT INTO other VALUES (1000)")
        harness.poll(polls=3)
        harness.commit()
    with SourceTaskHarness(PostgresConnectorTask, offsets) as harness:
        harness.start(config)
        db.run("INSERT INTO wanted VALUES (3)")
        assert ops(poll_until(harness, 1)) == ["c"]  # no second snapshot


def test_the_topics_written_are_the_ones_the_assets_name(db: Db) -> None:
    """Tables whose names a topic cannot hold: each record goes to the topic the connector's
    Airflow asset names (the operators' outlets), not to ``prefix.schema.table`` as written."""
    db.run(
        'CREATE TABLE public."ordres$2026" (id INT PRIMARY KEY)',
        'CREATE TABLE public."café" (id INT PRIMARY KEY)',
        'INSERT INTO public."ordres$2026" VALUES (1)',
        'INSERT INTO public."café" VALUES (1)',
    )
    config = {**db.config, "table.include.list": r"public.ordres\$2026,public.café"}
    outlets = connector_assets(config, "127.0.0.1:9092").outlets
    with SourceTaskHarness(PostgresConnectorTask) as harness:
        harness.start(config)
        written = {r.topic for r in poll_until(harness, 2)}
    assert written == {"srv.public.ordres_2026", "srv.public.caf_"}
    assert {a.uri for a in outlets} == {f"kafka://127.0.0.1:9092/{t}" for t in written}
