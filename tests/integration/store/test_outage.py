"""The metadata store when its PostgreSQL server crashes or hangs (a private cluster): every
transaction ends by its deadline with StoreUnavailable naming the database and the cause,
the loss and the return are logged once each, a fail-fast store answers at once while a
probe waits for the database, the REST API answers every read 503 naming the database
through a crash and a hang, and a task run's store writer keeps its offsets until the
database is back, never storing those of a run whose successor has started."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest
import requests

from airflow_provider_connect.runtime.executor.store_writes import StoreWrites
from airflow_provider_connect.runtime.rest.server import REST_STORE_TIMEOUT_S, RestListeners
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import MetadataStore, State, StoreUnavailable, TargetState
from tests_common.broker import free_port
from tests_common.kafka import wait_until
from tests_common.postgres_cluster import PostgresCluster

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


READS = (
    "/connectors",
    "/health",
    "/connectors/polled/status",
    "/connectors/polled",
    "/connectors/polled/config",
    "/connectors/polled/tasks",
    "/connectors/polled/offsets",
    "/connectors?expand=status&expand=info",
)
"""What the REST test reads, each path in a thread of its own, without a pause."""
OUTAGE_ANSWERS = 20
"""How many answers other than 200 each path gets during a fault before the database comes
back."""
Answer = tuple[str, int, str]  # path, status (0: no answer), message


@pytest.fixture
def rest_url(pg_cluster: PostgresCluster) -> Iterator[str]:
    """The REST API of a runtime on the cluster, as ``Connect`` serves it (a fail-fast store
    of its own with the REST deadline), holding one connector."""
    writer = MetadataStore(pg_cluster.url)
    try:
        if not writer.configs.connectors():
            config = {"connector.class": "FileStreamSource", "file": "in.txt", "topic": "t"}
            writer.configs.create_connector("polled", config, TargetState.STARTED)
    finally:
        writer.close()
    store = MetadataStore(pg_cluster.url, timeout_s=REST_STORE_TIMEOUT_S, fail_fast=True)
    worker = WorkerConfig(
        {
            "bootstrap.servers": "127.0.0.1:9",
            "metadata.url": pg_cluster.url,
            "listeners": f"http://127.0.0.1:{free_port()}",
        }
    )
    listeners = RestListeners(store, worker)
    listeners.start()
    try:
        yield listeners.url
    finally:
        listeners.stop()
        store.close()


def answers_during(url: str, fault: Callable[[], AbstractContextManager[object]]) -> list[Answer]:
    """Every answer to :data:`READS`, read over and over by one thread each, from the start
    of ``fault`` until each path has answered 200 again after it."""
    answers: list[Answer] = []
    over = threading.Event()
    back: set[str] = set()

    def read(path: str) -> None:
        with requests.Session() as session:
            while not (over.is_set() and path in back):
                try:
                    response = session.get(url + path, timeout=10)
                    message = "" if response.ok else response.json()["message"]
                    answer = (path, response.status_code, message)
                except (requests.RequestException, ValueError) as e:
                    answer = (path, 0, repr(e))
                answers.append(answer)
                if over.is_set() and answer[1] == 200:
                    back.add(path)

    def refused(times: int) -> bool:
        counted = collections.Counter(path for path, status, _ in answers if status != 200)
        return all(counted[path] >= times for path in READS)

    readers = [threading.Thread(target=read, args=(path,)) for path in READS]
    with fault():
        for reader in readers:
            reader.start()
        wait_until(lambda: refused(OUTAGE_ANSWERS), 60, "answers on each path during the fault")
    over.set()
    for reader in readers:
        reader.join(60)
    return answers


@pytest.mark.parametrize("fault", ["crashed", "frozen"])
def test_rest_answers_every_read_503_naming_the_database_through_an_outage(
    pg_cluster: PostgresCluster, rest_url: str, fault: str
) -> None:
    """Reads of every kind, each in a loop of its own, through a crash and a hang of the
    database and until each answers 200 again: nothing but 200 and 503 (``GET /health``
    too: unhealthy, naming the database), however rare; every 503 names the database."""
    answers = answers_during(rest_url, getattr(pg_cluster, fault))
    counted = collections.Counter((path, status) for path, status, _ in answers)
    assert {status for _, status in counted} == {200, 503}, counted
    database = f"The metadata database postgresql+psycopg://postgres@127.0.0.1:{pg_cluster.port}/"
    for path, status, message in answers:
        assert status == 200 or database in message, (path, message)
    assert all(counted[path, 503] > 0 for path in READS), counted


def test_a_run_keeps_its_offsets_through_an_outage_and_stores_them_once_back(
    pg_cluster: PostgresCluster, store: MetadataStore
) -> None:
    run_id = store.statuses.assign_task("writes", 0, 1, "test")
    writes = StoreWrites(store.statuses, store.offsets, ("writes", 0, run_id), "test", 0.2)
    partition = {"file": "in.txt"}
    try:
        with pg_cluster.crashed():
            writes.source_offsets([(partition, {"position": 10})])
            writes.sink_progress([("t", 0, 10, 12, 9)])  # 9 records and a commit marker
            wait_until(lambda: writes.failing, 30, "the writer finds the database away")
            writes.source_offsets([(partition, {"position": 20})])  # the later one wins
            writes.sink_progress([("t", 0, 20, 22, 9)])  # the records of both count
            assert not writes.flush(0)
        assert writes.flush(30)
        assert store.offsets.source_offsets("writes") == [(partition, {"position": 20})]
        (progress,) = store.offsets.sink_progress("writes")
        assert (progress.committed_offset, progress.end_offset, progress.records) == (20, 22, 18)
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
