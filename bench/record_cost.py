"""CPU time per record of each path of the project, per stage, beside a hand-written loop
doing the same work, in the same run.

CPU, not wall time (the cores are shared): each measurement (one path, the project or its
hand loop, one run) runs in a fresh process (``python -m bench.record_cost --child``) that
imports the same modules for both sides, then sets the garbage collector and the C heap as
the task workers' daemon does (``worker_daemon.keep_heap_pages``, ``gc.freeze``, its young
threshold), then measures. On a machine of two cores or more the measured process has the
last core to itself and everything the benchmark starts (the broker, the registry, the
PostgreSQL cluster of change capture, this process) runs on the others, so that neither
side's caches are shared with the broker's. What it measures:

* the project (``bench.record_cost_project``): the runtime's own ``WorkerSourceTask`` or
  ``WorkerSinkTask`` of one task of the connector, its loop's turn (``_step``) run until every record
  is dispatched (or put), then one commit; the stages timed on the task thread's CPU clock
  per call of the runtime's methods: poll/build (``task.poll``), transform (the chain's
  ``apply_all``), convert (the converters), produce (the rest: ``_dispatch``'s other work,
  ``producer.poll(0)``, the final commit's flush); for sinks consume, convert, transform,
  put (the rest: records built, ``task.put``, bookkeeping, the final commit);
* the hand loop (``bench.record_cost_hand``): the same work by hand in batches of the same
  size, each stage timed per batch on the same clock.

``process`` is the process's CPU clock over the whole loop (librdkafka's threads and the
store writer's included), ``task thread`` the loop's thread alone; both per record, in µs.
The ratio is the project's ``process`` over the hand loop's (lower is better). Paths: the
file source with and without schemas, the JDBC source (PostgreSQL on 127.0.0.1:5432), change
capture (a private PostgreSQL cluster, WAL written first by pgbench, a slot per run), a
generator of orders without and with the three transformations of
``bench.transform_chain``, the Avro converter (a Schema Registry served by the benchmark),
the file sink and the JDBC sink. Every run writes to new topics (sinks read one topic filled
before, each run in a consumer group of its own). Each figure is the median of ``--runs``
runs (5 unless set), the measurements of a run taken in turn; the table gives the least and
the most of each side's process figure beside it.

Both sides of a path do the same work from the same input, which every run checks
(``bench.record_cost_same``): after a path's project run and hand run, the first and last
50 messages of both output topics (topic, key, value; each side's own topic name, or
topic prefix, replaced by a placeholder), or of both output files (lines) or tables (rows
by id), are compared byte for byte, and the table says per path whether they are the same
("same bytes"; the first difference is printed below it when not). The one span masked:
change capture's envelope ``ts_ms``/``ts_us``/``ts_ns``, the time the connector built the
event, read from the clock. So that the order of records is the same on both sides, every
topic compared has one partition: the chain's router's day topics are made before a run,
and the file sink's input has one partition.

    python -m bench.record_cost [--records N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError

from airflow_provider_connect.runtime.executor.worker_daemon import (
    YOUNG_COLLECTION_THRESHOLD,
    keep_heap_pages,
)
from airflow_provider_connect.store import MetadataStore
from bench import jdbc, postgres_cdc, record_cost_hand, record_cost_project
from bench.common import broker, command_line, new_topic, ratio_table, write_json_lines
from bench.generator import BATCH as GENERATOR_BATCH
from bench.generator import FIRST_TIMESTAMP, RECORDS, STRUCTS, order
from bench.record_cost_same import FileOutput, Mask, Output, TableOutput, TopicOutput, same_bytes
from bench.sink_path import fill
from bench.transform_chain import CHAIN, by_hand
from tests_common.postgres_cluster import PostgresCluster, unavailable_reason
from tests_common.schema_registry import TestSchemaRegistry

POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
FILE_BATCH = 2000  # FileStreamSource's batch.size
SINK_BATCH = 1000  # the sink loop's max.poll.records default
SOURCE_TARGET = 1.10
CHAIN_TARGET = 1.25
CHAIN_BASE = "generator source, no transformations"
CHAIN_PATH = "generator source, the three-transformation chain"
EVENT_CLOCK = Mask(
    rb'"ts_ms":\d+,"ts_us":\d+,"ts_ns":\d+\}\}$',
    b'"ts_ms":<clock>}}',
    "change capture: the event's own ts_ms/ts_us/ts_ns (when the connector built it, read "
    "from the clock)",
)


@dataclass(frozen=True)
class Side:
    """One measurement of one run: the child's spec and where it writes."""

    spec: dict[str, Any]
    output: Output


