"""More tasks than Spark task slots: a runtime on ``local[2]`` with five one-task connectors
runs two, and the other three say that they wait for a slot (REST status, the hook, the
health sensor's log, the runtime's log); when slots free up, they run."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_connect.control.progress import Waiting
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.sensors.connector import ConnectorHealthSensor
from tests_common.broker import free_port
from tests_common.kafka import new_topic, wait_until
from tests_common.processes import kill_tree, rest_get, start_runtime, write_properties

pytestmark = pytest.mark.integration

NAMES = [f"lines-{i}" for i in range(5)]
WAITING = "Waiting for a Spark task slot"


@pytest.fixture
def runtime(bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``connect-runtime serve`` on ``local[2]``; ``connect_default`` points at its store.
    Yields its REST URL."""
    url = f"sqlite:///{tmp_path / 'metadata.db'}"
    rest = f"http://127.0.0.1:{free_port()}"
    worker = {
        "bootstrap.servers": bootstrap,
        "metadata.url": url,
        "listeners": rest,
        "spark.master": "local[2]",
        "task.heartbeat.interval.ms": "200",
    }
    config = write_properties(tmp_path / "worker.properties", worker)
    log = tmp_path / "runtime.log"
    process = start_runtime(["serve", "--config", str(config)], log)
    extra = {"metadata_url": url}
    monkeypatch.setenv(
        "AIRFLOW_CONN_CONNECT_DEFAULT", json.dumps({"conn_type": "connect", "extra": extra})
    )
    try:
        wait_until(lambda: rest_get(rest + "/connectors") == [], 120, "the runtime serves")
        yield rest
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                kill_tree(process)


def states(rest: str) -> dict[str, dict[str, Any]]:
    """Each connector's one task, as REST shows it."""
    found = {}
    for name in NAMES:
        status = rest_get(f"{rest}/connectors/{name}/status")
        if isinstance(status, dict) and status.get("tasks"):
            found[name] = status["tasks"][0]
    return found


def test_tasks_beyond_the_slots_say_they_wait_and_run_once_slots_free_up(
    runtime: str, bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = ConnectHook()
    for name in NAMES:
        source = tmp_path / f"{name}.txt"
        source.write_text("a line\n")
        config = {"connector.class": "FileStreamSource", "file": str(source)}
        hook.create_connector(name, {**config, "topic": new_topic(bootstrap)})

    def split() -> tuple[list[str], list[str]] | None:
        tasks = states(runtime)
        running = [n for n, t in tasks.items() if t["state"] == "RUNNING"]
        waiting = [n for n, t in tasks.items() if t.get("trace", "").startswith(WAITING)]
        return (running, waiting) if len(running) == 2 and len(waiting) == 3 else None

    running, waiting = wait_until(split, 120, "two tasks RUNNING, three waiting for a slot")
    assert all(t["state"] == "UNASSIGNED" for n, t in states(runtime).items() if n in waiting)
    health = hook.check_health(waiting[0])
    assert isinstance(health, Waiting)
    assert f"task 0: {states(runtime)[waiting[0]]['trace']}" in health.reason
    sensor = ConnectorHealthSensor(task_id="healthy", connector_name=waiting[0])
    capsys.readouterr()
    assert sensor.poke(context={}) is False
    logged = capsys.readouterr().out  # Airflow's log
    assert f"is RUNNING, tasks starting; task 0: {WAITING}" in logged

    for name in [*running, waiting[2]]:  # two slots free up, for the other two
        hook.delete_connector(name)
    left = waiting[:2]
    wait_until(
        lambda: [states(runtime).get(n, {}).get("state") for n in left] == ["RUNNING"] * 2,
        120,
        "the waiting tasks RUNNING once slots freed up",
    )
    assert all("trace" not in t for n, t in states(runtime).items() if n in left)
    log = tmp_path / "runtime.log"  # the herder looks at its runs once a second
    told = [f"task {n}-0: {WAITING}" for n in left] + [f"task {n}-0 got a Spark" for n in left]
    wait_until(lambda: all(t in log.read_text() for t in told), 30, f"the log tells {told}")
    hook.close()
