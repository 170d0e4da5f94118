"""A task whose records cannot be delivered stalls itself only, not the tasks sharing its
producer (``shared_producer.py``: each task's records in flight stay within its share of the
producer's local queue).

The stuck records, for real: a topic that does not exist, with the producer's
``allow.auto.create.topics`` off (the test broker creates topics a producer asks for
otherwise). librdkafka holds such records in its local queue until
``topic.metadata.propagation.max.ms`` (30 s by default, here raised past the test) before it
fails them, as it holds records of a partition with no leader until
``message.timeout.ms``. The queue is 100 records (``queue.buffering.max.messages``) so that
one stuck task could fill it.
"""

from __future__ import annotations

import threading
import uuid

import psutil
import pytest

from airflow_provider_connect.runtime.executor.host_resources import HostResources
from airflow_provider_connect.runtime.executor.shared_producer import SharedProducers, TaskProducer
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome
from airflow_provider_connect.runtime.executor.task_control import HeartbeatGroup
from airflow_provider_connect.runtime.executor.task_runner import run_task
from airflow_provider_connect.runtime.executor.task_spec import TASK_CLASS_CONFIG, TaskSpec
from airflow_provider_connect.store import MetadataStore, TargetState
from tests.connectors import PLAIN, SequenceSourceTask
from tests_common.kafka import new_topic, read_values
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

QUEUE = 100
HELD_MS = 300_000
"""How long librdkafka holds the records of the missing topic: longer than the test."""
STUCK = {
    "queue.buffering.max.messages": str(QUEUE),
    "allow.auto.create.topics": "false",
    "topic.metadata.propagation.max.ms": str(HELD_MS),
}
NEIGHBOUR_RECORDS = 2_000
"""Twenty times the whole queue: the neighbour only delivers them if its records keep
moving."""


def missing_topic() -> str:
    return f"missing-{uuid.uuid4().hex[:10]}"


def fill(producer: TaskProducer, topic: str) -> int:
    """Produces to ``topic`` until ``produce`` refuses; returns how many it took."""
    taken = 0
    while True:
        try:
            producer.produce(topic, b"stuck")
        except BufferError:
            return taken
        taken += 1


def produce_all(producer: TaskProducer, topic: str, count: int, timeout_s: float) -> None:
    """Produces ``count`` records, waiting for the task's own deliveries while it is at
    its bound (as the source loop does); fails if one waits ``timeout_s``."""
    for i in range(count):
        wait_until(lambda i=i: try_produce(producer, topic, i), timeout_s, f"record {i} taken")
    assert producer.flush(timeout_s) == 0


def try_produce(producer: TaskProducer, topic: str, i: int) -> bool:
    try:
        producer.produce(topic, str(i).encode())
    except BufferError:
        producer.poll(0.05)
        return False
    return True


def test_a_stuck_task_holds_only_its_share_of_the_queue(bootstrap: str) -> None:
    producers = SharedProducers()
    config = {"bootstrap.servers": bootstrap, "linger.ms": "5", **STUCK, "on_delivery": None}
    stuck, neighbour = producers.client(config, tasks=2), producers.client(config, tasks=2)
    assert stuck._producer is neighbour._producer
    assert fill(stuck, missing_topic()) == QUEUE // 2 == len(stuck)
    topic = new_topic(bootstrap)
    produce_all(neighbour, topic, NEIGHBOUR_RECORDS, timeout_s=30)
    values = read_values(bootstrap, topic, NEIGHBOUR_RECORDS, quiet_s=0.2)
    assert sorted(values) == sorted(str(i).encode() for i in range(NEIGHBOUR_RECORDS))
    assert len(stuck) == QUEUE // 2  # still held, never delivered
    stuck.release()
    neighbour.release()


def test_without_shares_a_stuck_task_fills_the_queue_of_its_neighbours(bootstrap: str) -> None:
    """What the shares prevent: a task allowed the whole queue fills it with records that
    cannot leave, and its neighbour's first record is refused (librdkafka's full queue)."""
    producers = SharedProducers()
    config = {"bootstrap.servers": bootstrap, **STUCK, "on_delivery": None}
    stuck, neighbour = producers.client(config), producers.client(config)
    assert fill(stuck, missing_topic()) == QUEUE
    with pytest.raises(BufferError):
        neighbour.produce(new_topic(bootstrap), b"refused")
    assert len(neighbour) == 0
    stuck.release()
    neighbour.release()


