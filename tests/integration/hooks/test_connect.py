"""ConnectHook over a real metadata store (SQLite and PostgreSQL), with the connection as
Airflow reads it; waiting on a running runtime; and a metadata database that refuses
connections, hangs (a private PostgreSQL cluster frozen) or crashes and comes back."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.hooks.connect import ConnectHook, ConnectorFailedError
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import MetadataStore, StoreUnavailable, TargetState
from airflow_provider_connect.store.statuses import KAFKA_CLUSTER_OUTAGE
from tests.connectors import recording_source
from tests_common.broker import free_port
from tests_common.kafka import new_topic, wait_until
from tests_common.postgres_cluster import PostgresCluster

# On both stores: the hook is the Airflow side's connection to either kind.
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]


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
    for field in ("tasks.max", "one of file or files", '"topic"'):
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


# -- an unreachable or hung metadata database ------------------------------------------------
def unreachable_connection(monkeypatch: pytest.MonkeyPatch, url: str, timeout_s: float) -> str:
    """A connection ``outage`` to ``url`` whose transactions have ``timeout_s`` seconds."""
    extra = {"metadata_url": url, "metadata_timeout": str(timeout_s)}
    monkeypatch.setenv("AIRFLOW_CONN_OUTAGE", json.dumps({"conn_type": "connect", "extra": extra}))
    return "outage"


def raises_unavailable(call: Callable[[], object], deadline_s: float) -> str:
    """``call`` raises StoreUnavailable within ``deadline_s``; its message."""
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as raised:
        call()
    assert time.monotonic() - started < deadline_s
    return str(raised.value)


def test_a_database_that_refuses_connections_fails_every_call_within_the_deadline(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()  # nothing listens: "Connection refused"
    url = f"postgresql+psycopg://connect:s3cret@127.0.0.1:{port}/meta"
    hook = ConnectHook(unreachable_connection(monkeypatch, url, 0.5))
    named = f"The metadata database postgresql+psycopg://connect:***@127.0.0.1:{port}/meta"
    caplog.set_level(logging.INFO, "airflow_provider_connect.store.database")
    try:
        message = raises_unavailable(lambda: hook.store, 2.5)  # the schema check that opens it
        assert message.startswith(f"{named} is unreachable: connection failed: ")
        assert "Connection refused" in message and "s3cret" not in message
        calls: list[Callable[[], object]] = [
            lambda: hook.get_status("c"),
            lambda: hook.create_connector("c", {"connector.class": "FileStreamSource"}),
            lambda: hook.pause_connector("c"),
            lambda: hook.connectors_overview(),
            lambda: hook.check_health("c"),
            lambda: hook.deletion_outcome("c"),
            lambda: hook.active_runtime(),
            lambda: hook.written_version("c", {}),
        ]
        for call in calls:
            assert raises_unavailable(call, 2.5).startswith(f"{named} is unreachable: ")
        ok, said = hook.test_connection()
        assert not ok and said.startswith(named) and "s3cret" not in said
        with pytest.raises(TimeoutError) as timed_out:  # a wait waits through it, then says so
            hook.wait_for_running("c", timeout_s=2, poll_interval_s=0.1)
        assert str(timed_out.value).startswith(
            f"Connector c was not RUNNING after 2s; last waited on: {named} is unreachable: "
        )
    finally:
        hook.close()
    losses = [r for r in caplog.records if "is unreachable" in r.getMessage()]
    assert len(losses) == 1, [r.getMessage() for r in losses]  # once, not once per call


def test_a_failing_fast_hook_answers_at_once_while_the_database_is_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"postgresql+psycopg://connect@127.0.0.1:{free_port()}/meta"
    conn_id = unreachable_connection(monkeypatch, url, 10)
    hook = ConnectHook(conn_id, metadata_timeout=1.5, fail_fast=True)  # the page's hook
    try:
        raises_unavailable(hook.connectors_overview, 2)  # its own deadline, not the extra's
        for _ in range(3):
            assert "Connection refused" in raises_unavailable(hook.connectors_overview, 0.2)
    finally:
        hook.close()


def test_a_hung_database_fails_calls_at_the_deadline_and_serves_them_once_back(
    pg_cluster: PostgresCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = ConnectHook(unreachable_connection(monkeypatch, pg_cluster.url, 1))
    fresh = ConnectHook("outage")
    try:
        hook.create_connector(
            "hung", {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}
        )
        with pg_cluster.frozen():  # the server takes connections and never answers
            said = raises_unavailable(lambda: hook.get_status("hung"), 3)
            assert said.endswith("is unreachable: no answer within 1 s")
            raises_unavailable(lambda: fresh.store, 4)  # opening: a new connection hangs too
        assert hook.get_status("hung")["connector"]["state"] == "UNASSIGNED"
        assert fresh.get_config("hung")["topic"] == "t"
        with pg_cluster.crashed():  # refused, then restarted with its data
            assert "Connection refused" in raises_unavailable(lambda: hook.get_info("hung"), 3)
        assert hook.get_info("hung")["name"] == "hung"
    finally:
        hook.close()
        fresh.close()


def test_a_wait_names_the_kafka_cluster_while_the_runtime_records_it_away(
    hook: ConnectHook, store: MetadataStore, tmp_path: Path
) -> None:
    """What the leading herder records of the Kafka cluster not answering it is, for every
    connector, the last thing its waits say it waits on, while a runtime holds the lease;
    with no runtime (a word left by one that stopped) or once the herder records it answers
    again (empty), nothing is said."""
    hook.create_connector("c", recording(tmp_path, "t"))
    away = "the Kafka cluster at 127.0.0.1:9 has not answered the runtime since 2026-12-07"
    store.statuses.record_worker_settings({KAFKA_CLUSTER_OUTAGE: away})
    assert hook.connector_view("c").waiting_on == ()  # no runtime holds the lease
    store.lease.acquire("driver-1", ttl_s=600)
    assert hook.connector_view("c").waiting_on == (away,)
    waiting = hook.check_health("c")
    assert not isinstance(waiting, dict) and waiting.reason.endswith(away)
    store.statuses.record_worker_settings({KAFKA_CLUSTER_OUTAGE: ""})
    assert hook.connector_view("c").waiting_on == ()
