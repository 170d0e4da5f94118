"""Fault tests: ``connect-runtime standalone`` runs file → FileStreamSource → topic →
FileStreamSink → file as a user runs it, while parts of it are killed with SIGKILL
mid-stream (once in the short variants, several times in the long ones); then every record
is counted.

* at-least-once: every line reaches the topic and the sink file (duplicates counted);
* exactly-once source: every line is committed to the topic exactly once (read through
  CommittedLogReader, as the test broker does not filter aborted transactions), and the
  sink file (at-least-once) has every line.

A partition between the runtime and the broker (the broker in a network namespace of the
test's own, ``tests_common.netns``, its link's packets dropped both ways for 30 s, no reset)
leaves every connection half-open: ``GET /health`` says unhealthy naming the Kafka cluster
while it lasts, every task is RUNNING and the sink moving again within 30 s of the heal,
nothing is lost, exactly-once topics hold no duplicate and at-least-once duplicates are
counted and bounded.

The metadata database's faults (a crash, a hang, each longer than the herder lease; a
partition, the cluster in a network host of its own) run through
``tests_common/store_outage.py`` on a private PostgreSQL cluster: the data keeps moving, REST
answers 503 naming the database (``/health`` too, unhealthy), every task is RUNNING again
within 30 s after, nothing is lost.

The short variants run in ``make test``, a kill of the driver under at-least-once and one of
an executor under exactly-once; the long ones (marked ``faults``: more kills, more data) and
the short ones under the other guarantee in ``make test-faults``.
"""

from __future__ import annotations

import collections
import json
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from airflow_provider_connect.control.progress import not_running
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime.driver.cluster_watch import PROBE_INTERVAL_S, PROBE_TIMEOUT_S
from airflow_provider_connect.store import MetadataStore
from tests_common import netns
from tests_common.broker import EmbeddedBroker, free_port
from tests_common.kafka import committed_values, new_topic, read_messages, wait_until
from tests_common.postgres_cluster import postgres_cluster_or_skip
from tests_common.processes import (
    kill_tree,
    rest_get,
    start_runtime,
    tasks_running,
    write_properties,
)
from tests_common.spark_cluster import SparkCluster
from tests_common.store_outage import Drill, Outcome

pytestmark = pytest.mark.integration

SHORT = pytest.param(1, 20_000, id="short")  # one kill each; more in make test-faults
LONG = pytest.param(5, 100_000, id="long", marks=pytest.mark.faults)
EXECUTOR_BACKEND = "CoarseGrainedExecutorBackend"
BROKER_FREEZE_S = 10
SESSION_S = 6  # the sink's consumer.session.timeout.ms
HEALTH_TOLD_S = PROBE_INTERVAL_S + PROBE_TIMEOUT_S + 5  # the cluster watch's, a margin
RECOVERED_S = 30
KAFKA_AWAY = "the Kafka cluster at"  # what the hook's waits say (the herder's record)
NO_HEARTBEAT = "No heartbeat from worker"  # what status says of a silent worker's tasks
GUARANTEES = {False: "at-least-once", True: "exactly-once"}
NEEDS_NETWORK_HOSTS = pytest.mark.skipif(
    netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())
)
"""The partition tests run their parts in network namespaces (``tests_common.netns``)."""


def kills_under(short_exactly_once: bool) -> pytest.MarkDecorator:
    """The kills of a test, each under both guarantees, in ``make test-faults``; in
    ``make test``, the short variant under one of them (exactly-once when
    ``short_exactly_once``): the driver's and the executor's kills share the two."""
    return pytest.mark.parametrize(
        ("kills", "total", "exactly_once"),
        [
            pytest.param(
                *variant.values,
                exactly_once,
                id=f"{variant.id}-{GUARANTEES[exactly_once]}",
                marks=[
                    *variant.marks,
                    *([] if exactly_once == short_exactly_once else [pytest.mark.faults]),
                ],
            )
            for variant in (SHORT, LONG)
            for exactly_once in GUARANTEES
        ],
    )


