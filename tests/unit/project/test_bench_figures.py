"""The figures of the README's table of targets and of docs/benchmarks.md's are those of
bench/results.json, what ``make bench`` (bench/run.py) last measured: each row's figures are
computed here from results.json, read when the test runs, and rounded as the row writes them.

The README's row states exactly those figures, in that order; docs/benchmarks.md's row (or
rows) states them in the same order among its other figures, and its first ratio (a figure
followed by the multiplication sign) is the README's first."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "bench" / "results.json"
README = ROOT / "README.md"
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
HEADER = "| target | state |"
GIB = 2**30
TIMES = "\N{MULTIPLICATION SIGN}"

NUMBER = re.compile(rf"(?<![\w.,])\d+(?:,\d{{3}})*(?:\.\d+)?({TIMES})?")
"""A figure (not a part of a word such as ``p99``), with its sign when it is a ratio."""
NOT_FIGURES = re.compile(r"`[^`]*`|\d{4}-\d{2}-\d{2}")
"""Code (``tasks.per.slot=100``) and dates."""


@dataclass(frozen=True)
class Figure:
    text: str
    ratio: bool = False
    """Written with the multiplication sign (the first of a range of ratios is not)."""


def ratio(value: float, digits: int = 2) -> Figure:
    return Figure(f"{value:.{digits}f}", ratio=True)


def number(value: float, digits: int) -> Figure:
    return Figure(f"{value:.{digits}f}")


def ratio_range(values: list[float]) -> list[Figure]:
    """A range of ratios (its first figure has no sign), one decimal."""
    return [number(min(values), 1), ratio(max(values), 1)]


def median(section: dict[str, Any], name: str) -> float:
    return float(section[name]["median"])


def source_path(results: dict[str, Any]) -> list[Figure]:
    rates = results["source_path"]["records_per_s"]
    loop = median(rates, "hand-written loop, schemas")
    return [ratio(median(rates, f"project, {tasks} task(s), schemas") / loop) for tasks in (1, 4)]


def sink_path(results: dict[str, Any]) -> list[Figure]:
    rates = results["sink_path"]["records_per_s"]
    jdbc = results["jdbc"]["rows_per_s"]["JDBC sink"]
    return [
        ratio(
            median(rates, "project (FileStreamSink), 1 task(s)")
            / median(rates, "hand-written loop")
        ),
        ratio(jdbc["project"] / jdbc["peer"]),
    ]


def quix(results: dict[str, Any]) -> list[Figure]:
    source = results["source_path"]["records_per_s"]
    sink = results["sink_path"]["records_per_s"]
    jdbc = results["jdbc"]["rows_per_s"]["JDBC sink"]
    return [
        *ratio_range(
            [
                median(source, f"project, {tasks} task(s), {schemas}")
                / median(source, f"Quix Streams, {schemas}")
                for tasks in (1, 4)
                for schemas in ("schemas", "no schemas")
            ]
        ),
        *ratio_range(
            [
                median(sink, f"project (FileStreamSink), {tasks} task(s)")
                / median(sink, "Quix Streams (LocalFileSink)")
                for tasks in (1, 2)
            ]
        ),
        ratio(jdbc["project"] / jdbc["quix"]),
    ]


def scale_run(results: dict[str, Any], tasks: int) -> dict[str, Any]:
    return next(r for r in results["scale"]["runs"] if r["tasks"] == tasks)


def scaling(results: dict[str, Any]) -> list[Figure]:
    """How much more two tasks move than one."""
    return [number(2, 0), ratio(scale_run(results, 2)["scaling"])]


def control_plane(results: dict[str, Any]) -> list[Figure]:
    rest = results["control_plane"]["REST API"]
    return [number(rest[span]["p50"], 2) for span in ("create → RUNNING", "delete → cleanup done")]


def memory_64(results: dict[str, Any]) -> list[Figure]:
    return [number(scale_run(results, 64)["peak_memory_bytes"]["total"] / GIB, 2)]


def density(results: dict[str, Any]) -> list[Figure]:
    run = next(r for r in results["density"]["runs"] if r["connectors"] == 1000)
    return [
        number(run["all_running_s"], 1),
        number(run["peak_memory_bytes"]["total"] / GIB, 2),
        ratio(run["busy_ratio"]),
    ]


def exactly_once(results: dict[str, Any]) -> list[Figure]:
    rates = results["guarantees"]["records_per_s"]
    return [
        ratio(rates["exactly-once (interval 1 s)"]["ratio"]),
        ratio(rates["exactly-once (poll)"]["ratio"]),
    ]


def transform_chain(results: dict[str, Any]) -> list[Figure]:
    rates = results["transform_chain"]["records_per_s"]
    return [
        ratio(median(rates, "project, the chain") / median(rates, "project, no transformations"))
    ]


def jdbc_source(results: dict[str, Any]) -> list[Figure]:
    rows = results["jdbc"]["rows_per_s"]["JDBC source"]
    return [ratio(rows["project"] / rows["peer"])]


def record_cost(results: dict[str, Any]) -> list[Figure]:
    """CPU per record against the hand loops: each source path's ratio, then the chain's
    ratio to the same source without it."""
    paths = results["record_cost"]["paths"]
    sources = ("file source, schemas", "file source, no schemas", "JDBC source")
    return [
        *(ratio(paths[name]["ratio"], 1) for name in (*sources, "change capture (PostgreSQL)")),
        ratio(paths["generator source, the three-transformation chain"]["chain_ratio"], 1),
    ]


def recovery(results: dict[str, Any]) -> list[Figure]:
    seconds = results["recovery"]["seconds"]
    return [
        number(seconds[span]["p50"], 1)
        for span in (
            "lost worker → tasks RUNNING again",
            "lost driver → standby serving, tasks RUNNING",
            "create → first record",
        )
    ]


def avro(results: dict[str, Any]) -> list[Figure]:
    rates = results["avro"]["records_per_s"]
    return [
        ratio(
            median(rates, "source: project (AvroConverter), 1 task")
            / median(rates, "source: hand-written loop (AvroSerializer)")
        ),
        ratio(
            median(rates, "sink: project (AvroConverter), 1 task")
            / median(rates, "sink: hand-written loop (AvroDeserializer)")
        ),
    ]


def s3_sink(results: dict[str, Any]) -> list[Figure]:
    rates = results["s3_sink"]["records_per_s"]
    project = {
        f: median(rates, f"{f}: project (S3SinkConnector), 1 task") for f in ("JSON", "Parquet")
    }
    return [
        *(ratio(project[f] / median(rates, f"{f}: hand-written loop")) for f in project),
        *(ratio(project[f] / median(rates, f"{f}: Quix Streams (S3FileSink)")) for f in project),
    ]


def iceberg_sink(results: dict[str, Any]) -> list[Figure]:
    bench = results["iceberg_sink"]
    rates = bench["records_per_s"]
    latency = bench["latency"]
    return [
        ratio(
            median(rates, "project (IcebergSinkConnector), 1 task")
            / median(rates, "hand-written loop (pyiceberg append)")
        ),
        number(latency["ms"]["p99"] / 1000, 2),
        number(latency["interval_ms"] / 1000, 0),
    ]


def change_capture(benchmark: str) -> Callable[[dict[str, Any]], list[Figure]]:
    """The figures of a change-capture benchmark (``postgres_cdc``, ``mysql_cdc``): the ratio
    to its hand-written loop, then the p99 latencies to the record and to a consumer."""

    def figures(results: dict[str, Any]) -> list[Figure]:
        cdc = results[benchmark]
        events = cdc["events_per_s"]
        project = next(name for name in events if name.startswith("project"))
        loop = next(name for name in events if name.startswith("hand-written loop"))
        latency = cdc["latency"]["ms"]
        return [
            ratio(median(events, project) / median(events, loop)),
            number(latency["the Kafka record created (its CreateTime)"]["p99"], 0),
            number(latency["a consumer received it"]["p99"], 0),
        ]

    return figures


def store_outage(results: dict[str, Any]) -> list[Figure]:
    outage = results["store_outage"]
    windows = [w for w in outage["windows"] if w["window"].startswith(("crash", "freeze"))]
    statuses = sorted({s for w in windows for s in w["rest_statuses"]})
    return [
        *(
            ratio(min(w["ratio"] for w in windows if w["window"].startswith(kind)))
            for kind in ("crash", "freeze")
        ),
        number(outage["lost"], 0),
        *(number(s, 0) for s in statuses),
        number(max(w["rest_slowest_s"] for w in windows), 2),
        number(max(w["running_after_s"] for w in windows), 1),
    ]


@dataclass(frozen=True)
class Row:
    readme: str
    """How the target's cell starts in the README."""
    benchmarks: tuple[str, ...]
    """How the target's cell (or cells) starts in docs/benchmarks.md."""
    figures: Callable[[dict[str, Any]], list[Figure]]


