"""Control plane: how long create → every task RUNNING and delete → cleanup done take.

One runtime (REST API on a free loopback port, local Spark, the embedded broker) and
``--connectors`` file-source connectors one after the other, each created and then deleted:

* through the REST API: ``POST /connectors``, then ``GET …/status`` until the connector and
  its task are RUNNING; ``DELETE /connectors/{name}``, then until the store reports the
  deletion DONE (the tasks stopped with ``connector_deleted=True``);
* through the Airflow operators: ``CreateConnectorOperator`` (``wait_for_running``) and
  ``DeleteConnectorOperator`` (which waits for the cleanup), executed as a task would, with
  ``poll_interval=0.1``.

Reports p50 and p95 in seconds.

    python -m bench.control_plane [--connectors N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState, MetadataStore
from bench.common import broker, ratio_table
from tests_common.broker import free_port

POLL_S = 0.01


def wait(condition: Callable[[], bool], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the control-plane operation did not finish")
        time.sleep(POLL_S)


def rest(method: str, url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        payload = response.read()
        return json.loads(payload) if payload else None


def running(status: dict[str, Any]) -> bool:
    tasks = status.get("tasks") or []
    return (
        status["connector"]["state"] == "RUNNING"
        and bool(tasks)
        and all(t["state"] == "RUNNING" for t in tasks)
    )


def deleted(store: MetadataStore, name: str) -> bool:
    deletion = store.configs.deletion(name)
    return deletion is not None and deletion.state is DeletionState.DONE


def through_rest(base: str, store: MetadataStore, config: dict[str, str]) -> tuple[float, float]:
    name = f"rest-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    rest("POST", f"{base}/connectors", {"name": name, "config": config})
    wait(lambda: running(rest("GET", f"{base}/connectors/{name}/status")))
    created = time.monotonic() - started
    started = time.monotonic()
    rest("DELETE", f"{base}/connectors/{name}")
    wait(lambda: deleted(store, name))
    return created, time.monotonic() - started


def through_operators(config: dict[str, str]) -> tuple[float, float]:
    from airflow_provider_connect.operators.connector import (
        CreateConnectorOperator,
        DeleteConnectorOperator,
    )

    name = f"op-{uuid.uuid4().hex[:8]}"
    create = CreateConnectorOperator(
        task_id="create", connector_name=name, config=config, poll_interval=0.1
    )
    delete = DeleteConnectorOperator(task_id="delete", connector_name=name, poll_interval=0.1)
    started = time.monotonic()
    create.execute(context={})
    created = time.monotonic() - started
    started = time.monotonic()
    delete.execute(context={})
    return created, time.monotonic() - started


def percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    return {"p50": statistics.median(values), "p95": cuts[18], "max": max(values)}


def measure(connectors: int, bootstrap: str | None = None) -> dict[str, Any]:
    with broker(bootstrap) as servers, tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        source = folder / "input.txt"
        source.write_text("a line\n")
        metadata = f"sqlite:///{folder / 'metadata.db'}"
        port = free_port()
        runtime = Connect(
            "bench-control",
            {
                "bootstrap.servers": servers,
                "metadata.url": metadata,
                "listeners": f"http://127.0.0.1:{port}",
                "task.heartbeat.interval.ms": "100",
            },
        )
        runtime.start(rest=True)
        os.environ["AIRFLOW_CONN_CONNECT_DEFAULT"] = json.dumps(
            {"conn_type": "connect", "extra": {"metadata_url": metadata}}
        )
        try:
            runtime.spark.sparkContext.setLogLevel("ERROR")
            config = {
                "connector.class": "FileStreamSource",
                "file": str(source),
                "topic": f"bench-{uuid.uuid4().hex[:8]}",
            }
            base = f"http://127.0.0.1:{port}"
            through_rest(base, runtime.store, config)  # warms Spark's Python workers up
            results: dict[str, Any] = {"connectors": connectors}
            for way, run in (
                ("REST API", lambda: through_rest(base, runtime.store, config)),
                ("Airflow operators", lambda: through_operators(config)),
            ):
                times = [run() for _ in range(connectors)]
                results[way] = {
                    "create → RUNNING": percentiles([t[0] for t in times]),
                    "delete → cleanup done": percentiles([t[1] for t in times]),
                }
            return results
        finally:
            runtime.stop()


def table(results: dict[str, Any]) -> str:
    rows = [
        [way, operation, f"{f['p50']:.2f}", f"{f['p95']:.2f}", f"{f['max']:.2f}"]
        for way in ("REST API", "Airflow operators")
        for operation, f in results[way].items()
    ]
    return ratio_table(
        f"Control plane: {results['connectors']} connectors one after the other (seconds)",
        ["through", "operation", "p50", "p95", "max"],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connectors", type=int, default=20)
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded one")
    args = parser.parse_args(argv)
    results = measure(args.connectors, args.bootstrap)
    print(table(results))
    return results


if __name__ == "__main__":
    main()
