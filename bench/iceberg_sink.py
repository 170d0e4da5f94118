"""Iceberg sink: records of a topic into an Apache Iceberg table, the project beside a
hand-written loop; and the project's commit latency (produce → visible in a scan) at a fixed
rate.

The catalog: pyiceberg's ``SqlCatalog`` on a SQLite file, its warehouse on local files, in a
temporary directory; a new table per run.

**Throughput** (records/s). The same topic each time, in one run: ``--records`` records in
one partition, each value Kafka Connect's JSON envelope of an order struct (five fields:
long, two strings, double, string; ~100 bytes of payload; ``bench.s3_sink.order``). One
partition, so that a commit of the project and an append of the loop each add one data
file (the project writes a file per topic partition per commit): the loop appends every
``N`` = a tenth of ``--records`` rows, and the project's commit interval is set so that a
commit of it holds about as many rows (the table reports the rows per commit it measured).

* project: ``org.apache.iceberg.connect.IcebergSinkConnector`` with ``JsonConverter``
  (schemas on), one task, ``iceberg.tables.auto-create-enabled=true`` (the table made from
  the records' Connect schema), ``iceberg.control.commit.interval-ms`` ``--interval-ms``:
  records/s between its first and its last commit before the end, read from the table
  (``bench.common.connector_run``, the share of the records its current snapshot holds);
* hand-written loop: a confluent-kafka consumer (``fetch.queue.backoff.ms=0``) that decodes
  each envelope's payload with orjson and, every ``N`` rows, makes a pyarrow table of them
  and ``table.append``\\ s it with pyiceberg (into a table created before, of the same
  schema): timed from its first record to the end of its last append;
* Quix Streams: not measured. Its community ``IcebergSink`` (3.28) writes only through AWS
  Glue (:data:`QUIX_NOT_MEASURED`).

A figure: the median of ``--runs`` runs, with min and max, the two variants taking turns (one
run each a round).

**Latency** (milliseconds, project only). A new connector (commit interval
``--latency-interval-ms``) on a new topic; once a first record is visible in its table, a
producer sends ``--rate`` records a second, on schedule, for ``--latency-s`` seconds, each
carrying the wall-clock time it was handed to the producer (``produced``, µs). Meanwhile the
benchmark polls the catalog every 10 ms; when the table's metadata pointer moved, it notes
the time and scans the rows the new snapshot added. A record's latency runs from its
``produced`` to the time its snapshot was first seen: p50, p99 and the largest. Producer,
runtime and poller share one host clock.

    python -m bench.iceberg_sink [--records N] [--runs R] [--interval-ms MS]
        [--rate R] [--latency-s S] [--latency-interval-ms MS] [--json PATH]
"""

from __future__ import annotations

import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
from confluent_kafka import Producer
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.expressions import GreaterThan
from pyiceberg.table import Table

from airflow_provider_connect.runtime import Connect
from bench.common import (
    against_peers,
    broker,
    command_line,
    connector_run,
    interleaved,
    new_topic,
    percentiles,
    ratio_table,
    struct_envelope,
    struct_schema,
)
from bench.s3_sink import ARROW, order
from bench.sink_path import fill, peer_consumer, sink_worker

CLASS = "org.apache.iceberg.connect.IcebergSinkConnector"
CATALOG = "iceberg"
"""The catalog's name: the sink's default (``iceberg.catalog``), a column of the SQL
catalog's rows."""
NAMESPACE = "bench"
APPENDS = 10
"""Appends of the hand-written loop in a run: it appends every ``--records / APPENDS`` rows."""
QUIX_NOT_MEASURED = (
    "Quix Streams 3.28's `IcebergSink` (`quixstreams/sinks/community/iceberg.py`) cannot "
    "write to a local SQL catalog: `data_catalog_spec` takes only `aws_glue` (any other "
    "value raises `ValueError`), and the sink builds pyiceberg's `GlueCatalog` itself from "
    "`AWSIcebergConfig` (region and keys, an `s3://` location), with no parameter to pass "
    "another catalog"
)
LATENCY_SCHEMA = struct_schema("event", {"id": "int64", "produced": "int64"})
POLL_S = 0.01
"""How often the latency poller checks the catalog's pointer."""


class Warehouse:
    """The benchmark's catalog: ``SqlCatalog`` on SQLite, files in ``folder``."""

    def __init__(self, folder: Path) -> None:
        (folder / "warehouse").mkdir()
        self.database = folder / "catalog.db"
        self.props = {
            "type": "sql",
            "uri": f"sqlite:///{self.database}",
            "warehouse": f"file://{folder / 'warehouse'}",
        }
        self.catalog: Catalog = load_catalog(CATALOG, **self.props)
        self.catalog.create_namespace_if_not_exists(NAMESPACE)

    def new_table_name(self) -> str:
        return f"{NAMESPACE}.t_{uuid.uuid4().hex[:8]}"

    def sink(self, topic: str, table: str, interval_ms: int) -> dict[str, str]:
        """The project's connector config: ``topic`` into ``table``, made on the way."""
        return {
            "connector.class": CLASS,
            "topics": topic,
            "tasks.max": "1",
            "value.converter": "JsonConverter",
            "iceberg.tables": table,
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.commit.interval-ms": str(interval_ms),
            **{f"iceberg.catalog.{k}": v for k, v in self.props.items()},
        }

    def watch(self, table: str) -> TableWatch:
        return TableWatch(self, table)


