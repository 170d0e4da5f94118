"""Task logs on a running runtime: each run (on a Spark executor) writes its own file of
records carrying the task context, and a FAILED task's trace ends with the run's last log
lines and where its whole log is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from airflow_provider_connect.runtime import Connect
from tests.connectors import recording_source
from tests_common.kafka import new_topic
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration


def test_a_failed_tasks_trace_ends_with_its_log(
    worker_props: dict[str, str], spark: object, bootstrap: str, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    connect = Connect("logs", {**worker_props, "log.format": "json", "log.dir": str(logs)})
    connect.start()
    try:
        config = recording_source(tmp_path / "e.jsonl", new_topic(bootstrap), {"fail.after": "3"})
        connect.add_connector("failing", config)

        def failed_task() -> dict[str, str] | None:
            tasks = connect.status("failing")["tasks"]
            return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

        task = wait_until(failed_task, 60, "the task FAILED")
    finally:
        connect.stop()
    trace = task["trace"]
    assert "RuntimeError: task 0 failed on purpose at record 3" in trace
    where = re.search(r"Last log lines of this task run \(whole log at [^:]+:(\S+)\):", trace)
    assert where is not None, trace
    path = Path(where.group(1))
    assert path.parent == logs and path.name.startswith("failing-0-")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records and all(
        r["connector"] == "failing" and r["task"] == 0 and r["generation"] >= 1 for r in records
    )
    assert {r["run_id"] for r in records} == {path.name.removeprefix("failing-0-")[:-4]}
    assert any(r["level"] == "ERROR" and "failed" in r["message"] for r in records)
    assert trace.rstrip().endswith(path.read_text().splitlines()[-1])
