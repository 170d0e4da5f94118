"""The metadata store when its PostgreSQL server crashes or hangs (a private cluster): every
transaction ends by its deadline with StoreUnavailable naming the database and the cause,
the loss and the return are logged once each, a fail-fast store answers at once while a
probe waits for the database, and a task run's store writer keeps its offsets until the
database is back, never storing those of a run whose successor has started."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from airflow_provider_connect.runtime.executor.store_writes import StoreWrites
from airflow_provider_connect.store import MetadataStore, State, StoreUnavailable
from demo.postgres_cluster import PostgresCluster
from tests.kafka import wait_until

pytestmark = pytest.mark.integration

DEADLINE_S = 2.0


@pytest.fixture
def store(pg_cluster: PostgresCluster) -> Iterator[MetadataStore]:
    opened = MetadataStore(pg_cluster.url, timeout_s=DEADLINE_S)
    yield opened
    opened.close()


def failure(store: MetadataStore) -> tuple[str, float]:
    """What a transaction raises, and how long it took."""
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as raised:
        store.configs.connectors()
    return str(raised.value), time.monotonic() - started


def test_a_hung_database_fails_each_transaction_at_its_deadline(
    pg_cluster: PostgresCluster, store: MetadataStore, caplog: pytest.LogCaptureFixture
) -> None:
    store.configs.connectors()  # a pooled connection, which the freeze catches mid-use
    caplog.set_level(logging.INFO)
    with pg_cluster.frozen():
        first, first_s = failure(store)
        second, second_s = failure(store)  # a new connection: psycopg waits 2 s at least
    assert first == (
        f"The metadata database postgresql+psycopg://postgres@127.0.0.1:{pg_cluster.port}/postgres "
        f"is unreachable: no answer within {DEADLINE_S:g} s"
    )
    assert "unreachable" in second
    assert DEADLINE_S <= first_s < DEADLINE_S + 5 and second_s < DEADLINE_S + 5
    assert store.configs.connectors() == []  # back: the pool holds no broken connection
    lines = [r.getMessage() for r in caplog.records if "metadata database" in r.getMessage()]
    assert len(lines) == 2 and "unreachable" in lines[0] and "reachable again" in lines[1]


def test_a_crashed_database_fails_with_its_cause_and_is_found_again(
    pg_cluster: PostgresCluster, store: MetadataStore
) -> None:
    store.configs.connectors()
    with pg_cluster.crashed():
        message, took = failure(store)
    assert "Connection refused" in message and took < DEADLINE_S + 1
    assert store.configs.connectors() == []


def test_a_fail_fast_store_answers_at_once_while_a_probe_waits(pg_cluster: PostgresCluster) -> None:
    fast = MetadataStore(pg_cluster.url, timeout_s=1.5, fail_fast=True)
    try:
        with pg_cluster.crashed():
            failure(fast)
            message, took = failure(fast)
            assert "Connection refused" in message and took < 0.5
        wait_until(lambda: fast.db.reachable, 30, "the probe finds the database again")
        assert fast.configs.connectors() == []
    finally:
        fast.close()


def test_a_run_keeps_its_offsets_through_an_outage_and_stores_them_once_back(
    pg_cluster: PostgresCluster, store: MetadataStore
) -> None:
    run_id = store.statuses.assign_task("writes", 0, 1, "test")
    writes = StoreWrites(store.statuses, store.offsets, ("writes", 0, run_id), "test", 0.2)
    partition = {"file": "in.txt"}
    try:
        with pg_cluster.crashed():
            writes.source_offsets([(partition, {"position": 10})])
            wait_until(lambda: writes.failing, 30, "the writer finds the database away")
            writes.source_offsets([(partition, {"position": 20})])  # the later one wins
            assert not writes.flush(0)
        assert writes.flush(30)
        assert store.offsets.source_offsets("writes") == [(partition, {"position": 20})]
        newer = store.statuses.assign_task("writes", 0, 1, "test")  # superseded, and yet
        writes.source_offsets([(partition, {"position": 30})])  # its last commit stands
        assert writes.flush(30)
        assert store.offsets.source_offsets("writes") == [(partition, {"position": 30})]
        store.statuses.put_task_status("writes", 0, newer, State.RUNNING, "test")  # started
        writes.source_offsets([(partition, {"position": 5})])  # a zombie's late commit
        assert writes.flush(30)
        assert store.offsets.source_offsets("writes") == [(partition, {"position": 30})]
    finally:
        assert writes.close(5, DEADLINE_S)


def test_a_write_that_fails_otherwise_fails_the_run(store: MetadataStore) -> None:
    """Not the database being away: the loop thread gets the error at its next call."""
    run_id = store.statuses.assign_task("broken", 0, 1, "test")
    writes = StoreWrites(store.statuses, store.offsets, ("broken", 0, run_id), "test", 0.2)
    writes.source_offsets([({"file": "in.txt"}, {"position": object()})])  # not JSON
    with pytest.raises(Exception, match="not JSON serializable"):
        writes.flush(30)
    writes.close(1, DEADLINE_S)
