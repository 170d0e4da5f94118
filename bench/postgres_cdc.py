"""Change capture from PostgreSQL: change events/s of ``PostgresConnector`` (pgoutput, through
the runtime on Spark) beside a hand-written replication loop, and its commit-to-Kafka latency
at a fixed rate of transactions.

Everything runs against a private PostgreSQL 15 cluster started and stopped by the benchmark
(``tests_common.postgres_cluster``, ``wal_level=logical``; never the shared server on 5432) and the
embedded broker. The table, ``orders``: a bigint identity key, text, integer, numeric(12,2)
and timestamptz columns, ``PRELOADED`` rows written before any slot exists. The write load is pgbench's (C: the writers cost the measured
processes next to nothing) running a script of one statement per transaction: half
``INSERT`` a new row, half ``UPDATE`` a preloaded one, so that every transaction changes
exactly one row: one change event each.

**Throughput** (events/s). The WAL is written first, then each variant captures all of it:
``--transactions`` transactions by 4 pgbench clients, after every run's slot (``pgoutput``)
and publication (``FOR TABLE orders``) was created. Pre-written WAL is the fair and stable
comparison: both variants read the same log at their own full speed rather than at the
writers' (whose rate on 2 shared cores moves from run to run and would bound both), and no
writer competes for the CPU while a variant runs. Each run reads a slot of its own, so the
server decodes the same log for each.

* project: ``io.debezium.connector.postgresql.PostgresConnector`` with the worker's defaults
  (``JsonConverter`` with schemas for key and value, as Debezium users commonly run it;
  ``poll.interval.ms``, ``max.batch.size``, ``offset.flush.interval.ms`` and the producer's
  ``linger.ms`` at their defaults), ``snapshot.mode=no_data`` (the slot is there: it
  streams), one task on a ``Connect`` runtime embedded with local Spark;
* hand-written loop (:func:`peer`, in a process of its own as the task is in one of Spark's):
  psycopg2's ``LogicalReplicationConnection`` on its own slot and publication, pgoutput
  protocol 1 decoded by hand (:class:`PeerDecoder`: Begin, Commit, Relation, Insert, Update,
  Delete; values typed as Debezium types them), one Debezium-shaped JSON event per row (key
  and value with their schemas, serialized once per relation; the payload with orjson; the
  same bytes within 0.5%), produced with confluent-kafka (``linger.ms=5``, ``poll(0)`` every
  1,000 events, flush at the end).

Both are timed alike, from the topic: events/s between the first and the last record's
CreateTime (set by the producer when the record is handed to it), so that start-up (Spark,
the connection, the server's first decoding) is not timed. A consumer in the benchmark's
process reads the topic meanwhile (to know when every event is there), for both.

**Latency** (milliseconds, project only). A new connector (the defaults above; it creates
its own slot and publication) streams while pgbench runs ``--rate`` transactions a second
(``-R``: Poisson arrivals at that mean rate, 4 clients) for ``--latency-s`` seconds, after
one second of the same load (not counted) came through. Each event's latency runs from its
transaction's commit time (``source.ts_us``: the commit timestamp PostgreSQL writes in the
commit record) to

* the Kafka record's CreateTime: when the runtime handed it to its producer;
* the time a consumer in the benchmark's process (``assign``, ``fetch.wait.max.ms=10``)
  receives it: end to end, what a reader of the topic sees (the embedded broker and this
  consumer add about 7 ms at p50, measured with a bare producer);

and the event's ``ts_ms`` (when the connector built it) splits the first into the time to
the connector and the time through the runtime. The database, the runtime and the
benchmark share one host clock.

Each throughput figure is the median of ``--runs`` runs with min and max; the variants run in
turn, one run each per round.

    python -m bench.postgres_cdc [--transactions N] [--runs R] [--rate TPS] [--latency-s S]
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import decimal
import json
import multiprocessing
import os
import re
import select
import statistics
import struct
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import psycopg
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState, State
from bench.common import broker, interleaved, percentiles, rate, ratio_table
from tests_common.postgres_cluster import PG_BIN, PostgresCluster, unavailable_reason

DATABASE = "cdc_bench"
TABLE = "orders"
PRELOADED = 10_000
CLIENTS = 4
PROJECT = "project: PostgresConnector, JsonConverter with schemas, 1 task"
PEER = "hand-written loop: psycopg2 + pgoutput by hand + orjson + confluent-kafka"
CONNECTOR_CLASS = "io.debezium.connector.postgresql.PostgresConnector"

SCHEMA = f"""
CREATE TABLE {TABLE} (
    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    customer text NOT NULL,
    qty integer NOT NULL,
    amount numeric(12, 2),
    updated_at timestamptz NOT NULL
)"""
PRELOAD = f"""
INSERT INTO {TABLE} (customer, qty, amount, updated_at)
SELECT 'customer-' || g, 1, 9.99, now() FROM generate_series(1, {PRELOADED}) g"""
PGBENCH_SCRIPT = f"""\\set id random(1, :rows)
\\set op random(0, 1)
\\if :op = 0
INSERT INTO {TABLE} (customer, qty, amount, updated_at) VALUES ('customer-' || :id, 1, 9.99, now());
\\else
UPDATE {TABLE} SET qty = qty + 1, amount = amount + 0.01, updated_at = now() WHERE id = :id;
\\endif
"""


# -- the database and its load ---------------------------------------------------------------
@dataclass(frozen=True)
class Database:
    """The benchmark's database on the private cluster."""

    cluster: PostgresCluster
    name: str = DATABASE

    @property
    def dsn(self) -> str:
        return self.cluster.dsn.rsplit("/", 1)[0] + "/" + self.name

    @property
    def parameters(self) -> dict[str, Any]:
        """psycopg2 connection keywords."""
        return {
            "host": "127.0.0.1",
            "port": self.cluster.port,
            "user": "postgres",
            "dbname": self.name,
        }

    def execute(self, *statements: str) -> list[tuple[Any, ...]]:
        """Runs ``statements`` in autocommit; the rows of the last."""
        with psycopg.connect(self.dsn, autocommit=True) as connection:
            rows: list[tuple[Any, ...]] = []
            for statement in statements:
                cursor = connection.execute(statement)
                rows = cursor.fetchall() if cursor.description else []
            return rows

    def slot_and_publication(self, name: str) -> None:
        """A pgoutput slot and a publication of the table, both named ``name``."""
        self.execute(
            f"CREATE PUBLICATION {name} FOR TABLE {TABLE}",
            f"SELECT pg_create_logical_replication_slot('{name}', 'pgoutput')",
        )

    def slot_exists(self, name: str) -> bool:
        query = f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{name}'"
        return bool(self.execute(query)[0][0] == 1)