@dataclass
class Pipeline:
    """The two connectors and their runtime process; ``restart`` after a kill."""

    bootstrap: str
    tmp_path: Path
    exactly_once: bool
    master: str
    total: int
    topic: str = ""
    port: int = field(default_factory=free_port)
    runtime: subprocess.Popen[bytes] | None = None
    broker: EmbeddedBroker | None = None
    """The broker of ``bootstrap`` when the test started it (to freeze it, or to cut its
    link when it runs in a host of its own)."""
    partitions: list[Partition] = field(default_factory=list)
    """What each cut of a link showed (:meth:`kill_broker_link`, :meth:`kill_worker_link`)."""
    cut_s: float = 30
    """How long each cut of a link lasts."""
    airflow_connection: str = "connect_default"
    """The Airflow connection to the runtime's metadata database, for the hook."""
    worker: dict[str, str] = field(default_factory=dict)
    """Worker settings beside the test's own (a metadata database, the driver's address)."""
    spark_workers: netns.NetworkHost | None = None
    """The host of the Spark workers, when they run in one (to cut its link)."""

    def __post_init__(self) -> None:
        self.topic = new_topic(self.bootstrap)
        self.source, self.sink = self.tmp_path / "in.txt", self.tmp_path / "out.txt"
        worker = {
            "bootstrap.servers": self.bootstrap,
            "offset.storage.file.filename": str(self.tmp_path / "offsets.db"),
            "listeners": f"http://127.0.0.1:{self.port}",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "300",
            "task.heartbeat.interval.ms": "200",
            "consumer.session.timeout.ms": "6000",
            "spark.master": self.master,
            **self.worker,
        }
        if "metadata.url" in self.worker:  # the metadata database is not the offsets file's
            del worker["offset.storage.file.filename"]
        if self.exactly_once:
            worker["exactly.once.source.support"] = "enabled"
            worker["offset.storage.topic"] = f"offsets-{self.topic}"
            worker["offset.storage.partitions"] = "1"
        files = [write_properties(self.tmp_path / "worker.properties", worker)]
        # Named after the topic: the sink's consumer group (connect-<name>) is its own on the
        # broker the test session shares.
        self.names = {"src": f"src-{self.topic}", "sink": f"sink-{self.topic}"}
        for kind, config in {
            "src": {"connector.class": "FileStreamSource", "file": str(self.source)},
            "sink": {"connector.class": "FileStreamSink", "file": str(self.sink)},
        }.items():
            name = self.names[kind]
            topic_key = "topics" if kind == "sink" else "topic"
            values = {"name": name, **config, topic_key: self.topic}
            files.append(write_properties(self.tmp_path / f"{name}.properties", values))
        self.args = ["standalone", *map(str, files)]
        self.log = self.tmp_path / "runtime.log"

    def start(self) -> None:
        self.runtime = start_runtime(self.args, self.log)
        wait_until(
            lambda: (
                rest_get(f"http://127.0.0.1:{self.port}/connectors") == sorted(self.names.values())
            ),
            120,
            "REST lists both connectors",
        )

    def sink_lines(self) -> list[str]:
        return self.sink.read_text().splitlines() if self.sink.exists() else []

    def kill_driver(self) -> None:
        kill_tree(self.runtime)
        self.start()

    def kill_broker(self) -> None:
        """Freezes the broker (SIGSTOP) for longer than the sink's consumer session
        (``consumer.session.timeout.ms``, 6 s), then lets it go on (SIGCONT)."""
        assert self.broker is not None
        with self.broker.frozen():
            threading.Event().wait(BROKER_FREEZE_S)  # the fault's length, not a wait on a state

    def kill_broker_link(self) -> None:
        """Cuts the link to the broker's host: :meth:`_cut`."""
        assert self.broker is not None and self.broker.host is not None
        self._cut(self.broker.host)

    def kill_worker_link(self) -> None:
        """Cuts the link to the Spark workers' host (their executors and the tasks on
        them): :meth:`_cut`."""
        assert self.spark_workers is not None
        self._cut(self.spark_workers)

    def _cut(self, host: netns.NetworkHost) -> None:
        """Cuts ``host``'s link for ``cut_s``, asking each second meanwhile ``GET /health``
        and the Airflow hook's view of the sink (what it waits on; why it does not run, as
        the sensors say), then heals it and records how long every task took to be RUNNING
        with the sink moving on again."""
        told = []
        hook = ConnectHook(self.airflow_connection)
        host.cut()
        cut_at = time.monotonic()
        try:
            while (elapsed := time.monotonic() - cut_at) < self.cut_s:
                view = hook.connector_view(self.names["sink"])
                status = rest_get(
                    f"http://127.0.0.1:{self.port}/connectors/{self.names['sink']}/status"
                )
                tasks = status["tasks"] if isinstance(status, dict) else []
                told.append(
                    Told(
                        elapsed,
                        *health(self.port),
                        view.waiting_on,
                        not_running(view),
                        tuple(task.get("trace", task["state"]) for task in tasks),
                    )
                )
                threading.Event().wait(1)  # the fault's length, sampled: not a wait on a state
        finally:
            host.heal()
            hook.close()
        healed_at, lines = time.monotonic(), len(self.sink_lines())
        wait_until(
            lambda: self._all_running() and len(self.sink_lines()) > lines,
            RECOVERED_S * 4,
            "every task RUNNING and the sink moving after the heal",
        )
        self.partitions.append(Partition(told, time.monotonic() - healed_at))

    def _all_running(self) -> bool:
        return tasks_running(f"http://127.0.0.1:{self.port}", list(self.names.values()))

    def kill_executor(self) -> None:
        executors = wait_until(self._executors, 60, "an executor JVM is up")
        min(executors, key=lambda p: p.create_time()).send_signal(signal.SIGKILL)  # the oldest

    def _executors(self) -> list[psutil.Process]:
        found = []
        for process in psutil.Process(self.runtime.pid).children(recursive=True):
            try:
                if EXECUTOR_BACKEND in " ".join(process.cmdline()):
                    found.append(process)
            except psutil.Error:  # ended meanwhile (or a zombie not yet reaped)
                continue
        return found

    def stop(self) -> None:
        if self.runtime is not None and self.runtime.poll() is None:
            self.runtime.send_signal(signal.SIGTERM)
            try:
                assert self.runtime.wait(timeout=60) == 0
            finally:
                if self.runtime.poll() is None:
                    kill_tree(self.runtime)


