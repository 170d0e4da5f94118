"""Scale: 1 to 64 concurrent tasks on one runtime.

For each task count N, a runtime of its own (a new process, so that its memory is its own,
with ``spark.master=local[N]``) runs one ``FileStreamSource`` with ``tasks.max`` N over N
files that share ``--lines`` JSON lines, but of at least ``--min-per-task`` lines each (so
that every task is still reading once the last one has started), into a topic of N
partitions, with JsonConverter (schemas disabled).
Reported per N:

* records/s in total and per task (steady rate, as ``bench.common.connector_run``), and the
  scaling factor: total records/s over that of one task (the machine's cores bound it);
* time from creating the connector to all N tasks RUNNING;
* peak memory (proportional set size, so pages shared by forked Python workers count
  once) of the driver's Python process, of the Spark JVM (driver and local executors) and
  of the Python workers running the tasks, and their total. The broker is not counted.

Each figure is one run per task count.

    python -m bench.scale [--lines N] [--min-per-task M] [--tasks 1,2,8,32,64] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import psutil

from bench.common import broker, connector_run, files_progress, ratio_table, write_json_lines
from bench.source_path import new_topic

TASK_COUNTS = (1, 2, 8, 32, 64)
ROOT = Path(__file__).resolve().parents[1]


class PeakMemory:
    """Samples the proportional set size of this process and its descendants, by role,
    every ``interval_s`` until stopped; keeps the peak of each role and of the total."""

    def __init__(self, interval_s: float = 0.25) -> None:
        self.interval_s = interval_s
        self.peak: dict[str, int] = {"driver": 0, "jvm": 0, "python workers": 0, "total": 0}
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakMemory:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.thread.join()

    def _sample(self) -> None:
        me = psutil.Process()
        while not self.stopping.wait(self.interval_s):
            sizes = {"driver": _pss(me), "jvm": 0, "python workers": 0}
            for child in me.children(recursive=True):
                role = "jvm" if child.name() == "java" else "python workers"
                sizes[role] += _pss(child)
            sizes["total"] = sum(sizes.values())
            for role, size in sizes.items():
                self.peak[role] = max(self.peak[role], size)


def _pss(process: psutil.Process) -> int:
    try:
        return process.memory_full_info().pss
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0


def one_runtime(tasks: int, lines: int, bootstrap: str) -> dict[str, Any]:
    """In this process: N tasks of ``lines`` lines each on a new runtime; the figures of the
    module docstring."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        paths = [folder / f"input-{i}.jsonl" for i in range(tasks)]
        for i, path in enumerate(paths):
            write_json_lines(path, i * lines, lines)
        config = {
            "connector.class": "FileStreamSource",
            "files": ",".join(map(str, paths)),
            "topic": new_topic(bootstrap, tasks),
            "tasks.max": str(tasks),
            "value.converter": "JsonConverter",
            "value.converter.schemas.enable": "false",
        }
        worker = {
            "bootstrap.servers": bootstrap,
            "offset.flush.interval.ms": "1000",
            "spark.master": f"local[{tasks}]",
        }
        with PeakMemory() as memory:
            run = connector_run(worker, folder, config, tasks * lines, files_progress(paths))
    return {
        "tasks": tasks,
        "records_per_s": run.records_per_s,
        "records_per_s_per_task": run.records_per_s / tasks,
        "running_s": run.running_s,
        "peak_memory_bytes": memory.peak,
    }


def measure(
    lines: int, min_per_task: int, task_counts: list[int], bootstrap: str | None = None
) -> dict[str, Any]:
    """One process per task count (see the module docstring)."""
    figures = []
    with broker(bootstrap) as servers, tempfile.TemporaryDirectory() as name:
        out = Path(name) / "figures.json"
        for tasks in task_counts:
            command = [sys.executable, "-m", "bench.scale", "--one", str(tasks)]
            per_task = max(lines // tasks, min_per_task)
            command += ["--lines", str(per_task), "--bootstrap", servers, "--json", str(out)]
            done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
            if done.returncode != 0:
                raise RuntimeError(f"the run with {tasks} tasks failed:\n{done.stderr[-4000:]}")
            figures.append(json.loads(out.read_text()))
    one = figures[0]["records_per_s"] if figures[0]["tasks"] == 1 else None
    for figure in figures:
        figure["scaling"] = figure["records_per_s"] / one if one else None
    return {"lines": lines, "min_per_task": min_per_task, "runs": figures}


def table(results: dict[str, Any]) -> str:
    gib = 2**30
    rows = [
        [
            str(f["tasks"]),
            f"{f['records_per_s']:,.0f}",
            f"{f['records_per_s_per_task']:,.0f}",
            f"{f['scaling']:.2f}x" if f["scaling"] else "not measured",
            f"{f['running_s']:.2f}",
            f"{f['peak_memory_bytes']['driver'] / gib:.2f}",
            f"{f['peak_memory_bytes']['jvm'] / gib:.2f}",
            f"{f['peak_memory_bytes']['python workers'] / gib:.2f}",
            f"{f['peak_memory_bytes']['total'] / gib:.2f}",
        ]
        for f in results["runs"]
    ]
    return ratio_table(
        f"Scale: N file-source tasks on one runtime sharing {results['lines']:,} lines (at "
        f"least {results['min_per_task']:,} each), one run each; memory is the peak "
        "proportional set size (GiB)",
        [
            "tasks",
            "records/s",
            "per task",
            "vs 1 task",
            "create → all RUNNING (s)",
            "driver",
            "Spark JVM",
            "Python workers",
            "total",
        ],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lines",
        type=int,
        default=8_000_000,
        help="lines over all tasks (one task reads about a million a second: a run of a "
        "few seconds gives its steady rate several commits)",
    )
    parser.add_argument("--min-per-task", type=int, default=100_000)
    parser.add_argument("--tasks", default=",".join(map(str, TASK_COUNTS)))
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child: one task count
    args = parser.parse_args(argv)
    if args.one:  # a child of measure()
        Path(args.json).write_text(json.dumps(one_runtime(args.one, args.lines, args.bootstrap)))
        return {}
    counts = [int(n) for n in args.tasks.split(",")]
    results = measure(args.lines, args.min_per_task, counts, args.bootstrap)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
