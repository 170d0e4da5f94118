"""A Spark standalone cluster on loopback for the e2e tests, benchmarks and demos: a master
and workers started from pyspark's own jars (``spark-class ...deploy.master.Master`` and
``...deploy.worker.Worker``), each a separate process, as on a real cluster, with the
image's entrypoint and the arguments of ``tests_common.stack``, as ``docker/compose.yaml`` runs
them."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pyspark

from tests_common.broker import free_port
from tests_common.netns import NetworkHost
from tests_common.processes import Started
from tests_common.stack import (
    ENTRYPOINT,
    SPARK_WORKER_CORES,
    SPARK_WORKERS,
    spark_master_args,
    spark_worker_args,
)

SPARK_HOME = str(Path(pyspark.__file__).parent)


def spark_env() -> dict[str, str]:
    """The environment every Spark process here needs: pyspark's folder as ``SPARK_HOME``
    and loopback as the local address (Spark binds the machine's address otherwise)."""
    return {**os.environ, "SPARK_HOME": SPARK_HOME, "SPARK_LOCAL_IP": "127.0.0.1"}


class SparkCluster(Started):
    """A master and ``workers`` workers of ``cores`` cores each; ``master_url`` says where.
    Logs go to ``folder``; ``extra_env`` goes to every process (the executors inherit the
    workers' environment). With ``host`` (a :class:`~tests_common.netns.NetworkHost`), the
    workers and their executors run in it, on its address, and the master listens on its
    gateway: cutting the host's link partitions them from the master, the driver and
    whatever else listens on the gateway. Ends the processes it started (by PID) on
    :meth:`stop`."""

    def __init__(
        self,
        folder: Path,
        workers: int = SPARK_WORKERS,
        cores: int = SPARK_WORKER_CORES,
        port: int | None = None,
        extra_env: dict[str, str] | None = None,
        host: NetworkHost | None = None,
    ) -> None:
        self.folder = folder
        self.cores = cores
        self.extra_env = extra_env or {}
        self.host = host
        self.master_address = host.gateway if host else "127.0.0.1"
        self.worker_address = host.address if host else "127.0.0.1"
        self.port, self.ui_port = port or free_port(), free_port()
        self.master_url = f"spark://{self.master_address}:{self.port}"
        self.master: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes] | None] = [None] * workers

    def _spark_class(
        self, role: str, log: str, args: list[str], address: str
    ) -> subprocess.Popen[bytes]:
        command = [str(ENTRYPOINT), role, *args]
        if self.host is not None and address == self.host.address:
            command = self.host.command(command)
        with (self.folder / log).open("ab") as out:
            return subprocess.Popen(
                command,
                env={**spark_env(), "SPARK_LOCAL_IP": address, **self.extra_env},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def start(self, timeout_s: float = 60) -> SparkCluster:
        """Starts the master and the workers; returns once every worker registered (or
        stops what it started and raises)."""
        try:
            return self._start(timeout_s)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout_s: float) -> SparkCluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.master = self._spark_class(
            "spark-master",
            "master.log",
            spark_master_args(self.master_address, self.port, self.ui_port),
            self.master_address,
        )
        for index in range(len(self.workers)):
            self.start_worker(index)
        self.wait_for_workers(len(self.workers), timeout_s)
        return self

    def start_worker(self, index: int) -> None:
        """Starts worker ``index`` (again, after :meth:`kill_worker`)."""
        work = self.folder / f"worker-{index}"
        work.mkdir(exist_ok=True)
        args = spark_worker_args(
            self.worker_address, free_port(), str(work), self.master_url, self.cores
        )
        self.workers[index] = self._spark_class(
            "spark-worker", f"worker-{index}.log", args, self.worker_address
        )

    def state(self) -> dict[str, Any] | None:
        """The master's view (its web UI's JSON); None while it does not answer."""
        try:
            url = f"http://{self.master_address}:{self.ui_port}/json/"
            with urllib.request.urlopen(url, timeout=2) as r:
                state: dict[str, Any] = json.loads(r.read())
                return state
        except (OSError, ValueError):  # not listening yet, or not answering JSON yet
            return None

    def alive_workers(self) -> int:
        state = self.state()
        return 0 if state is None else sum(w["state"] == "ALIVE" for w in state["workers"])

    def wait_for_workers(self, count: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.alive_workers() < count:
            if self.master is None or self.master.poll() is not None:
                raise RuntimeError(f"the Spark master died: see {self.folder / 'master.log'}")
            if time.monotonic() > deadline:
                logs = "".join(
                    f"\n--- {log.name} (last lines) ---\n"
                    + "\n".join(log.read_text().splitlines()[-15:])
                    for log in sorted(self.folder.glob("*.log"))
                )
                raise RuntimeError(
                    f"{count} Spark worker(s) did not register in {timeout_s}s{logs}"
                )
            time.sleep(0.2)

    def kill_worker(self, index: int) -> list[int]:
        """SIGKILLs worker ``index`` and the executors it started, as a lost machine; returns
        the PIDs killed."""
        worker = self.workers[index]
        if worker is None:
            return []
        try:
            root = psutil.Process(worker.pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:  # it died by itself
            processes = []
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(processes, timeout=30)
        worker.wait(timeout=30)
        self.workers[index] = None
        return [p.pid for p in processes]

    def stop(self) -> None:
        for index in range(len(self.workers)):
            self.kill_worker(index)
        if self.master is not None and self.master.poll() is None:
            self.master.terminate()
            self.master.wait(timeout=30)
        self.master = None
