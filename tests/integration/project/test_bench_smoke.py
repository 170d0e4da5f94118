"""``make bench`` keeps working: the benchmarks at tiny sizes, run as a user runs them
(``python -m bench.run --quick``, one process for the short ones, one each for the long ones),
writing their results; and a run of some benchmarks keeps the results and dates of the others
(figures are not checked: benchmarks are not tests)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration


def _source_path(results: dict[str, Any]) -> None:
    assert results["records_per_s"]["project, 4 task(s), schemas"]["median"] > 0


def _sink_path(results: dict[str, Any]) -> None:
    assert results["records_per_s"]["project (FileStreamSink), 2 task(s)"]["median"] > 0


def _guarantees(results: dict[str, Any]) -> None:
    figures = results["records_per_s"]
    assert figures["exactly-once (poll)"]["transactions"] > 1  # one a 2,000-line poll


def _transform_chain(results: dict[str, Any]) -> None:
    assert results["records_per_s"]["project, the chain"]["median"] > 0


def _avro(results: dict[str, Any]) -> None:
    assert results["records_per_s"]["sink: project (AvroConverter), 1 task"]["median"] > 0


def _s3_sink(results: dict[str, Any]) -> None:
    figures = results["records_per_s"]
    for form in ("JSON", "Parquet"):
        assert figures[f"{form}: project (S3SinkConnector), 1 task"]["median"] > 0
        assert figures[f"{form}: hand-written loop"]["median"] > 0


def _iceberg_sink(results: dict[str, Any]) -> None:
    assert all(f["median"] > 0 for f in results["records_per_s"].values())
    assert results["latency"]["records"] == 150  # 50 records/s for 3 s, each seen once


def _postgres_cdc(results: dict[str, Any]) -> None:
    if "skipped" not in results:  # skipped, saying why, where no private cluster can run
        assert all(f["median"] > 0 for f in results["events_per_s"].values())
        assert results["latency"]["events"] > 0


def _mysql_cdc(results: dict[str, Any]) -> None:
    if "skipped" not in results:  # skipped, saying why, where no private server can run
        assert all(f["median"] > 0 for f in results["events_per_s"].values())
        assert results["latency"]["events"] > 0


def _record_cost(results: dict[str, Any]) -> None:
    paths = results["paths"]
    for name in ("file source, schemas", "file sink"):
        assert paths[name]["project"]["process"] > 0 and paths[name]["hand"]["process"] > 0
    assert set(paths) | set(results["skipped"]) >= {"JDBC source", "change capture (PostgreSQL)"}
    assert {name: path["same_bytes"] for name, path in paths.items()} == dict.fromkeys(paths, "yes")


def _recovery(results: dict[str, Any]) -> None:
    assert results["seconds"]["lost worker → tasks RUNNING again"]["n"] == 1


def _ui_overview(results: dict[str, Any]) -> None:
    assert results["tasks"] == 400 and results["overview"]["queries"] <= 7


def _scale(results: dict[str, Any]) -> None:
    assert [r["tasks"] for r in results["runs"]] == [1, 2]
    assert all(r["peak_memory_bytes"]["python workers"] > 0 for r in results["runs"])


def _density(results: dict[str, Any]) -> None:
    (density,) = results["runs"]
    assert density["connectors"] == 2 and density["every_line_delivered"], density


def _written(results: dict[str, Any]) -> None:
    assert results


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "source_path": _source_path,
    "sink_path": _sink_path,
    "guarantees": _guarantees,
    "transform_chain": _transform_chain,
    "jdbc": _written,
    "postgres_cdc": _postgres_cdc,
    "mysql_cdc": _mysql_cdc,
    "avro": _avro,
    "record_cost": _record_cost,
    "s3_sink": _s3_sink,
    "iceberg_sink": _iceberg_sink,
    "control_plane": _written,
    "recovery": _recovery,
    "store_outage": _written,
    "ui_overview": _ui_overview,
    "scale": _scale,
    "density": _density,
    "converters": _written,
}


LONG = {
    "recovery": "test_faults.py's kill of an executor",
    "store_outage": "test_faults.py's crash and hang of the metadata database (the same drill)",
    "scale": "test_runtime.py's reconfiguration from one task to two",
    "density": "test_slot_packer.py's tasks sharing slots",
    "record_cost": "source_path's and sink_path's quick runs here (a fresh process per "
    "measurement: about 19 processes of ~3 s each even at tiny sizes)",
}
"""The benchmarks whose quick run still takes a minute or more (an executor lost and found
again, a database down for seconds, Spark applications of their own): in ``make
test-faults``; what each measures has a short test in ``make test``, named here."""


BENCH_RUN_TIMEOUT_S = 240
"""A quick run of the short benchmarks takes about a minute and a half here."""


def bench_run(*args: str) -> str:
    """``python -m bench.run`` with ``args``, from the checkout; its standard output."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", *args],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        timeout=BENCH_RUN_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of one quick run of every benchmark not in :data:`LONG`."""
    out = tmp_path_factory.mktemp("bench")
    bench_run("--quick", "--only", ",".join(n for n in CHECKS if n not in LONG), "--out", str(out))
    return out


def test_every_benchmark_is_checked() -> None:
    assert bench_run("--list").split() == list(CHECKS)
    assert set(LONG) <= set(CHECKS)


@pytest.mark.parametrize("name", [n for n in CHECKS if n not in LONG])
def test_a_benchmark_runs_and_writes_its_results(quick_run: Path, name: str) -> None:
    results = json.loads((quick_run / "results.json").read_text())
    CHECKS[name](results[name])
    report = (quick_run / "RESULTS.md").read_text()
    assert len(re.findall(r"^Measured \d{4}-\d\d-\d\dT", report, re.MULTILINE)) == len(
        results["measured"]
    )


@pytest.mark.faults
@pytest.mark.parametrize("name", list(LONG))
def test_a_long_benchmark_runs_and_writes_its_results(tmp_path: Path, name: str) -> None:
    bench_run("--quick", "--only", name, "--out", str(tmp_path))
    results = json.loads((tmp_path / "results.json").read_text())
    CHECKS[name](results[name])


def test_a_run_keeps_the_other_benchmarks_results(quick_run: Path, tmp_path: Path) -> None:
    first = json.loads((quick_run / "results.json").read_text())
    out = shutil.copytree(quick_run, tmp_path / "again")
    bench_run("--quick", "--only", "converters", "--out", str(out))
    again = json.loads((out / "results.json").read_text())
    assert again["control_plane"] == first["control_plane"]  # kept, with its date
    assert again["measured"]["control_plane"] == first["measured"]["control_plane"]
    assert again["converters"] != first["converters"]
    report = (out / "RESULTS.md").read_text()
    dated = re.findall(r"^Measured \d{4}-\d\d-\d\dT", report, re.MULTILINE)
    assert len(dated) == len(again["measured"]) == len(first["measured"])  # one under each table
    assert "Recovery on a Spark" not in report  # never measured here: not shown