@dataclass(frozen=True)
class CostPath:
    """One path: how to make a run's sides for the project and for the hand loop (each
    called once per run: new topics, files, tables or slots each time), and what their
    outputs may differ in (``masks``)."""

    name: str
    kind: str  # "source" or "sink"
    records: int
    project: Callable[[], Side]
    hand: Callable[[], Side]
    target: float | None = None  # the ratio's target, where the issue sets one
    masks: tuple[Mask, ...] = ()


# -- the children ------------------------------------------------------------------------------
def worker_gc() -> None:
    """The task workers' settings (``worker_daemon``'s ``__main__``)."""
    keep_heap_pages()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One measurement in this (fresh) process, on ``spec["core"]`` when it names one."""
    if spec.get("core") is not None:
        os.sched_setaffinity(0, {spec["core"]})
    worker_gc()
    if spec["side"] == "hand":
        loop = getattr(record_cost_hand, spec["loop"])
        return dict(loop(**spec["args"]))
    store = MetadataStore(spec["store"])
    try:
        task = record_cost_project.task_spec(
            store, f"cost-{uuid.uuid4().hex[:8]}", spec["connector"], spec["worker"]
        )
        measure = record_cost_project.sink if spec["kind"] == "sink" else record_cost_project.source
        return measure(task, store, spec["records"])
    finally:
        store.close()


@contextmanager
def measured_core() -> Iterator[None]:
    """Within: this process (and what it starts) on every core but the last, which
    :func:`in_child` gives the measured processes; nothing changes on one core."""
    global MEASURED_CORE
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        yield
        return
    os.sched_setaffinity(0, cores[:-1])
    MEASURED_CORE = cores[-1]
    try:
        yield
    finally:
        MEASURED_CORE = None
        os.sched_setaffinity(0, cores)


MEASURED_CORE: int | None = None
"""The core of the measured processes, while :func:`measured_core` holds one."""


def in_child(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` measured in a new process (its figures, through a file)."""
    spec = {**spec, "core": MEASURED_CORE}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, "-m", "bench.record_cost", "--child", json.dumps(spec), out.name]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"a measurement failed ({done.returncode}):\n{done.stderr[-4000:]}")
        figures: dict[str, Any] = json.loads(Path(out.name).read_text())
        return figures


# -- the paths ---------------------------------------------------------------------------------
def project_spec(
    kind: str, records: int, connector: dict[str, str], worker: dict[str, str], store: str
) -> dict[str, Any]:
    return {
        "side": "project",
        "kind": kind,
        "records": records,
        "connector": connector,
        "worker": worker,
        "store": store,
    }


def hand_spec(loop: str, **args: Any) -> dict[str, Any]:
    return {"side": "hand", "loop": loop, "args": args}


def file_paths(
    servers: str, folder: Path, records: int, project: Callable[..., dict[str, Any]]
) -> list[CostPath]:
    path = folder / "input.jsonl"
    write_json_lines(path, 0, records)
    paths = []
    for schemas in (True, False):

        def mine(schemas: bool = schemas) -> Side:
            topic = new_topic(servers)
            config = {
                "connector.class": "FileStreamSource",
                "file": str(path),
                "topic": topic,
                "value.converter": "JsonConverter",
                "value.converter.schemas.enable": str(schemas).lower(),
            }
            return Side(project("source", records, config), TopicOutput(topic))

        def hand(schemas: bool = schemas) -> Side:
            topic = new_topic(servers)
            spec = hand_spec(
                "file_source",
                bootstrap=servers,
                topic=topic,
                records=records,
                files=[str(path)],
                schemas=schemas,
                batch=FILE_BATCH,
            )
            return Side(spec, TopicOutput(topic))

        label = "schemas" if schemas else "no schemas"
        paths.append(
            CostPath(f"file source, {label}", "source", records, mine, hand, SOURCE_TARGET)
        )
    return paths


def generator_topic(servers: str, records: int, chain: bool) -> str:
    """A new topic for the generator; with the chain, also the topics its router sends the
    records to, of one partition (as auto-created they would have four, in an order
    of records no two runs share)."""
    topic = new_topic(servers)
    if chain:
        for routed in {by_hand(order(i), topic, FIRST_TIMESTAMP + i)[0] for i in (0, records - 1)}:
            jdbc.new_topic(servers, routed)
    return topic


