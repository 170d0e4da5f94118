"""Change capture from MariaDB's binlog: change events/s of ``MariaDbConnector`` (through the
runtime on Spark) beside a hand-written binlog loop, and its commit-to-Kafka latency at a fixed
rate of transactions.

Everything runs against a private MariaDB server started and stopped by the benchmark
(``tests_common.mariadb.MariaDbServer``: binlog on, ROW format, FULL row image and metadata;
never the shared server on 3306) and the embedded broker. The table, ``orders``: a bigint
auto-increment key, varchar, int, decimal(12,2) and timestamp(6) columns, ``PRELOADED`` rows
written before the measured log starts. Every transaction is one statement in autocommit: half
``INSERT`` a new row, half ``UPDATE`` a preloaded one (its ``updated_at`` set to ``NOW(6)``),
so that every transaction changes exactly one row: one change event each.

**Throughput** (events/s). The binlog is written first, then each variant captures all of it
from the binlog position (and GTID set) read just before the writes: ``--transactions``
transactions by ``mariadb-slap`` (``mysqlslap``; C: the writers cost the measured processes
next to nothing; 4 clients, a script of ``INSERT``, ``SET @id = …``, ``UPDATE … WHERE id =
@id``, ``@id`` random among the preloaded rows). Where neither is installed, 4 Python threads
with PyMySQL write the same transactions (:class:`Writers`), and the table says so.
Pre-written binlog is the fair and stable comparison: both variants read the same log at their
own full speed rather than at the writers' (whose rate on 2 shared cores moves from run to run
and would bound both), and no writer competes for the CPU while a variant runs. Each run reads
as a replica of its own (``server_id``), so the server sends the whole log to each.

* project: ``io.debezium.connector.mariadb.MariaDbConnector`` with the worker's defaults
  (``JsonConverter`` with schemas for key and value, as Debezium users commonly run it;
  ``poll.interval.ms``, ``max.batch.size``, ``offset.flush.interval.ms`` and the producer's
  ``linger.ms`` at their defaults), ``snapshot.mode=no_data``, created with the position
  before the writes as its initial offset (KIP-995's ``initial_offsets``: what a user stores
  with ``PATCH /connectors/{name}/offsets``), from which it streams; one task on a
  ``Connect`` runtime embedded with local Spark. A stored position rather than a connector
  started before the writes: the connector's start-up then overlaps nothing, and each run
  reads the same log;
* hand-written loop (:func:`peer`, in a process of its own as the task is in one of Spark's):
  the same binlog client (mysql-replication's ``BinLogStreamReader``, from the same GTID set),
  one Debezium-shaped JSON event per row (key and value with their schemas, serialized once
  per table; the payload with orjson; the same bytes within 0.1%), produced with confluent-kafka
  (``linger.ms=5``, ``poll(0)`` every 1,000 events, flush at the end).

Both are timed alike, from the topic: events/s between the first and the last record's
CreateTime (set by the producer when the record is handed to it), so that start-up (Spark,
the connection, the server's first dump) is not timed. A consumer in the benchmark's process
reads the topic meanwhile (to know when every event is there), for both.

**Latency** (milliseconds, project only). A new connector (the defaults above, from the
position at its creation) streams while 4 Python threads with PyMySQL write ``--rate``
transactions a second (Poisson arrivals at that mean rate, as pgbench's ``-R``; mariadb-slap
cannot pace) for ``--latency-s`` seconds, after one second of the same load (not counted) came
through. The binlog's event times are whole seconds, so each event's latency runs from its
statement's ``NOW(6)`` (the row's ``updated_at``, microseconds: the statement's start, which
the commit follows within the statement, well under a millisecond here; the figures are a
little high, never low) to

* the Kafka record's CreateTime: when the runtime handed it to its producer;
* the time a consumer in the benchmark's process (``assign``, ``fetch.wait.max.ms=10``)
  receives it: end to end, what a reader of the topic sees;

and the event's ``ts_ms`` (when the connector built it) splits the first into the time to
the connector and the time through the runtime. The database, the runtime and the
benchmark share one host clock.

Each throughput figure is the median of ``--runs`` runs with min and max; the variants run in
turn, one run each per round.

    python -m bench.mysql_cdc [--transactions N] [--runs R] [--rate TPS] [--latency-s S]
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import decimal
import itertools
import json
import multiprocessing
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import State
from bench.common import broker, interleaved, percentiles, rate, ratio_table
from bench.postgres_cdc import TopicReader, delete, events_per_s, new_topic_named, not_failed
from tests_common.mariadb import MariaDbServer, unavailable_reason

DATABASE = "cdc_bench"
TABLE = "orders"
PRELOADED = 10_000
CLIENTS = 4
PROJECT = "project: MariaDbConnector, JsonConverter with schemas, 1 task"
PEER = "hand-written loop: mysql-replication + orjson + confluent-kafka"
CONNECTOR_CLASS = "io.debezium.connector.mariadb.MariaDbConnector"
SLAP = next((p for p in ("mariadb-slap", "mysqlslap") if shutil.which(p)), None)
"""The C load generator, when one is installed."""
SERVER_SETTINGS: dict[str, str | None] = {
    "innodb-buffer-pool-size": "128M",
    "max-connections": "64",
}
"""Room for the table and its 200,000 writes in memory."""

SCHEMA = (
    f"CREATE DATABASE {DATABASE}",
    f"""CREATE TABLE {DATABASE}.{TABLE} (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        customer VARCHAR(64) NOT NULL,
        qty INT NOT NULL,
        amount DECIMAL(12, 2),
        updated_at TIMESTAMP(6) NOT NULL
    )""",
    f"""INSERT INTO {DATABASE}.{TABLE} (customer, qty, amount, updated_at)
        SELECT CONCAT('customer-', seq), 1, 9.99, NOW(6) FROM {DATABASE}.seq_1_to_{PRELOADED}""",
)
INSERT = (
    f"INSERT INTO {TABLE} (customer, qty, amount, updated_at) "
    "VALUES (CONCAT('customer-', {id}), 1, 9.99, NOW(6))"
)
UPDATE = (
    f"UPDATE {TABLE} SET qty = qty + 1, amount = amount + 0.01, updated_at = NOW(6) "
    "WHERE id = {id}"
)
SLAP_SCRIPT = ";".join(
    [
        INSERT.format(id=f"FLOOR(1 + RAND() * {PRELOADED})"),
        f"SET @id = FLOOR(1 + RAND() * {PRELOADED})",  # not in the binlog: no transaction
        UPDATE.format(id="@id"),
    ]
)
"""mariadb-slap's script: each client runs its statements in turn, each in autocommit (a
random id in ``UPDATE``'s ``WHERE`` would be drawn again for every row it scans)."""
SLAP_TRANSACTIONS = 2
"""Transactions among the script's 3 statements."""