@contextmanager
def benchmark_database(cluster: PostgresCluster) -> Iterator[Database]:
    with psycopg.connect(cluster.dsn, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")
    database = Database(cluster)
    database.execute(SCHEMA, PRELOAD)
    yield database


@dataclass(frozen=True)
class Load:
    """What pgbench did."""

    transactions: int
    tps: float


class Pgbench:
    """pgbench running ``PGBENCH_SCRIPT`` with ``options`` (``-t``/``-T``, ``-R``) on
    ``CLIENTS`` connections, in the background."""

    def __init__(self, database: Database, *options: str) -> None:
        self.script = tempfile.NamedTemporaryFile("w", suffix=".sql")  # noqa: SIM115
        self.script.write(PGBENCH_SCRIPT)
        self.script.flush()
        command = [
            str(PG_BIN / "pgbench"),
            *("-h", "127.0.0.1", "-p", str(database.cluster.port), "-U", "postgres"),
            *("-n", "-c", str(CLIENTS), "-j", "2", "-D", f"rows={PRELOADED}"),
            *("-f", self.script.name, *options, database.name),
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.load: Load | None = None

    def result(self) -> Load | None:
        """What it did once it ended (raises when it failed), None while it runs."""
        if self.load is None and self.process.poll() is not None:
            out, err = self.process.communicate()
            self.script.close()
            processed = re.search(r"number of transactions actually processed: (\d+)", out)
            tps = re.search(r"tps = ([\d.]+)", out)
            if self.process.returncode != 0 or processed is None or tps is None:
                raise RuntimeError(f"pgbench failed ({self.process.returncode}):\n{out}{err}")
            self.load = Load(int(processed.group(1)), float(tps.group(1)))
        return self.load

    def wait(self) -> Load:
        self.process.wait()
        load = self.result()
        assert load is not None
        return load

    def all_seen(self, seen: int) -> bool:
        """Whether it ended and ``seen`` events are all of its transactions."""
        load = self.result()
        return load is not None and seen >= load.transactions


# -- reading the topic -----------------------------------------------------------------------
class TopicReader:
    """Reads a one-partition topic from its start (``assign``: no group to join)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 10,
                "fetch.queue.backoff.ms": 0,
                "fetch.error.backoff.ms": 10,
            }
        )
        self.consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])

    def create_times(
        self, records: int, timeout_s: float, check: Callable[[], None]
    ) -> tuple[list[int], int]:
        """The CreateTime (ms) of the first ``records`` records, and their bytes (keys and
        values) in all; ``check`` raises when the writer failed."""
        times: list[int] = []
        size = 0
        deadline = time.monotonic() + timeout_s
        while len(times) < records:
            for message in self.consumer.consume(10_000, 0.5):
                if message.error() is None:
                    times.append(message.timestamp()[1])
                    size += len(message.value() or b"") + len(message.key() or b"")
            check()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(times)} of {records} records after {timeout_s} s")
        return times[:records], size

    def latencies(
        self, load: Pgbench, timeout_s: float, check: Callable[[], None]
    ) -> list[tuple[int, int, int, float]]:
        """``(commit µs, event ts_ms, CreateTime ms, received s)`` of the next records, read
        while ``load`` runs until there is one per transaction it made, each received time
        taken as ``poll`` returns the record; ``check`` raises when the writer failed
        (called when no record came)."""
        seen: list[tuple[int, int, int, float]] = []
        deadline = time.monotonic() + timeout_s
        while not load.all_seen(len(seen)):
            message = self.consumer.poll(0.1)
            received = time.time()
            if message is not None and message.error() is None:
                payload = orjson.loads(message.value() or b"null")["payload"]
                created = message.timestamp()[1]
                seen.append((payload["source"]["ts_us"], payload["ts_ms"], created, received))
            else:
                check()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(seen)} records after {timeout_s} s")
        return seen

    def close(self) -> None:
        self.consumer.close()


def events_per_s(create_times: list[int]) -> float:
    """Events/s between the first and the last record's CreateTime."""
    return (len(create_times) - 1) / max((create_times[-1] - create_times[0]) / 1000, 1e-3)


# -- the project -----------------------------------------------------------------------------
def connector_config(database: Database, name: str, prefix: str) -> dict[str, str]:
    """The connector as a Debezium user configures it; everything else at its default."""
    return {
        "connector.class": CONNECTOR_CLASS,
        "database.hostname": "127.0.0.1",
        "database.port": str(database.cluster.port),
        "database.user": "postgres",
        "database.dbname": database.name,
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": name,
        "publication.name": name,
        "table.include.list": f"public.{TABLE}",
        "snapshot.mode": "no_data",
    }


def project_run(
    runtime: Connect,
    database: Database,
    bootstrap: str,
    slots: Iterator[str],
    transactions: int,
    sizes: list[float],
) -> float:
    """One run of the connector over the next of ``slots`` (made before the writes)."""
    slot = next(slots)
    prefix = f"p{slot}"
    topic = new_topic_named(bootstrap, f"{prefix}.public.{TABLE}")
    reader = TopicReader(bootstrap, topic)
    config = {**connector_config(database, slot, prefix), "publication.autocreate.mode": "disabled"}
    runtime.add_connector(slot, config)
    try:
        times, size = reader.create_times(transactions, 600, partial(not_failed, runtime, slot))
    finally:
        delete(runtime, slot)  # drops the slot (KIP-901), keeps the publication
        reader.close()
    sizes.append(size / transactions)
    return events_per_s(times)


def delete(runtime: Connect, name: str, timeout_s: float = 60) -> None:
    """Deletes connector ``name`` and waits until its cleanup is done (its task stopped and
    its slot dropped), so that nothing of it runs on into the next measurement."""
    runtime.delete_connector(name)
    deadline = time.monotonic() + timeout_s
    while (d := runtime.store.configs.deletion(name)) is None or d.state is not DeletionState.DONE:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name}: the deletion was not done within {timeout_s} s")
        time.sleep(0.05)


def not_failed(runtime: Connect, name: str) -> None:
    """Raises with the task's trace when a task of connector ``name`` failed."""
    for status in runtime.store.statuses.task_statuses(name):
        if status.state is State.FAILED:
            raise RuntimeError(f"{name}: a task failed:\n{status.trace}")


def new_topic_named(bootstrap: str, name: str) -> str:
    """A topic of one partition named ``name``, made before its connector writes to it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


# -- the hand-written loop -------------------------------------------------------------------
POSTGRES_EPOCH_US = 946_684_800_000_000  # 2000-01-01 in Unix µs
SNAPSHOT_ENUM = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
SOURCE_SCHEMA = {
    "type": "struct",
    "fields": [
        *({"type": "string", "optional": False, "field": f} for f in ("version", "connector")),
        {"type": "string", "optional": False, "field": "name"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
        {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
         "parameters": {"allowed": SNAPSHOT_ENUM}, "default": "false", "field": "snapshot"},
        {"type": "string", "optional": False, "field": "db"},
        {"type": "string", "optional": True, "field": "sequence"},
        *({"type": "int64", "optional": True, "field": f} for f in ("ts_us", "ts_ns")),
        *({"type": "string", "optional": False, "field": f} for f in ("schema", "table")),
        *({"type": "int64", "optional": True, "field": f} for f in ("txId", "lsn", "xmin")),
        {"type": "string", "optional": True, "field": "origin"},
        {"type": "int64", "optional": True, "field": "origin_lsn"},
    ],
    "optional": False,
    "name": "io.debezium.connector.postgresql.Source",
    "version": 1,
    "field": "source",
}  # fmt: skip
TRANSACTION_SCHEMA = {
    "type": "struct",
    "fields": [
        {"type": "string", "optional": False, "field": "id"},
        {"type": "int64", "optional": False, "field": "total_order"},
        {"type": "int64", "optional": False, "field": "data_collection_order"},
    ],
    "optional": True,
    "name": "event.block",
    "version": 1,
    "field": "transaction",
}


def _decimal(text: str, scale: int) -> str:
    """Debezium's precise decimal in JsonConverter: the unscaled value's two's-complement
    bytes, base64."""
    unscaled = int(decimal.Decimal(text).scaleb(scale))
    size = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


def _zoned(text: str) -> str:
    """timestamptz text as Debezium's ZonedTimestamp (UTC, ``Z``)."""
    instant = dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc)
    return instant.replace(tzinfo=None).isoformat() + "Z"