def generator_paths(
    servers: str, registry: str, records: int, project: Callable[..., dict[str, Any]]
) -> list[CostPath]:
    paths = []
    for name, chain, avro in (
        (CHAIN_BASE, False, False),
        (CHAIN_PATH, True, False),
        ("Avro converter (generator source of structs)", False, True),
    ):

        def mine(chain: bool = chain, avro: bool = avro) -> Side:
            topic = generator_topic(servers, records, chain)
            config = {
                "connector.class": "bench.generator.GeneratorSourceConnector",
                RECORDS: str(records),
                "topic": topic,
                **(CHAIN if chain else {}),
            }
            if avro:
                config |= {
                    STRUCTS: "true",
                    "value.converter": "io.confluent.connect.avro.AvroConverter",
                    "value.converter.schema.registry.url": registry,
                }
            else:
                config |= {
                    "value.converter": "JsonConverter",
                    "value.converter.schemas.enable": "false",
                }
            return Side(project("source", records, config), TopicOutput(topic))

        def hand(chain: bool = chain, avro: bool = avro) -> Side:
            topic = generator_topic(servers, records, chain)
            spec = hand_spec(
                "generator_source",
                bootstrap=servers,
                topic=topic,
                records=records,
                chain=chain,
                avro_registry=registry if avro else None,
                batch=GENERATOR_BATCH,
            )
            return Side(spec, TopicOutput(topic))

        paths.append(CostPath(name, "source", records, mine, hand))
    return paths


def jdbc_paths(
    servers: str, url: str, records: int, project: Callable[..., dict[str, Any]]
) -> list[CostPath]:
    """The JDBC source over a table of ``records`` rows, and the JDBC sink of a topic the
    JDBC source filled first (not measured)."""
    engine = create_engine(url)
    jdbc.fill(engine, jdbc.orders("orders"), records)

    def source_config() -> tuple[dict[str, str], str]:
        prefix = f"cost-{uuid.uuid4().hex[:8]}-"
        jdbc.new_topic(servers, prefix + "orders")
        return jdbc.source_config(url, prefix), prefix

    def new_table() -> str:
        name = f"written_{uuid.uuid4().hex[:8]}"
        jdbc.orders(name).create(engine)
        return name

    config, prefix = source_config()
    filled = prefix + "orders"
    in_child(project("source", records, config))  # the sink's input

    def source_project() -> Side:
        config, prefix = source_config()
        return Side(project("source", records, config), TopicOutput(prefix))

    def source_hand() -> Side:
        prefix = f"cost-{uuid.uuid4().hex[:8]}-"
        spec = hand_spec(
            "jdbc_source",
            bootstrap=servers,
            topic=jdbc.new_topic(servers, prefix + "orders"),
            records=records,
            url=url,
            batch=jdbc.BATCH,
        )
        return Side(spec, TopicOutput(prefix))

    def sink_project() -> Side:
        table = new_table()
        config = {
            "connector.class": "JdbcSinkConnector",
            "connection.url": url,
            "topics": filled,
            "table.name.format": table,
            "batch.size": str(jdbc.BATCH),
            "consumer.override.max.poll.records": str(jdbc.BATCH),
            "value.converter": "JsonConverter",
            "value.converter.decimal.format": "NUMERIC",
        }
        return Side(project("sink", records, config), TableOutput(url, table))

    def sink_hand() -> Side:
        table = new_table()
        spec = hand_spec(
            "jdbc_sink",
            bootstrap=servers,
            topic=filled,
            records=records,
            url=url,
            table=table,
            batch=jdbc.BATCH,
        )
        return Side(spec, TableOutput(url, table))

    return [
        CostPath(
            "JDBC source",
            "source",
            records,
            source_project,
            source_hand,
            SOURCE_TARGET,
        ),
        CostPath("JDBC sink", "sink", records, sink_project, sink_hand),
    ]


def file_sink_path(
    servers: str, folder: Path, records: int, project: Callable[..., dict[str, Any]]
) -> CostPath:
    topic, _ = fill(servers, records, partitions=1)  # one order of lines to compare

    def mine() -> Side:
        out = str(folder / f"project-{uuid.uuid4().hex[:6]}.txt")
        config = {
            "connector.class": "FileStreamSink",
            "file": out,
            "topics": topic,
            "value.converter": "JsonConverter",
        }
        return Side(project("sink", records, config), FileOutput(out))

    def hand() -> Side:
        out = str(folder / f"hand-{uuid.uuid4().hex[:6]}.txt")
        spec = hand_spec(
            "file_sink", bootstrap=servers, topic=topic, records=records, out=out, batch=SINK_BATCH
        )
        return Side(spec, FileOutput(out))

    return CostPath("file sink", "sink", records, mine, hand)


