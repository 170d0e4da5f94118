"""``make bench`` keeps working: every benchmark at tiny sizes, RESULTS.md and results.json
written (figures are not checked: benchmarks are not tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench import run

pytestmark = pytest.mark.integration


def test_every_benchmark_runs_and_writes_its_results(spark: Any, tmp_path: Path) -> None:
    run.main(["--quick", "--out", str(tmp_path)])
    results = json.loads((tmp_path / "results.json").read_text())
    expected = {
        "source_path",
        "sink_path",
        "guarantees",
        "transform_chain",
        "jdbc",
        "control_plane",
        "converters",
        "recovery",
        "store_outage",
        "ui_overview",
        "avro",
        "postgres_cdc",
    }
    assert {*expected, "scale", "density"} <= set(results)
    (density,) = results["density"]["runs"]
    assert density["connectors"] == 2 and density["every_line_delivered"], density
    assert [r["tasks"] for r in results["scale"]["runs"]] == [1, 2]
    assert all(r["peak_memory_bytes"]["python workers"] > 0 for r in results["scale"]["runs"])
    assert results["source_path"]["records_per_s"]["project, 4 task(s), schemas"]["median"] > 0
    assert (
        results["sink_path"]["records_per_s"]["project (FileStreamSink), 2 task(s)"]["median"] > 0
    )
    assert results["transform_chain"]["records_per_s"]["project, the chain"]["median"] > 0
    avro = results["avro"]["records_per_s"]
    assert avro["sink: project (AvroConverter), 1 task"]["median"] > 0
    cdc = results["postgres_cdc"]  # skipped, saying why, where no private cluster can run
    if "skipped" not in cdc:
        assert all(f["median"] > 0 for f in cdc["events_per_s"].values())
        assert cdc["latency"]["events"] > 0
    assert results["recovery"]["seconds"]["lost worker → tasks RUNNING again"]["n"] == 1
    assert (
        results["ui_overview"]["tasks"] == 400
        and results["ui_overview"]["overview"]["queries"] <= 7
    )
    report = (tmp_path / "RESULTS.md").read_text()
    assert "| project, 1 task(s), no schemas |" in report
    assert "| exactly-once (poll) |" in report

    run.main(["--quick", "--only", "converters", "--out", str(tmp_path)])
    again = json.loads((tmp_path / "results.json").read_text())
    assert again["source_path"] == results["source_path"]  # kept, with its date
    assert again["measured"]["source_path"] == results["measured"]["source_path"]
    assert again["converters"] != results["converters"]
    dated = re.findall(r"^Measured \d{4}-\d\d-\d\dT", report, re.MULTILINE)
    assert len(dated) == len(results["measured"]) == 14  # a date under each table
