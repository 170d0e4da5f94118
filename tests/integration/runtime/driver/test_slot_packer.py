"""Several Connect tasks in one Spark task slot (``tasks.per.slot``): a real runtime on the
test session's Spark and broker. Tasks pack into slot hosts and keep their own runs: one
failing, restarted, paused or deleted never stops its neighbours (counted by their
committed offsets and the records in their topics); KIP-419's ``stopped()``, KIP-275's
``is_closing()`` and KIP-901's ``stop(connector_deleted=True)`` still come exactly once per
task; a host's process killed runs its tasks again elsewhere with nothing lost; a task that
moves many records, or whose connector asks for it, gets a slot of its own."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.driver import slot_packer
from airflow_provider_connect.store.models import TaskStatusRow
from tests.connectors import EVENTS, PLAIN, SEQUENCE_SOURCE, read_events, recording_source
from tests_common.kafka import new_topic, read_values, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def packed(worker_props: dict[str, str], spark: Any) -> Iterator[Connect]:
    """A runtime whose tasks share slots, four to a slot."""
    runtime = Connect("packed-runtime", {**worker_props, "tasks.per.slot": "4"})
    runtime.start()
    yield runtime
    runtime.stop()


def sequence(topic: str, **extra: str) -> dict[str, str]:
    """A source counting 0, 1, 2, … into ``topic``, ten records every 20 ms unless told."""
    return {
        "connector.class": SEQUENCE_SOURCE,
        "topic": topic,
        "batch.size": "10",
        "poll.delay.ms": "20",
        **PLAIN,
        **extra,
    }


def task(connect: Connect, name: str) -> dict[str, Any]:
    tasks = connect.status(name)["tasks"]
    return tasks[0] if tasks else {"state": None, "worker_id": None}


def running(connect: Connect, *names: str) -> bool:
    return all(task(connect, n)["state"] == "RUNNING" for n in names)


def run_of(connect: Connect, name: str) -> str:
    """The id of the task's current run."""
    with connect.store.db.tx(read_only=True) as s:
        return s.scalars(select(TaskStatusRow.run_id).where(TaskStatusRow.connector == name)).one()


def next_of(connect: Connect, name: str) -> int:
    """Where a sequence source's committed offset stands (0 before any)."""
    offsets = connect.store.offsets.all_source_offsets().get(name, [])
    return max((o["next"] for _, o in offsets if o), default=0)


def moving(connect: Connect, *names: str) -> None:
    """Each source commits 50 more records than it had (their tasks move data)."""
    marks = {n: next_of(connect, n) for n in names}
    for name, mark in marks.items():
        wait_until(lambda n=name, m=mark: next_of(connect, n) >= m + 50, 60, f"{name} moves on")


def events(path: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in read_events(path) if e["event"] == kind]


def test_tasks_share_slots_and_a_connector_can_ask_for_its_own(
    packed: Connect, bootstrap: str
) -> None:
    topics = {f"seq-{i}": new_topic(bootstrap) for i in range(5)}
    for name, topic in topics.items():
        packed.add_connector(name, sequence(topic, **{"sequence.limit": "200"}))
    packed.add_connector(
        "own-slot", sequence(new_topic(bootstrap), **{"tasks.dedicated.slot": "true"})
    )
    wait_until(lambda: running(packed, *topics, "own-slot"), 60, "every task RUNNING")
    workers = {name: task(packed, name)["worker_id"] for name in [*topics, "own-slot"]}
    # Five tasks, four to a slot: two hosts, four tasks in one; the dedicated one alone.
    shared = sorted(list(workers.values())[:5].count(w) for w in set(list(workers.values())[:5]))
    assert shared == [1, 4], workers
    assert workers["own-slot"] not in list(workers.values())[:5]
    assert packed.herder is not None and packed.herder.slot_usage()[0] == 3
    for name, topic in topics.items():  # each delivered its own records
        values = {v.decode() for v in read_values(bootstrap, topic, 200, quiet_s=0.2) if v}
        assert values == {f"s0:{n}" for n in range(200)}, name