ROWS = [
    Row("source path ≥", ("source path ≥",), source_path),
    Row("sink path ≥", ("sink path ≥",), sink_path),
    Row("ahead of Quix Streams", ("ahead of Quix Streams",), quix),
    Row("throughput grows with", ("throughput grows with",), scaling),
    Row("create → RUNNING and delete", ("create → RUNNING p50",), control_plane),
    Row("64 concurrent tasks", ("64 concurrent tasks",), memory_64),
    Row("1,000 low-rate tasks", ("density: 1,000 low-rate tasks",), density),
    Row("exactly-once costs", ("exactly-once costs",), exactly_once),
    Row("a chain of", ("a chain of",), transform_chain),
    Row("CPU per record", ("CPU per record",), record_cost),
    Row("the JDBC source ≥", ("the JDBC source ≥",), jdbc_source),
    Row("recovery:", ("recovery:",), recovery),
    Row("Avro through a Schema Registry", ("Avro through a Schema Registry",), avro),
    Row("S3 sink", ("S3 sink, one task",), s3_sink),
    Row("Iceberg sink", ("Iceberg sink, one task",), iceberg_sink),
    Row(
        "change capture from PostgreSQL",
        ("change capture from PostgreSQL", "change capture: commit → Kafka"),
        change_capture("postgres_cdc"),
    ),
    Row(
        "change capture from MariaDB's binlog",
        ("change capture from MariaDB's binlog", "binlog change capture: commit → Kafka"),
        change_capture("mysql_cdc"),
    ),
    Row("the metadata database crashed", ("the metadata database crashed",), store_outage),
]


