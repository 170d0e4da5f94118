"""The herder on its own, through its TaskRunner protocol: no Spark. Runs are futures the
test ends; the metadata store is a real SQLite file."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_connect.control.status import connector_status
from airflow_provider_connect.runtime.driver import herder as herder_module
from airflow_provider_connect.runtime.driver.herder import Herder, TooManyTasksException
from airflow_provider_connect.runtime.driver.spark_runner import RunProgress
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome
from airflow_provider_connect.runtime.executor.task_spec import TaskSpec
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import (
    DeletionState,
    LogLevelStore,
    MetadataStore,
    State,
    StoreUnavailable,
    TargetState,
)
from tests.connectors import METERED_SOURCE, SEQUENCE_SOURCE, TOO_MANY_TASKS_SOURCE


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

    def slot_of(self, spec: TaskSpec) -> str:
        return spec.run_id

    def lead(self) -> None:
        pass

    def sync(self, live: Iterable[TaskSpec]) -> list[tuple[str, int]]:
        return []

    def close(self) -> None:
        pass

    def live(self) -> list[TaskSpec]:
        return [spec for spec, future in self.runs if not future.done()]

    def end(self, spec: TaskSpec, **outcome: Any) -> None:
        future = next(f for s, f in self.runs if s is spec)
        future.set_result(TaskOutcome(spec.connector, spec.task_id, spec.run_id, **outcome))

    def lose(self, spec: TaskSpec) -> None:
        """The Spark job failed under the run (executor lost)."""
        future = next(f for s, f in self.runs if s is spec)
        future.set_exception(RuntimeError("Job aborted: executor lost"))


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


def test_a_restart_of_failed_tasks_takes_a_failed_run_still_ending(store: MetadataStore) -> None:
    """A run writes FAILED before it returns: a restart asked for on seeing it
    (include_tasks, only_failed) replaces that run once it ended, and no other."""
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", sequence(2))
    h.tick()
    failing, healthy = runner.live()
    store.statuses.put_task_status("c", 1, healthy.run_id, State.RUNNING, "driver")
    store.statuses.put_task_status("c", 0, failing.run_id, State.FAILED, "driver", "boom")
    store.configs.request_restart("c", include_tasks=True, only_failed=True)
    h.tick()
    assert runner.live() == [failing, healthy]  # the new run waits for the old one to end
    runner.end(failing, failed=True, trace="boom")
    h.tick()
    (new, kept) = sorted(runner.live(), key=lambda spec: spec.task_id)
    assert new.task_id == 0 and new.run_id != failing.run_id and kept is healthy


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
    h = herder(store, runner, **{"task.heartbeat.timeout.ms": "60000"})  # outlives the test
    standby = herder(store, FakeRunner())
    store.configs.create_connector("c", sequence(1))
    h.tick()
    assert h.managed
    assert f"this driver holds the herder lease ({h.lease_holder})" in caplog.text
    standby.tick()
    assert "another driver holds the herder lease: standing by" in caplog.text
    assert not standby.leading and not standby.managed
    store.lease.release(h.lease_holder)  # as if it lapsed while h was stalled: taken over
    assert store.lease.acquire("another-driver", 30)
    h.tick()
    assert not h.managed and not h.leading
    runs = len(runner.runs)
    h.tick()
    assert len(runner.runs) == runs  # standing by: it starts nothing
    (run,) = runner.live()  # let go: it stops once superseded, or is cancelled in time
    deadline = time.monotonic() + 10
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


def too_many(**extra: str) -> dict[str, str]:
    """A connector that generates three task configs whatever its tasks.max (1)."""
    return {
        "connector.class": TOO_MANY_TASKS_SOURCE,
        "tasks.max": "1",
        "sequence.partitions": "3",
        "topic": "t",
        **extra,
    }


TOO_MANY = (
    "The connector c has generated 3 tasks, which is greater than 1, the maximum number of "
    "tasks it is configured to create. This behaviour should be considered a bug and is "
    "disallowed. If necessary, it can be permitted by reconfiguring the connector with "
    "'tasks.max.enforce' set to false; however, this option will be removed in a future "
    "release of Kafka Connect."
)


def test_too_many_task_configs_fail_the_connector_unless_tasks_max_is_not_enforced(
    store: MetadataStore, caplog: pytest.LogCaptureFixture
) -> None:
    assert str(TooManyTasksException("c", 3, 1)) == TOO_MANY  # Kafka's text
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", too_many())
    h.tick()
    status = store.statuses.connector_status("c")
    assert status is not None and status.state is State.FAILED
    assert status.trace is not None and TOO_MANY in status.trace
    assert runner.runs == [] and store.configs.task_configs("c")[1] == []

    store.configs.put_connector_config("c", too_many(**{"tasks.max.enforce": "false"}))
    h.tick()
    assert connector_state(store, "c") is State.RUNNING
    assert [s.task_id for s in runner.live()] == [0, 1, 2]  # all kept, none cut off
    assert [c["assigned"] for c in store.configs.task_configs("c")[1]] == ["s0", "s1", "s2"]
    assert "The connector c has generated 3 tasks, which is greater than 1" in caplog.text


def test_a_task_of_a_generation_beyond_tasks_max_fails_where_it_would_start(
    store: MetadataStore,
) -> None:
    """Kafka's Worker.startTask: with tasks.max.enforce, a task whose generation has more
    tasks than tasks.max fails instead of starting (here: restarted after the connector
    config enforces tasks.max again, which fails the connector and leaves the runs)."""
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", too_many(**{"tasks.max.enforce": "false"}))
    h.tick()
    first, second, third = runner.live()
    store.configs.put_connector_config("c", too_many())
    h.tick()
    assert connector_state(store, "c") is State.FAILED
    assert runner.live() == [first, second, third]  # running tasks are not stopped
    store.configs.request_restart("c", 2)
    h.tick()
    runner.end(third)
    h.tick()
    h.tick()
    assert runner.live() == [first, second]  # no new run of task 2
    failed = store.statuses.task_statuses("c")[2]
    assert failed.state is State.FAILED and failed.trace is not None and TOO_MANY in failed.trace


def unreachable(*_: object) -> int:
    raise StoreUnavailable("The metadata database is unreachable: test")


def test_a_herder_applies_only_the_log_levels_written_since_it_started(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KIP-976 as a Kafka worker: levels written before its startup are ignored, here and in
    its runs; the baseline is taken by the first pass that reaches the store."""
    namespace = f"kip976.herder.{uuid.uuid4().hex[:8]}"
    logger = logging.getLogger(namespace)
    store.log_levels.set(namespace, "DEBUG")  # before this runtime started
    runner = FakeRunner()
    h = herder(store, runner, **{"task.heartbeat.interval.ms": "60000"})
    store.configs.create_connector("c", sequence(1))
    with monkeypatch.context() as away:
        away.setattr(LogLevelStore, "version", unreachable)
        with pytest.raises(StoreUnavailable):
            h.tick()
        h._sync_log_levels()  # no baseline yet: nothing read, nothing applied
    assert (h.log_levels_since, runner.live(), logger.level) == (None, [], logging.NOTSET)
    try:
        h.tick()
        (spec,) = runner.live()
        assert spec.log_levels_since == h.log_levels_since == 1
        h._sync_log_levels()
        assert logger.level == logging.NOTSET

        store.log_levels.set(namespace, "WARN")  # while it runs
        h._sync_log_levels()  # within task.heartbeat.interval.ms of the last: not read
        assert logger.level == logging.NOTSET
        h._log_levels_due = time.monotonic()  # as once the interval has passed
        h._sync_log_levels()
        assert logger.level == logging.WARNING
    finally:
        logger.setLevel(logging.NOTSET)


