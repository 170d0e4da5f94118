"""Density: N connectors of low rate beside one busy source, on one runtime.

For each N, a runtime of its own (a new process, so that its memory is its own) first times
one busy ``FileStreamSource`` alone (``--busy-lines`` JSON lines), then creates N
``FileStreamSource`` connectors, each tailing a file of its own that a writer appends
``--rate`` lines a second to, and times a second busy source beside them. Reported per N:

* create → RUNNING: the seconds from the first create to every task of the N RUNNING, and
  how many were RUNNING ``--running-within-s`` (60) seconds after the first create;
* peak memory (proportional set size, as ``bench.scale``) in all, and per task: the peak
  beside the N over the peak of the busy source alone, divided by N;
* every line delivered: once the writer stops, whether each file source committed the
  position of its file's end (at-least-once: a committed position is in Kafka);
* the busy source's records/s beside the N against its records/s alone, and their ratio,
  timed only once all N are RUNNING ("not timed" otherwise: a rate of 0 would read as a
  starved source).

The low-rate tasks share Spark task slots, ``--tasks-per-slot`` (100) to a slot
(``tasks.per.slot``); the busy source asks for a slot of its own (``tasks.dedicated.slot``).
The runtime is given ``--slots`` Spark task slots (``spark.master=local[slots]``); the default
is what the tasks need: one per ``--tasks-per-slot`` low-rate tasks, and the busy source's.
``--tasks-per-slot 1`` is the runtime without packing (a slot per task). A run whose memory
passes ``--max-memory-gib`` is stopped and reported as such (its figures as far as it got).
With ``--busy-core``, a process of its own burns a core for the whole measure (both busy
runs, alone and beside, included): the margin the figures keep when a machine is not idle.

    python -m bench.density [--connectors 10,100,1000] [--rate 10] [--busy-lines N]
                            [--tasks-per-slot 100] [--slots S] [--busy-core] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import MetadataStore, State
from bench.common import (
    broker,
    files_progress,
    new_topic,
    ratio_table,
    timed_run,
    write_json_lines,
)
from bench.scale import ROOT, PeakMemory

CONNECTOR_COUNTS = (10, 100, 1000)
GIB = 2**30


class Appender:
    """Appends ``rate`` JSON lines a second to each of ``paths`` (ten times a second, its
    files kept open) from a process of its own, so that the writing takes no time from the
    runtime's driver in this process, until stopped; then counts the lines of each file."""

    def __init__(self, paths: list[Path], rate: int) -> None:
        self.paths, self.rate = paths, rate
        context = multiprocessing.get_context("spawn")  # forks nothing of the driver's JVM
        self.stopping = context.Event()
        self.process = context.Process(
            target=append_lines, args=(paths, rate, self.stopping), daemon=True
        )
        self.written: dict[Path, int] = {}

    def __enter__(self) -> Appender:
        for path in self.paths:
            path.touch()
        self.process.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.is_alive():
            self.stopping.set()
            self.process.join()
        self.written = {path: len(path.read_bytes().splitlines()) for path in self.paths}


def append_lines(paths: list[Path], rate: int, stopping: Any) -> None:
    """The :class:`Appender`'s process."""
    files = [path.open("a") for path in paths]
    written = [0] * len(files)
    started, ticks = time.monotonic(), 0
    while not stopping.wait(max(0.0, started + ticks / 10 - time.monotonic())):
        ticks += 1
        for i, f in enumerate(files):
            due = rate * ticks // 10 - written[i]
            f.write("".join(f'{{"n":{written[i] + k}}}\n' for k in range(due)))
            f.flush()
            written[i] += due
    for f in files:
        f.close()


@contextlib.contextmanager
def busy_core() -> Iterator[None]:
    """A process of its own that keeps one core busy (a pure Python loop) while open."""
    context = multiprocessing.get_context("spawn")
    stopping = context.Event()
    process = context.Process(target=burn, args=(stopping,), daemon=True)
    process.start()
    try:
        yield
    finally:
        stopping.set()
        process.join()


def burn(stopping: Any) -> None:
    """The process of :func:`busy_core`: computes until told to stop."""
    while not stopping.is_set():
        sum(i * i for i in range(100_000))


