"""``make bench``: every benchmark in one run, written to ``bench/RESULTS.md`` (the tables,
the machine, the versions, the date) and ``bench/results.json``.

    python -m bench.run [--quick] [--only NAME,...] [--list]

``--quick`` runs tiny sizes (to check the benchmarks work, not to measure); ``--only`` measures
the benchmarks named and keeps the others' last figures, each table dated; ``--list`` prints
the benchmarks' names, in the order a run measures them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
from collections.abc import Callable
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench import (
    avro,
    control_plane,
    converters,
    density,
    guarantees,
    iceberg_sink,
    jdbc,
    mysql_cdc,
    postgres_cdc,
    record_cost,
    recovery,
    s3_sink,
    scale,
    sink_path,
    source_path,
    store_outage,
    transform_chain,
    ui_overview,
)
from bench.quix import PYTHON as QUIX_PYTHON

BENCH = Path(__file__).resolve().parent
ONE_RUN_WHEN_QUICK = (
    "source_path",
    "sink_path",
    "guarantees",
    "transform_chain",
    "avro",
    "postgres_cdc",
    "mysql_cdc",
    "s3_sink",
    "iceberg_sink",
    "record_cost",
)
"""The benchmarks run once (``--runs 1``) at ``--quick`` sizes."""


def machine() -> dict[str, Any]:
    memory_kib = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal:")
    )
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {memory_kib / 2**20:.0f} GiB",
        "system": platform.platform(),
        "python": platform.python_version(),
        "versions": {
            name: version(name)
            for name in ("airflow-provider-connect", "pyspark", "confluent-kafka", "orjson")
        },
        "quixstreams": quix_version(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="minutes"),
    }


def quix_version() -> str:
    if not QUIX_PYTHON.exists():
        return "not installed"
    command = [str(QUIX_PYTHON), "-c", "import quixstreams; print(quixstreams.__version__)"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--out", default=str(BENCH), help="where RESULTS.md and results.json go")
    parser.add_argument(
        "--only",
        help="comma-separated benchmarks to measure (e.g. source_path,sink_path); the others "
        "keep their figures and dates from the results.json in --out (left out if absent)",
    )
    parser.add_argument("--list", action="store_true", help="print the benchmarks' names")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(name for name, _, _ in benchmarks(args.quick)))
        return
    quick, out = args.quick, Path(args.out)
    only = set(args.only.split(",")) if args.only else None
    stored = out / "results.json"
    previous = json.loads(stored.read_text()) if only and stored.exists() else {}
    results: dict[str, Any] = {"machine": machine(), "measured": {}}
    sections: list[str] = []
    for name, measure, table in benchmarks(quick):
        if only is None or name in only:
            results[name] = measure()
            results["measured"][name] = results["machine"]["date"]
        elif name not in previous:
            continue  # never measured: nothing to show
        else:
            results[name] = previous[name]
            results["measured"][name] = previous.get("measured", {}).get(
                name, previous["machine"]["date"]
            )
        sections.append(f"{table(results[name])}\n\nMeasured {results['measured'][name]}.")
    about = results["machine"]
    header = [
        "# Benchmark results",
        "",
        f"Measured by `make bench`: {about['machine']}, {about['system']}, "
        f"Python {about['python']}, "
        + ", ".join(f"{k} {v}" for k, v in about["versions"].items())
        + f", quixstreams {about['quixstreams']}. Broker: the embedded test broker; Spark: "
        "local mode (recovery: a standalone cluster). Every figure of a table was measured in "
        "the same run, on the date under it.",
    ]
    (out / "RESULTS.md").write_text("\n\n".join(["\n".join(header), *sections]) + "\n")
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out / 'RESULTS.md'} and {out / 'results.json'}")


def benchmarks(
    quick: bool,
) -> list[tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]]:
    """Each benchmark: its name, how to measure it (at ``--quick`` sizes or full), its table."""
    listed: list[tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]] = []
    for name, module, options in (
        ("source_path", source_path, ["--lines", "8000" if quick else "1000000"]),
        ("sink_path", sink_path, ["--records", "8000" if quick else "1000000"]),
        ("guarantees", guarantees, ["--lines", "20000" if quick else "4000000"]),
        ("transform_chain", transform_chain, ["--records", "8000" if quick else "1000000"]),
        ("jdbc", jdbc, ["--rows", "2000" if quick else "100000"]),
        (
            "postgres_cdc",
            postgres_cdc,
            ["--transactions", "2000", "--latency-s", "2"] if quick else [],
        ),
        (
            "mysql_cdc",
            mysql_cdc,
            ["--transactions", "2000", "--latency-s", "2"] if quick else [],
        ),
        ("avro", avro, ["--records", "4000" if quick else "500000"]),
        ("record_cost", record_cost, ["--records", "2000" if quick else "60000"]),
        ("s3_sink", s3_sink, ["--records", "4000" if quick else "400000"]),
        (
            "iceberg_sink",
            iceberg_sink,
            [
                "--records",
                "4000",
                "--rate",
                "50",
                "--latency-s",
                "3",
                "--latency-interval-ms",
                "500",
            ]
            if quick
            else [],
        ),
        ("control_plane", control_plane, ["--connectors", "3" if quick else "20"]),
        ("recovery", recovery, ["--kills", "1" if quick else "5"]),
        ("store_outage", store_outage, ["--fault-s", "5" if quick else "60"]),
        ("ui_overview", ui_overview, ["--connectors", "40" if quick else "500"]),
        (
            "scale",
            scale,
            ["--lines", "4000", "--min-per-task", "1000", "--tasks", "1,2"] if quick else [],
        ),
        (
            "density",
            density,
            ["--connectors", "2", "--busy-lines", "4000", "--max-memory-gib", "8"]
            if quick
            else ["--busy-core"],
        ),
    ):
        runs = ["--runs", "1"] if quick and name in ONE_RUN_WHEN_QUICK else []
        listed.append((name, partial(module.main, [*options, *runs]), module.table))
    converted = partial(converters.run, 2000 if quick else 200_000, 1 if quick else 5)
    listed.append(("converters", converted, converters.table))
    return listed


if __name__ == "__main__":
    main()