def connections_to(bootstrap: str) -> set[int]:
    """The local ports of this process's connections to the broker."""
    port = int(bootstrap.rsplit(":", 1)[1])
    return {
        c.laddr.port
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port
    }


def test_a_producer_released_with_undelivered_records_closes(bootstrap: str) -> None:
    """The records a stuck task gave up on do not keep the shared producer (its threads and
    connections) once the last task released it: they are purged as it closes."""
    producers = SharedProducers()
    before = connections_to(bootstrap)
    stuck = producers.client({"bootstrap.servers": bootstrap, **STUCK, "on_delivery": None})
    fill(stuck, missing_topic())
    opened = wait_until(lambda: connections_to(bootstrap) - before, 10, "the producer connects")
    stuck.release()
    del stuck  # as the task drops its producer
    wait_until(
        lambda: not opened & connections_to(bootstrap), 10, "the producer's connections closed"
    )


class HostedRun:
    """A run on a thread of a slot host's process, with the host's resources."""

    def __init__(self, spec: TaskSpec, store: MetadataStore, host: HostResources) -> None:
        self.outcome: TaskOutcome | None = None
        self.thread = threading.Thread(target=self._run, args=(spec, store, host), daemon=True)
        self.thread.start()

    def _run(self, spec: TaskSpec, store: MetadataStore, host: HostResources) -> None:
        self.outcome = run_task(spec, store.db, host)

    def join(self, timeout_s: float = 60) -> TaskOutcome:
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "the task run did not end"
        assert self.outcome is not None
        return self.outcome


def start_hosted(
    store: MetadataStore,
    worker_props: dict[str, str],
    host: HostResources,
    name: str,
    config: dict[str, str],
) -> HostedRun:
    """Does what the herder does for a sequence source's task 0, then runs it in ``host``."""
    store.configs.create_connector(name, config)
    task_config = {**config, "assigned": "s0", TASK_CLASS_CONFIG: qualified(SequenceSourceTask)}
    generation = store.configs.write_task_configs(name, [task_config])
    run_id = store.statuses.assign_task(name, 0, generation, "test")
    spec = TaskSpec(name, 0, generation, run_id, config, task_config, worker_props)
    return HostedRun(spec, store, host)


def qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_a_source_task_of_a_slot_host_delivers_while_its_neighbour_is_stuck(
    store: MetadataStore, worker_props: dict[str, str], bootstrap: str
) -> None:
    """Two source tasks of one slot host share its producer (``tasks.per.slot=2``): one
    produces to a topic that does not exist, the other moves all its records and commits
    their offsets meanwhile; the stuck one stops when asked (its records not delivered)."""
    props = {
        **worker_props,
        "tasks.per.slot": "2",
        **{f"producer.{key}": value for key, value in STUCK.items()},
    }
    host = HostResources(HeartbeatGroup(store.statuses, 0.1))
    topic = new_topic(bootstrap)
    sequence = {**PLAIN, "sequence.limit": str(NEIGHBOUR_RECORDS), "batch.size": "500"}
    stuck = start_hosted(store, props, host, "stuck", {**sequence, "topic": missing_topic()})
    neighbour = start_hosted(store, props, host, "neighbour", {**sequence, "topic": topic})
    try:
        wait_until(
            lambda: (
                store.offsets.source_offset("neighbour", {"sequence": "s0"})
                == {"next": NEIGHBOUR_RECORDS}
            ),
            60,
            "the neighbour's records delivered and their offsets committed",
        )
        values = read_values(bootstrap, topic, NEIGHBOUR_RECORDS, quiet_s=0.2)
        assert sorted(values) == sorted(f"s0:{n}".encode() for n in range(NEIGHBOUR_RECORDS))
        assert stuck.thread.is_alive()
        assert store.offsets.source_offset("stuck", {"sequence": "s0"}) is None
    finally:
        for name in ("stuck", "neighbour"):
            store.configs.set_target_state(name, TargetState.STOPPED)
    assert neighbour.join().failed is False
    assert stuck.join().failed is False  # stopped while waiting for room: not a failure
    assert host.producers._producers == {}  # released by both
