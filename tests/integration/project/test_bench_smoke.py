"""``make bench`` keeps working: each benchmark at tiny sizes, on its own (so that no test
carries the whole bench's time), writing its results; and a run of some benchmarks keeps the
results and dates of the others (figures are not checked: benchmarks are not tests)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench import run

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


def _postgres_cdc(results: dict[str, Any]) -> None:
    if "skipped" not in results:  # skipped, saying why, where no private cluster can run
        assert all(f["median"] > 0 for f in results["events_per_s"].values())
        assert results["latency"]["events"] > 0


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
    "avro": _avro,
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
}
"""The benchmarks whose quick run still takes a minute or more (an executor lost and found
again, a database down for seconds, Spark applications of their own): in ``make
test-faults``; what each measures has a short test in ``make test``, named here."""


def test_every_benchmark_is_checked() -> None:
    assert [name for name, _, _ in run.benchmarks(quick=True)] == list(CHECKS)
    assert set(LONG) <= set(CHECKS)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.faults) if n in LONG else n for n in CHECKS]
)
def test_a_benchmark_runs_and_writes_its_results(spark: Any, tmp_path: Path, name: str) -> None:
    run.main(["--quick", "--only", name, "--out", str(tmp_path)])
    results = json.loads((tmp_path / "results.json").read_text())
    CHECKS[name](results[name])
    report = (tmp_path / "RESULTS.md").read_text()
    assert len(re.findall(r"^Measured \d{4}-\d\d-\d\dT", report, re.MULTILINE)) == 1


def test_a_run_keeps_the_other_benchmarks_results(spark: Any, tmp_path: Path) -> None:
    run.main(["--quick", "--only", "converters,control_plane", "--out", str(tmp_path)])
    first = json.loads((tmp_path / "results.json").read_text())
    run.main(["--quick", "--only", "converters", "--out", str(tmp_path)])
    again = json.loads((tmp_path / "results.json").read_text())
    assert again["control_plane"] == first["control_plane"]  # kept, with its date
    assert again["measured"]["control_plane"] == first["measured"]["control_plane"]
    assert again["converters"] != first["converters"]
    report = (tmp_path / "RESULTS.md").read_text()
    dated = re.findall(r"^Measured \d{4}-\d\d-\d\dT", report, re.MULTILINE)
    assert len(dated) == len(again["measured"]) == 2  # a date under each table
    assert "| exactly-once (poll) |" not in report  # never measured here: not shown
