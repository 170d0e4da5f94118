"""The soak: two pipelines on ``connect-runtime standalone`` at a steady rate for an hour (or
as long as asked), a fault every few minutes drawn in turn from the kinds the fault tests know,
then every record counted and the runtime's resources compared between the start and the end.

* lines: a file → ``FileStreamSource`` (exactly-once) → topic → ``JdbcSinkConnector``
  (upsert on the line) → a PostgreSQL table;
* changes: inserts into a PostgreSQL table → the change-capture source (exactly-once) → topic
  → ``FileStreamSink`` (at-least-once) → a file of ids.

The broker and the metadata database each run in a network host of their own
(``tests_common.netns``), so that their links can be cut; the change-capture database is on
loopback and never faulted. Spark runs ``local-cluster`` (executor JVMs of their own, to kill).

:class:`Soak` runs it and returns a :class:`SoakOutcome`; :func:`fault_table`,
:func:`growth` and :func:`plot` make its report (``tests/soak/test_soak.py``, ``make
test-soak``).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import signal
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil
import psycopg

from tests_common.broker import EmbeddedBroker, free_port
from tests_common.kafka import committed_values, new_topic
from tests_common.netns import NetworkHost
from tests_common.postgres_cluster import PostgresCluster
from tests_common.processes import (
    kill_tree,
    rest_get,
    start_runtime,
    tasks_running,
    wait_until,
    write_properties,
)

FAULT_KINDS = (
    "kill -9 driver",
    "database crash",
    "broker partition",
    "kill -9 executor",
    "database freeze",
    "broker freeze",
    "database partition",
)
"""Drawn in this order, round and round: a kill, then the faults that last, alternating the
parts they hit."""
EXECUTOR_BACKEND = "CoarseGrainedExecutorBackend"
RECOVERY_DEADLINE_S = 300
SAMPLE_EVERY_S = 10
SETTLED_S = 120
"""No fault starts later than this before the end: the last minute is measured at rest."""


@dataclass(frozen=True)
class SoakSettings:
    minutes: float = 60
    fault_every_s: float = 300
    fault_s: float = 30
    """How long a fault that lasts (a crash, a freeze, a partition) lasts."""
    lines_per_s: int = 200
    changes_per_s: int = 100

    def fault_times(self) -> list[float]:
        """When each fault starts, in seconds from the start of the feed."""
        last = self.minutes * 60 - self.fault_s - SETTLED_S
        times = itertools.count(self.fault_every_s, self.fault_every_s)
        return list(itertools.takewhile(lambda t: t <= last, times))


@dataclass
class Sample:
    """The pipelines and the runtime's processes at one moment (``at``: seconds since the
    feed started)."""

    at: float
    lines_written: int
    lines_stored: int
    changes_written: int
    changes_stored: int
    rss_bytes: int
    open_files: int
    threads: int


@dataclass
class Fault:
    """One fault: its kind, when it started and ended (seconds since the feed started), how
    long after its end every task was RUNNING with both sinks holding what was written before
    that end, the records both sinks took in during it, and what it cost."""

    kind: str
    started: float
    ended: float = 0
    recovered_s: float | None = None
    moved: int = 0
    doubled: int = 0
    lost: int = 0
    written_at_start: tuple[int, int] = (0, 0)
    written_at_recovery: tuple[int, int] = (0, 0)


@dataclass
class SoakOutcome:
    settings: SoakSettings
    samples: list[Sample]
    faults: list[Fault]
    lines: int
    lines_lost: int
    lines_twice_in_topic: int
    changes: int
    changes_lost: int
    changes_twice_in_topic: int
    changes_twice_in_file: int
    reads_differ: bool
    """Whether two reads of the topics, one after the other, found different records."""
    log: str

    def to_json(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if k != "log"}, indent=1)


class IdFile:
    """The sink's file of ids, read as it grows: each id's count."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0
        self.counts: collections.Counter[int] = collections.Counter()
        self._lock = threading.Lock()

    def read(self) -> collections.Counter[int]:
        with self._lock:
            if self.path.exists():
                with self.path.open("rb") as f:
                    f.seek(self.offset)
                    data = f.read()
                whole = data[: data.rfind(b"\n") + 1]  # a torn last line waits for its end
                self.offset += len(whole)
                self.counts.update(int(line) for line in whole.split())
            return self.counts

    @property
    def twice(self) -> int:
        return sum(n - 1 for n in self.read().values())


