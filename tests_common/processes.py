"""Running ``connect-runtime`` as a separate process, as a user does, killing it, and
waiting for what it does (the tests and the benchmarks); what starts and stops a service
(:class:`Started`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import psutil

S = TypeVar("S", bound="Started")


class Started:
    """Something :meth:`start` starts and :meth:`stop` ends (what it started, by PID); a
    ``with`` block does both."""

    def start(self: S) -> S:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: S) -> S:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def write_properties(path: Path, values: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def rest_get(url: str) -> object | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return json.loads(response.read())
    except OSError:
        return None


def rest(method: str, url: str, body: dict[str, Any] | None = None) -> Any:
    """A REST call with a JSON body; the answer's JSON (None when empty). Fails on an error
    status."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"}, method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        payload = response.read()
    return json.loads(payload) if payload else None


def tasks_running(url: str, names: list[str] | tuple[str, ...]) -> bool:
    """Whether every task of each connector of ``names`` is RUNNING (and it has one at
    least), as the REST API at ``url`` says."""
    for name in names:
        status = rest_get(f"{url}/connectors/{name}/status")
        if not isinstance(status, dict) or not status["tasks"]:
            return False
        if any(task["state"] != "RUNNING" for task in status["tasks"]):
            return False
    return True


def start_runtime(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "airflow_provider_connect.runtime.cli", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the runtime and, once it is gone, whatever it started that outlived it."""
    children = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    _, alive = psutil.wait_procs(children, timeout=30)
    for child in alive:
        child.kill()


def wait_until(condition, timeout_s: float, message: str, interval_s: float = 0.05, *, state=None):
    """Polls ``condition`` until it returns something truthy; fails with ``message`` and,
    given ``state``, what it returns at the deadline (e.g. a connector's status)."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            seen = f" ({state()})" if state is not None else ""
            raise AssertionError(f"timed out after {timeout_s}s: {message}{seen}")
        time.sleep(interval_s)