def test_a_neighbour_failing_restarted_paused_or_deleted_leaves_the_others_moving(
    packed: Connect, bootstrap: str, tmp_path: Path
) -> None:
    failing, deleted = tmp_path / "failing.jsonl", tmp_path / "deleted.jsonl"
    sink = tmp_path / "sink.jsonl"
    counted = new_topic(bootstrap)
    packed.add_connector("counted", sequence(counted))
    packed.add_connector("paused", sequence(new_topic(bootstrap)))
    packed.add_connector(
        "failing", recording_source(failing, new_topic(bootstrap), {"fail.after": "5"})
    )
    packed.add_connector("deleted", recording_source(deleted, new_topic(bootstrap), {"count": "5"}))
    wait_until(lambda: running(packed, "counted", "paused", "deleted"), 60, "RUNNING")
    wait_until(lambda: task(packed, "failing")["state"] == "FAILED", 60, "the task FAILED")
    assert "failed on purpose" in task(packed, "failing")["trace"]
    host = task(packed, "counted")["worker_id"]
    assert {task(packed, n)["worker_id"] for n in ("paused", "deleted", "failing")} == {host}
    counted_run, paused_run = run_of(packed, "counted"), run_of(packed, "paused")
    moving(packed, "counted", "paused")  # beside the FAILED one

    packed.writes.pause("paused")
    wait_until(lambda: task(packed, "paused")["state"] == "PAUSED", 60, "PAUSED")
    moving(packed, "counted")
    packed.writes.resume("paused")
    wait_until(lambda: running(packed, "paused"), 60, "RUNNING again")

    packed.writes.restart("failing", include_tasks=True)  # fails again after five records
    wait_until(lambda: len(events(failing, "task.start")) == 2, 60, "the task started again")
    packed.delete_connector("deleted")
    wait_until(
        lambda: all(
            c.name != "deleted" for c in packed.store.configs.connectors(include_deleted=True)
        ),
        60,
        "the delete done",
    )
    moving(packed, "counted", "paused")
    # never restarted: the same runs, in the same process
    assert (run_of(packed, "counted"), run_of(packed, "paused")) == (counted_run, paused_run)
    assert task(packed, "counted")["worker_id"] == host
    # KIP-901 and KIP-419, once each for the deleted task; the failing task's runs stopped
    # (not deleted) and stopped() once per run.
    assert [e["deleted"] for e in events(deleted, "task.stop")] == [True]
    assert len(events(deleted, "task.stopped")) == 1
    wait_until(lambda: task(packed, "failing")["state"] == "FAILED", 60, "FAILED again")
    assert len(events(failing, "task.stopped")) == 2

    sink_name = f"sink-{counted}"  # its consumer group its own on the shared broker
    packed.add_connector(  # KIP-275 in a shared slot
        sink_name,
        {
            "connector.class": "tests.connectors.RecordingSinkConnector",
            EVENTS: str(sink),
            "topics": counted,
            **PLAIN,
        },
    )
    wait_until(lambda: events(sink, "put"), 60, "the sink puts records")
    assert task(packed, sink_name)["worker_id"] == host
    packed.delete_connector(sink_name)
    wait_until(lambda: events(sink, "task.stop"), 60, "the sink stopped")
    closing = [e["closing"] for e in events(sink, "pre_commit")]
    assert closing[-1] is True and closing.count(True) == 1, closing
    assert [e["deleted"] for e in events(sink, "task.stop")] == [True]
    moving(packed, "counted", "paused")


