"""The production topology, end to end, on this machine (``make test-e2e``).

PostgreSQL holds the metadata of both Airflow and Connect; Airflow's services run one by
one on loopback (API server, scheduler with LocalExecutor, dag-processor, triggerer); a
Spark standalone master and two workers run the runtime, which the ``connect_runtime`` DAG
deploys, with a second run of it as the standby. Run by the scheduler, with their sensors
deferred to the triggerer:

* ``file_to_table``: a file → FileStreamSource (exactly-once) → topic → JDBC sink →
  a PostgreSQL table, the file growing throughout;
* ``connector_lifecycle``: audit-trigger change capture of a PostgreSQL table, changes made
  throughout, the connector deleted as the run's teardown (triggers and audit table go).

Mid-stream, a Spark worker and its executors are killed with SIGKILL three times, then the
active driver (its Python process and JVM) while the standby runs. Then every record is
counted: lines in, committed records in the topic, rows in the table, change events.

The test broker delivers records of aborted transactions to read-committed consumers (see
ENVIRONMENT.md), so the sink also writes those an executor kill aborted: the table's rows
of committed records hold each line exactly once, and every other row is shown to be
an aborted record's. On Apache Kafka the table holds the committed records alone.
"""

from __future__ import annotations

import collections
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from sqlalchemy import Engine, create_engine, inspect, text

from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from airflow_provider_connect.store import MetadataStore, State
from tests.databases import postgres_database
from tests_common.broker import free_port
from tests_common.kafka import new_topic, new_topic_named, read_messages
from tests_common.local_stack import LocalStack
from tests_common.processes import rest_get, wait_until
from tests_common.stack import runtime_worker_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

SHORT = pytest.param(1, 9_000, id="short")
LONG = pytest.param(3, 30_000, id="long", marks=pytest.mark.e2e)
CHUNK = 300
CHANGES_PER_CHUNK = 3  # an insert, an update and, every other chunk, a delete
PIPELINE, AUDIT = "e2e", "e2e-audit"
CONNECTORS = (f"{PIPELINE}-source", f"{PIPELINE}-sink", AUDIT)


@pytest.fixture
def stack(tmp_path: Path, bootstrap: str) -> Iterator[LocalStack]:
    folder = tmp_path / "stack"
    folder.mkdir()
    with (
        postgres_database() as airflow_db,
        postgres_database() as connect_db,
        LocalStack(folder, bootstrap, airflow_db, connect_db) as stack,
    ):
        yield stack


@pytest.fixture
def app_db() -> Iterator[Engine]:
    """The application's database: the table the sink writes, the table captured."""
    with postgres_database() as url:
        engine = create_engine(url)
        with engine.begin() as c:
            c.execute(text("CREATE TABLE orders (id INT PRIMARY KEY, qty INT NOT NULL)"))
        yield engine
        engine.dispose()