def change_capture_path(
    servers: str,
    database: postgres_cdc.Database,
    runs: int,
    transactions: int,
    project: Callable[..., dict[str, Any]],
) -> CostPath:
    """PostgresConnector vs bench.postgres_cdc's peer, each run on a slot of its own made
    before pgbench writes the changes (as bench.postgres_cdc does)."""
    names = {
        side: [f"cost_{side}_{i}_{uuid.uuid4().hex[:6]}" for i in range(runs)] for side in "ph"
    }
    for name in [*names["p"], *names["h"]]:
        database.slot_and_publication(name)
    written = postgres_cdc.Pgbench(
        database, "-t", str(-(-transactions // postgres_cdc.CLIENTS))
    ).wait()
    events = written.transactions
    slots = {side: iter(names[side]) for side in "ph"}

    def topic(slot: str) -> tuple[str, str]:
        prefix = f"p{slot}"
        return prefix, postgres_cdc.new_topic_named(
            servers, f"{prefix}.public.{postgres_cdc.TABLE}"
        )

    def mine() -> Side:
        slot = next(slots["p"])
        prefix, _ = topic(slot)
        config = {
            **postgres_cdc.connector_config(database, slot, prefix),
            "publication.autocreate.mode": "disabled",
        }
        return Side(project("source", events, config), TopicOutput(prefix))

    def hand() -> Side:
        slot = next(slots["h"])
        prefix, name = topic(slot)
        spec = hand_spec(
            "change_capture",
            bootstrap=servers,
            topic=name,
            records=events,
            parameters=database.parameters,
            slot=slot,
            prefix=prefix,
        )
        return Side(spec, TopicOutput(prefix))

    return CostPath(
        "change capture (PostgreSQL)",
        "source",
        events,
        mine,
        hand,
        SOURCE_TARGET,
        (EVENT_CLOCK,),
    )


@contextmanager
def local_postgres() -> Iterator[str | None]:
    """A fresh database on the local server (dropped after), None when it cannot be reached."""
    try:
        create_engine(POSTGRES_URL).connect().close()
    except OperationalError:
        yield None
        return
    with jdbc.fresh_database(POSTGRES_URL) as url:
        yield url


# -- measuring ---------------------------------------------------------------------------------
def medians(figures: list[dict[str, Any]]) -> dict[str, float]:
    """The median of each of the runs' µs per record."""
    stages = figures[0]["us_per_record"]
    return {s: statistics.median(f["us_per_record"][s] for f in figures) for s in stages}


def spread(figures: list[dict[str, Any]]) -> list[float]:
    """The least and the most ``process`` µs per record of the runs."""
    process = [f["us_per_record"]["process"] for f in figures]
    return [min(process), max(process)]


def measure(records: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    skipped: dict[str, str] = {}
    with (
        measured_core(),
        broker(bootstrap) as servers,
        tempfile.TemporaryDirectory() as name,
        TestSchemaRegistry() as registry,
        ExitStack() as stack,
    ):
        folder = Path(name)
        store = f"sqlite:///{folder / 'connect.db'}"
        MetadataStore(store, migrate=True).close()
        worker = {"bootstrap.servers": servers, "consumer.session.timeout.ms": "6000"}

        def project(kind: str, n: int, connector: dict[str, str]) -> dict[str, Any]:
            return project_spec(kind, n, connector, worker, store)

        paths = file_paths(servers, folder, records, project)
        paths += generator_paths(servers, registry.url, records, project)
        url = stack.enter_context(local_postgres())
        if url is None:
            for name in ("JDBC source", "JDBC sink"):
                skipped[name] = f"no PostgreSQL server answers at {POSTGRES_URL}"
        else:
            paths += jdbc_paths(servers, url, records, project)
        reason = unavailable_reason()
        if reason is None:
            cluster = stack.enter_context(PostgresCluster())
            database = stack.enter_context(postgres_cdc.benchmark_database(cluster))
            paths.append(change_capture_path(servers, database, runs, records // 2, project))
        else:
            skipped["change capture (PostgreSQL)"] = reason
        paths.append(file_sink_path(servers, folder, records, project))
        measured = interleaved_children(servers, paths, runs)
    return {"records": records, "runs": runs, "paths": measured, "skipped": skipped}


def interleaved_children(servers: str, paths: list[CostPath], runs: int) -> dict[str, Any]:
    """Each path's median figures over ``runs`` rounds, each round measuring every path's
    project and hand loop in turn, then checking that both wrote the same bytes; a path's
    ``same_bytes`` is "yes", or "no: " and the first difference of the first run that had
    one."""
    figures: dict[str, dict[str, list[dict[str, Any]]]] = {
        p.name: {"project": [], "hand": []} for p in paths
    }
    differences: dict[str, list[str]] = {p.name: [] for p in paths}
    for _ in range(runs):
        for path in paths:
            sides = path.project(), path.hand()
            measured = [in_child(side.spec) for side in sides]
            figures[path.name]["project"].append(measured[0])
            figures[path.name]["hand"].append(measured[1])
            difference = same_bytes(
                servers,
                (sides[0].output, sides[1].output),
                (measured[0]["records"], measured[1]["records"]),
                path.masks,
            )
            if difference is not None:
                differences[path.name].append(difference)
    results: dict[str, Any] = {}
    for path in paths:
        mine, hand = medians(figures[path.name]["project"]), medians(figures[path.name]["hand"])
        results[path.name] = {
            "kind": path.kind,
            "records": figures[path.name]["project"][0]["records"],
            "target": path.target,
            "project": mine,
            "hand": hand,
            "spread": {side: spread(figures[path.name][side]) for side in ("project", "hand")},
            "ratio": mine["process"] / hand["process"],
            "same_bytes": f"no: {differences[path.name][0]}" if differences[path.name] else "yes",
            "masked": [mask.why for mask in path.masks],
        }
    if CHAIN_BASE in results and CHAIN_PATH in results:
        results[CHAIN_PATH]["target"] = CHAIN_TARGET
        results[CHAIN_PATH]["chain_ratio"] = (
            results[CHAIN_PATH]["project"]["process"] / results[CHAIN_BASE]["project"]["process"]
        )
    return results


# -- the table ---------------------------------------------------------------------------------
def table(results: dict[str, Any]) -> str:
    rows = []
    for name, path in results["paths"].items():
        for side, label in (("project", "project"), ("hand", "hand loop")):
            us = path[side]
            stages = list(us)[:-2]
            rows.append(
                [
                    f"{name}: {label}",
                    " · ".join(f"{s} {us[s]:.2f}" for s in stages),
                    f"{us['task thread']:.2f}",
                    "{:.2f} ({:.2f} to {:.2f})".format(us["process"], *path["spread"][side]),
                    *(_ratio(path) if side == "project" else ["", ""]),
                    path["same_bytes"].split(":")[0] if side == "project" else "",
                ]
            )
    notes = [f"\n\nNot measured: {name}: {why}" for name, why in results["skipped"].items()]
    for name, path in results["paths"].items():
        if path["same_bytes"] != "yes":
            notes.append(f"\n\nNot the same bytes: {name}: {path['same_bytes'][4:]}")
        notes += [f"\n\nMasked before comparing: {why}" for why in path["masked"]]
    return ratio_table(
        f"CPU per record (µs), per stage, project beside hand-written loops: "
        f"{results['records']:,} records a path, median of {results['runs']} runs, each "
        "in a fresh process with the task workers' GC settings",
        [
            "path",
            "stages (µs/record)",
            "task thread",
            "process (least to most)",
            "ratio",
            "target",
            "same bytes",
        ],
        rows,
    ) + "".join(notes)


def _ratio(path: dict[str, Any]) -> list[str]:
    """The project's process CPU over the hand loop's, and the target beside it (for the
    chain: over the project without transformations)."""
    ratio = f"{path['ratio']:.2f}x vs hand"
    if "chain_ratio" in path:
        met = "met" if path["chain_ratio"] <= path["target"] else "NOT met"
        return [
            f"{ratio}; {path['chain_ratio']:.2f}x vs no transformations",
            f"≤ {path['target']:.2f}x vs no transformations ({met})",
        ]
    if path["target"] is None:
        return [ratio, "reported (throughput ≥ 1.0x in its own benchmark)"]
    met = "met" if path["ratio"] <= path["target"] else "NOT met"
    return [ratio, f"≤ {path['target']:.2f}x ({met})"]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--records", 60_000), measure, table, runs=5)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        Path(sys.argv[3]).write_text(json.dumps(child(json.loads(sys.argv[2]))))
    else:
        main()