def _column(type_oid: int, modifier: int) -> tuple[dict[str, Any], Callable[[str], Any]]:
    """A column's Connect schema and its conversion from text, as Debezium has them."""
    if type_oid in (20, 21, 23):  # int8, int2, int4
        kind = {20: "int64", 21: "int16", 23: "int32"}[type_oid]
        return {"type": kind}, int
    if type_oid == 1700:  # numeric(p, s)
        precision, scale = (modifier - 4) >> 16, (modifier - 4) & 0xFFFF
        parameters = {"scale": str(scale), "connect.decimal.precision": str(precision)}
        schema = {
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "version": 1,
            "parameters": parameters,
        }
        return schema, partial(_decimal, scale=scale)
    if type_oid == 1184:  # timestamptz
        return {"type": "string", "name": "io.debezium.time.ZonedTimestamp", "version": 1}, _zoned
    if type_oid == 16:  # bool
        return {"type": "boolean"}, "t".__eq__
    return {"type": "string"}, str


@dataclass
class PeerTable:
    """What the loop keeps of a Relation message."""

    topic: str
    schema: str
    name: str
    columns: list[str]
    convert: list[Callable[[str], Any]]
    key: list[int]
    key_schema: bytes
    value_schema: bytes


@dataclass
class PeerDecoder:
    """pgoutput protocol 1, decoded by hand: each change message becomes a Debezium-shaped
    ``(key, value)`` JSON pair (schema and payload); others update the decoder's state."""

    prefix: str
    database: str
    tables: dict[int, PeerTable] = field(default_factory=dict)
    commit_us: int = 0
    xid: int = 0
    last_commit: int = 0
    version: str = "peer"
    """The events' ``source.version``."""
    required: frozenset[tuple[str, str, str]] = frozenset()
    """(schema, table, column) of the NOT NULL columns, whose schemas Debezium makes
    required (pgoutput does not say; given, from the catalog, the schemas are Debezium's);
    key columns are required in any case."""

    def feed(self, data: bytes, lsn: int) -> tuple[bytes, bytes] | None:
        kind = data[0]
        if kind == 0x42:  # B
            _, commit_us, self.xid = struct.unpack_from("!QqI", data, 1)
            self.commit_us = commit_us + POSTGRES_EPOCH_US
        elif kind == 0x43:  # C
            self.last_commit = struct.unpack_from("!Q", data, 2)[0]
        elif kind == 0x52:  # R
            self._relation(data)
        elif kind == 0x49:  # I: 'N' and the new tuple
            table = self.tables[struct.unpack_from("!I", data, 1)[0]]
            row, _ = self._tuple(table, data, 6)
            return self._event(table, "c", None, row, lsn)
        elif kind == 0x55:  # U: ['K' or 'O' and the old tuple], 'N' and the new tuple
            table = self.tables[struct.unpack_from("!I", data, 1)[0]]
            at = 5
            if data[at] in (0x4B, 0x4F):
                _, at = self._tuple(table, data, at + 1)
            row, _ = self._tuple(table, data, at + 1)
            return self._event(table, "u", None, row, lsn)
        elif kind == 0x44:  # D: 'K' or 'O' and the old tuple
            table = self.tables[struct.unpack_from("!I", data, 1)[0]]
            old, _ = self._tuple(table, data, 6)
            return self._event(table, "d", old, None, lsn)
        return None

    def _relation(self, data: bytes) -> None:
        oid = struct.unpack_from("!I", data, 1)[0]
        schema, at = _cstring(data, 5)
        name, at = _cstring(data, at)
        count = struct.unpack_from("!H", data, at + 1)[0]
        at += 3
        columns, converts, key, fields = [], [], [], []
        for index in range(count):
            flags = data[at]
            column, at = _cstring(data, at + 1)
            type_oid, modifier = struct.unpack_from("!Ii", data, at)
            at += 8
            column_schema, convert = _column(type_oid, modifier)
            columns.append(column)
            converts.append(convert)
            optional = not flags & 1 and (schema, name, column) not in self.required
            type_first = {"type": column_schema["type"], "optional": optional}
            fields.append({**type_first, **column_schema, "field": column})
            if flags & 1:
                key.append(index)
        topic = f"{self.prefix}.{schema}.{name}"
        row = {"type": "struct", "fields": fields, "optional": True, "name": f"{topic}.Value"}
        envelope = {
            "type": "struct",
            "fields": [
                {**row, "field": "before"},
                {**row, "field": "after"},
                SOURCE_SCHEMA,
                TRANSACTION_SCHEMA,
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": True, "field": "ts_ms"},
                {"type": "int64", "optional": True, "field": "ts_us"},
                {"type": "int64", "optional": True, "field": "ts_ns"},
            ],
            "optional": False,
            "name": f"{topic}.Envelope",
            "version": 2,
        }
        key_schema = {
            "type": "struct",
            "fields": [{**fields[i], "optional": False} for i in key],
            "optional": False,
            "name": f"{topic}.Key",
        }
        self.tables[oid] = PeerTable(
            topic,
            schema,
            name,
            columns,
            converts,
            key,
            orjson.dumps(key_schema),
            orjson.dumps(envelope),
        )

    @staticmethod
    def _tuple(table: PeerTable, data: bytes, at: int) -> tuple[dict[str, Any], int]:
        count = struct.unpack_from("!H", data, at)[0]
        at += 2
        row: dict[str, Any] = {}
        for index in range(count):
            kind = data[at]
            if kind == 0x74:  # t: text
                size = struct.unpack_from("!I", data, at + 1)[0]
                text = data[at + 5 : at + 5 + size].decode()
                row[table.columns[index]] = table.convert[index](text)
                at += 5 + size
            else:  # n: null, u: unchanged TOAST (not sent: left null)
                row[table.columns[index]] = None
                at += 1
        return row, at

    def _event(
        self,
        table: PeerTable,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        lsn: int,
    ) -> tuple[bytes, bytes]:
        row = after if after is not None else before
        assert row is not None
        key = {table.columns[i]: row[table.columns[i]] for i in table.key}
        now_ms = int(time.time() * 1000)
        last = f'"{self.last_commit}"' if self.last_commit else "null"
        source = {
            "version": self.version,
            "connector": "postgresql",
            "name": self.prefix,
            "ts_ms": self.commit_us // 1000,
            "snapshot": "false",
            "db": self.database,
            "sequence": f'[{last},"{lsn}"]',
            "ts_us": self.commit_us,
            "ts_ns": self.commit_us * 1000,
            "schema": table.schema,
            "table": table.name,
            "txId": self.xid,
            "lsn": lsn,
            "xmin": None,
            "origin": None,
            "origin_lsn": None,
        }
        payload = {
            "before": before,
            "after": after,
            "source": source,
            "transaction": None,
            "op": op,
            "ts_ms": now_ms,
            "ts_us": now_ms * 1000,
            "ts_ns": now_ms * 1_000_000,
        }
        return (
            b'{"schema":' + table.key_schema + b',"payload":' + orjson.dumps(key) + b"}",
            b'{"schema":' + table.value_schema + b',"payload":' + orjson.dumps(payload) + b"}",
        )


