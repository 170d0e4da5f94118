"""ConnectHook over a real metadata store (SQLite and PostgreSQL), with the connection as
Airflow reads it; waiting on a running runtime."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.hooks.connect import ConnectHook, ConnectorFailedError
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import MetadataStore, TargetState
from tests.connectors import recording_source
from tests.kafka import new_topic, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def hook(connection: str) -> Iterator[ConnectHook]:
    hook = ConnectHook(connection)
    yield hook
    hook.close()


def recording(tmp_path: Path, topic: str, **extra: str) -> dict[str, str]:
    return recording_source(tmp_path / "e.jsonl", topic, {"secret": "hunter2", **extra})


def test_connection_settings(hook: ConnectHook, store: MetadataStore) -> None:
    assert hook.metadata_url == store.url and hook.rest_url == "http://127.0.0.1:8083"
    ok, message = hook.test_connection()
    assert ok and "0 connector(s)" in message


def test_postgres_server_in_the_connection_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_PG_META",
        json.dumps(
            {
                "conn_type": "connect",
                "host": "db.internal",
                "port": 5433,
                "login": "connect",
                "password": "s3cret",
                "schema": "meta",
            }
        ),
    )
    assert (
        ConnectHook("pg_meta").metadata_url
        == "postgresql+psycopg://connect:s3cret@db.internal:5433/meta"
    )
    monkeypatch.setenv("AIRFLOW_CONN_NOWHERE", json.dumps({"conn_type": "connect"}))
    with pytest.raises(Exception, match="metadata_url"):
        _ = ConnectHook("nowhere").metadata_url


def test_create_update_patch_delete(
    hook: ConnectHook, store: MetadataStore, tmp_path: Path
) -> None:
    config = recording(tmp_path, "t")
    assert hook.create_connector("rec", config)
    with pytest.raises(AlreadyExistsException):
        hook.create_connector("rec", config)
    assert not hook.create_connector("rec", {**config, "count": "3"}, if_exists="skip")
    assert store.configs.connector("rec").config.get("count") is None
    assert not hook.create_connector("rec", {**config, "count": "3"}, if_exists="update")
    assert store.configs.connector("rec").config["count"] == "3"
    version = hook.update_connector(
        "rec", {**hook.get_config("rec"), "count": "4"}
    )  # [hidden] round-trips
    assert store.configs.connector("rec").config["secret"] == "hunter2" and version == 3
    hook.patch_connector("rec", {"count": None, "batch": "7"})
    stored = store.configs.connector("rec").config
    assert "count" not in stored and stored["batch"] == "7"
    assert hook.get_config("rec")["secret"] == "[hidden]"
    hook.pause_connector("rec")
    assert store.configs.connector("rec").target_state is TargetState.PAUSED
    hook.stop_connector("rec")
    assert store.configs.connector("rec").target_state is TargetState.STOPPED
    hook.resume_connector("rec")
    assert store.configs.connector("rec").target_state is TargetState.STARTED
    hook.restart_connector("rec", include_tasks=True, only_failed=True)
    hook.restart_task("rec", 0)
    assert len(store.configs.take_restart_requests()) == 2
    assert hook.delete_connector("rec")
    assert not hook.delete_connector("rec", missing_ok=True)
    with pytest.raises(NotFoundException):
        hook.delete_connector("rec")


def test_invalid_configs_never_reach_the_store(hook: ConnectHook, store: MetadataStore) -> None:
    with pytest.raises(ConfigValidationError) as e:
        hook.create_connector("bad", {"connector.class": "FileStreamSource", "tasks.max": "-1"})
    for field in ("tasks.max", '"file"', '"topic"'):
        assert field in str(e.value)
    assert store.configs.connectors() == []
    with pytest.raises(ValueError, match="if_exists"):
        hook.create_connector("x", {}, if_exists="maybe")


def test_wait_for_running_and_for_failure(
    hook: ConnectHook, connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    hook.create_connector("ok", recording(tmp_path, new_topic(bootstrap)))
    status = hook.wait_for_running("ok", timeout_s=60, poll_interval_s=0.2)
    assert status["tasks"][0]["state"] == "RUNNING"
    expected = [{"partition": {"task": 0}, "offset": {"next": 10}}]
    wait_until(lambda: hook.get_source_offsets("ok") == expected, 30, "offsets committed")
    hook.create_connector(
        "bad", recording(tmp_path, new_topic(bootstrap), **{"fail.on.start": "true"})
    )
    with pytest.raises(ConnectorFailedError, match="failed on purpose"):
        hook.wait_for_running("bad", timeout_s=60, poll_interval_s=0.2)
    # the fix: the FAILED state of the config it replaces is waited past, not raised
    version = hook.update_connector("bad", recording(tmp_path, new_topic(bootstrap)))
    status = hook.wait_for_running("bad", version, timeout_s=60, poll_interval_s=0.2)
    assert [t["state"] for t in status["tasks"]] == ["RUNNING"]
