"""Task context on log records: the ``[name|task-0]`` label, JSON lines, a run's own file and
its last lines, and the threads a run starts."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from airflow_provider_connect.runtime.logs import (
    ContextFilter,
    TaskContext,
    TaskLog,
    connector_context,
    formatter,
    in_task_context,
)

log = logging.getLogger("tests.task")
CONTEXT = TaskContext("orders", 0, 3, "run-1")


@pytest.fixture(autouse=True)
def info_level() -> None:
    log.setLevel(logging.INFO)


def test_a_run_writes_its_own_records_with_kafkas_label(tmp_path: Path) -> None:
    with TaskLog(CONTEXT, str(tmp_path)).recording() as task_log:
        log.info("polled %d records", 5)
        other = TaskContext("other", 1, 1, "run-2")
        with TaskLog(other, str(tmp_path)).recording():
            log.info("not the first run's record")
    log.info("after the run")
    lines = task_log.path.read_text().splitlines()
    assert len(lines) == 1
    assert "INFO [orders|task-0] polled 5 records (tests.task)" in lines[0]
    assert task_log.path.name == "orders-0-run-1.log"
    assert task_log.tail().endswith(lines[0])
    assert task_log.location.endswith(f":{task_log.path}")


def test_runs_sharing_a_process_share_one_handler_each_record_to_its_own_run(
    tmp_path: Path,
) -> None:
    """A hundred runs recording at once in threads of their own add one handler to the
    root logger between them, not two a run; each file gets its own run's records only,
    and the handler's share ends with the last run."""
    root = logging.getLogger()
    before = list(root.handlers)
    started, done = threading.Barrier(101), threading.Event()
    logs: list[TaskLog] = []

    def run(i: int) -> None:
        task_log = TaskLog(TaskContext("many", i, 1, f"run-{i}"), str(tmp_path))
        logs.append(task_log)
        with task_log.recording():
            started.wait()
            log.info("record of run %d", i)
            done.wait()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(100)]
    for thread in threads:
        thread.start()
    started.wait()
    added = [h for h in root.handlers if h not in before]
    done.set()
    for thread in threads:
        thread.join()
    assert len(added) <= 1
    for task_log in logs:
        (line,) = task_log.path.read_text().splitlines()
        assert f"record of run {task_log.context.task} " in line
    assert all(not getattr(h, "runs", None) for h in root.handlers)


def test_json_lines_carry_the_context_fields(tmp_path: Path) -> None:
    with TaskLog(CONTEXT, str(tmp_path), "json").recording() as task_log:
        try:
            raise ValueError("bad record")
        except ValueError:
            log.exception("put failed")
    (entry,) = [json.loads(line) for line in task_log.path.read_text().splitlines()]
    assert entry["message"] == "put failed" and entry["level"] == "ERROR"
    assert (entry["connector"], entry["task"], entry["generation"], entry["run_id"]) == (
        "orders",
        0,
        3,
        "run-1",
    )
    assert "ValueError: bad record" in entry["exception"]


def test_threads_a_run_starts_log_in_its_context(tmp_path: Path) -> None:
    with TaskLog(CONTEXT, str(tmp_path)).recording() as task_log:
        bound = threading.Thread(target=in_task_context(lambda: log.info("from a helper")))
        unbound = threading.Thread(target=lambda: log.info("from a stranger"))
        for thread in (bound, unbound):
            thread.start()
            thread.join()
    text = task_log.path.read_text()
    assert "[orders|task-0] from a helper" in text and "stranger" not in text


def test_the_drivers_work_for_a_connector_carries_its_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.handler.addFilter(ContextFilter())
    with caplog.at_level(logging.INFO), connector_context("orders"):
        log.info("starting the connector")
    (record,) = caplog.records
    assert record.connector_context == "[orders|worker] "  # type: ignore[attr-defined]
    assert "] INFO [orders|worker] starting the connector (tests.task)" in formatter("text").format(
        record
    )


def test_only_text_and_json_are_formats() -> None:
    with pytest.raises(ValueError, match="log.format must be text or json"):
        formatter("xml")
