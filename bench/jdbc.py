"""JDBC connectors on PostgreSQL: rows/s of the JDBC source and sink beside hand-written peers.

Runs in one process against the local PostgreSQL (a fresh database, dropped after) and the
embedded broker:

* source: ``JdbcSourceConnector`` (incrementing mode) copies a table into a topic, timed
  from the first record in the topic to the last; the peer reads the table with SQLAlchemy in
  batches and produces, with confluent-kafka, the bytes the connector writes (the
  ``JsonConverter`` envelope, built with orjson: :func:`jdbc_envelope`), timed from its first
  query to its final flush.
* sink: ``JdbcSinkConnector`` (insert mode) writes a topic of schema'd JSON records into a
  table, timed from the first row to the last; the peer consumes with confluent-kafka and
  inserts each batch in a transaction, timed from its first record to its last commit; and
  Quix Streams' ``PostgreSQLSink`` writes the same rows (``bench/quix_peer.py``), timed
  from its first record to the end of its last write.

Batches are 10,000 rows on both sides. Start-up (the runtime, group joins) is not timed.

The peers do less (no offsets, no delivery guarantees): the ratio says what the guarantees
and the runtime cost.

    python -m bench.jdbc [--rows N] [--postgres-url URL]
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    func,
    select,
    text,
)
from sqlalchemy.engine import Engine, make_url

from airflow_provider_connect.runtime import Connect
from bench.common import ratio_table
from bench.quix import quix_records_per_s
from tests_common.broker import EmbeddedBroker

BATCH = 10_000

EPOCH = dt.datetime(1970, 1, 1)
MILLISECOND = dt.timedelta(milliseconds=1)
JDBC_SCHEMA = orjson.dumps(
    {
        "type": "struct",
        "fields": [
            {"type": "int64", "optional": False, "field": "id"},
            {"type": "string", "optional": False, "field": "customer"},
            {
                "type": "bytes",
                "optional": False,
                "name": "org.apache.kafka.connect.data.Decimal",
                "version": 1,
                "parameters": {"scale": "2", "connect.decimal.precision": "12"},
                "field": "amount",
            },
            {
                "type": "int64",
                "optional": False,
                "name": "org.apache.kafka.connect.data.Timestamp",
                "version": 1,
                "field": "at",
            },
        ],
        "optional": False,
        "name": "orders",
    }
)
JDBC_PREFIX = b'{"schema":' + JDBC_SCHEMA + b',"payload":'
"""What JsonConverter writes before the payload of a row of ``bench.jdbc.orders``."""


def source_config(url: str, prefix: str) -> dict[str, str]:
    """The JDBC source of the benchmarks: the ``orders`` table, incrementing by id, into
    ``<prefix>orders``, decimals written as numerals."""
    return {
        "connector.class": "JdbcSourceConnector",
        "connection.url": url,
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "table.whitelist": "orders",
        "topic.prefix": prefix,
        "batch.max.rows": str(BATCH),
        "value.converter": "JsonConverter",
        "value.converter.decimal.format": "NUMERIC",
    }


def jdbc_envelope(i: int, customer: str, amount: decimal.Decimal, at: dt.datetime) -> bytes:
    """What ``JdbcSourceConnector`` with ``JsonConverter`` (``decimal.format`` NUMERIC)
    writes for a row of :func:`orders`: the envelope's schema, then the row's payload."""
    payload = {
        "id": i,
        "customer": customer,
        "amount": orjson.Fragment(str(amount)),
        "at": (at - EPOCH) // MILLISECOND,
    }
    return JDBC_PREFIX + orjson.dumps(payload) + b"}"


def orders(name: str) -> Table:
    return Table(
        name,
        MetaData(),
        Column("id", BigInteger, primary_key=True, autoincrement=False),
        Column("customer", String(40), nullable=False),
        Column("amount", Numeric(12, 2), nullable=False),
        Column("at", DateTime, nullable=False),
    )


@contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    name = f"connect_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def timed_until(count: Callable[[], int], total: int, timeout_s: float = 600) -> float:
    """Seconds from the first unit counted to the last."""
    deadline = time.monotonic() + timeout_s
    first = None
    while True:
        done = count()
        now = time.monotonic()
        if done and first is None:
            first = now
        if done >= total:
            return now - (first or now)
        if now > deadline:
            raise TimeoutError(f"{done} of {total} after {timeout_s}s")
        time.sleep(0.05)


class TopicCounter:
    """Counts a topic's records as they arrive; made (its partitions assigned) before
    anything writes to the topic, so that it sees the first record when it comes."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"count-{uuid.uuid4().hex}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,  # the test broker assigns after half of it
            }
        )
        self.consumer.subscribe([topic])
        self.seen = 0
        deadline = time.monotonic() + 60
        while not self.consumer.assignment():
            self.seen += sum(1 for m in self.consumer.consume(100, 0.1) if m.error() is None)
            if time.monotonic() > deadline:
                raise TimeoutError(f"no partition of {topic} assigned after 60 s")

    def __call__(self) -> int:
        self.seen += sum(1 for m in self.consumer.consume(10_000, 0.05) if m.error() is None)
        return self.seen


def table_counter(engine: Engine, table: Table) -> Callable[[], int]:
    def count() -> int:
        with engine.connect() as c:
            return c.execute(select(func.count()).select_from(table)).scalar_one()

    return count