class Soak:
    """Starts everything in a folder, runs :meth:`run`, stops what it started."""

    def __init__(self, folder: Path, settings: SoakSettings) -> None:
        self.folder, self.settings = folder, settings
        self._stack = contextlib.ExitStack()
        self._stop_feeding = threading.Event()
        self.lines_written = self.changes_written = 0
        self.ids = IdFile(folder / "ids.txt")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.runtime_log = folder / "runtime.log"
        self.runtime: subprocess.Popen[bytes] | None = None
        self._fed_at = 0.0

    # -- the parts ----------------------------------------------------------------------------

    def __enter__(self) -> Soak:
        try:
            self.broker_host = self._stack.enter_context(NetworkHost())
            self.broker = self._stack.enter_context(EmbeddedBroker(host=self.broker_host))
            self.metadata_host = self._stack.enter_context(NetworkHost())
            self.metadata = self._stack.enter_context(PostgresCluster(host=self.metadata_host))
            self.data = self._stack.enter_context(PostgresCluster())
            self._prepare()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self._stop_feeding.set()
        if self.runtime is not None and self.runtime.poll() is None:
            kill_tree(self.runtime)
        self._stack.close()

    def _data_dsn(self, database: str) -> str:
        return self.data.dsn.rsplit("/", 1)[0] + "/" + database

    def _prepare(self) -> None:
        with psycopg.connect(self.data.dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE source")
            conn.execute("CREATE DATABASE sink")
        with psycopg.connect(self._data_dsn("source"), autocommit=True) as conn:
            conn.execute("CREATE TABLE events (id INT PRIMARY KEY, at TIMESTAMPTZ NOT NULL)")
        bootstrap = self.broker.bootstrap_servers
        self.lines_topic = new_topic(bootstrap)
        prefix = f"soak{free_port()}"
        self.changes_topic = f"{prefix}.public.events"
        worker = {
            "bootstrap.servers": bootstrap,
            "metadata.url": self.metadata.url,
            "listeners": self.url,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.flush.interval.ms": "1000",
            "consumer.session.timeout.ms": "6000",
            "exactly.once.source.support": "enabled",
            "offset.storage.topic": f"offsets-{self.lines_topic}",
            "offset.storage.partitions": "1",
            "spark.master": "local-cluster[2,2,1024]",
        }
        connectors = {
            "lines": {
                "connector.class": "FileStreamSource",
                "file": str(self.folder / "lines.txt"),
                "topic": self.lines_topic,
                "transforms": "hoist",
                "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
                "transforms.hoist.field": "line",
            },
            "lines-table": {
                "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
                "topics": self.lines_topic,
                "connection.url": self._data_dsn("sink").replace(
                    "postgresql://", "postgresql+psycopg://"
                ),
                "table.name.format": "lines",
                "insert.mode": "upsert",
                "pk.mode": "record_value",
                "pk.fields": "line",
                "auto.create": "true",
            },
            "changes": {
                "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
                "database.hostname": self.data.address,
                "database.port": str(self.data.port),
                "database.user": "postgres",
                "database.dbname": "source",
                "topic.prefix": prefix,
                "slot.name": "soak",
                "publication.name": "soak",
                "publication.autocreate.mode": "filtered",
                "table.include.list": "public.events",
                "snapshot.mode": "no_data",
            },
            "ids-file": {
                "connector.class": "FileStreamSink",
                "topics": self.changes_topic,
                "file": str(self.ids.path),
                "transforms": "unwrap,id",
                "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
                "transforms.id.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
                "transforms.id.field": "id",
            },
        }
        files = [write_properties(self.folder / "worker.properties", worker)]
        for name, config in connectors.items():
            files.append(
                write_properties(self.folder / f"{name}.properties", {"name": name, **config})
            )
        self.names = list(connectors)
        self.args = ["standalone", *map(str, files)]

    def _start_runtime(self) -> None:
        self.runtime = start_runtime(self.args, self.runtime_log)
        wait_until(
            lambda: rest_get(f"{self.url}/connectors") == sorted(self.names),
            180,
            "REST lists the connectors",
        )

    def running(self) -> bool:
        """Every connector's tasks RUNNING, as REST says."""
        return tasks_running(self.url, self.names)

    # -- the feeds ----------------------------------------------------------------------------

    def _feed_lines(self) -> None:
        batch = self.settings.lines_per_s // 10
        with (self.folder / "lines.txt").open("a") as f:
            while not self._stop_feeding.wait(
                self._pace(self.lines_written, batch, self.settings.lines_per_s)
            ):
                end = self.lines_written + batch
                f.write("".join(f"line {i}\n" for i in range(self.lines_written, end)))
                f.flush()
                self.lines_written = end

    def _feed_changes(self) -> None:
        """Transactions of ten inserts; a failed one (none is expected: this database is not
        faulted) fails the feed and so the soak."""
        with psycopg.connect(self._data_dsn("source"), autocommit=True) as conn:
            while not self._stop_feeding.wait(
                self._pace(self.changes_written, 10, self.settings.changes_per_s)
            ):
                start = self.changes_written
                conn.execute(
                    "INSERT INTO events SELECT g, now() FROM generate_series(%s::int, %s::int) g",
                    (start, start + 9),
                )
                self.changes_written = start + 10

    def _pace(self, written: int, batch: int, per_s: int) -> float:
        """How long to wait before the next batch so that ``written + batch`` records are out
        at ``per_s`` since the feed started (a steady rate whatever each batch took)."""
        due = self._fed_at + (written + batch) / per_s
        return max(0.0, due - time.monotonic())

    # -- measuring ----------------------------------------------------------------------------

    def lines_stored(self) -> int:
        with psycopg.connect(self._data_dsn("sink"), connect_timeout=10) as conn:
            try:
                row = conn.execute("SELECT count(*) FROM lines").fetchone()
            except psycopg.errors.UndefinedTable:
                return 0
        return int(row[0]) if row else 0

    def _processes(self) -> list[psutil.Process]:
        if self.runtime is None or self.runtime.poll() is not None:
            return []
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.runtime.pid)
            return [root, *root.children(recursive=True)]
        return []

    def sample(self) -> Sample:
        rss = files = threads = 0
        for process in self._processes():
            with contextlib.suppress(psutil.Error), process.oneshot():
                rss += process.memory_info().rss
                files += process.num_fds()
                threads += process.num_threads()
        return Sample(
            time.monotonic() - self._fed_at,
            self.lines_written,
            self.lines_stored(),
            self.changes_written,
            len(self.ids.read()),
            rss,
            files,
            threads,
        )

    def _sampling(self, samples: list[Sample], done: threading.Event) -> None:
        while not done.wait(SAMPLE_EVERY_S):
            samples.append(self.sample())

    def stored(self) -> tuple[int, int]:
        """The lines in the table, the distinct ids in the file."""
        return self.lines_stored(), len(self.ids.read())

    def caught_up(self, written: tuple[int, int]) -> bool:
        """Both sinks hold as many records as ``written`` (lines, changes) says."""
        return all(s >= w for s, w in zip(self.stored(), written, strict=True))

    # -- faults -------------------------------------------------------------------------------

    def _kill_executor(self) -> None:
        executors = wait_until(
            lambda: [p for p in self._processes() if EXECUTOR_BACKEND in _cmdline(p)],
            60,
            "an executor JVM is up",
        )
        min(executors, key=lambda p: p.create_time()).send_signal(signal.SIGKILL)

    def _kill_driver(self) -> None:
        assert self.runtime is not None
        kill_tree(self.runtime)
        self._start_runtime()

    def _lasting(self, kind: str) -> AbstractContextManager[object]:
        return {
            "database crash": self.metadata.crashed,
            "database freeze": self.metadata.frozen,
            "database partition": self.metadata_host.partitioned,
            "broker partition": self.broker_host.partitioned,
            "broker freeze": self.broker.frozen,
        }[kind]()

    def _fault(self, kind: str) -> Fault:
        fault = Fault(kind, time.monotonic() - self._fed_at)
        fault.written_at_start = (self.lines_written, self.changes_written)
        before, twice = sum(self.stored()), self.ids.twice
        if kind == "kill -9 driver":
            self._kill_driver()
        elif kind == "kill -9 executor":
            self._kill_executor()
        else:
            with self._lasting(kind):
                threading.Event().wait(self.settings.fault_s)  # the fault's length
        ended = time.monotonic()
        fault.ended = ended - self._fed_at
        fault.moved = sum(self.stored()) - before
        written = (self.lines_written, self.changes_written)
        try:
            wait_until(
                lambda: self.running() and self.caught_up(written),
                RECOVERY_DEADLINE_S,
                f"every task RUNNING and the sinks caught up after the {kind}",
                interval_s=0.5,
            )
            fault.recovered_s = time.monotonic() - ended
        except AssertionError:
            fault.recovered_s = None  # reported; the soak goes on and its test fails
        fault.doubled = self.ids.twice - twice
        fault.written_at_recovery = (self.lines_written, self.changes_written)
        return fault

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> SoakOutcome:
        self._start_runtime()
        wait_until(self.running, 180, "every task RUNNING")
        wait_until(  # the change-capture task streams: what is inserted from now on is captured
            lambda: self._slot_active(), 180, "the change-capture slot streaming"
        )
        samples: list[Sample] = []
        faults: list[Fault] = []
        done = threading.Event()
        self._fed_at = time.monotonic()
        feeds = [threading.Thread(target=f) for f in (self._feed_lines, self._feed_changes)]
        sampler = threading.Thread(target=self._sampling, args=(samples, done))
        for thread in (*feeds, sampler):
            thread.start()
        try:
            kinds = itertools.cycle(FAULT_KINDS)
            for at in self.settings.fault_times():
                threading.Event().wait(
                    max(0.0, self._fed_at + at - time.monotonic())
                )  # the schedule
                faults.append(self._fault(next(kinds)))
            end = self._fed_at + self.settings.minutes * 60
            threading.Event().wait(max(0.0, end - time.monotonic()))  # the schedule
        finally:
            self._stop_feeding.set()
            for thread in feeds:
                thread.join()
            done.set()
            sampler.join()
        written = (self.lines_written, self.changes_written)
        wait_until(
            lambda: self.caught_up(written),
            RECOVERY_DEADLINE_S,
            "both sinks hold every record",
            interval_s=1,
        )
        assert self.runtime is not None
        self.runtime.send_signal(signal.SIGTERM)
        self.runtime.wait(timeout=120)
        return self._outcome(samples, faults)

    def _slot_active(self) -> bool:
        with psycopg.connect(self._data_dsn("source"), autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'soak' AND active"
            ).fetchone()
        return row == (1,)

    def _topic_counts(self) -> tuple[collections.Counter[int], collections.Counter[int]]:
        """How many times each line and each change id is in its topic, as a read-committed
        consumer must see it."""
        bootstrap = self.broker.bootstrap_servers
        lines = committed_values(bootstrap, self.lines_topic)
        changes = committed_values(bootstrap, self.changes_topic)
        return (
            collections.Counter(
                int(json.loads(v)["payload"]["line"][5:]) for v in lines if v is not None
            ),
            collections.Counter(
                json.loads(v)["payload"]["after"]["id"] for v in changes if v is not None
            ),
        )

    def _outcome(self, samples: list[Sample], faults: list[Fault]) -> SoakOutcome:
        with psycopg.connect(self._data_dsn("sink")) as conn:
            stored_lines = {int(line[5:]) for (line,) in conn.execute("SELECT line FROM lines")}
        reads = [self._topic_counts() for _ in range(2)]  # a loss, or a read that ended short
        topic_lines, topic_changes = reads[0]
        lost_lines = set(range(self.lines_written)) - stored_lines
        lost_changes = set(range(self.changes_written)) - set(self.ids.read())
        for fault in faults:
            lines = range(fault.written_at_start[0], fault.written_at_recovery[0])
            changes = range(fault.written_at_start[1], fault.written_at_recovery[1])
            fault.lost = sum(i in lost_lines for i in lines) + sum(
                i in lost_changes for i in changes
            )
        return SoakOutcome(
            self.settings,
            samples,
            faults,
            self.lines_written,
            len(lost_lines | (set(range(self.lines_written)) - set(topic_lines))),
            sum(n - 1 for n in topic_lines.values()),
            self.changes_written,
            len(lost_changes | (set(range(self.changes_written)) - set(topic_changes))),
            sum(n - 1 for n in topic_changes.values()),
            self.ids.twice,
            reads[0] != reads[1],
            self.runtime_log.read_text(errors="replace"),
        )


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