def test_a_hosts_process_killed_runs_its_tasks_again_with_nothing_lost(
    packed: Connect, bootstrap: str
) -> None:
    topics = {f"lost-{i}": new_topic(bootstrap) for i in range(3)}
    limit = 3000
    for name, topic in topics.items():
        packed.add_connector(name, sequence(topic, **{"sequence.limit": str(limit)}))
    wait_until(lambda: running(packed, *topics), 60, "RUNNING")
    worker = task(packed, "lost-0")["worker_id"]
    assert {task(packed, n)["worker_id"] for n in topics} == {worker}
    wait_until(lambda: next_of(packed, "lost-0") >= 300, 60, "records committed")
    os.kill(int(worker.rsplit("/", 1)[1]), signal.SIGKILL)  # the slot host's Python worker
    wait_until(
        lambda: all(
            task(packed, n)["state"] == "RUNNING" and task(packed, n)["worker_id"] != worker
            for n in topics
        ),
        120,
        "every task RUNNING in another process",
    )
    for name, topic in topics.items():
        wait_until(lambda n=name: next_of(packed, n) == limit, 120, f"{name} committed its end")
        values = {v.decode() for v in read_values(bootstrap, topic, limit, quiet_s=0.2) if v}
        assert values == {f"s0:{n}" for n in range(limit)}, f"{name} lost records"


def test_a_busy_task_moves_to_a_slot_of_its_own(
    worker_props: dict[str, str], spark: Any, bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slot_packer, "RATE_WINDOW_S", 2.0)
    props = {**worker_props, "tasks.per.slot": "4", "tasks.dedicated.slot.record.rate": "2000"}
    with Connect("busy-runtime", props) as connect:
        connect.add_connector("quiet", sequence(new_topic(bootstrap)))  # 500 records/s
        busy = new_topic(bootstrap)
        connect.add_connector("busy", sequence(busy, **{"poll.delay.ms": "0"}))
        wait_until(lambda: running(connect, "quiet", "busy"), 60, "RUNNING")
        quiet_worker = task(connect, "quiet")["worker_id"]
        wait_until(
            lambda: running(connect, "busy") and task(connect, "busy")["worker_id"] != quiet_worker,
            60,
            "the busy task RUNNING in a slot of its own",
        )
        assert task(connect, "quiet")["worker_id"] == quiet_worker
        herder = connect.herder
        assert herder is not None and isinstance(herder.runner, slot_packer.SlotPacker)
        assert herder.runner.dedicated == {("busy", 0)}
        wait_until(
            lambda: herder.slot_usage()[0] == 2, 30, "two slots: the host and the busy task's"
        )
        end = next_of(connect, "busy")  # restarted from its committed offset: none lost
        values = {v.decode() for v in read_values(bootstrap, busy, end, quiet_s=0.2) if v}
        assert {f"s0:{n}" for n in range(end)} <= values


def test_a_task_that_does_not_stop_has_its_host_cancelled_and_its_neighbours_run_again(
    worker_props: dict[str, str], spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    """A thread cannot be killed: a hosted run that ignores stop() past twice the graceful
    timeout has its host's job cancelled, so that its next run never moves data beside it;
    its neighbour starts again in another process, with nothing lost."""
    hang = tmp_path / "hang"
    props = {**worker_props, "tasks.per.slot": "4", "task.shutdown.graceful.timeout.ms": "1000"}
    with Connect("stuck-runtime", props) as connect:
        neighbour, limit = new_topic(bootstrap), 2000
        connect.add_connector("neighbour", sequence(neighbour, **{"sequence.limit": str(limit)}))
        connect.add_connector("stuck", sequence(new_topic(bootstrap), **{"hang.while": str(hang)}))
        wait_until(lambda: running(connect, "neighbour", "stuck"), 60, "RUNNING")
        host = task(connect, "neighbour")["worker_id"]
        assert task(connect, "stuck")["worker_id"] == host
        wait_until(lambda: next_of(connect, "neighbour") >= 200, 60, "records committed")
        hang.touch()  # the stuck task's poll now ignores stop()
        connect.writes.restart_task("stuck", 0)
        wait_until(
            lambda: (
                running(connect, "neighbour") and task(connect, "neighbour")["worker_id"] != host
            ),
            60,
            "the neighbour RUNNING in another process",
        )
        hang.unlink()
        wait_until(lambda: running(connect, "stuck"), 60, "the stuck task's next run RUNNING")
        assert task(connect, "stuck")["worker_id"] != host
        wait_until(lambda: next_of(connect, "neighbour") == limit, 60, "the neighbour's end")
        values = {v.decode() for v in read_values(bootstrap, neighbour, limit, quiet_s=0.2) if v}
        assert values == {f"s0:{n}" for n in range(limit)}
