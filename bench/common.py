"""What the benchmarks share: the broker, timing a connector on a runtime, and figures."""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka.admin import AdminClient, NewTopic

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import MetadataStore, State
from tests_common.broker import EmbeddedBroker


@contextmanager
def broker(bootstrap: str | None = None) -> Iterator[str]:
    """``bootstrap`` when given, else a broker started for the benchmark."""
    if bootstrap:
        yield bootstrap
        return
    with EmbeddedBroker() as embedded:
        yield embedded.bootstrap_servers


def new_topic(bootstrap: str) -> str:
    """A new topic of one partition, with a unique name."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # held until the topic exists
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50, p99 and the largest of ``values``."""
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": cuts[49], "p99": cuts[98], "max": max(values)}


def summary(rates: list[float]) -> dict[str, float]:
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates)}


def interleaved(variants: dict[str, Callable[[], float]], runs: int) -> dict[str, dict[str, float]]:
    """The summary of ``runs`` runs of each variant, run in rounds of one run each, so that
    a slow spell of the machine (or a broker holding more data) weighs on every variant
    alike. A variant whose runs all give 0.0 (a peer that is not installed) is left out."""
    rates: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, run in variants.items():
            rates[name].append(run())
    return {name: summary(r) for name, r in rates.items() if any(r)}


def files_progress(paths: list[Path]) -> Callable[[MetadataStore, str], float]:
    """The share of the files' bytes a file source has committed."""
    sizes = {str(p): p.stat().st_size for p in paths}
    total = sum(sizes.values())

    def progress(store: MetadataStore, name: str) -> float:
        offsets = store.offsets.source_offsets(name)
        return sum(o["position"] for p, o in offsets if o and p["filename"] in sizes) / total

    return progress


@dataclass(frozen=True)
class ConnectorRun:
    """What one timed connector run measured."""

    records_per_s: float
    running_s: float  # from creating the connector to every one of its tasks RUNNING


def connector_run(
    worker: dict[str, str],
    folder: Path,
    config: dict[str, str],
    records: int,
    progress: Callable[[MetadataStore, str], float],
    timeout_s: float = 600,
) -> ConnectorRun:
    """Runs ``config`` as a new connector on a new runtime (sharing the process's Spark) and
    times it (see :func:`timed_run`). The connector is deleted and the runtime stopped after."""
    props = {"metadata.url": f"sqlite:///{folder / uuid.uuid4().hex}.db", **worker}
    runtime = Connect(f"bench-{uuid.uuid4().hex[:6]}", props)
    runtime.start()
    try:
        runtime.spark.sparkContext.setLogLevel("ERROR")
        return timed_run(runtime, config, records, progress, timeout_s)
    finally:
        runtime.stop()


def timed_run(
    runtime: Connect,
    config: dict[str, str],
    records: int,
    progress: Callable[[MetadataStore, str], float],
    timeout_s: float = 600,
) -> ConnectorRun:
    """Runs ``config`` as a new connector on ``runtime`` until ``progress`` reaches 1, then
    deletes it. Its records/s is the steady rate while every task runs: the committed share
    of the work (``progress``) from the first commit after all tasks are RUNNING to the last
    commit before the end, so that start-up, group joins and the idle time before the final
    commit are not timed. When fewer than two such commits came, the share left when all
    tasks were RUNNING over the time from then to the end is used."""
    name = f"bench-{uuid.uuid4().hex[:8]}"  # its own consumer group, for sinks
    tasks = int(config.get("tasks.max", "1"))
    try:
        created = time.monotonic()
        runtime.add_connector(name, config)
        deadline = created + timeout_s
        running: tuple[float, float] | None = None  # (when all tasks were RUNNING, share done)
        commits: list[tuple[float, float]] = []  # (when, share done) after that, as it moved
        while True:
            now = time.monotonic()
            done = progress(runtime.store, name)
            if running is None:
                states = [t.state for t in runtime.store.statuses.task_statuses(name)]
                if len(states) >= tasks and all(s is State.RUNNING for s in states):
                    running = (now, done)
            elif done > (commits[-1][1] if commits else running[1]):
                commits.append((now, done))
            if done >= 1 and running is not None:
                steady = [c for c in commits if c[1] < 1]
                if len(steady) >= 2:
                    (t0, f0), (t1, f1) = steady[0], steady[-1]
                    rate = records * (f1 - f0) / (t1 - t0)
                else:
                    rate = records * (1 - running[1]) / (now - running[0])
                return ConnectorRun(rate, running[0] - created)
            if now > deadline:
                raise TimeoutError(f"the connector did not finish within {timeout_s}s")
            time.sleep(0.02)  # commits come every offset.flush.interval.ms (250 ms to 1 s)
    finally:
        runtime.delete_connector(name)


def write_json_lines(path: Path, first: int, count: int) -> None:
    """``count`` JSON lines of about 100 bytes, ids from ``first``."""
    with path.open("w") as f:
        for i in range(first, first + count):
            f.write(
                f'{{"id":{i},"customer":"customer-{i % 997:04d}","amount":{i / 4:.2f},'
                f'"currency":"EUR","note":"order {i:09d}"}}\n'
            )


def struct_schema(name: str, fields: Mapping[str, str]) -> bytes:
    """JsonConverter's schema (JSON) of a struct of required ``fields`` (name: Connect type)."""
    return orjson.dumps(
        {
            "type": "struct",
            "name": name,
            "optional": False,
            "fields": [{"field": f, "type": t, "optional": False} for f, t in fields.items()],
        }
    )


def struct_envelope(schema: bytes, payload: str) -> bytes:
    """JsonConverter's envelope of a struct: ``schema`` (:func:`struct_schema`) and the
    ``payload`` object's JSON."""
    return b'{"schema":' + schema + b',"payload":' + payload.encode() + b"}"


def ratio_table(title: str, header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(
        [
            title,
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows),
        ]
    )


def rate(figure: dict[str, Any]) -> str:
    return f"{figure['median']:,.0f} ({figure['min']:,.0f} to {figure['max']:,.0f})"


def against_peers(
    figures: dict[str, dict[str, float]], loop: float, quix: float | None
) -> list[list[str]]:
    """Table rows: each figure with its ratio to the hand-written loop and to Quix Streams."""
    return [
        [
            name,
            rate(figure),
            f"{figure['median'] / loop:.2f}x",
            f"{figure['median'] / quix:.2f}x" if quix else "not measured",
        ]
        for name, figure in figures.items()
    ]


def command_line(
    argv: list[str] | None,
    doc: str,
    size: tuple[str, int],
    measure: Callable[..., dict[str, Any]],
    table: Callable[[dict[str, Any]], str],
    runs: int = 3,
    options: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A benchmark's command line: ``size`` (flag, default), ``--runs`` (default ``runs``),
    ``--bootstrap``, ``--json``, and each of ``options`` (an integer flag and its default,
    passed to ``measure`` as a keyword: ``--latency-s`` as ``latency_s``); prints the table
    and returns the figures."""
    flag, default = size
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(flag, type=int, default=default, dest="size")
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    parser.add_argument("--json", help="also write the figures to this file")
    for option, option_default in (options or {}).items():
        parser.add_argument(option, type=int, default=option_default)
    args = parser.parse_args(argv)
    keywords = [option.lstrip("-").replace("-", "_") for option in options or {}]
    results = measure(
        args.size, args.runs, args.bootstrap, **{k: getattr(args, k) for k in keywords}
    )
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results
