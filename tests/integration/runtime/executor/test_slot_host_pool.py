"""A slot host's connection pool to a PostgreSQL metadata database (a private cluster) lets
every thread of every run it may hold (``tasks.per.slot``) hold a transaction at once;
SQLAlchemy's default pool (5 + 10) made the 16th transaction wait for a connection until its
deadline and fail with StoreUnavailable although the database answered."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from sqlalchemy import text

from airflow_provider_connect.runtime.executor.slot_host import (
    HOST_CONNECTIONS,
    RUN_CONNECTIONS,
    SlotHost,
)
from airflow_provider_connect.runtime.executor.task_spec import HostSpec
from airflow_provider_connect.store import Database, StoreUnavailable
from tests_common.postgres_cluster import PostgresCluster
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

DEADLINE_S = 2.0
RUNS = 8
"""tasks.per.slot: its runs' threads and the host's are 26 transactions at once, above 15."""


@dataclass
class AtOnce:
    """Transactions begun on as many threads at once, each holding its connection until all
    of them have either begun or failed."""

    began: int = 0
    not_begun: list[Exception] = field(default_factory=list)
    """What the transactions that never had a connection raised."""
    failures: list[Exception] = field(default_factory=list)
    """What every failing transaction raised (one that began and held its connection past
    its deadline, waiting for the others, too)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)

    def hold(self, db: Database) -> None:
        began = False
        try:
            with db.tx() as session:
                assert session.execute(text("SELECT 1")).scalar() == 1
                began = True
                with self.lock:
                    self.began += 1
                self.release.wait(DEADLINE_S * 10)
        except StoreUnavailable as e:
            with self.lock:
                self.failures.append(e)
                if not began:
                    self.not_begun.append(e)

    def settled(self, threads: int) -> bool:
        with self.lock:
            return self.began + len(self.not_begun) == threads


def at_once(db: Database, threads: int) -> AtOnce:
    """Runs ``threads`` transactions at once on ``db``; returns once all have ended."""
    state = AtOnce()
    workers = [threading.Thread(target=state.hold, args=(db,)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    try:
        wait_until(
            lambda: state.settled(threads), DEADLINE_S * 5, "every transaction began or failed"
        )
    finally:
        state.release.set()
        for worker in workers:
            worker.join()
    return state


@pytest.fixture
def slot_host(pg_cluster: PostgresCluster) -> Iterator[SlotHost]:
    props = {
        "metadata.url": pg_cluster.url,
        "metadata.request.timeout.ms": str(int(DEADLINE_S * 1000)),
        "tasks.per.slot": str(RUNS),
    }
    host = SlotHost(HostSpec("host-pool-test", props))
    yield host
    host.db.close()


def test_every_thread_of_a_full_slot_host_holds_a_connection_at_once(slot_host: SlotHost) -> None:
    threads = RUNS * RUN_CONNECTIONS + HOST_CONNECTIONS
    assert threads > 15  # more than SQLAlchemy's default pool lets run at once
    state = at_once(slot_host.db, threads)
    assert state.failures == []
    assert state.began == threads


def test_the_default_pool_fails_the_sixteenth_transaction(pg_cluster: PostgresCluster) -> None:
    """What the slot host's pool fixes: 5 + 10 connections, the 16th transaction waits for
    one until its deadline and fails although the database answers."""
    db = Database(pg_cluster.url, timeout_s=DEADLINE_S)
    try:
        state = at_once(db, 16)
    finally:
        db.close()
    assert state.began == 15
    assert len(state.not_begun) == 1
    # its cause: the pool's limit, or the deadline, whichever of the two is noticed first
    assert "is unreachable: " in str(state.not_begun[0])