@dataclass(frozen=True)
class Told:
    """What the runtime and the Airflow side said at one second of a cut."""

    at: float
    """Seconds since the cut."""
    health: int
    """``GET /health``'s status (0: no answer within 2 s)."""
    message: str
    waits: tuple[str, ...]
    """What the Airflow hook's view says the sink waits on."""
    why_not_running: str | None
    """Why the sink does not run, as the Airflow sensors say it (None: it runs)."""
    rest_tasks: tuple[str, ...]
    """The REST status of the sink's tasks: each one's trace, or its state without one."""

    @property
    def rest_says_no_heartbeat(self) -> bool:
        """Whether REST answered with tasks, each one missing its worker's heartbeat."""
        return bool(self.rest_tasks) and all(NO_HEARTBEAT in task for task in self.rest_tasks)


@dataclass(frozen=True)
class Partition:
    """One cut of a link: what was told each second of it, and how long after the heal
    every task was RUNNING with the sink moving on."""

    told: list[Told]
    recovered_s: float


def health(port: int) -> tuple[int, str]:
    """``GET /health``'s status and message (0 and the error when it did not answer)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return answer.status, json.loads(answer.read())["message"]
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())["message"]
    except OSError as e:
        return 0, str(e)


def lines_per_s(total: int, kills: int, fault_s: float = 0) -> float:
    """How fast :func:`run_with_kills` writes the lines: spread over 15 s per kill and one
    more, plus ``fault_s`` for each (a fault that lasts), so that lines keep coming through
    every fault and restart."""
    return total / ((15 + fault_s) * (kills + 1))


def run_with_kills(pipeline: Pipeline, kill: str, kills: int) -> None:
    """Feeds the source file while killing ``kill`` (driver or executor) ``kills`` times,
    each once the sink has recovered and moved on; returns after every line reached the
    sink."""
    written = threading.Event()
    total = pipeline.total
    cut_s = pipeline.cut_s if kill.endswith("_link") else 0  # lines keep coming through a cut
    rate = lines_per_s(total, kills, cut_s)
    pause_s = 200 / rate

    def writer() -> None:
        with pipeline.source.open("a") as f:
            for start in range(0, total, 200):
                f.write("".join(f"line {i}\n" for i in range(start, start + 200)))
                f.flush()
                if written.wait(pause_s):
                    return

    feeding = threading.Thread(target=writer)
    pipeline.start()
    try:
        feeding.start()
        # each fault once the sink took 10 s of lines since the last recovered (a cut's
        # backlog arrives at once after its heal: a share of the total could be out of reach)
        step, mark = min(total // (kills + 2), int(10 * rate)), 0
        for k in range(1, kills + 1):  # each kill once the sink moved on since the last
            wait_until(
                lambda mark=mark: len(set(pipeline.sink_lines())) >= mark + step,
                180,
                f"new lines reach the sink before kill {k}",
            )
            getattr(pipeline, f"kill_{kill}")()
            mark = len(set(pipeline.sink_lines()))
        feeding.join()
        wait_until(
            lambda: len(set(pipeline.sink_lines())) == total,
            240,
            "every line in the sink",
        )
        pipeline.stop()
    finally:
        written.set()
        if feeding.is_alive():
            feeding.join()
        if pipeline.runtime is not None and pipeline.runtime.poll() is None:
            kill_tree(pipeline.runtime)


def check_counts(pipeline: Pipeline, kill: str, kills: int) -> None:
    expected = {f"line {i}" for i in range(pipeline.total)}
    sink = pipeline.sink_lines()
    assert set(sink) == expected  # nothing lost at the sink (at-least-once)
    topic = [v.decode() for v in committed_values(pipeline.bootstrap, pipeline.topic)]
    assert set(topic) == expected  # nothing lost at the source
    repeated = sum(n - 1 for n in collections.Counter(topic).values())
    guarantee = "exactly-once" if pipeline.exactly_once else "at-least-once"
    restarts = collections.Counter(
        re.findall(r"task (\S+) ended unexpectedly", pipeline.log.read_text())
    )
    fault = (
        "freeze of the"
        if kill == "broker"
        else "cut of the"
        if kill.endswith("_link")
        else "kill -9"
    )
    print(
        f"{kills} x {fault} {kill}, {guarantee} source: {len(expected)} lines, topic "
        f"{len(topic)} committed ({repeated} twice), sink {len(sink)} "
        f"({len(sink) - len(expected)} twice); runs lost and started again: {dict(restarts)}"
    )
    if pipeline.exactly_once:
        assert repeated == 0 and len(topic) == pipeline.total


@kills_under(short_exactly_once=False)  # exactly-once's in make test: connectors/postgres
def test_kill_9_driver_mid_stream(
    bootstrap: str, tmp_path: Path, exactly_once: bool, kills: int, total: int
) -> None:
    pipeline = Pipeline(bootstrap, tmp_path, exactly_once, "local[4]", total)
    run_with_kills(pipeline, "driver", kills)
    check_counts(pipeline, "driver", kills)


@kills_under(short_exactly_once=True)
def test_kill_9_executor_mid_stream(
    bootstrap: str, tmp_path: Path, exactly_once: bool, kills: int, total: int
) -> None:
    """Two executor JVMs of a ``local-cluster`` Spark master; one is killed each time, its
    task's job fails, the herder starts the task again on the executor that is left or on
    the one Spark starts in its place."""
    pipeline = Pipeline(bootstrap, tmp_path, exactly_once, "local-cluster[2,1,1024]", total)
    run_with_kills(pipeline, "executor", kills)
    check_counts(pipeline, "executor", kills)


@pytest.mark.parametrize(("kills", "total"), [SHORT, LONG])
def test_a_frozen_broker_mid_stream(tmp_path: Path, kills: int, total: int) -> None:
    """The broker stops answering for longer than the sink's consumer session: the group
    drops the sink's member, whose next commit fails (unknown member); the sink rejoins,
    gets its partitions back and goes on from its last committed offsets, as Kafka
    Connect's does, and the source's producer delivers once the broker answers again."""
    with EmbeddedBroker() as broker:
        pipeline = Pipeline(broker.bootstrap_servers, tmp_path, False, "local[4]", total)
        pipeline.broker = broker
        run_with_kills(pipeline, "broker", kills)
        check_counts(pipeline, "broker", kills)
    assert "ended unexpectedly" not in pipeline.log.read_text()  # no task failed


def partitions(long_cut_s: float) -> list[Any]:
    """(cuts, lines, cut_s, exactly_once) of a partition test: one 30 s cut under
    at-least-once in make test, under exactly-once in make test-faults, and three cuts of
    ``long_cut_s`` under each in make test-faults."""
    return [
        pytest.param(1, 20_000, 30, False, id="short-at-least-once"),
        pytest.param(1, 20_000, 30, True, id="short-exactly-once", marks=pytest.mark.faults),
        *(
            pytest.param(
                3,
                60_000,
                long_cut_s,
                exactly_once,
                id=f"long-{guarantee}",
                marks=[pytest.mark.faults, pytest.mark.timeout(1200)],
            )
            for exactly_once, guarantee in GUARANTEES.items()
        ),
    ]


PARTITIONS = partitions(long_cut_s=60)


@pytest.mark.parametrize(("kills", "total", "cut_s", "exactly_once"), PARTITIONS)
@NEEDS_NETWORK_HOSTS
def test_a_partition_from_the_broker_mid_stream(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kills: int,
    total: int,
    cut_s: float,
    exactly_once: bool,
) -> None:
    """The broker runs in a host of its own whose link is cut (every packet dropped, both
    ways, no reset) for ``cut_s`` (30 s; 60 s in the long variants), ``kills`` times: the source's producer holds its records, the
    sink's consumer loses its group and its commits fail; ``GET /health`` says unhealthy,
    naming the Kafka cluster, within 10 s of the cut and until the heal; within 30 s of the
    heal every task is RUNNING and the sink moves on; nothing is lost, no duplicate where
    exactly-once, and at-least-once duplicates at the sink stay below what was written in a
    cut and a consumer session, per cut: what the sink consumed since its last commit before
    the cut, and the backlog it may consume on its old assignment after the heal before its
    failed commit tells it that its group dropped it (Kafka Connect's sink does the same)."""
    extra = {"metadata_url": f"sqlite:///{tmp_path / 'offsets.db'}"}
    monkeypatch.setenv(
        "AIRFLOW_CONN_CONNECT_DEFAULT", json.dumps({"conn_type": "connect", "extra": extra})
    )
    with netns.NetworkHost() as host, EmbeddedBroker(host=host) as broker:
        pipeline = Pipeline(broker.bootstrap_servers, tmp_path, exactly_once, "local[4]", total)
        pipeline.broker, pipeline.cut_s = broker, cut_s
        run_with_kills(pipeline, "broker_link", kills)
        check_counts(pipeline, "broker_link", kills)
    twice = len(pipeline.sink_lines()) - total
    assert twice <= kills * (cut_s + SESSION_S) * lines_per_s(total, kills, cut_s)
    for k, partition in enumerate(pipeline.partitions, 1):
        unhealthy = [(t.at, t.message) for t in partition.told if t.health == 500]
        named = [t.at for t in partition.told if any(KAFKA_AWAY in w for w in t.waits)]
        print(
            f"cut {k}: /health unhealthy from {unhealthy[0][0]:.1f} s after the cut "
            f"({unhealthy[0][1]!r}), the hook's view from "
            f"{named[0] if named else float('nan'):.1f} s; every task RUNNING, the sink moving "
            f"{partition.recovered_s:.1f} s after the heal"
            if unhealthy
            else f"cut {k}: /health never unhealthy: {partition.told}"
        )
        assert unhealthy and unhealthy[0][0] <= HEALTH_TOLD_S
        assert named and named[0] <= HEALTH_TOLD_S  # the Airflow side's waits name it too
        # /health said so until the heal (a sample it did not answer in 2 s says nothing)
        told_after = [t for t in partition.told if t.at > HEALTH_TOLD_S]
        assert all("The Kafka cluster at" in t.message for t in told_after if t.health != 0)
        assert all(t.health in (0, 500) for t in told_after)
        assert all(any(KAFKA_AWAY in w for w in t.waits) for t in told_after)
        assert partition.recovered_s <= RECOVERED_S
    assert "ended unexpectedly" not in pipeline.log.read_text()  # no task failed


WORKER_PARTITIONS = partitions(long_cut_s=45)  # within spark.worker.timeout
HEARTBEAT_TIMEOUT_S = 6  # the test's task.heartbeat.timeout.ms
HEARTBEAT_TOLD_S = HEARTBEAT_TIMEOUT_S + 4  # and a margin


@pytest.mark.parametrize(("kills", "total", "cut_s", "exactly_once"), WORKER_PARTITIONS)
@NEEDS_NETWORK_HOSTS
def test_a_partition_from_a_spark_worker_mid_stream(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kills: int,
    total: int,
    cut_s: float,
    exactly_once: bool,
) -> None:
    """A Spark standalone worker runs in a host of its own with its executor and the tasks'
    Python workers; the master, the driver, the broker and the metadata database (a
    PostgreSQL cluster) listen on the host's gateway. Its link is cut for ``cut_s`` (30 s; 3
    x 45 s in the long variants, within the master's 60 s ``spark.worker.timeout``):
    the tasks reach neither the broker nor the database. Within ``task.heartbeat.timeout.ms``
    (6 s here) and a margin, the REST status and the Airflow sensors say every task is
    UNASSIGNED with no heartbeat from its worker, until the heal; Spark keeps the executor
    (``spark.network.timeout``, 120 s, is longer); within 30 s of the heal every task is
    RUNNING and the sink moves on, with no task started again; nothing is lost, no
    duplicate where exactly-once, at-least-once duplicates bounded as for the broker's
    partition."""
    with (
        netns.NetworkHost() as host,
        EmbeddedBroker(address=host.gateway) as broker,
        postgres_cluster_or_skip(address=host.gateway) as cluster,
        SparkCluster(tmp_path / "spark", workers=1, cores=2, host=host) as spark,
    ):
        extra = {"metadata_url": cluster.url}
        monkeypatch.setenv(
            "AIRFLOW_CONN_CONNECT_DEFAULT", json.dumps({"conn_type": "connect", "extra": extra})
        )
        pipeline = Pipeline(
            broker.bootstrap_servers,
            tmp_path,
            exactly_once,
            spark.master_url,
            total,
            cut_s=cut_s,
            spark_workers=host,
            worker={
                "metadata.url": cluster.url,
                "task.heartbeat.timeout.ms": str(HEARTBEAT_TIMEOUT_S * 1000),
                "spark.driver.host": host.gateway,
                "spark.driver.bindAddress": host.gateway,
            },
        )
        run_with_kills(pipeline, "worker_link", kills)
        check_counts(pipeline, "worker_link", kills)
    twice = len(pipeline.sink_lines()) - total
    assert twice <= kills * (cut_s + SESSION_S) * lines_per_s(total, kills, cut_s)
    for k, partition in enumerate(pipeline.partitions, 1):
        rest = [t.at for t in partition.told if t.rest_says_no_heartbeat]
        airflow = [t.at for t in partition.told if NO_HEARTBEAT in (t.why_not_running or "")]
        print(
            f"cut {k}: REST from {rest[0] if rest else float('nan'):.1f} s after the cut, the "
            f"Airflow sensors from {airflow[0] if airflow else float('nan'):.1f} s "
            f"({partition.told[-1].why_not_running!r}); every task RUNNING, the sink moving "
            f"{partition.recovered_s:.1f} s after the heal"
        )
        assert rest and rest[0] <= HEARTBEAT_TOLD_S
        assert airflow and airflow[0] <= HEARTBEAT_TOLD_S
        told_after = [t for t in partition.told if t.at > HEARTBEAT_TOLD_S]
        assert all(NO_HEARTBEAT in (t.why_not_running or "") for t in told_after)
        assert all(t.rest_says_no_heartbeat for t in told_after)
        assert partition.recovered_s <= RECOVERED_S
    assert "ended unexpectedly" not in pipeline.log.read_text()  # no task started again


def sink_committed(pipeline: Pipeline) -> int | None:
    """The sink's committed offset as its task last recorded it in the store."""
    store = MetadataStore(f"sqlite:///{pipeline.tmp_path / 'offsets.db'}")
    try:
        progress = store.offsets.sink_progress(pipeline.names["sink"])
        return progress[0].committed_offset if progress else None
    finally:
        store.close()


def test_a_driver_kill_redelivers_to_the_sink_only_what_followed_its_last_commit(
    bootstrap: str, tmp_path: Path
) -> None:
    """Where the sink's position stands across a driver kill: the consumer group's committed
    offset, read from the broker with the admin client after the kill, is the task's last
    commit (as it recorded it in the store), and the restarted sink resumes exactly there.
    So the sink file ends with what it held at the kill (message ``k`` of the topic on line
    ``k``: one partition, no transactions) plus the messages from that offset on: what is
    written twice is what the sink consumed after its last commit (at most
    ``offset.flush.interval.ms`` of consumption), never more."""
    total = 20_000
    pipeline = Pipeline(bootstrap, tmp_path, False, "local[4]", total)
    stop_feeding = threading.Event()

    def feed() -> None:
        with pipeline.source.open("a") as f:
            for start in range(0, total, 200):
                f.write("".join(f"line {i}\n" for i in range(start, start + 200)))
                f.flush()
                if stop_feeding.wait(0.2):
                    return

    feeding = threading.Thread(target=feed)
    pipeline.start()
    feeding.start()
    try:
        wait_until(  # and a commit of the sink's recorded, so that there is one to compare
            lambda: len(pipeline.sink_lines()) >= 4_000 and sink_committed(pipeline) is not None,
            120,
            "lines reach the sink and it commits",
        )
        assert pipeline.runtime is not None
        kill_tree(pipeline.runtime)
        at_kill = pipeline.sink.read_bytes().count(b"\n")  # whole lines (a torn one is not)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        group_id = f"connect-{pipeline.names['sink']}"
        request = ConsumerGroupTopicPartitions(group_id, [TopicPartition(pipeline.topic, 0)])
        (group,) = admin.list_consumer_group_offsets([request])[group_id].result().topic_partitions
        recorded = sink_committed(pipeline)  # the task's last commit, as it recorded it
        # The store is written right after the broker's commit: equal, unless the kill fell
        # between the two writes.
        assert recorded is not None and recorded <= group.offset <= at_kill
        pipeline.start()
        feeding.join()
        wait_until(lambda: len(set(pipeline.sink_lines())) == total, 240, "every line in the sink")
        in_topic = len(read_messages(bootstrap, pipeline.topic, total))
        wait_until(
            lambda: sink_committed(pipeline) == in_topic, 60, "the sink committed the whole topic"
        )
        pipeline.stop()
    finally:
        stop_feeding.set()
        feeding.join()
        if pipeline.runtime is not None and pipeline.runtime.poll() is None:
            kill_tree(pipeline.runtime)
    written = pipeline.sink.read_bytes().count(b"\n")
    assert written == at_kill + (in_topic - group.offset)
    print(
        f"driver kill: the sink held {at_kill} lines, its last commit was offset "
        f"{group.offset}: {at_kill - group.offset} written twice; {in_topic} messages in the topic"
    )


DATABASE_FAULTS = [
    pytest.param(1, 20, id="short"),
    # six minutes of faults: past the suite's 300 s per test
    pytest.param(3, 60, id="long", marks=[pytest.mark.faults, pytest.mark.timeout(1500)]),
]


@pytest.mark.parametrize(("rounds", "fault_s"), DATABASE_FAULTS)
def test_the_metadata_database_crashes_and_hangs_mid_stream(
    bootstrap: str, tmp_path: Path, rounds: int, fault_s: float
) -> None:
    """The database crashes (restarted after ``fault_s``), then hangs (every server process
    stopped for ``fault_s``), ``rounds`` times, both longer than the herder lease (15 s):
    lines keep reaching the sink through each fault, REST answers 503 (``GET /health`` too,
    unhealthy) naming the database all along, each task is RUNNING again within 30 s
    after, no task is restarted (the grace is 5 minutes), and every line reaches the sink."""
    with postgres_cluster_or_skip() as cluster:
        outcome = Drill(bootstrap, tmp_path, cluster, rate=2_000).run(
            fault_s, rounds, baseline=False
        )
    check_database_outage(outcome, faults=2 * rounds)


@pytest.mark.parametrize(
    ("rounds", "fault_s"),
    [pytest.param(1, 30, id="short"), *DATABASE_FAULTS[1:]],
)
@NEEDS_NETWORK_HOSTS
def test_a_partition_from_the_metadata_database_mid_stream(
    bootstrap: str, tmp_path: Path, rounds: int, fault_s: float
) -> None:
    """The database runs in a host of its own whose link is cut (every packet dropped both
    ways, no reset: the runtime's connections stay half-open, new ones time out) for
    ``fault_s`` (30 s; 3 x 60 s in the long variant): as through a crash or a hang, the data
    keeps moving, REST answers 503 naming the database within its deadline while it lasts,
    every task is RUNNING within 30 s of the heal, no task is restarted and nothing is
    lost."""
    with netns.NetworkHost() as host, postgres_cluster_or_skip(host=host) as cluster:
        outcome = Drill(bootstrap, tmp_path, cluster, rate=2_000).run(
            fault_s, rounds, baseline=False, kinds=("partition",)
        )
    check_database_outage(outcome, faults=rounds)


def check_database_outage(outcome: Outcome, faults: int) -> None:
    """What a fault of the metadata database may do to the pipeline: see the tests above."""
    for window in outcome.windows:
        print(
            f"{window.name} for {window.seconds:.0f} s: {window.moved} lines reached the sink, "
            f"REST {sorted({s for s, _, _ in window.rest})} in at most "
            f"{max(t for _, t, _ in window.rest):.2f} s, every task RUNNING "
            f"{window.running_after_s:.1f} s after"
        )
        assert window.moved > 0, f"no line moved during the {window.name}"
        assert {status for status, _, _ in window.rest} == {503}  # GET /health's too
        assert all("The metadata database postgresql" in m for _, _, m in window.rest)
        assert window.running_after_s is not None and window.running_after_s <= RECOVERED_S
    print(f"{outcome.written} lines, sink {outcome.sink} ({outcome.sink_twice} twice)")
    assert outcome.lost == 0
    assert "ended unexpectedly" not in outcome.log
    assert "herder tick failed" not in outcome.log
    # each part that reaches the database (the herder, REST, two task runs) says so once
    # per fault, not once per attempt
    assert outcome.log.count("is unreachable") <= 4 * faults