# -- the report ---------------------------------------------------------------------------------


def fault_table(faults: list[Fault]) -> str:
    """A Markdown table, a row per fault kind: how many, recovery p50 and max, records moved
    during the faults, lost and doubled."""
    rows = [
        "| fault | count | recovery p50 (s) | recovery max (s) | moved during | lost | doubled |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    by_kind: dict[str, list[Fault]] = collections.defaultdict(list)
    for fault in faults:
        by_kind[fault.kind].append(fault)
    for kind in sorted(by_kind, key=FAULT_KINDS.index):
        of_kind = by_kind[kind]
        recoveries = [f.recovered_s for f in of_kind if f.recovered_s is not None]
        unrecovered = len(of_kind) - len(recoveries)
        p50 = f"{statistics.median(recoveries):.1f}" if recoveries else "-"
        worst = f"{max(recoveries):.1f}" if recoveries else "-"
        if unrecovered:
            worst += f" ({unrecovered} never)"
        rows.append(
            f"| {kind} | {len(of_kind)} | {p50} | {worst} | {sum(f.moved for f in of_kind)} "
            f"| {sum(f.lost for f in of_kind)} | {sum(f.doubled for f in of_kind)} |"
        )
    return "\n".join(rows)


def growth(samples: list[Sample], minutes: float, measure: Callable[[Sample], float]) -> float:
    """How much ``measure`` grew (a ratio, 0.1 for 10 %) from the 10th minute of an hour
    (a sixth of a shorter run) to the last minute: the medians of their samples."""
    at = minutes * 60 / 6
    start = [measure(s) for s in samples if at - 60 <= s.at < at]
    end = [measure(s) for s in samples if s.at >= minutes * 60 - 60]
    if not start or not end:
        raise ValueError(f"no samples in the minute before {at:.0f} s or in the last minute")
    return statistics.median(end) / statistics.median(start) - 1


def plot(outcome: SoakOutcome, path: Path) -> None:
    """Throughput of each sink and the runtime's memory over the run, faults shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = outcome.samples
    minutes = [s.at / 60 for s in samples[1:]]
    figure, (rates, memory) = plt.subplots(2, 1, sharex=True, figsize=(10, 6))
    for label, stored in (("lines → table", "lines_stored"), ("changes → file", "changes_stored")):
        rates.plot(
            minutes,
            [
                (getattr(b, stored) - getattr(a, stored)) / (b.at - a.at)
                for a, b in itertools.pairwise(samples)
            ],
            label=label,
        )
    rates.set_ylabel("records/s reaching the sink")
    rates.legend(loc="upper right")
    memory.plot([s.at / 60 for s in samples], [s.rss_bytes / 2**20 for s in samples], color="black")
    memory.set_ylabel("runtime RSS (MiB)")
    memory.set_xlabel("minutes")
    for fault in outcome.faults:
        for axes in (rates, memory):
            end = max(fault.ended, fault.started + 5)  # a kill is an instant: shown 5 s wide
            axes.axvspan(fault.started / 60, end / 60, color="red", alpha=0.2)
        rates.annotate(fault.kind, (fault.started / 60, 0), rotation=90, fontsize=7, va="bottom")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
