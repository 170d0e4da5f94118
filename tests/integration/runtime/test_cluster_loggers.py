"""KIP-976's cluster-wide log levels on a running runtime: ``PUT
/admin/loggers/{logger}?scope=cluster`` sets the level on the driver at once, and the task
runs on the Spark executors apply it at their next heartbeat; a level written before the
runtime started is ignored, as a Kafka worker ignores those written before its startup."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.store import MetadataStore
from tests.connectors import CHATTY_LOGGER, CHATTY_SOURCE
from tests_common.kafka import wait_until

# On both stores: the levels' versions are taken in commit order, with SQL of each kind.
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    return tmp_path / "logs"


@pytest.fixture
def namespace() -> Iterator[str]:
    """A logger namespace of this test's own (executors' processes outlive a test)."""
    name = f"chatty.{uuid.uuid4().hex[:8]}"
    yield name
    logging.getLogger(name).setLevel(logging.NOTSET)


@pytest.fixture
def runtime(
    worker_props: dict[str, str], spark: Any, logs: Path, store: MetadataStore, namespace: str
) -> Iterator[Connect]:
    """A runtime whose task runs write their logs to ``logs``, started after ``namespace``
    was set to DEBUG cluster-wide (version 1)."""
    store.log_levels.set(namespace, "DEBUG")
    connect = Connect("cluster-loggers", {**worker_props, "log.dir": str(logs)})
    connect.start()
    yield connect
    connect.stop()


def test_a_cluster_wide_level_reaches_the_task_runs_on_the_executors(
    runtime: Connect, store: MetadataStore, logs: Path, namespace: str
) -> None:
    runtime.add_connector("chatty", {"connector.class": CHATTY_SOURCE, CHATTY_LOGGER: namespace})

    def task_log() -> str:
        return "".join(path.read_text() for path in logs.glob("chatty-0-*.log"))

    def debug_lines() -> list[str]:
        return re.findall(
            rf"DEBUG \[chatty\|task-0\] poll \d+ \({re.escape(namespace)}\)", task_log()
        )

    wait_until(lambda: "polled 20 times" in task_log(), 60, "the task polled at INFO")
    assert debug_lines() == []  # 20 polls, none at DEBUG: written before the runtime started
    assert runtime.herder is not None and runtime.herder.log_levels_since == 1
    assert logging.getLogger(namespace).level == logging.NOTSET  # nor on the driver

    with TestClient(create_app(runtime.store, runtime.worker)) as client:
        bad = client.put(f"/admin/loggers/{namespace}?scope=cluster", json={"level": "LOUD"})
        assert (bad.status_code, bad.json()["message"]) == (404, "invalid log level 'LOUD'.")
        assert store.log_levels.changed_since(1) == []  # nothing written

        answer = client.put(f"/admin/loggers/{namespace}?scope=cluster", json={"level": "DEBUG"})
        assert (answer.status_code, answer.content) == (204, b"")
        assert logging.getLogger(namespace).getEffectiveLevel() == logging.DEBUG  # the driver
        ((written,),) = [store.log_levels.changed_since()]
        assert (written.logger, written.level) == (namespace, "DEBUG")
        listed = client.get("/admin/loggers").json()[namespace]
        assert listed["level"] == "DEBUG" and listed["last_modified"] >= written.last_modified

        wait_until(debug_lines, 30, "the task's DEBUG lines")
        assert f"Setting level of namespace {namespace} and children to DEBUG (cluster scope)" in (
            task_log()
        )  # by the run's heartbeat, on the executor

        driver_only = f"{namespace}.driver"
        answer = client.put(f"/admin/loggers/{driver_only}?scope=worker", json={"level": "WARN"})
        assert (answer.status_code, answer.json()) == (200, [driver_only])
        assert [e.logger for e in store.log_levels.changed_since()] == [namespace]


def test_concurrent_writes_take_versions_in_commit_order(store: MetadataStore) -> None:
    """Writers take turns: every write has its own version, and a reader that remembers the
    latest version it read misses none of the writes."""
    seen: dict[str, int] = {}
    latest = 0

    def read() -> None:
        nonlocal latest
        for entry in store.log_levels.changed_since(latest):
            seen[entry.logger], latest = entry.version, entry.version

    with ThreadPoolExecutor(8) as pool:
        writes = [pool.submit(store.log_levels.set, f"l{i % 10}", "DEBUG") for i in range(40)]
        while not all(w.done() for w in writes):
            read()
    read()
    assert sorted(w.result().version for w in writes) == list(range(1, 41))
    assert seen == {e.logger: e.version for e in store.log_levels.changed_since()}
    assert len(seen) == 10