def targets(path: Path) -> dict[str, str]:
    """The table of targets of ``path``: each target's cell and its state's."""
    lines = path.read_text().splitlines()
    start = lines.index(HEADER) + 2
    table = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        target, state = (cell.strip() for cell in line.strip().strip("|").split(" | "))
        table[target] = state
    return table


def figures_of(state: str) -> list[Figure]:
    return [
        Figure(m[0].removesuffix(TIMES), ratio=bool(m[1]))
        for m in NUMBER.finditer(NOT_FIGURES.sub("", state))
    ]


def state_of(table: dict[str, str], start: str) -> str:
    (state,) = (s for t, s in table.items() if t.startswith(start))
    return state


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return dict(json.loads(RESULTS.read_text()))


def test_every_target_of_the_readme_and_of_benchmarks_md_is_checked() -> None:
    assert len(targets(README)) == len(ROWS)
    assert len(targets(BENCHMARKS)) == sum(len(row.benchmarks) for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r.figures.__name__ for r in ROWS])
def test_the_readme_states_the_measured_figures(row: Row, results: dict[str, Any]) -> None:
    stated = [f.text for f in figures_of(state_of(targets(README), row.readme))]
    assert stated == [f.text for f in row.figures(results)]


@pytest.mark.parametrize("row", ROWS, ids=[r.figures.__name__ for r in ROWS])
def test_benchmarks_md_states_the_measured_figures(row: Row, results: dict[str, Any]) -> None:
    table = targets(BENCHMARKS)
    stated = [f for start in row.benchmarks for f in figures_of(state_of(table, start))]
    expected = row.figures(results)
    texts = iter(f.text for f in stated)
    assert all(f.text in texts for f in expected), "in order among the row's figures"
    first_ratio = next((f.text for f in expected if f.ratio), None)
    assert first_ratio == next((f.text for f in stated if f.ratio), None)