def fill(engine: Engine, table: Table, rows: int) -> None:
    table.create(engine)
    at = dt.datetime(2026, 11, 1)
    with engine.begin() as c:
        for start in range(0, rows, BATCH):
            c.execute(
                table.insert(),
                [
                    {
                        "id": i,
                        "customer": f"c-{i % 997}",
                        "amount": decimal.Decimal(i) / 4,
                        "at": at,
                    }
                    for i in range(start + 1, min(start + BATCH, rows) + 1)
                ],
            )


def new_topic(bootstrap: str, name: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def peer_source(engine: Engine, table: Table, bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    last = 0
    with engine.connect() as c:
        while True:
            query = select(table).where(table.c.id > last).order_by(table.c.id).limit(BATCH)
            rows = c.execute(query).all()
            if not rows:
                break
            for row in rows:
                producer.produce(topic, jdbc_envelope(*row))
            producer.poll(0)
            last = rows[-1][0]
    producer.flush(60)


def peer_sink(engine: Engine, table: Table, bootstrap: str, topic: str, rows: int) -> float:
    """Seconds from the first record consumed to the last row committed."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"peer-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,  # as the project's consumers (start-up is not timed)
        }
    )
    consumer.subscribe([topic])
    written, first = 0, None
    while written < rows:
        batch = [m for m in consumer.consume(BATCH, 0.5) if m.error() is None]
        if batch:
            first = first or time.monotonic()
            values = [orjson.loads(m.value())["payload"] for m in batch]
            for v in values:
                v["at"] = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=v["at"])
            with engine.begin() as c:
                c.execute(table.insert(), values)
            written += len(values)
    consumer.close()
    return time.monotonic() - (first or time.monotonic())


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--postgres-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    args = parser.parse_args(argv)
    n = args.rows
    with EmbeddedBroker() as broker, fresh_database(args.postgres_url) as url:
        bootstrap = broker.bootstrap_servers
        engine = create_engine(url)
        source_table = orders("orders")
        fill(engine, source_table, n)
        runtime = Connect(
            "bench",
            {
                "bootstrap.servers": bootstrap,
                "metadata.url": f"sqlite:////tmp/connect-bench-{uuid.uuid4().hex[:8]}.db",
                "consumer.session.timeout.ms": "6000",
                "offset.flush.interval.ms": "1000",
                "spark.master": "local[4]",
            },
        )
        runtime.start()
        runtime.spark.sparkContext.setLogLevel("ERROR")
        try:
            prefix = f"bench-{uuid.uuid4().hex[:8]}-"
            topic = new_topic(bootstrap, prefix + "orders")
            counter = TopicCounter(bootstrap, topic)
            runtime.add_connector("bench-source", source_config(url, prefix))
            source_s = timed_until(counter, n)
            counter.consumer.close()

            started = time.monotonic()
            peer_source(engine, source_table, bootstrap, new_topic(bootstrap, prefix + "peer"))
            peer_source_s = time.monotonic() - started

            sink_table = orders("written")
            sink_table.create(engine)
            runtime.add_connector(
                "bench-sink",
                {
                    "connector.class": "JdbcSinkConnector",
                    "connection.url": url,
                    "topics": topic,
                    "table.name.format": "written",
                    "batch.size": str(BATCH),
                    "consumer.override.max.poll.records": str(BATCH),
                    "value.converter": "JsonConverter",
                    "value.converter.decimal.format": "NUMERIC",
                },
            )
            sink_s = timed_until(table_counter(engine, sink_table), n)

            peer_table = orders("peer_written")
            peer_table.create(engine)
            peer_sink_s = peer_sink(engine, peer_table, bootstrap, topic, n)
            quix = quix_postgres_rows_per_s(bootstrap, topic, n, url, orders("quix_written"))
            if quix:
                assert table_counter(engine, orders("quix_written"))() == n
        finally:
            runtime.delete_connector("bench-source")
            runtime.delete_connector("bench-sink")
            runtime.stop()
            engine.dispose()
    results = {
        "rows": n,
        "rows_per_s": {
            "JDBC source": {"project": n / max(source_s, 1e-3), "peer": n / peer_source_s},
            "JDBC sink": {
                "project": n / max(sink_s, 1e-3),
                "peer": n / peer_sink_s,
                "quix": quix or None,
            },
        },
    }
    print(table(results))
    return results


def quix_postgres_rows_per_s(bootstrap: str, topic: str, rows: int, url: str, into: Table) -> float:
    """Quix Streams' PostgreSQLSink writing the topic into ``into`` (which it creates)."""
    target = make_url(url)
    with tempfile.TemporaryDirectory() as state:
        return quix_records_per_s(
            "postgres",
            bootstrap,
            topic,
            rows,
            state,
            target.host,
            target.port,
            target.database,
            target.username,
            into.name,
        )


def table(results: dict[str, Any]) -> str:
    rows = []
    for name, f in results["rows_per_s"].items():
        quix = f.get("quix")
        rows.append(
            [
                name,
                f"{f['project']:,.0f}",
                f"{f['peer']:,.0f}",
                f"{f['project'] / f['peer']:.2f}x",
                f"{quix:,.0f}" if quix else "no equivalent" if "quix" not in f else "not measured",
                f"{f['project'] / quix:.2f}x" if quix else "",
            ]
        )
    return ratio_table(
        f"JDBC connectors, {results['rows']:,} rows of 4 columns, PostgreSQL, one run",
        [
            "path",
            "project rows/s",
            "hand-written peer rows/s",
            "vs hand-written",
            "Quix Streams rows/s",
            "vs Quix Streams",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
