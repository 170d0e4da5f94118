"""The metadata store on a real SQLite file and on the local PostgreSQL server."""

from __future__ import annotations

import datetime as dt
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert, text
from sqlalchemy.exc import IntegrityError

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.control.history import connector_history
from airflow_provider_connect.store import (
    DeletionState,
    HostedRun,
    MetadataStore,
    RunReport,
    Sample,
    State,
    TargetState,
)
from airflow_provider_connect.store.models import Base, HerderLeaseRow
from tests.databases import database
from tests_common.kafka import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetadataStore]:
    with database(request.param, tmp_path) as url:
        store = MetadataStore(url, migrate=True)
        try:
            yield store
        finally:
            store.close()


def test_migrations_match_the_models(store: MetadataStore) -> None:
    with store.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"version_table": "connect_alembic_version"}
        )
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_migrating_again_is_harmless(store: MetadataStore) -> None:
    store.configs.create_connector("a", {"k": "v"})
    MetadataStore(store.url, migrate=True).close()
    assert store.configs.connector("a").config == {"k": "v"}


def test_connector_lifecycle(store: MetadataStore) -> None:
    created = store.configs.create_connector("orders", {"connector.class": "X", "tasks.max": "2"})
    assert (created.target_state, created.config_version, created.deleted) == (
        TargetState.STARTED,
        1,
        False,
    )
    with pytest.raises(AlreadyExistsException, match="already exists"):
        store.configs.create_connector("orders", {})
    updated, was_created = store.configs.put_connector_config(
        "orders", {"connector.class": "X", "tasks.max": "3"}
    )
    assert (was_created, updated.config_version, updated.config["tasks.max"]) == (False, 2, "3")
    _, was_created = store.configs.put_connector_config("other", {"connector.class": "Y"})
    assert was_created
    store.configs.set_target_state("orders", TargetState.PAUSED)
    assert store.configs.connector("orders").target_state is TargetState.PAUSED
    assert [c.name for c in store.configs.connectors()] == ["orders", "other"]

    store.configs.delete_connector("orders")
    assert [c.name for c in store.configs.connectors()] == ["other"]
    assert [c.name for c in store.configs.connectors(include_deleted=True)] == ["orders", "other"]
    with pytest.raises(NotFoundException):
        store.configs.connector("orders")
    with pytest.raises(AlreadyExistsException, match="being deleted"):
        store.configs.create_connector("orders", {})
    assert store.configs.deletion("orders").state is DeletionState.PENDING

    store.configs.finish_deletion("orders")
    deletion = store.configs.deletion("orders")
    assert deletion.state is DeletionState.DONE and deletion.finished_at >= deletion.requested_at
    store.configs.create_connector("orders", {"connector.class": "X"})  # the name is free again