def test_each_connector_instance_gets_its_own_metrics_which_end_with_it(
    store: MetadataStore,
) -> None:
    """KIP-877 on the driver: a reconfigured connector's new instance registers afresh; a
    stopped or deleted instance's metrics are closed."""
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector("c", {"connector.class": METERED_SOURCE, "topic": "t"})
    h.tick()
    first = h.managed["c"].context
    assert [(n.name, v) for n, v in h.plugin_metrics().items()] == [("task-config-requests", 1)]

    store.configs.put_connector_config("c", {"connector.class": METERED_SOURCE, "topic": "u"})
    h.tick()
    second = h.managed["c"].context
    assert first.closed and first.metrics.values() == {}
    assert second is not first and not second.closed
    assert [(n.name, v) for n, v in h.plugin_metrics().items()] == [("task-config-requests", 1)]

    store.configs.delete_connector("c")
    h.tick()
    assert second.closed and h.plugin_metrics() == {}


def test_a_sinks_initial_offsets_are_written_once_before_it_starts(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KIP-995: the herder writes a new sink's initial offsets before its tasks run; Kafka
    refusing them fails the connector (no run), a restart tries again, and once written
    they are never written again (a later restart keeps what the sink committed)."""
    written: list[tuple[tuple[str, int, int], ...] | None] = []

    def refuse(worker: WorkerConfig, configs: Any, record: Any) -> None:
        written.append(record.initial_offsets)
        raise herder_module.ConnectException("Broker: Unknown topic or partition")

    def accept(worker: WorkerConfig, configs: Any, record: Any) -> None:
        written.append(record.initial_offsets)
        configs.drop_initial_offsets(record.name)

    monkeypatch.setattr(herder_module, "write_initial_offsets", refuse)
    runner = FakeRunner()
    h = herder(store, runner)
    config = {"connector.class": "tests.connectors.RecordingSinkConnector", "topics": "t"}
    store.configs.create_connector(
        "sink", {**config, "events.file": "/dev/null"}, sink_offsets=[("t", 0, 7)]
    )
    h.tick()
    assert written == [(("t", 0, 7),)] and runner.live() == []
    status = store.statuses.connector_status("sink")
    assert status is not None and status.state is State.FAILED
    assert "Unknown topic or partition" in (status.trace or "")

    monkeypatch.setattr(herder_module, "write_initial_offsets", accept)
    store.configs.request_restart("sink")
    h.tick()
    h.tick()  # the restarted connector's task configs, then its run
    assert written[1:] == [(("t", 0, 7),)] and len(runner.live()) == 1
    assert store.configs.connector("sink").initial_offsets is None

    store.configs.request_restart("sink")
    h.tick()
    h.tick()
    assert len(written) == 2  # not again
    assert connector_state(store, "sink") is State.RUNNING


def test_source_offsets_set_outside_the_tasks_need_no_copy_without_exactly_once(
    store: MetadataStore,
) -> None:
    """Only an exactly-once worker's tasks read offsets from Kafka; elsewhere the offsets
    set outside them are already where they read them, and the mark is cleared at start."""
    runner = FakeRunner()
    h = herder(store, runner)
    store.configs.create_connector(
        "c", sequence(1), source_offsets=[({"sequence": "s0"}, {"next": 5})]
    )
    assert store.configs.connector("c").source_offsets_set
    h.tick()
    assert not store.configs.connector("c").source_offsets_set and len(runner.live()) == 1


def test_a_connector_asking_for_a_dedicated_slot_starts_before_low_rate_ones(
    store: MetadataStore,
) -> None:
    """A pass starts the connectors that ask for a slot of their own first, whatever their
    names, so that their runs are submitted (and given a Spark task slot) before those of
    connectors that share slots."""
    runner = FakeRunner()
    h = herder(store, runner)
    for i in range(5):
        store.configs.create_connector(f"low-{i}", sequence(1))
    store.configs.create_connector("z-busy", {**sequence(1), "tasks.dedicated.slot": "true"})
    h.tick()
    assert runner.runs[0][0].connector == "z-busy"
    assert len(runner.runs) == 6


def test_a_pass_starts_new_connectors_for_a_second_at_most_and_the_next_pass_comes_at_once(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many connectors are new, a pass ends after START_BUDGET_S of starts (one at
    least), so the lease is renewed and the runs synced meanwhile; a connector asking for a
    dedicated slot created meanwhile starts in the next pass, before the low-rate ones
    still waiting."""
    monkeypatch.setattr(herder_module, "START_BUDGET_S", 0.0)  # one start a pass
    runner = FakeRunner()
    h = herder(store, runner)
    for i in range(4):
        store.configs.create_connector(f"low-{i}", sequence(1))
    h.tick()
    assert [spec.connector for spec, _ in runner.runs] == ["low-0"]
    assert h.deferred  # the loop's next pass comes without waiting a tick
    store.configs.create_connector("z-busy", {**sequence(1), "tasks.dedicated.slot": "true"})
    h.tick()
    assert [spec.connector for spec, _ in runner.runs] == ["low-0", "z-busy"]
    for _ in range(3):
        h.tick()
    assert [spec.connector for spec, _ in runner.runs][2:] == ["low-1", "low-2", "low-3"]
    assert not h.deferred
