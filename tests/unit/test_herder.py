"""The herder on its own, through its TaskRunner protocol: no Spark. Runs are futures the
test ends; the metadata store is a real SQLite file."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_connect.control.status import connector_status
from airflow_provider_connect.runtime.driver import herder as herder_module
from airflow_provider_connect.runtime.driver.herder import Herder
from airflow_provider_connect.runtime.driver.spark_runner import RunProgress
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome
from airflow_provider_connect.runtime.executor.task_spec import TaskSpec
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import DeletionState, MetadataStore, State, TargetState
from tests.connectors import SEQUENCE_SOURCE


class FakeRunner:
    """Keeps every submitted run as a future the test ends; records cancellations."""

    def __init__(self) -> None:
        self.runs: list[tuple[TaskSpec, Future[TaskOutcome]]] = []
        self.cancelled: list[TaskSpec] = []
        self.progresses: dict[str, RunProgress] = {}  # by run id, as the status tracker says

    def submit(self, spec: TaskSpec) -> Future[TaskOutcome]:
        future: Future[TaskOutcome] = Future()
        self.runs.append((spec, future))
        return future

    def cancel(self, spec: TaskSpec) -> None:
        self.cancelled.append(spec)

    def progress(self, spec: TaskSpec) -> RunProgress | None:
        return self.progresses.get(spec.run_id)

    def slots(self) -> int:
        return 2

    def live(self) -> list[TaskSpec]:
        return [spec for spec, future in self.runs if not future.done()]

    def end(self, spec: TaskSpec, **outcome: Any) -> None:
        future = next(f for s, f in self.runs if s is spec)
        future.set_result(TaskOutcome(spec.connector, spec.task_id, spec.run_id, **outcome))

    def lose(self, spec: TaskSpec) -> None:
        """The Spark job failed under the run (executor lost)."""
        future = next(f for s, f in self.runs if s is spec)
        future.set_exception(RuntimeError("Job aborted: executor lost"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MetadataStore]:
    store = MetadataStore(f"sqlite:///{tmp_path / 'metadata.db'}", migrate=True)
    yield store
    store.close()


def herder(store: MetadataStore, runner: FakeRunner, **worker: str) -> Herder:
    config = WorkerConfig(
        {"task.shutdown.graceful.timeout.ms": "100", "task.heartbeat.timeout.ms": "1000", **worker}
    )
    return Herder(config, store.configs, store.statuses, store.lease, runner, "driver")


def connector_state(store: MetadataStore, name: str) -> State | None:
    status = store.statuses.connector_status(name)
    return None if status is None else status.state


def deletion_state(store: MetadataStore, name: str) -> DeletionState | None:
    deletion = store.configs.deletion(name)
    return None if deletion is None else deletion.state


def sequence(tasks: int) -> dict[str, str]:
    return {
        "connector.class": SEQUENCE_SOURCE,
        "tasks.max": str(tasks),
        "sequence.partitions": str(tasks),
        "topic": "t",
    }


def test_a_new_connector_gets_a_generation_and_a_run_per_task(store: MetadataStore) -> None:
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(2))
    h.tick()
    assert [(s.task_id, s.generation) for s in runner.live()] == [(0, 1), (1, 1)]
    assert store.configs.task_configs("c")[0] == 1
    assert connector_state(store, "c") is State.RUNNING
    assert store.statuses.heartbeat_timeout_ms() == 1000  # recorded for status readers
    h.tick()
    assert len(runner.runs) == 2  # nothing new while the runs live


def test_a_run_waiting_for_a_slot_says_so_and_each_step_of_a_recovery_is_logged(
    store: MetadataStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "airflow_provider_connect.runtime.driver.run_watch")
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(3))  # three tasks, two slots
    h.tick()
    first, second, spec = runner.live()

    def look(started: bool, lost_attempts: int) -> str:
        runner.progresses[spec.run_id] = RunProgress(started, lost_attempts)
        caplog.clear()
        h.watcher.next_watch = 0  # the watcher looks at most once a second
        h.tick()
        return caplog.text

    runner.progresses[first.run_id] = RunProgress(True, 0)
    assert look(False, 0) == ""  # a slot is free: the run is being launched
    runner.progresses[second.run_id] = RunProgress(True, 0)
    assert "task c-2: Waiting for a Spark task slot: the application has 2 now" in look(False, 0)
    task = connector_status(store, "c")["tasks"][2]
    assert task["state"] == "UNASSIGNED" and task["trace"].startswith("Waiting for a Spark")
    store.statuses.put_task_status("c", 2, spec.run_id, State.RUNNING, "exec-1/11")
    assert "task c-2 got a Spark task slot" in look(True, 0)
    assert "trace" not in connector_status(store, "c")["tasks"][2]
    runner.progresses[second.run_id] = RunProgress(False, 1)  # its executor is lost too
    assert "task c-2 lost its executor (it ran in exec-1/11)" in look(False, 1)
    assert "runs again" not in look(True, 1)  # the new attempt has not reported yet
    store.statuses.put_task_status("c", 2, spec.run_id, State.RUNNING, "exec-2/22")
    assert "task c-2 runs again in exec-2/22" in look(True, 1)
    assert "task c-2" not in look(True, 1)  # each step is told once


def test_reconfiguration_starts_new_runs_once_the_old_ones_ended(store: MetadataStore) -> None:
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(1))
    h.tick()
    (old,) = runner.live()
    store.configs.put_connector_config("c", sequence(2))
    h.tick()
    # Task 1 is new; task 0's new run waits: never two runs of one task at once.
    assert [(s.task_id, s.generation) for s in runner.live()] == [(0, 1), (1, 2)]
    assert store.statuses.heartbeat("c", 0, old.run_id).current is False  # it learns to stop
    runner.end(old)
    h.tick()
    assert [(s.task_id, s.generation) for s in runner.live()] == [(1, 2), (0, 2)]


def test_a_superseded_run_that_does_not_stop_is_cancelled(store: MetadataStore) -> None:
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(1))
    h.tick()
    (old,) = runner.live()
    store.configs.put_connector_config("c", sequence(1) | {"topic": "u"})
    h.tick()
    deadline = time.monotonic() + 10
    while not runner.cancelled and time.monotonic() < deadline:
        time.sleep(0.05)  # the graceful timeout is 100 ms
        h.tick()
    assert runner.cancelled == [old]


def test_a_lost_job_is_run_again_and_a_failed_one_is_not(store: MetadataStore) -> None:
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(2))
    h.tick()
    first, second = runner.live()
    runner.lose(first)
    runner.end(second, failed=True, trace="boom")
    h.tick()
    (again,) = runner.live()
    assert again.task_id == 0 and again.run_id != first.run_id
    h.tick()
    assert runner.live() == [again]  # FAILED stays FAILED without a restart backoff
    # the run could not write its FAILED state (the store was away): the herder did
    failed = store.statuses.task_statuses("c")[1]
    assert (failed.state, failed.trace) == (State.FAILED, "boom")


def test_failed_tasks_restart_after_a_doubling_backoff(store: MetadataStore) -> None:
    runner = FakeRunner()
    h = herder(store, runner, **{"task.restart.backoff.ms": "200"})
    store.configs.create_connector("c", sequence(1))
    h.tick()
    restarts: list[float] = []
    for _ in range(3):
        (run,) = runner.live()
        runner.end(run, failed=True, trace="boom")
        failed_at = time.monotonic()
        while not runner.live():
            h.tick()
            time.sleep(0.01)
        restarts.append(time.monotonic() - failed_at)
    assert restarts[0] >= 0.2 and restarts[1] >= 0.4 and restarts[2] >= 0.8


def test_a_restart_request_replaces_the_run(store: MetadataStore) -> None:
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(1))
    h.tick()
    (old,) = runner.live()
    store.configs.request_restart("c", 0)
    h.tick()
    runner.end(old)
    h.tick()
    (new,) = runner.live()
    assert new.run_id != old.run_id and new.generation == old.generation


def test_a_delete_stops_the_runs_as_deleted_and_records_the_outcome(
    store: MetadataStore,
) -> None:
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(1))
    h.tick()
    (run,) = runner.live()
    store.configs.delete_connector("c")
    h.tick()
    assert store.statuses.heartbeat("c", 0, run.run_id).deleted  # the run learns it so
    assert deletion_state(store, "c") is DeletionState.PENDING
    runner.end(run, deleted=True, cleanup_trace="could not drop the queue")
    h.tick()
    deletion = store.configs.deletion("c")
    assert deletion is not None and deletion.state is DeletionState.FAILED
    assert deletion.trace == "could not drop the queue"
    assert store.configs.connectors(include_deleted=True) == []


def test_a_delete_accepted_while_no_runtime_ran_gets_cleanup_runs(store: MetadataStore) -> None:
    store.configs.create_connector("c", sequence(2))
    store.configs.write_task_configs("c", [{"task.class": "x.Y"}, {"task.class": "x.Y"}])
    store.configs.delete_connector("c")
    runner = FakeRunner()
    h = herder(store, runner)
    h.tick()
    cleanups = runner.live()
    assert [(s.task_id, s.cleanup_only) for s in cleanups] == [(0, True), (1, True)]
    for spec in cleanups:
        runner.end(spec, deleted=True)
    h.tick()
    assert deletion_state(store, "c") is DeletionState.DONE


def test_a_herder_that_loses_the_lease_stands_by(
    store: MetadataStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "airflow_provider_connect.runtime.driver.herder")
    runner = FakeRunner()
    h = herder(store, runner, **{"task.heartbeat.timeout.ms": "200"})
    standby = herder(store, FakeRunner())
    store.configs.create_connector("c", sequence(1))
    h.tick()
    assert h.managed
    assert f"this driver holds the herder lease ({h.lease_holder})" in caplog.text
    standby.tick()
    assert "another driver holds the herder lease: standing by" in caplog.text
    deadline = time.monotonic() + 10
    while not store.lease.acquire("another-driver", 30):  # ours expires after 200 ms
        assert time.monotonic() < deadline
        time.sleep(0.05)
    h.tick()
    assert not h.managed and not h.leading
    runs = len(runner.runs)
    h.tick()
    assert len(runner.runs) == runs  # standing by: it starts nothing
    (run,) = runner.live()  # let go: it stops once superseded, or is cancelled in time
    while run not in runner.cancelled:
        assert time.monotonic() < deadline
        h.tick()
        time.sleep(0.02)


def test_after_its_own_store_outage_a_standby_leaves_an_expired_lease_a_lease_period(
    store: MetadataStore,
) -> None:
    """The leader was cut off by the same outage: it renews first, within a tick."""
    leader = herder(store, FakeRunner(), **{"task.heartbeat.timeout.ms": "300"})
    standby = herder(store, FakeRunner(), **{"task.heartbeat.timeout.ms": "300"})
    leader.tick()
    deadline = time.monotonic() + 10
    while store.lease.current() is not None:  # the leader's lease expires (300 ms)
        assert time.monotonic() < deadline
        time.sleep(0.02)
    standby.store_back_at = time.monotonic()  # as its herder loop notes an outage's end
    standby.tick()
    assert not standby.leading  # expired, but not a lease period since its store came back
    while not standby.leading:
        assert time.monotonic() < deadline
        time.sleep(0.02)
        standby.tick()
    assert time.monotonic() - standby.store_back_at >= standby.lease_s


def test_stopped_connectors_have_no_runs(store: MetadataStore) -> None:
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(1))
    h.tick()
    (run,) = runner.live()
    store.configs.set_target_state("c", TargetState.STOPPED)
    h.tick()
    assert store.configs.task_configs("c") == (2, [])
    runner.end(run)
    h.tick()
    assert runner.live() == []
    assert connector_state(store, "c") is State.STOPPED


def test_placeholders_are_validated_once_resolved_and_no_trace_shows_their_values(
    store: MetadataStore,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Writers defer the values of placeholder keys (control.validation); the herder checks
    them resolved where the connector starts: an invalid value, or a placeholder no provider
    resolves, fails the connector naming the key, and neither its trace nor the log shows a
    resolved value. A config without placeholders is not validated again."""
    secrets = tmp_path / "secrets.properties"
    secrets.write_text("good=all\nbad=s3cret-tolerance\n")
    validated: list[dict[str, str]] = []
    real = herder_module.validate_connector_config
    monkeypatch.setattr(
        herder_module,
        "validate_connector_config",
        lambda config, *a, **k: validated.append(config) or real(config, *a, **k),
    )
    file_provider = "org.apache.kafka.common.config.provider.FileConfigProvider"
    h = herder(
        store,
        FakeRunner(),
        **{"config.providers": "file", "config.providers.file.class": file_provider},
    )

    def placeholder(key: str) -> str:
        return f"${{file:{secrets}:{key}}}"

    for name, tolerance in (
        ("good", placeholder("good")),
        ("bad", placeholder("bad")),
        ("typo", "${flie:/nowhere:good}"),
        ("plain", "all"),
    ):
        config = {**sequence(1), "name": name, "errors.tolerance": tolerance}
        store.configs.create_connector(name, config)
    caplog.set_level(logging.DEBUG)
    h.tick()
    assert connector_state(store, "good") is State.RUNNING
    assert connector_state(store, "plain") is State.RUNNING
    assert [c["errors.tolerance"] for c in validated] == [  # by name
        "s3cret-tolerance",
        "all",
        "${flie:/nowhere:good}",
    ]
    for name in ("bad", "typo"):
        status = store.statuses.connector_status(name)
        assert status is not None and status.state is State.FAILED
        assert "errors.tolerance: Invalid value" in (status.trace or ""), status.trace
    trace = store.statuses.connector_status("bad").trace or ""  # type: ignore[union-attr]
    assert placeholder("bad") in trace and "s3cret-tolerance" not in trace
    assert "s3cret-tolerance" not in caplog.text
