"""A pipeline drilled through metadata-database outages: ``FileStreamSource`` → topic →
``FileStreamSink`` on ``connect-runtime standalone`` with a PostgreSQL metadata database of
its own (a private cluster), fed at a steady rate, while the database crashes, hangs or (in
a network host of its own) is cut off by a partition (and, given the broker it was started
on, while the broker is frozen). :meth:`Drill.run` measures
each window and counts every line at the end. ``bench.store_outage`` reports it;
``tests/integration/runtime/test_faults.py`` runs it short."""

from __future__ import annotations

import collections
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests_common.broker import EmbeddedBroker, free_port
from tests_common.kafka import new_topic
from tests_common.postgres_cluster import PostgresCluster
from tests_common.processes import (
    kill_tree,
    start_runtime,
    tasks_running,
    wait_until,
    write_properties,
)

RATE = 20_000
"""Lines a second the benchmark writes to the source file (a tenth every 0.1 s): ten times
the pace the fault was first seen at."""
FAULTS = ("crash", "freeze")
"""The database's faults :meth:`Drill.run` goes through by default; ``"partition"`` too when
the cluster runs in a host of its own."""


@dataclass
class Window:
    """One measured stretch of the run: the database up, or one fault."""

    name: str
    seconds: float
    moved: int
    rest: list[tuple[int, float, str]] = field(default_factory=list)  # status, latency, message
    running_after_s: float | None = None
    caught_up_after_s: float | None = None

    @property
    def rate(self) -> float:
        return self.moved / self.seconds


@dataclass
class Outcome:
    windows: list[Window]
    written: int
    sink: int
    lost: int
    sink_twice: int
    log: str


def rest_answer(url: str, timeout_s: float = 10) -> tuple[int, float, str]:
    """(status, seconds, message) of a GET; status 0 when nothing answered in time."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status, time.monotonic() - started, ""
    except urllib.error.HTTPError as e:
        message = json.loads(e.read() or b"{}").get("message", "")
        return e.code, time.monotonic() - started, message
    except OSError as e:
        return 0, time.monotonic() - started, str(e)


class Drill:
    """The pipeline, its runtime process and its database; ``run`` measures the windows."""

    def __init__(
        self,
        bootstrap: str,
        folder: Path,
        cluster: PostgresCluster,
        rate: int = RATE,
        broker: EmbeddedBroker | None = None,
    ) -> None:
        """``broker``: the broker of ``bootstrap`` when it was started here, to freeze it
        too (a fault the data cannot go through: it measures the recovery)."""
        self.bootstrap = bootstrap
        self.broker = broker
        self.batch = rate // 10
        self.cluster = cluster
        self.topic = new_topic(bootstrap)
        self.source, self.sink = folder / "in.txt", folder / "out.txt"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "runtime.log"
        worker = {
            "bootstrap.servers": bootstrap,
            "metadata.url": cluster.url,
            "listeners": self.url,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "1000",
            "consumer.session.timeout.ms": "6000",
            "spark.master": "local[4]",
        }
        files = [write_properties(folder / "worker.properties", worker)]
        # Named after the topic: a sink's consumer group (connect-<name>) is its own on a
        # broker that other runs share.
        self.names = (f"src-{self.topic}", f"sink-{self.topic}")
        for name, config in zip(
            self.names,
            [
                {"connector.class": "FileStreamSource", "file": str(self.source)},
                {"connector.class": "FileStreamSink", "file": str(self.sink)},
            ],
            strict=True,
        ):
            key = "topics" if name.startswith("sink") else "topic"
            files.append(
                write_properties(
                    folder / f"{name}.properties", {"name": name, **config, key: self.topic}
                )
            )
        self.args = ["standalone", *map(str, files)]
        self.written = 0
        self._stop_feeding = threading.Event()

    def sink_count(self) -> int:
        return self.sink.read_bytes().count(b"\n") if self.sink.exists() else 0

    def running(self) -> bool:
        """Whether both connectors' tasks are RUNNING, as REST says."""
        return tasks_running(self.url, self.names)

    def _feed(self) -> None:
        with self.source.open("a") as f:
            while not self._stop_feeding.wait(0.1):  # the pace of the feed, not a wait on a state
                end = self.written + self.batch
                f.write("".join(f"line {i}\n" for i in range(self.written, end)))
                f.flush()
                self.written = end

    def _fault(self, kind: str) -> AbstractContextManager[object]:
        if kind == "crash":
            return self.cluster.crashed()
        if kind == "freeze":
            return self.cluster.frozen()
        if kind == "partition":
            assert self.cluster.host is not None, "a partition needs the cluster in a host"
            return self.cluster.host.partitioned()
        assert self.broker is not None, "a frozen broker needs the broker it was started on"
        return self.broker.frozen()

    def _window(self, name: str, seconds: float, fault: str | None) -> Window:
        """Counts what reaches the sink for ``seconds``, asking REST every 0.5 s (the
        connectors, then the health); with a ``fault`` (the database or the broker away for
        the window), measures how long after it every task is RUNNING, and the sink holds
        every line written before its end."""
        with self._fault(fault) if fault else _nothing():
            before, started = self.sink_count(), time.monotonic()
            answers = []
            while time.monotonic() - started < seconds:
                path = ("/connectors", "/health")[len(answers) % 2]
                answers.append(rest_answer(self.url + path))
                time.sleep(max(0.0, 0.5 - answers[-1][1]))
            window = Window(name, time.monotonic() - started, self.sink_count() - before, answers)
        if fault:
            back, fed = time.monotonic(), self.written
            wait_until(self.running, 120, f"every task RUNNING after the {fault}", 0.1)
            window.running_after_s = time.monotonic() - back
            wait_until(
                lambda: self.sink_count() >= fed, 300, f"the sink caught up after the {fault}"
            )
            window.caught_up_after_s = time.monotonic() - back
        return window

    def run(
        self,
        fault_s: float,
        faults: int,
        *,
        baseline: bool = True,
        kinds: tuple[str, ...] = FAULTS,
    ) -> Outcome:
        """The windows (a baseline as long as a fault first, when asked; then ``faults``
        rounds of each of ``kinds``), then the counts."""
        runtime = start_runtime(self.args, self.log)
        feeding = threading.Thread(target=self._feed)
        try:
            wait_until(self.running, 120, "both connectors RUNNING", 0.1)
            feeding.start()
            wait_until(lambda: self.sink_count() >= self.batch * 10, 60, "lines reach the sink")
            windows = [self._window("database up", fault_s, None)] if baseline else []
            for round_ in range(faults):
                for kind in kinds:
                    windows.append(self._window(f"{kind} {round_ + 1}", fault_s, kind))
            if self.broker is not None:
                windows.append(self._window("broker frozen", fault_s, "broker"))
            self._stop_feeding.set()
            feeding.join()
            wait_until(lambda: self.sink_count() >= self.written, 240, "every line in the sink")
            runtime.send_signal(15)
            runtime.wait(timeout=60)
        finally:
            self._stop_feeding.set()
            if feeding.is_alive():
                feeding.join()
            if runtime.poll() is None:
                kill_tree(runtime)
        return self._outcome(windows)

    def _outcome(self, windows: list[Window]) -> Outcome:
        expected = {f"line {i}" for i in range(self.written)}
        sink = self.sink.read_text().splitlines()
        lost = len(expected - set(sink))
        twice = sum(n - 1 for n in collections.Counter(sink).values())
        return Outcome(windows, self.written, len(sink), lost, twice, self.log.read_text())


@contextmanager
def _nothing() -> Iterator[None]:
    yield
