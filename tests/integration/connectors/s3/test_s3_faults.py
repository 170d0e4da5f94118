"""The S3 sink through the real runtime against an endpoint that fails (moto's server behind
a proxy that throttles, answers 5xx, closes connections, hangs or refuses them, or moto's
server frozen): retried
with backoff, every record exactly once after recovery; past ``s3.retry.timeout.ms`` the
task fails naming the bucket and the endpoint and never the secret (status, REST, XCom,
the page's API, logs), and a REST restart resumes it losing and doubling nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime import Connect
from tests.integration.connectors.s3.test_s3_sink import config, ids_in, task_state
from tests.records import order, send
from tests_common.kafka import new_topic
from tests_common.processes import wait_until
from tests_common.s3 import S3Endpoint
from tests_common.s3_faults import FaultyEndpoint

pytestmark = pytest.mark.integration

ATTEMPTS = 2
FAST = {
    "flush.size": "50",
    "s3.part.retries": str(ATTEMPTS),
    "s3.retry.backoff.ms": "20",
    "retry.backoff.ms": "100",
    "s3.connect.timeout.ms": "500",
    "s3.read.timeout.ms": "2000",
}
"""Short limits: a failed request costs at most two seconds, a retry a tenth. Not shorter: the
connector's start lists the bucket within the read timeout, and moto's server on a loaded
machine took longer than half a second to answer (the connector failed at its start)."""


@pytest.fixture
def worker_props(worker_props: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The runtime's task runs write their logs under the test's folder."""
    return {**worker_props, "log.dir": str(tmp_path / "logs")}


def task_logs(tmp_path: Path, name: str) -> str:
    return "".join(p.read_text() for p in (tmp_path / "logs").glob(f"{name}-0-*.log"))


def sink(
    s3: S3Endpoint, bucket: str, topic: str, proxy: FaultyEndpoint, **extra: str
) -> dict[str, str]:
    return config(s3, bucket, topic, **{**FAST, "store.url": proxy.url, **extra})


FAULTS = ["slow_down", "internal_error", "close", "hang", "refuse", "freeze"]
"""The proxy's faults, and moto's server stopped (SIGSTOP) behind the proxy."""


def start(fault: str, s3: S3Endpoint, proxy: FaultyEndpoint) -> None:
    if fault == "freeze":
        s3.freeze()
    elif fault == "refuse":
        proxy.refuse()
    else:
        proxy.inject("delay" if fault == "hang" else fault, delay_s=30)


def end(fault: str, s3: S3Endpoint, proxy: FaultyEndpoint) -> None:
    if fault == "freeze":
        s3.thaw()
    elif fault == "refuse":
        proxy.accept()
    else:
        proxy.heal()


def requests_met(fault: str, proxy: FaultyEndpoint, logs: Callable[[], str]) -> int:
    """How many requests have met ``fault`` so far (or more: a counter that grows with
    them). Refused connections reach nothing that counts: the task's log says each."""
    if fault == "refuse":
        return logs().count("Could not connect to the endpoint")
    return proxy.requests if fault == "freeze" else proxy.faults


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failing_endpoint_is_retried_and_nothing_is_lost_or_doubled(
    connect: Connect,
    bootstrap: str,
    s3: S3Endpoint,
    bucket: str,
    proxy: FaultyEndpoint,
    tmp_path: Path,
    fault: str,
) -> None:
    if fault == "freeze" and s3.process is None:
        pytest.skip("only moto's server started by the tests can be frozen (S3_ENDPOINT_URL)")
    topic, name, total = new_topic(bootstrap), f"s3-{fault.replace('_', '-')}", 300
    connect.add_connector(name, sink(s3, bucket, topic, proxy))
    send(bootstrap, topic, [order(i) for i in range(100)])
    wait_until(lambda: len(s3.objects(bucket)) == 2, 60, "two objects before the fault")

    def met() -> int:
        return requests_met(fault, proxy, lambda: task_logs(tmp_path, name))

    start(fault, s3, proxy)
    try:
        before = met()
        send(bootstrap, topic, [order(i) for i in range(100, total)])
        # more requests met the fault than one write's attempts: the writer retried too
        wait_until(lambda: met() - before > ATTEMPTS, 60, "failed requests retried")
    finally:
        end(fault, s3, proxy)
    wait_until(lambda: len(ids_in(s3, bucket)) >= total, 60, "every record in objects")
    assert sorted(ids_in(s3, bucket)) == list(range(total))
    assert task_state(connect, name) == "RUNNING"


def test_past_the_retry_timeout_the_task_fails_without_the_secret_and_a_restart_resumes(
    connect: Connect,
    rest: TestClient,
    bootstrap: str,
    s3: S3Endpoint,
    bucket: str,
    proxy: FaultyEndpoint,
    tmp_path: Path,
    connection: str,
) -> None:
    topic, name, secret = new_topic(bootstrap), "s3-throttled", f"s3cr3t-{uuid.uuid4().hex}"
    bad = {"s3.retry.timeout.ms": "1000", "aws.secret.access.key": secret}
    connect.add_connector(name, sink(s3, bucket, topic, proxy, **bad))
    send(bootstrap, topic, [order(i) for i in range(100)])
    wait_until(lambda: len(s3.objects(bucket)) == 2, 60, "two objects before throttling")
    proxy.inject("slow_down")
    send(bootstrap, topic, [order(i) for i in range(100, 200)])

    def status() -> dict[str, Any]:
        answer: dict[str, Any] = rest.get(f"/connectors/{name}/status").json()
        return answer

    wait_until(lambda: status()["tasks"][0]["state"] == "FAILED", 60, "the task FAILED")
    trace = status()["tasks"][0]["trace"]
    assert f"on bucket {bucket} at {proxy.url} failed" in trace, trace
    assert "SlowDown" in trace and "s3.retry.timeout.ms=1000" in trace, trace
    hook = ConnectHook(connection)  # what operators return to XCom, and the page's API
    try:
        xcom = {"config": hook.get_config(name), "status": hook.get_status(name)}
        page = hook.connectors_overview()
    finally:
        hook.close()
    (shown_on_page,) = [c for c in page["connectors"] if c["name"] == name]
    assert xcom["config"]["aws.secret.access.key"] == "[hidden]"
    assert shown_on_page["config"]["aws.secret.access.key"] == "[hidden]"
    shown = json.dumps([status(), rest.get(f"/connectors/{name}").json(), xcom, page])
    logs = task_logs(tmp_path, name)
    assert "retrying in" in logs  # the run's log has its failures
    assert secret not in shown and secret not in logs
    assert sorted(ids_in(s3, bucket)) == list(range(100))  # nothing past the last commit

    proxy.heal()
    answer = rest.post(f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")
    assert answer.status_code == 202, answer.text
    wait_until(lambda: len(ids_in(s3, bucket)) >= 200, 60, "every record after the restart")
    assert sorted(ids_in(s3, bucket)) == list(range(200))
    assert status()["tasks"][0]["state"] == "RUNNING"
    assert secret not in task_logs(tmp_path, name)