def test_failed_cleanup_keeps_its_trace(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    store.configs.delete_connector("c")
    store.configs.finish_deletion("c", trace="Traceback: could not drop trigger")
    deletion = store.configs.deletion("c")
    assert deletion.state is DeletionState.FAILED and "drop trigger" in deletion.trace


def test_unknown_connectors_are_not_found(store: MetadataStore) -> None:
    for call in (
        lambda: store.configs.connector("nope"),
        lambda: store.configs.set_target_state("nope", TargetState.PAUSED),
        lambda: store.configs.delete_connector("nope"),
        lambda: store.configs.request_restart("nope"),
        lambda: store.configs.write_task_configs("nope", []),
    ):
        with pytest.raises(NotFoundException, match="Connector nope not found"):
            call()
    assert store.configs.deletion("nope") is None


def test_task_configs_by_generation(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    assert store.configs.task_configs("c") == (0, [])
    assert store.configs.write_task_configs("c", [{"t": "0"}, {"t": "1"}]) == 1
    assert store.configs.write_task_configs("c", []) == 2
    assert store.configs.task_configs("c") == (2, [])
    assert store.configs.write_task_configs("c", [{"t": "a"}]) == 3
    assert store.configs.task_configs("c") == (3, [{"t": "a"}])
    store.configs.write_task_count("c", 3, 1)
    assert store.configs.task_count("c") == (3, 1)


def test_task_runs_supersede_each_other(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    first = store.statuses.assign_task("c", 0, generation=1, worker_id="w1")
    assert store.statuses.put_task_status("c", 0, first, State.RUNNING, "w1")
    second = store.statuses.assign_task("c", 0, generation=2, worker_id="w2")
    assert not store.statuses.put_task_status(
        "c", 0, first, State.FAILED, "w1", "late"
    )  # superseded
    assert store.statuses.heartbeat("c", 0, first).current is False
    control = store.statuses.heartbeat("c", 0, second)
    assert (control.current, control.target_state, control.deleted) == (
        True,
        TargetState.STARTED,
        False,
    )
    assert store.statuses.put_task_status("c", 0, second, State.FAILED, "w2", "boom")
    (status,) = store.statuses.task_statuses("c")
    assert (status.state, status.trace, status.generation, status.worker_id) == (
        State.FAILED,
        "boom",
        2,
        "w2",
    )
    store.configs.delete_connector("c")
    assert store.statuses.heartbeat("c", 0, second).deleted


def test_heartbeat_moves_forward(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    run = store.statuses.assign_task("c", 0, 1, "w")
    before = store.statuses.task_statuses("c")[0].heartbeat_at
    store.statuses.heartbeat("c", 0, run)
    assert store.statuses.task_statuses("c")[0].heartbeat_at > before


def test_a_slot_hosts_heartbeats_are_written_together(store: MetadataStore) -> None:
    """One transaction for several runs tells each what its own beat would have: current
    or superseded, its connector's target state, deleted; only current runs' reports are
    written."""
    for name in ("a", "b", "gone"):
        store.configs.create_connector(name, {})
    a = store.statuses.assign_task("a", 0, 1, "w")
    old = store.statuses.assign_task("b", 0, 1, "w")
    b = store.statuses.assign_task("b", 0, 1, "w")
    gone = store.statuses.assign_task("gone", 0, 1, "w")
    store.configs.set_target_state("a", TargetState.PAUSED)
    store.configs.delete_connector("gone")
    controls = store.statuses.heartbeats(
        [
            (("a", 0, a), RunReport({"n": 1.0})),
            (("b", 0, old), RunReport({"n": 9.0})),
            (("b", 0, b), None),
            (("gone", 0, gone), None),
            (("never", 0, "x"), None),
        ]
    )
    assert [(c.current, c.target_state, c.deleted) for c in controls] == [
        (True, TargetState.PAUSED, False),
        (False, TargetState.STARTED, False),
        (True, TargetState.STARTED, False),
        (True, TargetState.STARTED, True),
        (False, TargetState.STOPPED, True),
    ]
    assert store.statuses.task_statuses("a")[0].metrics == {"n": 1.0}
    assert store.statuses.task_statuses("b")[0].metrics is None


def test_heartbeats_report_what_a_run_waits_on_until_a_new_run(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    run = store.statuses.assign_task("c", 0, 1, "w")
    missing = "topic orders does not exist"
    store.statuses.heartbeat("c", 0, run, RunReport({"n": 1.0}, missing))
    assert store.statuses.task_statuses("c")[0].waiting_on == missing
    store.statuses.heartbeat("c", 0, run)  # a beat without a report keeps it
    (status,) = store.statuses.task_statuses("c")
    assert (status.waiting_on, status.metrics) == (missing, {"n": 1.0})
    store.statuses.heartbeat("c", 0, run, RunReport({"n": 2.0}))  # the topic appeared
    assert store.statuses.task_statuses("c")[0].waiting_on is None
    store.statuses.heartbeat("c", 0, run, RunReport({"n": 3.0}, missing))
    store.statuses.assign_task("c", 0, 1, "w")  # a new run has waited on nothing yet
    assert store.statuses.task_statuses("c")[0].waiting_on is None
    store.statuses.heartbeat("c", 0, run, RunReport({"n": 4.0}, missing))  # superseded
    assert store.statuses.task_statuses("c")[0].waiting_on is None


def test_connector_status_and_task_removal(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    store.statuses.put_connector_status("c", State.RUNNING, "w", generation=1)
    assert store.statuses.connector_status("c").state is State.RUNNING
    for task_id in range(3):
        store.statuses.assign_task("c", task_id, 1, "w")
    store.statuses.remove_task_statuses("c", 1)
    assert [s.task_id for s in store.statuses.task_statuses("c")] == [0]


def test_source_offsets_upsert_in_batches(store: MetadataStore) -> None:
    store.offsets.commit_source_offsets(
        "c", [({"file": "a"}, {"pos": 1}), ({"file": "b", "x": 1}, {"pos": 5})]
    )
    store.offsets.commit_source_offsets("c", [({"file": "a"}, {"pos": 9})])
    assert store.offsets.source_offset("c", {"file": "a"}) == {"pos": 9}
    assert store.offsets.source_offset("c", {"x": 1, "file": "b"}) == {
        "pos": 5
    }  # key order does not matter
    assert store.offsets.source_offset("c", {"file": "zz"}) is None
    assert store.offsets.source_offsets("c") == [
        ({"file": "a"}, {"pos": 9}),
        ({"file": "b", "x": 1}, {"pos": 5}),
    ]
    store.offsets.commit_source_offsets("c", [])
    store.offsets.delete_source_offsets("c")
    assert store.offsets.source_offsets("c") == []


def test_offsets_survive_deletion(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    store.offsets.commit_source_offsets("c", [({"f": 1}, {"p": 2})])
    store.configs.delete_connector("c")
    store.configs.finish_deletion("c")
    assert store.offsets.source_offset("c", {"f": 1}) == {"p": 2}


def test_a_stopped_sinks_offsets_are_staged_to_alter_or_to_replace(store: MetadataStore) -> None:
    """Staged by a writer that reaches no Kafka: an alter changes only the partitions it
    names (over what was staged), a reset replaces every offset, and an alter after it
    joins the replacement; a connector no longer to be STOPPED gets nothing staged."""
    store.configs.create_connector("s", {}, TargetState.STOPPED)
    store.configs.stage_sink_offsets("s", [("t", 0, 5)])
    store.configs.stage_sink_offsets("s", [("t", 1, 7), ("t", 0, 6)])
    staged = store.configs.connector("s")
    assert staged.initial_offsets == (("t", 0, 6), ("t", 1, 7))
    assert staged.initial_offsets_alter
    store.configs.stage_sink_offsets("s", None)
    staged = store.configs.connector("s")
    assert staged.initial_offsets == () and not staged.initial_offsets_alter
    store.configs.stage_sink_offsets("s", [("t", 0, 2)])
    staged = store.configs.connector("s")
    assert staged.initial_offsets == (("t", 0, 2),) and not staged.initial_offsets_alter
    store.configs.drop_initial_offsets("s")
    assert store.configs.connector("s").initial_offsets is None
    store.configs.set_target_state("s", TargetState.STARTED)
    assert not store.configs.stage_sink_offsets("s", [("t", 0, 1)])
    assert store.configs.connector("s").initial_offsets is None


def test_restart_requests_are_taken_once(store: MetadataStore) -> None:
    store.configs.create_connector("c", {})
    store.configs.request_restart("c", include_tasks=True, only_failed=True)
    store.configs.request_restart("c", task_id=2)
    requests = store.configs.take_restart_requests()
    assert [(r.task_id, r.include_tasks, r.only_failed) for r in requests] == [
        (None, True, True),
        (2, False, False),
    ]
    assert store.configs.take_restart_requests() == []


def _write_offsets(url: str, worker: int, rounds: int) -> None:
    store = MetadataStore(url, migrate=False)
    run = store.statuses.assign_task("c", worker, 1, f"w{worker}")
    for i in range(rounds):
        store.offsets.commit_source_offsets("c", [({"worker": worker}, {"i": i})])
        store.statuses.heartbeat("c", worker, run)
    store.close()


def test_processes_write_one_sqlite_file_concurrently(tmp_path: Path) -> None:
    """The driver and local executors share the SQLite file: no write may fail as locked."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = MetadataStore(url, migrate=True)
    store.configs.create_connector("c", {})
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_offsets, args=(url, w, 150)) for w in range(4)]
    for p in workers:
        p.start()
    while any(p.is_alive() for p in workers):
        store.configs.connectors()  # the herder keeps reading meanwhile
        store.statuses.task_statuses("c")
    for p in workers:
        p.join()
    assert [p.exitcode for p in workers] == [0, 0, 0, 0]
    assert store.offsets.source_offsets("c") == [({"worker": w}, {"i": 149}) for w in range(4)]
    store.close()


def test_active_topics(store: MetadataStore) -> None:
    store.statuses.record_active_topics("c", ["b", "a"])
    store.statuses.record_active_topics("c", ["a", "c"])
    assert store.statuses.active_topics("c") == ["a", "b", "c"]
    store.statuses.reset_active_topics("c")
    assert store.statuses.active_topics("c") == []


def test_the_herder_lease_has_one_holder_at_a_time(store: MetadataStore) -> None:
    assert store.lease.acquire("a", ttl_s=30)
    assert store.lease.acquire("a", ttl_s=30)  # renewed
    assert not store.lease.acquire("b", ttl_s=30)
    store.lease.release("b")  # not b's to release
    assert not store.lease.acquire("b", ttl_s=30)
    store.lease.release("a")
    assert store.lease.acquire("b", ttl_s=0.001)
    wait_until(lambda: store.lease.acquire("a", ttl_s=30), 10, "b's lease expired")  # taken over
    assert not store.lease.acquire("b", ttl_s=30)


def test_two_drivers_taking_the_herder_lease_at_once_make_one_leader(tmp_path: Path) -> None:
    """PostgreSQL locks no row that does not exist yet: two drivers that find no lease both
    insert it, and the second's insert waits for the first's commit, then violates the
    key. The second must answer "another driver leads" (and stand by), not fail."""
    with database("postgresql", tmp_path) as url:
        store = MetadataStore(url, migrate=True)
        try:
            expires_at = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=30)
            with ThreadPoolExecutor(1) as pool, store.engine.begin() as first:  # mid-acquire
                first.execute(
                    insert(HerderLeaseRow).values(id=1, holder="first", expires_at=expires_at)
                )
                second = pool.submit(store.lease.acquire, "second", 30)
                wait_until(lambda: waits_on_a_lock(store), 10, "the second insert waits")
            assert second.result() is False  # the first committed: it leads
            lease = store.lease.current()
            assert lease is not None and lease.holder == "first"
            store.lease.release("first")  # the leader stops: the standby takes over
            assert store.lease.acquire("second", 30)
        finally:
            store.close()


def waits_on_a_lock(store: MetadataStore) -> bool:
    """Whether a session of the store's PostgreSQL database waits for another's lock."""
    with store.engine.connect() as c:
        query = (
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return bool(c.execute(text(query)).scalar())


def test_status_readers_judge_heartbeats_by_the_runtimes_recorded_timeout(
    store: MetadataStore,
) -> None:
    from airflow_provider_connect.control.status import connector_status

    store.configs.create_connector("c", {"connector.class": "FileStreamSource"})
    run = store.statuses.assign_task("c", 0, 1, "w")
    store.statuses.put_task_status("c", 0, run, State.RUNNING, "w")
    assert store.statuses.heartbeat_timeout_ms() == 15_000  # no runtime recorded one yet
    assert connector_status(store, "c")["tasks"][0]["state"] == "RUNNING"
    store.statuses.record_worker_settings({"task.heartbeat.timeout.ms": "100"})
    wait_until(
        lambda: connector_status(store, "c")["tasks"][0]["state"] == "UNASSIGNED",
        10,
        "a heartbeat older than the recorded 100 ms reads as UNASSIGNED",
    )
    store.statuses.heartbeat("c", 0, run)
    store.statuses.record_worker_settings({"task.heartbeat.timeout.ms": "60000"})
    assert connector_status(store, "c")["tasks"][0]["state"] == "RUNNING"


def test_the_history_prunes_as_it_appends_and_reads_every_connector_at_once(
    store: MetadataStore,
) -> None:
    def at(seconds: float) -> dt.datetime:
        return dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)

    history = store.history
    history.append({"a": None, "b": 3}, at(0), prune_before=at(-60))
    history.append({"a": None, "b": 1}, at(10), prune_before=at(-50))
    history.append({"a": None}, at(20), prune_before=at(5))  # the first ones go
    with pytest.raises(IntegrityError):  # taken already: nothing written
        history.append({"a": None}, at(20), prune_before=at(5))
    assert history.since(at(-100)) == {
        "a": [Sample(at(10), 0, None), Sample(at(20), 0, None)],
        "b": [Sample(at(10), 0, 1)],
    }
    paris = dt.timezone(dt.timedelta(hours=1))
    assert history.since(at(10).astimezone(paris)) == {"a": [Sample(at(20), 0, None)]}
    assert connector_history(store, at(-100)) == {
        "a": {
            "records": [["2026-01-01T00:00:10+00:00", 0], ["2026-01-01T00:00:20+00:00", 0]],
            "records_per_s": [["2026-01-01T00:00:20+00:00", 0.0]],
            "lag": [["2026-01-01T00:00:10+00:00", None], ["2026-01-01T00:00:20+00:00", None]],
        },
        "b": {
            "records": [["2026-01-01T00:00:10+00:00", 0]],
            "records_per_s": [],
            "lag": [["2026-01-01T00:00:10+00:00", 1]],
        },
    }


def test_the_history_counts_every_record_each_run_reported_once(store: MetadataStore) -> None:
    """A run reads a backlog before the first sample, is paused, then stopped (its rows
    removed, its final report written after that), and a new run starts: the samples add up
    to what the runs reported, the first after one of nothing when the first run started."""
    store.configs.create_connector("c", {})
    first = store.statuses.assign_task("c", 0, 1, "w")
    source = "source_record_write_total"

    def report(run: str, records: int, final: bool = False) -> None:
        store.statuses.heartbeat("c", 0, run, RunReport({source: records}, final=final))

    def sample() -> list[tuple[str, Sample]]:
        now = dt.datetime.now(dt.timezone.utc)
        return store.history.append({"c": None}, now, prune_before=now - dt.timedelta(hours=1))

    report(first, 0)  # its first beat, before it moves anything
    report(first, 100_000)
    backlog = sample()
    assert [s.records for _, s in backlog] == [0, 100_000]
    assert backlog[0][1].sampled_at < backlog[1][1].sampled_at
    report(first, 100_000)  # paused
    assert [s.records for _, s in sample()] == [0]
    report(first, 104_000)  # resumed
    store.statuses.remove_task_statuses("c", 0)  # stopped: no current run
    report(first, 108_600, final=True)
    assert [s.records for _, s in sample()] == [8_600]
    assert [s.records for _, s in sample()] == [0]  # the ended run is forgotten, not counted again
    second = store.statuses.assign_task("c", 0, 2, "w")
    report(second, 0)
    report(second, 700)
    assert [s.records for _, s in sample()] == [700]
    assert sum(s.records for s in store.history.since(dt.datetime.min)["c"]) == 109_300
    report(second, 900)  # not sampled before the connector goes, with its history
    store.configs.delete_connector("c")
    store.configs.finish_deletion("c")
    store.configs.create_connector("c", {})
    third = store.statuses.assign_task("c", 0, 1, "w")
    report(third, 5)
    assert [s.records for _, s in sample()] == [0, 5]


def test_hosted_runs_are_given_taken_back_and_forgotten(store: MetadataStore) -> None:
    """A host reads the runs given it that have not ended (the specs of those it does not
    know yet only); the herder takes back its hosts' outcomes once, forgets an ended host's
    runs, and on taking the lease every other host's."""
    store.hosts.assign("h1", "r1", {"connector": "a"})
    store.hosts.assign("h1", "r2", {"connector": "b"})
    store.hosts.assign("h2", "r3", {"connector": "c"})
    assert [r.run_id for r in store.hosts.runs("h1")] == ["r1", "r2"]
    assert store.hosts.runs("h1", known={"r1"}) == [HostedRun("r2", {"connector": "b"})]
    assert store.hosts.runs("h1", known={"r1", "r2"}) == []  # a look that finds nothing new
    store.hosts.end("r1", {"failed": True})
    assert [r.run_id for r in store.hosts.runs("h1")] == ["r2"]
    assert store.hosts.take_outcomes(["h2"]) == {}
    assert store.hosts.take_outcomes(["h1", "h2"]) == {"r1": {"failed": True}}
    assert store.hosts.take_outcomes(["h1"]) == {}
    store.hosts.forget(["h1"], others=True)
    assert store.hosts.runs("h2") == [] and [r.run_id for r in store.hosts.runs("h1")] == ["r2"]
    store.hosts.forget(["h1"])
    assert store.hosts.runs("h1") == []
