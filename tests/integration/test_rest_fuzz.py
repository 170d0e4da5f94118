"""Property-based fuzzing of the REST API from its own OpenAPI document (Schemathesis), against
a running runtime that holds real connectors: a running source and sink and a STOPPED source
(so the offsets endpoints get past their state check). Most generated ``{name}`` values are
replaced by those names, so the connector paths are exercised, not only their 404s. No
request may get a 5xx.

Before each request the connectors are put back as they were (created again if a generated
DELETE removed them, their target states reset), so every request meets the same runtime. The
sink is never STOPPED when a request comes: resetting a sink's offsets deletes its consumer
group, which the test broker does not answer (the REST call waits out its timeout)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.store import MetadataStore, State, TargetState
from demo.processes import wait_until
from tests.kafka import new_topic

pytestmark = pytest.mark.integration

EXAMPLES = 15
"""Generated requests per operation (bounded: the whole run takes well under a minute)."""


@pytest.fixture
def connectors(connect: Connect, bootstrap: str, tmp_path: Path) -> dict[str, dict[str, str]]:
    topic = new_topic(bootstrap)
    (tmp_path / "in.txt").write_text("one\ntwo\n")
    found = {
        "source": {
            "connector.class": "FileStreamSource",
            "file": str(tmp_path / "in.txt"),
            "topic": topic,
        },
        "sink": {"connector.class": "FileStreamSink", "file": str(tmp_path / "a"), "topics": topic},
        "stopped-source": {
            "connector.class": "FileStreamSource",
            "file": str(tmp_path / "in.txt"),
            "topic": topic,
        },
    }
    restore(connect.store, found)
    wait_until(lambda: stopped(connect.store, "stopped-source"), 60, "STOPPED")
    return found


@pytest.fixture
def rest_schema(connect: Connect, connectors: dict[str, dict[str, str]]) -> Any:
    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(connect.store, connect.worker)
    )

    @schema.hook
    def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any]) -> Any:
        if not path_parameters or "name" not in path_parameters:
            return st.just(path_parameters)
        real = [{**path_parameters, "name": name} for name in connectors]
        return st.sampled_from([path_parameters, *real])  # a real name 3 times in 4

    return schema


def test_no_request_gets_a_server_error(
    rest_schema: Any, connect: Connect, connectors: dict[str, dict[str, str]]
) -> None:
    """Every operation, with valid and with invalid input (path, query and body)."""
    operations = [result.ok() for result in rest_schema.get_all_operations()]
    assert len(operations) >= 25
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def call(case: Any) -> None:
                restore(connect.store, connectors)
                case.call_and_validate(checks=[not_a_server_error])

            with contextlib.suppress(Unsatisfiable):  # no input to make invalid (GET /)
                call()


def restore(store: MetadataStore, connectors: dict[str, dict[str, str]]) -> None:
    """Creates again what an earlier generated DELETE removed (once its cleanup is done),
    and sets each connector's target state back."""
    for name, config in connectors.items():
        target = TargetState.STOPPED if name.startswith("stopped") else TargetState.STARTED
        with contextlib.suppress(AlreadyExistsException):
            store.configs.create_connector(name, {**config, "name": name}, target)
        with contextlib.suppress(NotFoundException):  # deleted, its cleanup still running
            store.configs.set_target_state(name, target)


def stopped(store: MetadataStore, name: str) -> bool:
    status = store.statuses.connector_status(name)
    return status is not None and status.state is State.STOPPED