class TableWatch:
    """A table of the :class:`Warehouse`, loaded again only when the catalog's pointer to its
    metadata moved: a check is one query of the SQLite file (the ``iceberg_tables`` row
    that ``SqlCatalog`` compares and swaps on commit, some 20 µs) where a load costs about
    1 ms, and the benchmark checks every 10 to 20 ms beside the process it measures."""

    def __init__(self, warehouse: Warehouse, table: str) -> None:
        self.warehouse = warehouse
        self.namespace, self.name = table.split(".")
        self.location: str | None = None
        self.connection = sqlite3.connect(warehouse.database, check_same_thread=False)

    def changed(self) -> Table | None:
        """The table as now committed when its pointer moved since the last call that
        returned one; None otherwise (not created yet, or no new commit)."""
        row = self.connection.execute(
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            (CATALOG, self.namespace, self.name),
        ).fetchone()
        if row is None or row[0] == self.location:
            return None
        self.location = row[0]
        return self.warehouse.catalog.load_table(f"{self.namespace}.{self.name}")

    def close(self) -> None:
        self.connection.close()


# -- throughput ------------------------------------------------------------------------------
def table_progress(watch: TableWatch, records: int) -> Callable[[Any, str], float]:
    """The share of ``records`` the table's current snapshot holds (its ``total-records``)."""
    share = 0.0

    def progress(_store: Any, _name: str) -> float:
        nonlocal share
        table = watch.changed()
        snapshot = table.current_snapshot() if table is not None else None
        if snapshot is not None and snapshot.summary is not None:
            share = int(snapshot.summary["total-records"]) / records
        return share

    return progress


def project(
    bootstrap: str,
    warehouse: Warehouse,
    folder: Path,
    topic: str,
    records: int,
    interval_ms: int,
    rows_per_commit: list[float],
) -> float:
    """Appends to ``rows_per_commit`` the run's mean rows per snapshot."""
    name = warehouse.new_table_name()
    watch = warehouse.watch(name)
    try:
        run = connector_run(
            sink_worker(bootstrap),
            folder,
            warehouse.sink(topic, name, interval_ms),
            records,
            table_progress(watch, records),
        )
    finally:
        watch.close()
    snapshots = warehouse.catalog.load_table(name).snapshots()
    rows_per_commit.append(records / len(snapshots))
    return run.records_per_s


def hand_loop(bootstrap: str, warehouse: Warehouse, topic: str, records: int, every: int) -> float:
    """``every`` payloads at a time into one pyiceberg append."""
    table = warehouse.catalog.create_table(warehouse.new_table_name(), ARROW)
    consumer = peer_consumer(bootstrap, topic)
    rows: list[Any] = []
    written, first = 0, None
    while written < records:
        batch = [m for m in consumer.consume(10_000, 0.5) if m.error() is None]
        if not batch:
            continue
        first = first or time.monotonic()
        for message in batch:
            rows.append(orjson.loads(message.value())["payload"])
            if len(rows) == every:
                table.append(pa.Table.from_pylist(rows, schema=ARROW))
                written += len(rows)
                rows.clear()
    done = time.monotonic()
    consumer.close()
    return written / (done - (first or done))


# -- latency ---------------------------------------------------------------------------------
def event(i: int, produced_us: int) -> bytes:
    return struct_envelope(LATENCY_SCHEMA, f'{{"id":{i},"produced":{produced_us}}}')


