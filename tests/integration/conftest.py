"""Fixtures with real services: one broker per test session, a SQLite metadata store per test."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.connect.errors import AlreadyExistsException
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.driver.spark_runner import spark_session
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome
from airflow_provider_connect.runtime.executor.task_runner import run_task
from airflow_provider_connect.runtime.executor.task_spec import TASK_CLASS_CONFIG, TaskSpec
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.store import MetadataStore
from tests.databases import database
from tests_common.postgres_cluster import PostgresCluster, postgres_cluster_or_skip

ROOT = Path(__file__).resolve().parents[2]


STORES = ["sqlite", "postgresql"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``both_stores`` that uses the ``store`` fixture runs on each of
    ``STORES``; any other on SQLite alone."""
    marked = metafunc.definition.get_closest_marker("both_stores") is not None
    if marked and "store" in metafunc.fixturenames:
        metafunc.parametrize("store", STORES, indirect=True)


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetadataStore]:
    """An empty metadata store: SQLite, or each of ``STORES`` for a test marked
    ``both_stores``, where the kind matters (PostgreSQL's row locks and SQLite's one
    writer, their SQL, their errors)."""
    with database(getattr(request, "param", "sqlite"), tmp_path) as url:
        store = MetadataStore(url, migrate=True)
        yield store
        store.close()


REST_URL = "http://127.0.0.1:8083"


@pytest.fixture
def connection(store: MetadataStore, monkeypatch: pytest.MonkeyPatch) -> str:
    """The Airflow connection ``connect_default`` to the test's metadata store (and a REST
    URL for links); returns its id."""
    extra = {"metadata_url": store.url, "rest_url": REST_URL}
    monkeypatch.setenv(
        "AIRFLOW_CONN_CONNECT_DEFAULT", json.dumps({"conn_type": "connect", "extra": extra})
    )
    return "connect_default"


@pytest.fixture
def worker_props(bootstrap: str, store: MetadataStore) -> dict[str, str]:
    """A worker config for tests: fast flushes and heartbeats; consumers join groups fast
    (the test broker waits half the session timeout before a group's first assignment)."""
    return {
        "bootstrap.servers": bootstrap,
        "metadata.url": store.url,
        "offset.flush.interval.ms": "200",
        "task.heartbeat.interval.ms": "100",
        "consumer.session.timeout.ms": "6000",
    }


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One SparkSession for the test session; executors can import the tests package."""
    session = spark_session(
        {"spark.master": "local[16]", "spark.executorEnv.PYTHONPATH": str(ROOT)}
    )
    yield session
    session.stop()


@pytest.fixture(scope="module")
def pg_cluster() -> Iterator[PostgresCluster]:
    """A private PostgreSQL cluster holding a migrated metadata database, for a module's
    tests to crash and freeze (skipped, saying why, where one cannot run)."""
    with postgres_cluster_or_skip() as cluster:
        MetadataStore(cluster.url, migrate=True).close()
        yield cluster


@pytest.fixture
def connect(worker_props: dict[str, str], spark: Any) -> Iterator[Connect]:
    runtime = Connect("test-runtime", worker_props)
    runtime.start()
    yield runtime
    runtime.stop()


@pytest.fixture
def rest(connect: Connect) -> Iterator[TestClient]:
    """Kafka Connect's REST API of the test's runtime."""
    with TestClient(create_app(connect.store, connect.worker)) as client:
        yield client


def create(rest: TestClient, name: str, config: dict[str, str]) -> None:
    """Creates a connector through REST (201 or the test fails with the answer)."""
    response = rest.post("/connectors", json={"name": name, "config": config})
    assert response.status_code == 201, response.text


class TaskRun:
    """One task run on a thread, as an executor would run it."""

    def __init__(self, spec: TaskSpec) -> None:
        self.spec = spec
        self.outcome: TaskOutcome | None = None
        self.thread = threading.Thread(
            target=self._run, name=f"run-{spec.connector}-{spec.task_id}", daemon=True
        )
        self.thread.start()

    def _run(self) -> None:
        self.outcome = run_task(self.spec)

    def join(self, timeout_s: float = 60) -> TaskOutcome:
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "the task run did not end"
        assert self.outcome is not None
        return self.outcome


def start_run(
    store: MetadataStore,
    worker_props: dict[str, str],
    name: str,
    connector_config: dict[str, str],
    task_config: dict[str, str],
    task_class: type,
    *,
    cleanup_only: bool = False,
    before_run: Callable[[], None] | None = None,
) -> TaskRun:
    """Does what the herder does for one task (configs, a new run id), then runs it;
    ``before_run`` is called between the two (a test's own step of the herder's)."""
    with contextlib.suppress(AlreadyExistsException):  # a second run of the same connector
        store.configs.create_connector(name, connector_config)
    config = {
        **task_config,
        TASK_CLASS_CONFIG: f"{task_class.__module__}.{task_class.__qualname__}",
    }
    generation = store.configs.write_task_configs(name, [config])
    run_id = store.statuses.assign_task(name, 0, generation, "test")
    if before_run is not None:
        before_run()
    return TaskRun(
        TaskSpec(name, 0, generation, run_id, connector_config, config, worker_props, cleanup_only)
    )


def start_counted_run(
    store: MetadataStore,
    worker_props: dict[str, str],
    name: str,
    config: dict[str, str],
    task_class: type,
) -> TaskRun:
    """``start_run`` of an exactly-once source's task 0 (``config`` as connector and task
    config) with the task-count record of its generation written before the run checks it,
    as the herder writes it after fencing the generation before."""
    return start_run(
        store,
        worker_props,
        name,
        config,
        config,
        task_class,
        before_run=lambda: store.configs.write_task_count(
            name, store.configs.task_configs(name)[0], 1
        ),
    )
