"""A connector whose ``validate`` blocks (as one opening a connection to a system that does
not answer does) holds up neither the REST API's event loop nor its client for longer than
the request deadline: other requests are answered meanwhile, and the blocked one is answered
500 "Request timed out. The worker is currently <what>, which began at <time>." as Kafka
Connect answers (its deadline is 90 s; here the app's is 1 s). The abandoned call runs to its
end: a create whose validation returns late is still written, as in Kafka Connect."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from airflow_provider_connect.connect.config import Config
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.runtime.rest.server import RestServer
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import MetadataStore
from tests.connectors import SequenceSourceConnector
from tests_common.broker import free_port
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

DEADLINE_S = 1.0
SLOW = f"{__name__}.SlowToValidateConnector"
VALIDATING = threading.Event()
RELEASE = threading.Event()


class SlowToValidateConnector(SequenceSourceConnector):
    """Its ``validate`` waits until the test releases it (30 s at most)."""

    def validate(self, connector_configs: dict[str, str]) -> Config:
        VALIDATING.set()
        RELEASE.wait(30)
        return super().validate(connector_configs)


@pytest.fixture
def served(store: MetadataStore, bootstrap: str) -> Iterator[str]:
    """The app served by uvicorn on a loopback port, as the runtime serves it."""
    worker = WorkerConfig({"bootstrap.servers": bootstrap, "metadata.url": store.url})
    server = RestServer(
        create_app(store, worker, request_timeout_s=DEADLINE_S), f"http://127.0.0.1:{free_port()}"
    )
    server.start()
    VALIDATING.clear()
    RELEASE.clear()
    yield server.url
    RELEASE.set()
    server.stop()


def in_background(call: Any) -> tuple[threading.Thread, list[requests.Response]]:
    answers: list[requests.Response] = []
    thread = threading.Thread(target=lambda: answers.append(call()), daemon=True)
    thread.start()
    return thread, answers


def timed_out(answer: requests.Response, doing: str) -> None:
    assert answer.status_code == 500, answer.text
    body = answer.json()
    assert body["error_code"] == 500
    prefix = f"Request timed out. The worker is currently {doing}, which began at "
    assert body["message"].startswith(prefix), body["message"]


def test_a_blocked_validate_is_answered_at_the_deadline_and_blocks_no_other_request(
    served: str,
) -> None:
    config = {"connector.class": SLOW, "topic": "t"}
    started = time.monotonic()
    thread, answers = in_background(
        lambda: requests.put(
            f"{served}/connector-plugins/{SLOW}/config/validate", json=config, timeout=30
        )
    )
    assert VALIDATING.wait(10)
    listed = requests.get(f"{served}/connectors", timeout=DEADLINE_S)  # the loop answers
    assert listed.status_code == 200 and listed.json() == []
    thread.join(30)
    took = time.monotonic() - started
    timed_out(answers[0], f"validating a config of connector plugin {SLOW}")
    assert DEADLINE_S <= took < DEADLINE_S + 5
    RELEASE.set()  # validations go on: the next one is answered in full
    checked = requests.put(
        f"{served}/connector-plugins/{SLOW}/config/validate", json=config, timeout=30
    )
    assert checked.status_code == 200 and checked.json()["name"] == SLOW


def test_a_create_whose_validation_times_out_is_answered_500_and_written_later(
    served: str,
) -> None:
    create = {"name": "slow", "config": {"connector.class": SLOW, "topic": "t"}}
    answer = requests.post(f"{served}/connectors", json=create, timeout=30)
    timed_out(answer, "creating connector slow (validating its config)")
    assert requests.get(f"{served}/connectors", timeout=DEADLINE_S).json() == []
    RELEASE.set()
    wait_until(
        lambda: requests.get(f"{served}/connectors", timeout=DEADLINE_S).json() == ["slow"],
        10,
        "the abandoned create written once its validation returned",
    )