@dataclass
class Feed:
    """Appends the file's lines and changes the captured table, a chunk at a time, until
    80 % is in; then waits for ``faults_done`` so that records flow after the last kill."""

    path: Path
    engine: Engine
    lines: int
    faults_done: threading.Event = field(default_factory=threading.Event)
    changes: int = 0
    error: BaseException | None = None

    def run(self) -> None:
        try:
            for first in range(0, self.lines, CHUNK):
                if first >= self.lines * 0.8:
                    self.faults_done.wait(600)
                with self.path.open("a") as f:
                    f.write("".join(f"line {i}\n" for i in range(first, first + CHUNK)))
                self.change(first // CHUNK)
                self.faults_done.wait(0.4)  # a steady stream until the faults are over
        except BaseException as e:
            self.error = e

    def change(self, n: int) -> None:
        with self.engine.begin() as c:
            c.execute(text("INSERT INTO orders VALUES (:n, 1)"), {"n": n})
            c.execute(text("UPDATE orders SET qty = qty + 1 WHERE id = :n"), {"n": n})
            self.changes += 2
            if n % 2:
                c.execute(text("DELETE FROM orders WHERE id = :n"), {"n": n - 1})
                self.changes += 1


def expected_changes(lines: int) -> int:
    chunks = lines // CHUNK
    return 2 * chunks + chunks // 2


class Runtime:
    """The Connect side, read from the metadata database as any client can."""

    def __init__(self, url: str) -> None:
        self.store = MetadataStore(url)

    def holder(self) -> tuple[str, str | None] | None:
        current = self.store.lease.current()
        return None if current is None else (current.holder, current.rest_url)

    def driver_pid(self) -> int:
        holder = self.holder()
        assert holder is not None
        return int(holder[0].split("/")[-2])  # host/pid/herder

    def all_running(self) -> bool:
        """Every task of the connectors RUNNING in a Python worker that is alive."""
        for name in CONNECTORS:
            tasks = self.store.statuses.task_statuses(name)
            if not tasks:
                return False
            for task in tasks:
                pid = int(task.worker_id.rsplit("/", 1)[1])
                if task.state != State.RUNNING or not psutil.pid_exists(pid):
                    return False
        return True

    def states(self) -> dict[str, list[str]]:
        return {
            name: [f"{t.state}@{t.worker_id}" for t in self.store.statuses.task_statuses(name)]
            for name in CONNECTORS
        }


def rows(engine: Engine) -> list[tuple[int, int, str]]:
    with engine.connect() as c:
        if not inspect(c).has_table("lines"):
            return []
        found = c.execute(text('SELECT __connect_partition, __connect_offset, line FROM "lines"'))
        return [tuple(r) for r in found]  # type: ignore[misc]


def kill_driver(pid: int) -> None:
    """SIGKILLs the driver: its Python process and the spark-submit JVM it runs under."""
    python = psutil.Process(pid)
    jvm = python.parent()
    assert jvm is not None and "java" in jvm.name(), jvm
    for process in (python, jvm):
        process.kill()
    psutil.wait_procs([python, jvm], timeout=30)


@pytest.mark.parametrize(("worker_kills", "lines"), [SHORT, LONG])
def test_pipelines_through_worker_and_driver_kills(
    stack: LocalStack, app_db: Engine, bootstrap: str, tmp_path: Path, worker_kills: int, lines: int
) -> None:
    started = time.monotonic()
    changes = expected_changes(lines)
    topic, prefix = new_topic(bootstrap), f"cdc-{uuid.uuid4().hex[:8]}-"
    runtime = Runtime(stack.places.connect_db_url)
    wait_until(runtime.holder, 120, "the deployed runtime holds the lease", 0.5)
    (deployed,) = stack.api("GET", "/dags/connect_runtime/dagRuns")["dag_runs"]

    standby_port = free_port()
    standby_url = f"http://127.0.0.1:{standby_port}"
    standby_config = {**runtime_worker_config(stack.places), "listeners": standby_url}
    standby_run = stack.trigger("connect_runtime", {"worker_config": standby_config})
    wait_until(lambda: rest_get(f"{standby_url}/"), 180, "the standby serves", 0.5)
    assert runtime.holder()[1] == stack.places.runtime_url  # type: ignore[index]

    new_topic_named(bootstrap, f"{prefix}orders")
    source = tmp_path / "lines.txt"
    source.touch()
    feed = Feed(source, app_db, lines)
    file_size = sum(len(f"line {i}\n") for i in range(lines))
    for dag_id in ("file_to_table", "connector_lifecycle"):
        stack.api("PATCH", f"/dags/{dag_id}", json={"is_paused": False})
    pipeline_run = stack.trigger(
        "file_to_table",
        {
            "name": PIPELINE,
            "file": str(source),
            "topic": topic,
            "connection_url": str(app_db.url.render_as_string(hide_password=False)),
            "table": "lines",
            "file_size": file_size,
        },
    )
    audit_run = stack.trigger(
        "connector_lifecycle",
        {
            "connector_name": AUDIT,
            "config": {
                "connector.class": "AuditSourceConnector",
                "connection.url": app_db.url.render_as_string(hide_password=False),
                "table.whitelist": "orders",
                "topic.prefix": prefix,
                "audit.table.name": "e2e_audit",
                "poll.interval.ms": "200",
            },
            "source_offset": {"id": changes},
        },
    )
    # Changes made before the audit task installed its triggers are not captured (there
    # is no snapshot): the feed starts once every task runs.
    wait_until(runtime.all_running, 180, "every task RUNNING", 0.5, state=runtime.states)
    # The Connectors page in Airflow's API server shows them, from the metadata database.
    page = stack.session.get(f"{stack.api_url}/connect/api/connectors", timeout=30).json()
    shown = {c["name"]: [t["state"] for t in c["tasks"]] for c in page["connectors"]}
    assert shown.keys() == set(CONNECTORS) and all(
        states and set(states) == {"RUNNING"} for states in shown.values()
    ), shown
    feeding = threading.Thread(target=feed.run, name="feed")
    feeding.start()
    recoveries: dict[str, list[float]] = collections.defaultdict(list)
    try:
        step, mark = lines // 10, 0
        for kill in range(worker_kills + 1):
            wait_until(
                lambda mark=mark: len(rows(app_db)) >= mark + step,
                180,
                f"rows reach the table before kill {kill + 1}",
                0.5,
                state=runtime.states,
            )
            before = time.monotonic()
            if kill < worker_kills:
                index = kill % 2
                stack.spark.kill_worker(index)
                stack.spark.start_worker(index)  # the machine comes back
                lost = "worker"
            else:
                kill_driver(runtime.driver_pid())
                wait_until(
                    lambda: (runtime.holder() or ("", None))[1] == standby_url,
                    120,
                    "the standby takes the lease",
                    0.2,
                )
                lost = "driver"
            wait_until(
                runtime.all_running,
                180,
                f"tasks RUNNING after the {lost} kill",
                0.2,
                state=runtime.states,
            )
            recoveries[lost].append(round(time.monotonic() - before, 1))
            print(f"kill -9 {lost}: every task RUNNING again in {recoveries[lost][-1]} s")
            mark = len(rows(app_db))
    finally:
        feed.faults_done.set()
        feeding.join()
    assert feed.error is None, feed.error
    assert feed.changes == changes

    def finished(dag_id: str, run_id: str) -> str | None:
        state = stack.run_state(dag_id, run_id)
        return None if state in ("queued", "running") else state

    for dag_id, run_id in (("file_to_table", pipeline_run), ("connector_lifecycle", audit_run)):
        state = wait_until(
            lambda dag_id=dag_id, run_id=run_id: finished(dag_id, run_id),
            600,
            f"{dag_id} finishes",
            1,
            state=lambda dag_id=dag_id, run_id=run_id: stack.task_states(dag_id, run_id),
        )
        assert state == "success", stack.task_states(dag_id, run_id)
    wait_until(lambda: len({r[2] for r in rows(app_db)}) == lines, 300, "every line in the table")
    elapsed = time.monotonic() - started

    # The file: each line committed to the topic exactly once (exactly-once source).
    expected = {f"line {i}" for i in range(lines)}
    reader = CommittedLogReader({"bootstrap.servers": bootstrap})
    try:
        committed = {r.offset: r.value.decode() for r in reader.read(topic, 0) if r.value}
    finally:
        reader.close()
    assert sorted(committed.values()) == sorted(expected)
    # The table: its rows of committed records are each line once; every other row is a
    # record of an aborted transaction that the test broker delivered.
    table = rows(app_db)
    of_committed = [line for _, offset, line in table if offset in committed]
    aborted = [(offset, line) for _, offset, line in table if offset not in committed]
    assert sorted(of_committed) == sorted(expected)
    assert all(line in expected for _, line in aborted)

    # The change capture: every change once or more (at-least-once), then its teardown.
    events = read_messages(bootstrap, f"{prefix}orders", changes, timeout_s=120)
    audit_ids = collections.Counter(
        json.loads(m.value())["payload"]["source"]["audit_id"] for m in events if m.value()
    )
    assert set(audit_ids) == set(range(1, changes + 1))
    with app_db.connect() as c:
        assert not inspect(c).has_table("e2e_audit")  # dropped by the connectorDeleted stop
        triggers = c.execute(text("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal"))
        assert triggers.scalar() == 0
    assert AUDIT not in [c.name for c in runtime.store.configs.connectors()]

    # The runtime: the first driver's task failed with its driver and was submitted again.
    runs = {
        r["dag_run_id"]: r for r in stack.api("GET", "/dags/connect_runtime/dagRuns")["dag_runs"]
    }
    assert set(runs) == {deployed["dag_run_id"], standby_run}
    first = stack.api(
        "GET", f"/dags/connect_runtime/dagRuns/{deployed['dag_run_id']}/taskInstances/runtime"
    )
    assert first["try_number"] >= 2 and first["state"] == "running", first
    print(
        f"\ne2e: {lines} lines in; topic {len(committed)} committed records; table "
        f"{len(table)} rows, {len(of_committed)} of committed records "
        f"({len(of_committed) - len(expected)} duplicates), {len(aborted)} of aborted ones; "
        f"{changes} changes captured as {sum(audit_ids.values())} events "
        f"({sum(audit_ids.values()) - len(audit_ids)} twice); recoveries (s) {dict(recoveries)}; "
        f"stack up in {stack.start_s:.0f} s, then {elapsed:.0f} s to verified counts"
    )