def _cstring(data: bytes, at: int) -> tuple[str, int]:
    end = data.index(0, at)
    return data[at:end].decode(), end + 1


def peer(parameters: dict[str, Any], slot: str, bootstrap: str, prefix: str, events: int) -> None:
    """The hand-written loop: streams ``slot`` (publication ``slot``) until ``events`` change
    events are produced, flushes, confirms the slot's position and returns."""
    import psycopg2
    import psycopg2.extras

    connection = psycopg2.connect(
        **parameters, connection_factory=psycopg2.extras.LogicalReplicationConnection
    )
    cursor = connection.cursor()
    cursor.start_replication(
        slot_name=slot,
        decode=False,
        options={"proto_version": "1", "publication_names": slot},
    )
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    decoder = PeerDecoder(prefix, parameters["dbname"])
    produced = 0
    topic = f"{prefix}.public.{TABLE}"
    while produced < events:
        message = cursor.read_message()
        if message is None:
            producer.poll(0)
            select.select([cursor], [], [], 1.0)
            continue
        event = decoder.feed(message.payload, message.data_start)
        if event is None:
            continue
        key, value = event
        while True:
            try:
                producer.produce(topic, value, key)
                break
            except BufferError:
                producer.poll(0.1)
        produced += 1
        if produced % 1000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0
    cursor.send_feedback(flush_lsn=decoder.last_commit, force=True)
    connection.close()