_server_ids = itertools.count(5401)
"""The ``server_id`` each binlog reader (a connector or the loop) reads as: one per run."""


# -- the database and its load ---------------------------------------------------------------
@dataclass(frozen=True)
class Position:
    """A binlog position: where a reader starts to get every transaction after it."""

    file: str
    pos: int
    gtids: str
    """``@@gtid_binlog_pos``: the GTID set written before it."""

    def offset(self, prefix: str) -> list[dict[str, Any]]:
        """The connector's stored offset at this position (``initial_offsets``), Debezium's
        keys under its partition ``{"server": prefix}``."""
        offset = {"file": self.file, "pos": self.pos, "gtids": self.gtids}
        return [{"partition": {"server": prefix}, "offset": offset}]


@dataclass(frozen=True)
class Database:
    """The benchmark's database on the private server."""

    server: MariaDbServer
    name: str = DATABASE

    @property
    def settings(self) -> dict[str, Any]:
        """mysql-replication's ``connection_settings``."""
        return {
            "host": self.server.host,
            "port": self.server.port,
            "user": self.server.user,
            "passwd": self.server.password,
        }

    def position(self) -> Position:
        """Where the binlog ends now."""
        ((file, pos, *_),) = self.server.query("SHOW MASTER STATUS")
        ((gtids,),) = self.server.query("SELECT @@gtid_binlog_pos")
        return Position(file, int(pos), gtids)

    def transactions_since(self, start: Position) -> int:
        """Transactions committed since ``start`` (the server's GTID sequence: one domain,
        one server)."""
        return gtid_sequence(self.position().gtids) - gtid_sequence(start.gtids)