def paced_producer(bootstrap: str, topic: str, rate: int, seconds: int) -> threading.Thread:
    """A started thread that produces records 1 to ``rate * seconds``, the ``i``-th
    ``i / rate`` seconds after it started (late ones at once), then flushes."""

    def produce() -> None:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        start = time.monotonic()
        for i in range(1, rate * seconds + 1):
            wait = start + i / rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)  # the schedule of the load, not a wait on a condition
            producer.produce(topic, event(i, time.time_ns() // 1000))
            producer.poll(0)
        assert producer.flush(60) == 0

    thread = threading.Thread(target=produce, name="paced-producer")
    thread.start()
    return thread


def latency_run(
    bootstrap: str, warehouse: Warehouse, folder: Path, rate: int, seconds: int, interval_ms: int
) -> dict[str, Any]:
    """Produce → visible in a scan of each record (module docstring)."""
    topic, name = new_topic(bootstrap), warehouse.new_table_name()
    watch = warehouse.watch(name)
    props = {"metadata.url": f"sqlite:///{folder / uuid.uuid4().hex}.db", **sink_worker(bootstrap)}
    runtime = Connect(f"bench-{uuid.uuid4().hex[:6]}", props)
    runtime.start()
    try:
        runtime.spark.sparkContext.setLogLevel("ERROR")
        runtime.add_connector(f"latency-{topic}", warehouse.sink(topic, name, interval_ms))
        _produce_one(bootstrap, topic)  # the table made, the task warm: record 0, not counted
        _visible(watch, {0}, time.monotonic() + 180)
        expected = set(range(1, rate * seconds + 1))
        producing = paced_producer(bootstrap, topic, rate, seconds)
        try:
            seen_us = _visible(watch, expected, time.monotonic() + seconds + 120)
        finally:
            producing.join()
    finally:
        watch.close()
        runtime.stop()
    latencies = [(seen - produced) / 1000 for produced, seen in seen_us.values()]
    return {
        "rate": rate,
        "seconds": seconds,
        "interval_ms": interval_ms,
        "records": len(latencies),
        "commits": len(warehouse.catalog.load_table(name).snapshots()) - 1,
        "ms": percentiles(latencies),
    }


def _produce_one(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, event(0, time.time_ns() // 1000))
    assert producer.flush(30) == 0


def _visible(watch: TableWatch, ids: set[int], deadline: float) -> dict[int, tuple[int, int]]:
    """Polls until every one of ``ids`` is in the table: each id's (produced, first seen)
    in µs since the epoch. Rows of earlier calls (lower ids) are not read again."""
    seen: dict[int, tuple[int, int]] = {}
    last = max(ids) if ids else 0
    lowest = min(ids)
    while not ids <= seen.keys():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(ids - seen.keys())} records not visible in time")
        table = watch.changed()
        if table is None:
            time.sleep(POLL_S)  # poll: the catalog has no notifications
            continue
        at_us = time.time_ns() // 1000
        after = max(seen, default=lowest - 1)
        rows = table.scan(row_filter=GreaterThan("id", after), selected_fields=("id", "produced"))
        for row in rows.to_arrow().to_pylist():
            if row["id"] <= last:
                seen[row["id"]] = (row["produced"], at_us)
    return seen


# -- the benchmark ---------------------------------------------------------------------------
def measure(
    records: int,
    runs: int,
    bootstrap: str | None = None,
    *,
    interval_ms: int,
    rate: int,
    latency_s: int,
    latency_interval_ms: int,
) -> dict[str, Any]:
    """Throughput of both variants, then the project's latency, in one run."""
    every = records // APPENDS
    records = every * APPENDS  # whole appends only: the loop ends
    with broker(bootstrap) as servers, tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        warehouse = Warehouse(folder)
        topic, _ = fill(servers, records, order, partitions=1)
        rows_per_commit: list[float] = []
        variants: dict[str, Callable[[], float]] = {
            "project (IcebergSinkConnector), 1 task": partial(
                project, servers, warehouse, folder, topic, records, interval_ms, rows_per_commit
            ),
            "hand-written loop (pyiceberg append)": partial(
                hand_loop, servers, warehouse, topic, records, every
            ),
        }
        figures = interleaved(variants, runs)
        latency = latency_run(servers, warehouse, folder, rate, latency_s, latency_interval_ms)
    return {
        "records": records,
        "runs": runs,
        "rows_per_append": every,
        "interval_ms": interval_ms,
        "rows_per_commit": sorted(rows_per_commit),
        "records_per_s": figures,
        "quix_streams": QUIX_NOT_MEASURED,
        "latency": latency,
    }


def table(results: dict[str, Any]) -> str:
    figures = results["records_per_s"]
    loop = figures["hand-written loop (pyiceberg append)"]["median"]
    commits = ", ".join(f"{n:,.0f}" for n in results["rows_per_commit"])
    throughput = ratio_table(
        f"Iceberg sink: {results['records']:,} records (topic, one partition → a table of a "
        f"SqlCatalog on SQLite, local files), median of {results['runs']} runs (min to max); "
        f"the loop appends every {results['rows_per_append']:,} rows, the project commits "
        f"every {results['interval_ms']:,} ms ({commits} rows a commit on average, by run)",
        ["variant", "records/s", "vs hand-written loop", "vs Quix Streams"],
        against_peers(figures, loop, None),
    )
    latency = results["latency"]
    ms = latency["ms"]
    latency_table = ratio_table(
        f"Produce → visible in a scan through the project at {latency['rate']:,} records/s "
        f"for {latency['seconds']} s: {latency['records']:,} records in "
        f"{latency['commits']:,} commits, commit interval {latency['interval_ms']:,} ms; ms",
        ["p50", "p99", "max"],
        [[f"{ms['p50']:.0f}", f"{ms['p99']:.0f}", f"{ms['max']:.0f}"]],
    )
    return f"{throughput}\n\n{results['quix_streams']}.\n\n{latency_table}"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(
        argv,
        __doc__,
        ("--records", 400_000),
        measure,
        table,
        options={
            "--interval-ms": 800,
            "--rate": 200,
            "--latency-s": 30,
            "--latency-interval-ms": 2000,
        },
    )


if __name__ == "__main__":
    main()