def alive(process: multiprocessing.process.BaseProcess) -> None:
    """Raises when the hand-written loop's process ended with an error."""
    if process.exitcode not in (None, 0):
        raise RuntimeError(f"the hand-written loop ended with {process.exitcode}")


def peer_run(
    database: Database, bootstrap: str, slots: Iterator[str], transactions: int, sizes: list[float]
) -> float:
    """One run of :func:`peer` in a process of its own over the next of ``slots``."""
    slot = next(slots)
    prefix = f"p{slot}"
    topic = new_topic_named(bootstrap, f"{prefix}.public.{TABLE}")
    reader = TopicReader(bootstrap, topic)
    process = multiprocessing.get_context("spawn").Process(
        target=peer, args=(database.parameters, slot, bootstrap, prefix, transactions)
    )
    process.start()
    try:
        times, size = reader.create_times(transactions, 600, partial(alive, process))
        process.join(120)
        if process.exitcode != 0:
            raise RuntimeError(f"the hand-written loop ended with {process.exitcode}")
    finally:
        if process.is_alive():
            process.terminate()
            process.join()
        reader.close()
        database.execute(f"SELECT pg_drop_replication_slot('{slot}')")
    sizes.append(size / transactions)
    return events_per_s(times)


# -- latency ---------------------------------------------------------------------------------
def latency_run(
    runtime: Connect, database: Database, bootstrap: str, rate_tps: int, seconds: int
) -> dict[str, Any]:
    """Commit → Kafka of each event at ``rate_tps`` transactions a second (module
    docstring)."""
    slot = f"latency_{uuid.uuid4().hex[:6]}"
    prefix = f"p{slot}"
    topic = new_topic_named(bootstrap, f"{prefix}.public.{TABLE}")
    reader = TopicReader(bootstrap, topic)
    runtime.add_connector(slot, connector_config(database, slot, prefix))
    try:
        deadline = time.monotonic() + 120
        while not (_running(runtime, slot) and database.slot_exists(slot)):
            if time.monotonic() > deadline:
                raise TimeoutError("the connector's slot was not created within 120 s")
            time.sleep(0.1)
        check = partial(not_failed, runtime, slot)
        # Warm-up, not counted: the first event (a Relation, the producer's first metadata).
        reader.latencies(Pgbench(database, "-R", str(rate_tps), "-T", "1"), 120, check)
        pgbench = Pgbench(database, "-R", str(rate_tps), "-T", str(seconds))
        seen = reader.latencies(pgbench, seconds + 120, check)
        load = pgbench.wait()
    finally:
        delete(runtime, slot)
        reader.close()
    # ts_ms and CreateTime are whole milliseconds (truncated): so is the commit time here.
    to_connector = [ts_ms - commit_us // 1000 for commit_us, ts_ms, _, _ in seen]
    to_created = [created - commit_us // 1000 for commit_us, _, created, _ in seen]
    to_received = [received * 1000 - commit_us / 1000 for commit_us, _, _, received in seen]
    return {
        "rate_tps": rate_tps,
        "seconds": seconds,
        "achieved_tps": load.tps,
        "events": len(seen),
        "ms": {
            "the event built (its ts_ms)": percentiles(to_connector),
            "the Kafka record created (its CreateTime)": percentiles(to_created),
            "a consumer received it": percentiles(to_received),
        },
    }


def _running(runtime: Connect, name: str) -> bool:
    states = [t.state for t in runtime.store.statuses.task_statuses(name)]
    return bool(states) and all(s is State.RUNNING for s in states)


# -- the benchmark ---------------------------------------------------------------------------
def measure(
    transactions: int, runs: int, rate_tps: int, latency_s: int, bootstrap: str | None = None
) -> dict[str, Any]:
    """Throughput of both variants, then the project's latency, in one run."""
    reason = unavailable_reason()
    if reason is not None:
        return {"transactions": transactions, "skipped": reason}
    with (
        broker(bootstrap) as servers,
        PostgresCluster() as cluster,
        benchmark_database(cluster) as database,
        tempfile.TemporaryDirectory() as folder,
    ):
        names = {v: [f"{v}_{i}_{uuid.uuid4().hex[:6]}" for i in range(runs)] for v in "ab"}
        for name in [*names["a"], *names["b"]]:
            database.slot_and_publication(name)
        written = Pgbench(database, "-t", str(-(-transactions // CLIENTS))).wait()
        runtime = Connect(
            "bench",
            {
                "bootstrap.servers": servers,
                "metadata.url": f"sqlite:///{Path(folder) / 'connect.db'}",
                "spark.master": "local[2]",
            },
        )
        runtime.start()
        runtime.spark.sparkContext.setLogLevel("ERROR")
        sizes: dict[str, list[float]] = {PROJECT: [], PEER: []}
        try:
            n = written.transactions
            variants: dict[str, Callable[[], float]] = {
                PROJECT: partial(
                    project_run, runtime, database, servers, iter(names["a"]), n, sizes[PROJECT]
                ),
                PEER: partial(peer_run, database, servers, iter(names["b"]), n, sizes[PEER]),
            }
            figures = interleaved(variants, runs)
            latency = latency_run(runtime, database, servers, rate_tps, latency_s)
        finally:
            runtime.stop()
    return {
        "transactions": n,
        "runs": runs,
        "written_tps": written.tps,
        "events_per_s": figures,
        "bytes_per_event": {k: statistics.median(v) for k, v in sizes.items()},
        "latency": latency,
    }


def table(results: dict[str, Any]) -> str:
    title = (
        f"PostgreSQL change capture (pgoutput): {results['transactions']:,} single-row "
        "transactions (half INSERT, half UPDATE) written first"
        + (f" (pgbench, {results['written_tps']:,.0f}/s)" if "written_tps" in results else "")
        + ", then captured"
    )
    if "skipped" in results:
        return f"{title}\n\nNot measured: {results['skipped']}"
    figures = results["events_per_s"]
    peer_median = figures[PEER]["median"]
    rows = [
        [
            name,
            rate(figure),
            f"{figure['median'] / peer_median:.2f}x",
            f"{results['bytes_per_event'][name]:,.0f}",
        ]
        for name, figure in figures.items()
    ]
    throughput = ratio_table(
        f"{title}; median of {results['runs']} runs (min to max)",
        ["variant", "events/s", "vs hand-written loop", "bytes/event (key + value)"],
        rows,
    )
    latency = results["latency"]
    latency_rows = [
        [span, f"{f['p50']:.0f}", f"{f['p99']:.0f}", f"{f['max']:.0f}"]
        for span, f in latency["ms"].items()
    ]
    latency_table = ratio_table(
        f"Commit → Kafka through the project at {latency['rate_tps']:,} transactions/s "
        f"(pgbench -R, {latency['achieved_tps']:,.0f} achieved) for {latency['seconds']} s: "
        f"{latency['events']:,} events, connector defaults (poll.interval.ms 500); ms",
        ["from the commit to", "p50", "p99", "max"],
        latency_rows,
    )
    return f"{throughput}\n\n{latency_table}"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=int, default=1000, help="transactions/s for latency")
    parser.add_argument("--latency-s", type=int, default=30)
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    results = measure(args.transactions, args.runs, args.rate, args.latency_s, args.bootstrap)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