def gtid_sequence(gtids: str) -> int:
    """The sequence number of a one-domain MariaDB GTID set (``0-1-4003`` → 4003)."""
    return int(gtids.rsplit("-", 1)[1]) if gtids else 0


@dataclass(frozen=True)
class Load:
    """What the writers did."""

    transactions: int
    tps: float
    writer: str


def slap(database: Database, transactions: int) -> Load:
    """``transactions`` (rounded up to the clients) written by mariadb-slap, as fast as it
    goes; Python writers (:class:`Writers`) where it is not installed."""
    if SLAP is None:
        return Writers(database, None, transactions=transactions).wait()
    statements = -(-transactions // (SLAP_TRANSACTIONS * CLIENTS)) * 3 * CLIENTS
    start = database.position()
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        script.write(SLAP_SCRIPT)
        script.flush()
        command = [
            SLAP,
            *("--host", database.server.host, "--port", str(database.server.port)),
            *("--user", database.server.user, "--protocol", "tcp"),
            *(f"--create-schema={database.name}", "--no-drop", f"--concurrency={CLIENTS}"),
            *("--iterations=1", f"--number-of-queries={statements}"),
            *(f"--query={script.name}", "--delimiter=;"),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    seconds = re.search(r"Average number of seconds to run all queries: ([\d.]+)", done.stdout)
    if done.returncode != 0 or seconds is None:
        raise RuntimeError(f"{SLAP} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    written = database.transactions_since(start)
    return Load(written, written / max(float(seconds.group(1)), 1e-3), f"{SLAP}, {CLIENTS} clients")


class Writers:
    """``CLIENTS`` Python threads, each with a PyMySQL connection in autocommit, writing one
    statement per transaction (``INSERT`` or ``UPDATE`` of a random preloaded row, half each):
    at ``rate_tps`` in all (Poisson arrivals, each thread a quarter: a late thread catches up
    at once, as pgbench ``-R`` does) for ``seconds``, or, with ``rate_tps`` None, as fast as
    they go until ``transactions`` are written. In the background from creation."""

    def __init__(
        self,
        database: Database,
        rate_tps: float | None,
        *,
        seconds: float = 0,
        transactions: int = 0,
    ) -> None:
        self.database = database
        self.rate_tps = rate_tps
        self.seconds = seconds
        self.left = transactions
        self.committed = 0
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.ended: float | None = None
        self.threads = [
            threading.Thread(target=self._write, args=(i,), daemon=True) for i in range(CLIENTS)
        ]
        for thread in self.threads:
            thread.start()
        self.load: Load | None = None

    def _next(self) -> bool:
        """Whether a thread writes another transaction (unpaced: one of those left)."""
        if self.rate_tps is not None:
            return True
        with self.lock:
            self.left -= 1
            return self.left >= 0

    def _write(self, index: int) -> None:
        chosen = random.Random(index)
        try:
            with self.database.server.connect(self.database.name) as connection:
                cursor = connection.cursor()
                due = time.monotonic()
                end = due + self.seconds
                while self._next():
                    if self.rate_tps is not None:
                        due += chosen.expovariate(self.rate_tps / CLIENTS)
                        if due >= end:
                            break
                        wait = due - time.monotonic()
                        if wait > 0:
                            time.sleep(wait)  # the arrival's time: pacing, not a wait on state
                    row = chosen.randint(1, PRELOADED)
                    cursor.execute((INSERT if chosen.random() < 0.5 else UPDATE).format(id=row))
                    with self.lock:
                        self.committed += 1
        except BaseException as e:
            with self.lock:
                self.errors.append(e)

    def result(self) -> Load | None:
        """What they did once every thread ended (raises when one failed), None before."""
        if self.load is None and not any(t.is_alive() for t in self.threads):
            if self.errors:
                raise RuntimeError(f"a writer failed: {self.errors[0]!r}") from self.errors[0]
            seconds = time.monotonic() - self.started
            self.load = Load(
                self.committed, self.committed / seconds, f"Python, PyMySQL, {CLIENTS} threads"
            )
        return self.load

    def wait(self) -> Load:
        for thread in self.threads:
            thread.join()
        load = self.result()
        assert load is not None
        return load

    def all_seen(self, seen: int) -> bool:
        """Whether they ended and ``seen`` events are all of their transactions."""
        load = self.result()
        return load is not None and seen >= load.transactions


# -- reading the topic -----------------------------------------------------------------------
def zoned_us(text: str) -> int:
    """A ZonedTimestamp (``2026-01-02T03:04:05.123456Z``) in µs since the epoch."""
    instant = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(instant.timestamp()) * 1_000_000 + instant.microsecond


class ChangeReader(TopicReader):
    """The topic reader, with the latencies of this benchmark's events."""

    def commit_latencies(
        self, load: Writers, timeout_s: float, check: Callable[[], None]
    ) -> list[tuple[int, int, int, float]]:
        """``(statement µs, event ts_ms, CreateTime ms, received s)`` of the next records,
        read while ``load`` runs until there is one per transaction it made, each received
        time taken as ``poll`` returns the record; the statement's time is the row's
        ``updated_at`` (``NOW(6)``); ``check`` raises when the connector failed (called when
        no record came)."""
        seen: list[tuple[int, int, int, float]] = []
        deadline = time.monotonic() + timeout_s
        while not load.all_seen(len(seen)):
            message = self.consumer.poll(0.1)
            received = time.time()
            if message is not None and message.error() is None:
                payload = orjson.loads(message.value() or b"null")["payload"]
                written = zoned_us(payload["after"]["updated_at"])
                seen.append((written, payload["ts_ms"], message.timestamp()[1], received))
            else:
                check()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(seen)} records after {timeout_s} s")
        return seen


# -- the project -----------------------------------------------------------------------------
def connector_config(database: Database, prefix: str) -> dict[str, str]:
    """The connector as a Debezium user configures it; everything else at its default."""
    return {
        "connector.class": CONNECTOR_CLASS,
        **database.server.connector_config(),
        "database.server.id": str(next(_server_ids)),
        "topic.prefix": prefix,
        "database.include.list": database.name,
        "table.include.list": f"{database.name}.{TABLE}",
        "snapshot.mode": "no_data",
    }


def project_run(
    runtime: Connect,
    database: Database,
    bootstrap: str,
    start: Position,
    transactions: int,
    sizes: list[float],
) -> float:
    """One run of the connector over the log from ``start``."""
    name = f"a{uuid.uuid4().hex[:8]}"
    topic = new_topic_named(bootstrap, f"{name}.{database.name}.{TABLE}")
    reader = ChangeReader(bootstrap, topic)
    runtime.add_connector(
        name, connector_config(database, name), initial_offsets=start.offset(name)
    )
    try:
        times, size = reader.create_times(transactions, 600, partial(not_failed, runtime, name))
    finally:
        delete(runtime, name)
        reader.close()
    sizes.append(size / transactions)
    return events_per_s(times)


# -- the hand-written loop -------------------------------------------------------------------
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
        {"type": "string", "optional": True, "field": "table"},
        {"type": "int64", "optional": False, "field": "server_id"},
        {"type": "string", "optional": True, "field": "gtid"},
        {"type": "string", "optional": False, "field": "file"},
        {"type": "int64", "optional": False, "field": "pos"},
        {"type": "int32", "optional": False, "field": "row"},
        {"type": "int64", "optional": True, "field": "thread"},
        {"type": "string", "optional": True, "field": "query"},
    ],
    "optional": False,
    "name": "io.debezium.connector.mariadb.Source",
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
# mysql-replication's column types (pymysqlreplication.constants.FIELD_TYPE)
LONG, LONGLONG, VARCHAR, NEWDECIMAL, TIMESTAMP2 = 3, 8, 15, 246, 17


def _decimal(value: decimal.Decimal | None, scale: int) -> str | None:
    """Debezium's precise decimal in JsonConverter: the unscaled value's two's-complement
    bytes, base64."""
    if value is None:
        return None
    unscaled = int(value.scaleb(scale))
    size = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


def _zoned(value: dt.datetime | None) -> str | None:
    """A TIMESTAMP (mysql-replication: naive UTC) as Debezium's ZonedTimestamp."""
    return None if value is None else value.isoformat() + "Z"


def _same(value: Any) -> Any:
    return value


def _column(column: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    """A binlog column's Connect schema and its value's conversion, as Debezium has them (the
    types of this benchmark's table; anything else as a string)."""
    if column.type in (LONG, LONGLONG) and not column.unsigned:
        return {"type": "int32" if column.type == LONG else "int64"}, _same
    if column.type == NEWDECIMAL:
        parameters = {
            "scale": str(column.decimals),
            "connect.decimal.precision": str(column.precision),
        }
        schema = {
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "version": 1,
            "parameters": parameters,
        }
        return schema, partial(_decimal, scale=column.decimals)
    if column.type == TIMESTAMP2:
        return {"type": "string", "name": "io.debezium.time.ZonedTimestamp", "version": 1}, _zoned
    return {"type": "string"}, lambda v: None if v is None else str(v)


@dataclass
class PeerTable:
    """What the loop keeps of a table: its columns' conversions, key and serialized schemas."""

    columns: list[tuple[str, Callable[[Any], Any]]]
    key: list[str]
    key_schema: bytes
    value_schema: bytes


@dataclass
class PeerEvents:
    """Each row of a rows event becomes a Debezium-shaped ``(key, value)`` JSON pair (schema
    and payload); the table's schemas are made at its first rows event."""

    prefix: str
    nullable: dict[int, list[bool]] = field(default_factory=dict)
    tables: dict[tuple[str, str], PeerTable] = field(default_factory=dict)

    def table_map(self, event: Any) -> None:
        bits = event.null_bitmask
        self.nullable[event.table_id] = [
            bool(bits[i // 8] & (1 << (i % 8))) for i in range(event.column_count)
        ]

    def table(self, event: Any) -> PeerTable:
        found = self.tables.get((event.schema, event.table))
        if found is not None:
            return found
        topic = f"{self.prefix}.{event.schema}.{event.table}"
        nullable = self.nullable[event.table_id]
        fields, columns = [], []
        for column, optional in zip(event.columns, nullable, strict=True):
            schema, convert = _column(column)
            kind, *rest = schema.items()  # Connect's order: type, optional, the rest
            fields.append(
                {**dict([kind]), "optional": optional, **dict(rest), "field": column.name}
            )
            columns.append((column.name, convert))
        primary = event.primary_key
        key = [primary] if isinstance(primary, str) else list(primary)
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
            "fields": [{**f, "optional": False} for f in fields if f["field"] in key],
            "optional": False,
            "name": f"{topic}.Key",
        }
        found = self.tables[event.schema, event.table] = PeerTable(
            columns, key, orjson.dumps(key_schema), orjson.dumps(envelope)
        )
        return found

    def rows(
        self, event: Any, op: str, file: str, begin: int, gtid: str | None
    ) -> Iterator[tuple[bytes, bytes]]:
        table = self.table(event)
        ts_ms = event.timestamp * 1000
        for index, row in enumerate(event.rows):
            if op == "u":
                before = self._image(table, row["before_values"])
                after: dict[str, Any] | None = self._image(table, row["after_values"])
            elif op == "c":
                before, after = None, self._image(table, row["values"])
            else:
                before, after = self._image(table, row["values"]), None
            image = after if after is not None else before
            assert image is not None
            now_ms = int(time.time() * 1000)
            payload = {
                "before": before,
                "after": after,
                "source": {
                    "version": "peer",
                    "connector": "mariadb",
                    "name": self.prefix,
                    "ts_ms": ts_ms,
                    "snapshot": "false",
                    "db": event.schema,
                    "sequence": None,
                    "ts_us": ts_ms * 1000,
                    "ts_ns": ts_ms * 1_000_000,
                    "table": event.table,
                    "server_id": event.packet.server_id,
                    "gtid": gtid,
                    "file": file,
                    "pos": begin,
                    "row": index,
                    "thread": None,
                    "query": None,
                },
                "transaction": None,
                "op": op,
                "ts_ms": now_ms,
                "ts_us": now_ms * 1000,
                "ts_ns": now_ms * 1_000_000,
            }
            key = {k: image[k] for k in table.key}
            yield (
                b'{"schema":' + table.key_schema + b',"payload":' + orjson.dumps(key) + b"}",
                b'{"schema":' + table.value_schema + b',"payload":' + orjson.dumps(payload) + b"}",
            )

    @staticmethod
    def _image(table: PeerTable, values: dict[str, Any]) -> dict[str, Any]:
        return {name: convert(values[name]) for name, convert in table.columns}


def peer(
    settings: dict[str, Any], server_id: int, gtids: str, bootstrap: str, prefix: str, events: int
) -> None:
    """The hand-written loop: reads the binlog after ``gtids`` as replica ``server_id`` until
    ``events`` change events are produced, flushes and returns."""
    from confluent_kafka import Producer
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import MariadbGtidEvent, RotateEvent, XidEvent
    from pymysqlreplication.row_event import (
        DeleteRowsEvent,
        TableMapEvent,
        UpdateRowsEvent,
        WriteRowsEvent,
    )

    ops = {WriteRowsEvent: "c", UpdateRowsEvent: "u", DeleteRowsEvent: "d"}
    stream = BinLogStreamReader(
        connection_settings=settings,
        server_id=server_id,
        resume_stream=True,
        blocking=True,
        auto_position=gtids,
        is_mariadb=True,
        only_events=[RotateEvent, MariadbGtidEvent, XidEvent, TableMapEvent, *ops],
    )
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    decoder = PeerEvents(prefix)
    produced = 0
    file, begin, gtid = "", 0, None
    for event in stream:
        kind = type(event)
        if kind in ops:
            topic = f"{prefix}.{event.schema}.{event.table}"
            for key, value in decoder.rows(event, ops[kind], file, begin, gtid):
                while True:
                    try:
                        producer.produce(topic, value, key)
                        break
                    except BufferError:
                        producer.poll(0.1)
                produced += 1
                if produced % 1000 == 0:
                    producer.poll(0)
            if produced >= events:
                break
        elif kind is MariadbGtidEvent:
            begin, gtid = event.packet.log_pos - event.packet.event_size, event.gtid
        elif kind is TableMapEvent:
            decoder.table_map(event)
        elif kind is RotateEvent:
            file = event.next_binlog
    stream.close()
    assert producer.flush(120) == 0


def alive(process: multiprocessing.process.BaseProcess) -> None:
    """Raises when the hand-written loop's process ended with an error."""
    if process.exitcode not in (None, 0):
        raise RuntimeError(f"the hand-written loop ended with {process.exitcode}")


def peer_run(
    database: Database, bootstrap: str, start: Position, transactions: int, sizes: list[float]
) -> float:
    """One run of :func:`peer` in a process of its own over the log from ``start``."""
    prefix = f"b{uuid.uuid4().hex[:8]}"
    topic = new_topic_named(bootstrap, f"{prefix}.{database.name}.{TABLE}")
    reader = ChangeReader(bootstrap, topic)
    process = multiprocessing.get_context("spawn").Process(
        target=peer,
        args=(database.settings, next(_server_ids), start.gtids, bootstrap, prefix, transactions),
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
    sizes.append(size / transactions)
    return events_per_s(times)


# -- latency ---------------------------------------------------------------------------------
def latency_run(
    runtime: Connect, database: Database, bootstrap: str, rate_tps: int, seconds: int
) -> dict[str, Any]:
    """Commit → Kafka of each event at ``rate_tps`` transactions a second (module
    docstring)."""
    name = f"latency{uuid.uuid4().hex[:6]}"
    topic = new_topic_named(bootstrap, f"{name}.{database.name}.{TABLE}")
    reader = ChangeReader(bootstrap, topic)
    start = database.position()
    runtime.add_connector(
        name, connector_config(database, name), initial_offsets=start.offset(name)
    )
    try:
        deadline = time.monotonic() + 120
        while not _running(runtime, name):
            if time.monotonic() > deadline:
                raise TimeoutError("the connector's task was not RUNNING within 120 s")
            time.sleep(0.1)
        check = partial(not_failed, runtime, name)
        # Warm-up, not counted: the connection, the table's first rows event, the producer's
        # first metadata.
        reader.commit_latencies(Writers(database, rate_tps, seconds=1), 120, check)
        writers = Writers(database, rate_tps, seconds=seconds)
        seen = reader.commit_latencies(writers, seconds + 120, check)
        load = writers.wait()
    finally:
        delete(runtime, name)
        reader.close()
    # ts_ms and CreateTime are whole milliseconds (truncated): so is the statement's time.
    to_connector = [ts_ms - written_us // 1000 for written_us, ts_ms, _, _ in seen]
    to_created = [created - written_us // 1000 for written_us, _, created, _ in seen]
    to_received = [received * 1000 - written_us / 1000 for written_us, _, _, received in seen]
    return {
        "rate_tps": rate_tps,
        "seconds": seconds,
        "achieved_tps": load.tps,
        "writer": load.writer,
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
        MariaDbServer(settings=SERVER_SETTINGS) as server,
        tempfile.TemporaryDirectory() as folder,
    ):
        server.execute(*SCHEMA[:2])
        server.execute(SCHEMA[2], database=DATABASE)  # the sequence table is the database's
        database = Database(server)
        start = database.position()
        written = slap(database, transactions)
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
                PROJECT: partial(project_run, runtime, database, servers, start, n, sizes[PROJECT]),
                PEER: partial(peer_run, database, servers, start, n, sizes[PEER]),
            }
            figures = interleaved(variants, runs)
            latency = latency_run(runtime, database, servers, rate_tps, latency_s)
        finally:
            runtime.stop()
    return {
        "transactions": n,
        "runs": runs,
        "written_tps": written.tps,
        "writer": written.writer,
        "events_per_s": figures,
        "bytes_per_event": {k: statistics.median(v) for k, v in sizes.items()},
        "latency": latency,
    }


def table(results: dict[str, Any]) -> str:
    title = (
        f"MariaDB change capture (binlog): {results['transactions']:,} single-row "
        "transactions (half INSERT, half UPDATE) written first"
        + (
            f" ({results['writer']}, {results['written_tps']:,.0f}/s)"
            if "written_tps" in results
            else ""
        )
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
        f"({latency['writer']}, Poisson arrivals, {latency['achieved_tps']:,.0f} achieved) "
        f"for {latency['seconds']} s: {latency['events']:,} events, connector defaults "
        "(poll.interval.ms 500); from each statement's NOW(6), ms",
        ["from the statement to", "p50", "p99", "max"],
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