def running_count(store: MetadataStore, names: list[str]) -> int:
    """How many of ``names``' tasks are RUNNING (one query)."""
    statuses = store.statuses.all_task_statuses()
    return sum(1 for n in names for s in statuses.get(n, []) if s.state is State.RUNNING)


def delivered(store: MetadataStore, sources: dict[str, Path]) -> bool:
    """Whether every file source committed the position of its file's end."""
    offsets = store.offsets.all_source_offsets()
    for name, path in sources.items():
        size = path.stat().st_size
        if not any(o and o.get("position") == size for _, o in offsets.get(name, [])):
            return False
    return True


def busy_source(path: Path, lines: int, bootstrap: str) -> dict[str, str]:
    """A file source over a new file of ``lines`` JSON lines, into a topic of its own."""
    write_json_lines(path, 0, lines)
    return {
        "connector.class": "FileStreamSource",
        "file": str(path),
        "topic": new_topic(bootstrap),
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "tasks.dedicated.slot": "true",
    }


def one_runtime(options: argparse.Namespace, connectors: int) -> dict[str, Any]:
    """In this process: the figures of the module docstring for N = ``connectors``."""
    slots = options.slots or -(-connectors // options.tasks_per_slot) + 1
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        worker = {
            "bootstrap.servers": options.bootstrap,
            "metadata.url": f"sqlite:///{folder / 'metadata.db'}",
            "offset.flush.interval.ms": "10000",
            "spark.master": f"local[{slots}]",
            "tasks.per.slot": str(options.tasks_per_slot),
        }
        runtime = Connect(f"density-{uuid.uuid4().hex[:6]}", worker)
        runtime.start()
        try:
            runtime.spark.sparkContext.setLogLevel("ERROR")
            with PeakMemory() as memory:
                busy = busy_source(folder / "alone.jsonl", options.busy_lines, options.bootstrap)
                alone = timed_run(
                    runtime, busy, options.busy_lines, files_progress([Path(busy["file"])])
                )
                alone_peak = memory.peak["total"]
                memory.peak = dict.fromkeys(memory.peak, 0)
                figures = beside(runtime, folder, options, connectors, memory)
        finally:
            runtime.stop()
    extra = max(0, figures["peak_memory_bytes"]["total"] - alone_peak)
    busy = figures["busy_records_per_s"]
    return {
        "connectors": connectors,
        "slots": slots,
        "busy_alone_records_per_s": alone.records_per_s,
        "busy_ratio": None if busy is None else busy / alone.records_per_s,
        "memory_per_task_bytes": extra / connectors,
        **figures,
    }


def beside(
    runtime: Connect,
    folder: Path,
    options: argparse.Namespace,
    connectors: int,
    memory: PeakMemory,
) -> dict[str, Any]:
    """Creates the N low-rate sources, waits for them to run (at most twice
    ``--running-within-s``, or until memory passes ``--max-memory-gib``), times a busy
    source beside them, stops the writer and checks that every line was delivered."""
    topic = new_topic(options.bootstrap)
    sources = {f"tail-{i}": folder / f"tail-{i}.jsonl" for i in range(connectors)}
    too_much = options.max_memory_gib * GIB
    with Appender(list(sources.values()), options.rate) as appender:
        created = time.monotonic()
        for name, path in sources.items():
            config = {"connector.class": "FileStreamSource", "file": str(path), "topic": topic}
            runtime.add_connector(name, config)
        names = list(sources)
        all_running_s, running_within = None, 0
        while memory.peak["total"] <= too_much:
            elapsed = time.monotonic() - created
            count = running_count(runtime.store, names)
            if elapsed <= options.running_within_s:
                running_within = count
            if count == connectors:
                all_running_s = elapsed
                break
            if elapsed > 2 * options.running_within_s:
                break
            time.sleep(0.2)
        busy_rate = None  # timed only once all N are RUNNING
        if all_running_s is not None:
            busy = busy_source(folder / "busy.jsonl", options.busy_lines, options.bootstrap)
            progress = files_progress([Path(busy["file"])])
            busy_rate = timed_run(runtime, busy, options.busy_lines, progress).records_per_s
        appender.stop()
        deadline = time.monotonic() + 60
        while not delivered(runtime.store, sources) and time.monotonic() < deadline:
            time.sleep(0.5)
        return {
            "all_running_s": all_running_s,
            "running_within_limit": running_within,
            "busy_records_per_s": busy_rate,
            "lines_appended": sum(appender.written.values()),
            "every_line_delivered": delivered(runtime.store, sources),
            "over_memory": memory.peak["total"] > too_much,
            "peak_memory_bytes": dict(memory.peak),
        }


def measure(options: argparse.Namespace) -> dict[str, Any]:
    """One process per connector count (see the module docstring)."""
    figures = []
    with (
        broker(options.bootstrap) as servers,
        tempfile.TemporaryDirectory() as name,
        busy_core() if options.busy_core else contextlib.nullcontext(),
    ):
        out = Path(name) / "figures.json"
        for connectors in [int(n) for n in options.connectors.split(",")]:
            command = [sys.executable, "-m", "bench.density", *options.passed]
            command += ["--one", str(connectors), "--bootstrap", servers, "--json", str(out)]
            done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
            if done.returncode != 0:
                raise RuntimeError(f"the run of {connectors} failed:\n{done.stderr[-4000:]}")
            figures.append(json.loads(out.read_text()))
    return {
        "rate": options.rate,
        "busy_lines": options.busy_lines,
        "running_within_s": options.running_within_s,
        "busy_core": options.busy_core,
        "runs": figures,
    }


def table(results: dict[str, Any]) -> str:
    def seconds(value: float | None) -> str:
        return "not all" if value is None else f"{value:.1f}"

    rows = [
        [
            f"{f['connectors']:,}",
            str(f["slots"]),
            f"{f['running_within_limit']:,}",
            seconds(f["all_running_s"]),
            "yes" if f["every_line_delivered"] else "NO",
            "not timed" if f["busy_records_per_s"] is None else f"{f['busy_records_per_s']:,.0f}",
            f"{f['busy_alone_records_per_s']:,.0f}",
            "-" if f["busy_ratio"] is None else f"{f['busy_ratio']:.2f}x",
            f"{f['peak_memory_bytes']['total'] / GIB:.2f}"
            + (" (stopped: over the limit)" if f["over_memory"] else ""),
            f"{f['memory_per_task_bytes'] / 2**20:.0f}",
        ]
        for f in results["runs"]
    ]
    return ratio_table(
        f"Density: N file sources appended at {results['rate']} lines/s each, beside one busy "
        f"source of {results['busy_lines']:,} lines, on one runtime"
        + ("; one core kept busy by another process" if results.get("busy_core") else "")
        + "; one run each",
        [
            "N",
            "Spark slots",
            f"RUNNING at {results['running_within_s']:.0f} s",
            "create → all RUNNING (s)",
            "every line delivered",
            "busy records/s beside",
            "busy alone",
            "ratio",
            "peak memory (GiB)",
            "per task (MiB)",
        ],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connectors", default=",".join(map(str, CONNECTOR_COUNTS)))
    parser.add_argument("--rate", type=int, default=10, help="lines a second per file")
    parser.add_argument("--busy-lines", type=int, default=1_000_000)
    parser.add_argument("--tasks-per-slot", type=int, default=100, help="tasks.per.slot")
    parser.add_argument("--slots", type=int, help="Spark task slots (default: what they need)")
    parser.add_argument("--running-within-s", type=float, default=60)
    parser.add_argument("--max-memory-gib", type=float, default=16)
    parser.add_argument(
        "--busy-core", action="store_true", help="keep one core busy in another process"
    )
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child: one count
    args = parser.parse_args(argv)
    if args.one:  # a child of measure()
        Path(args.json).write_text(json.dumps(one_runtime(args, args.one)))
        return {}
    args.passed = [
        *("--rate", str(args.rate), "--busy-lines", str(args.busy_lines)),
        *("--running-within-s", str(args.running_within_s)),
        *("--max-memory-gib", str(args.max_memory_gib)),
        *("--tasks-per-slot", str(args.tasks_per_slot)),
        *(("--slots", str(args.slots)) if args.slots else ()),
    ]
    results = measure(args)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
