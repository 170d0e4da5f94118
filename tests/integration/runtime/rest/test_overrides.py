"""An override outside connector.client.config.override.policy is refused up front: by the
REST API with a 400 naming the key, and by the Airflow hook (which applies the policy the
runtime recorded in the metadata database)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from tests_common.kafka import wait_until

pytestmark = pytest.mark.integration
POLICY = "connector.client.config.override.policy"


def source(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in"),
        "topic": "t",
        **extra,
    }


def test_rest_refuses_an_override_outside_the_policy(
    connect: Connect, worker_props: dict[str, str], tmp_path: Path
) -> None:
    worker = WorkerConfig({**worker_props, POLICY: "Principal"})
    with TestClient(create_app(connect.store, worker)) as rest:
        refused = rest.post(
            "/connectors",
            json={"name": "o", "config": source(tmp_path, **{"producer.override.acks": "0"})},
        )
        assert refused.status_code == 400
        assert "The 'Principal' policy does not allow 'acks'" in refused.json()["message"]
        validated = rest.put(
            "/connector-plugins/FileStreamSource/config/validate",
            json=source(tmp_path, **{"producer.override.acks": "0"}),
        ).json()
        errors = {c["value"]["name"]: c["value"]["errors"] for c in validated["configs"]}
        assert errors["producer.override.acks"]  # the key is named, with its error
        allowed = rest.post(
            "/connectors",
            json={
                "name": "ok",
                "config": source(tmp_path, **{"producer.override.security.protocol": "PLAINTEXT"}),
            },
        )
        assert allowed.status_code == 201, allowed.text


def test_the_hook_applies_the_policy_the_runtime_recorded(
    worker_props: dict[str, str], spark: object, connection: str, tmp_path: Path
) -> None:
    runtime = Connect("policy-runtime", {**worker_props, POLICY: "None"})
    runtime.start()
    try:
        wait_until(
            lambda: runtime.store.statuses.worker_settings().get(POLICY) == "None",
            30,
            "the runtime recorded its policy",
        )
        hook = ConnectHook(connection)
        with pytest.raises(
            ConfigValidationError, match="The 'None' policy does not allow 'linger.ms'"
        ) as refused:
            hook.create_connector("o", source(tmp_path, **{"producer.override.linger.ms": "5"}))
        names = [c["value"]["name"] for c in refused.value.infos["configs"] if c["value"]["errors"]]
        assert names == ["producer.override.linger.ms"]
        hook.close()
    finally:
        runtime.stop()
