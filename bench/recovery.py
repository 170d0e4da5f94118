"""How fast the runtime recovers on a Spark standalone cluster (a master and two workers of
two cores, started from pyspark's jars on loopback), with ``connect-runtime serve`` as the
driver and SQLite as the metadata database:

* create → first record: from the REST call that creates a file source (its file already
  holds lines) to the first record in its topic, executors already up;
* lost worker: a worker running tasks and its executor SIGKILLed → every task of the
  connectors RUNNING again in a live process;
* lost driver: the active driver SIGKILLed while a standby runs → the standby serving REST
  with every task RUNNING.

Each figure is the p50 and p95 (and max) over ``--kills`` repetitions, in seconds.

    python -m bench.recovery [--kills N] [--json PATH]
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
from confluent_kafka import Consumer, TopicPartition

from bench.common import broker, command_line, new_topic, ratio_table
from tests_common.broker import free_port
from tests_common.processes import kill_tree, rest_get, start_runtime, wait_until, write_properties
from tests_common.spark_cluster import SparkCluster

CONNECTORS = 2
LINES = 1_000


class Runtime:
    """One ``connect-runtime serve`` driver on the cluster, its REST API on its own port."""

    def __init__(self, folder: Path, worker: dict[str, str], name: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = write_properties(folder / f"{name}.properties", {**worker, "listeners": self.url})
        self.process = start_runtime(["serve", "--config", str(config)], folder / f"{name}.log")

    def status(self, name: str) -> dict[str, Any] | None:
        found = rest_get(f"{self.url}/connectors/{name}/status")
        return found if isinstance(found, dict) and "tasks" in found else None

    def create(self, name: str, config: dict[str, str]) -> None:
        request = urllib.request.Request(
            f"{self.url}/connectors",
            data=json.dumps({"name": name, "config": config}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        urllib.request.urlopen(request, timeout=10).close()


def task_pids(runtime: Runtime, names: list[str]) -> list[int] | None:
    """The process of every task, once all are RUNNING in live processes; else None."""
    pids = []
    for name in names:
        status = runtime.status(name)
        if status is None or not status["tasks"]:
            return None
        for task in status["tasks"]:
            pid = int(task["worker_id"].rsplit("/", 1)[1])
            if task["state"] != "RUNNING" or not psutil.pid_exists(pid):
                return None
            pids.append(pid)
    return pids


def first_record_s(bootstrap: str, runtime: Runtime, folder: Path, name: str) -> float:
    topic = new_topic(bootstrap)
    source = folder / f"{name}.txt"
    source.write_text("".join(f"line {i}\n" for i in range(LINES)))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": name})
    consumer.assign([TopicPartition(topic, 0, 0)])
    started = time.monotonic()
    runtime.create(
        name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}
    )
    try:
        wait_until(
            lambda: any(m.error() is None for m in consumer.consume(10, 0.05)), 60, "a record"
        )
    finally:
        consumer.close()
    return time.monotonic() - started


def figures(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p95": p95, "max": ordered[-1], "n": len(ordered)}


@contextmanager
def stack(
    bootstrap: str | None, folder: Path
) -> Iterator[tuple[str, SparkCluster, dict[str, str]]]:
    with (
        broker(bootstrap) as servers,
        SparkCluster(folder / "spark", workers=2, cores=2) as cluster,
    ):
        worker = {
            "bootstrap.servers": servers,
            "metadata.url": f"sqlite:///{folder / 'metadata.db'}",
            "spark.master": cluster.master_url,
            "offset.flush.interval.ms": "500",
            "value.converter": "StringConverter",
        }
        yield servers, cluster, worker


def worker_of(cluster: SparkCluster, pid: int) -> int | None:
    """The index of the cluster worker whose processes include ``pid``."""
    for index, worker in enumerate(cluster.workers):
        if worker is not None and pid in {p.pid for p in psutil.Process(worker.pid).children(True)}:
            return index
    return None


def lost_worker_s(cluster: SparkCluster, runtime: Runtime, names: list[str]) -> float:
    """Kills a worker that runs tasks, and times until every task runs again; then starts
    the worker again."""
    pids = wait_until(lambda: task_pids(runtime, names), 120, "every task RUNNING")
    victim = next(i for i in (worker_of(cluster, p) for p in pids) if i is not None)
    killed = set(cluster.kill_worker(victim))
    started = time.monotonic()
    wait_until(
        lambda: not set(task_pids(runtime, names) or killed) & killed, 300, "tasks running again"
    )
    seconds = time.monotonic() - started
    cluster.start_worker(victim)
    cluster.wait_for_workers(len(cluster.workers), 60)
    return seconds


def lost_driver_s(standby: Runtime, active: Runtime, names: list[str]) -> float:
    """Kills the active driver once ``standby`` serves, and times until the standby runs
    every task."""
    wait_until(lambda: rest_get(standby.url + "/"), 120, "the standby's REST")
    before = set(wait_until(lambda: task_pids(active, names), 120, "every task RUNNING"))
    kill_tree(active.process)
    started = time.monotonic()
    wait_until(
        lambda: not set(task_pids(standby, names) or before) & before, 300, "the standby leading"
    )
    return time.monotonic() - started


def measure(kills: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        with stack(bootstrap, folder) as (servers, cluster, worker):
            active = Runtime(folder, worker, "driver-a")
            wait_until(lambda: rest_get(active.url + "/"), 120, "REST")
            names = [f"lines-{i}" for i in range(CONNECTORS)]
            first = [first_record_s(servers, active, folder, n) for n in names]
            lost_worker = [lost_worker_s(cluster, active, names) for _ in range(kills)]
            lost_driver = []
            for index in range(kills):
                standby = Runtime(folder, worker, f"driver-{index}")
                lost_driver.append(lost_driver_s(standby, active, names))
                active = standby
            kill_tree(active.process)
    return {
        "kills": kills,
        "seconds": {
            "create → first record": figures(first),
            "lost worker → tasks RUNNING again": figures(lost_worker),
            "lost driver → standby serving, tasks RUNNING": figures(lost_driver),
        },
    }


def table(results: dict[str, Any]) -> str:
    rows = [
        [what, f"{f['p50']:.1f}", f"{f['p95']:.1f}", f"{f['max']:.1f}", str(f["n"])]
        for what, f in results["seconds"].items()
    ]
    return ratio_table(
        f"Recovery on a Spark standalone cluster (2 workers x 2 cores), {CONNECTORS} file "
        f"sources, {results['kills']} kill(s) of each kind; seconds",
        ["event", "p50", "p95", "max", "n"],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--kills", 5), measure, table)


if __name__ == "__main__":
    main()
