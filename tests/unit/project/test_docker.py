"""docker/: the compose file is what ``tests_common.stack`` renders (the e2e test runs the same
services), valid as Debian's ``docker-compose`` reads it (no engine runs here); every service
of the image has a role the entrypoint knows, and the runtime it deploys is configured as
the Airflow connections expect."""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any

import pytest
import yaml

from airflow_provider_connect.runtime.worker_config import WorkerConfig
from tests_common.stack import COMPOSE_FILE, ENTRYPOINT, render


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    resolved = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE_FILE), "config"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "AIRFLOW_JWT_SECRET": "a-secret"},
    ).stdout
    found: dict[str, Any] = yaml.safe_load(resolved)["services"]
    return found


def test_the_compose_file_is_the_stack_as_demo_stack_renders_it() -> None:
    assert COMPOSE_FILE.read_text() == render(), "run: python -m tests_common.stack"


def test_the_compose_file_needs_a_jwt_secret() -> None:
    env = {k: v for k, v in os.environ.items() if k != "AIRFLOW_JWT_SECRET"}
    checked = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE_FILE), "config"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert checked.returncode != 0 and "AIRFLOW_JWT_SECRET" in checked.stderr


def test_the_stack_has_every_part(services: dict[str, Any]) -> None:
    assert set(services) == {
        "kafka",
        "postgres",
        "spark-master",
        "spark-worker-1",
        "spark-worker-2",
        "init",
        "airflow-api-server",
        "airflow-scheduler",
        "airflow-dag-processor",
        "airflow-triggerer",
        "deploy-runtime",
    }
    assert services["kafka"]["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert services["airflow-scheduler"]["environment"]["AIRFLOW__CORE__EXECUTOR"] == (
        "LocalExecutor"
    )


def test_every_role_of_the_image_is_one_the_entrypoint_knows(services: dict[str, Any]) -> None:
    roles = set(re.findall(r"^  ([a-z-]+)\)", ENTRYPOINT.read_text(), re.M))
    for name, service in services.items():
        if service.get("image", "").startswith("airflow-provider-connect"):
            command = service["command"]
            assert command[0] in roles or command[0] == "airflow", name


def test_the_deployed_runtime_serves_where_the_connection_points(
    services: dict[str, Any],
) -> None:
    deploy = services["deploy-runtime"]["environment"]
    worker = WorkerConfig(json.loads(deploy["CONNECT_WORKER_CONFIG"]))
    connection = json.loads(deploy["AIRFLOW_CONN_CONNECT_DEFAULT"])["extra"]
    assert worker.rest_advertised_url() == connection["rest_url"]
    assert connection["metadata_url"] == deploy["CONNECT_METADATA_URL"]
    assert services["airflow-scheduler"]["hostname"] == "connect-runtime"
