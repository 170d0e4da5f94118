"""The deferrable-mode triggers over a real metadata store: each fires one event, and the
event loop keeps running while they poll, also while the metadata database is away (a
private PostgreSQL cluster crashed and restarted, or a port nothing listens on)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest

from airflow_provider_connect.store import MetadataStore, State, TargetState
from airflow_provider_connect.triggers.connector import (
    ConnectorDeletedTrigger,
    ConnectorOffsetTrigger,
    ConnectorStateTrigger,
)
from tests_common.broker import free_port
from tests_common.postgres_cluster import PostgresCluster

# On both stores: the triggerer reads the status through the Airflow side's store connection.
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]

CONFIG = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}


def report_running(store: MetadataStore, name: str) -> None:
    """What the runtime writes once a connector of config version 1 runs one task."""
    generation = store.configs.write_task_configs(name, [CONFIG])
    store.statuses.put_connector_status(
        name, State.RUNNING, "w", generation=generation, config_version=1
    )
    run_id = store.statuses.assign_task(name, 0, generation, "w")
    store.statuses.put_task_status(name, 0, run_id, State.RUNNING, "w")


async def first_event(trigger: Any, meanwhile: Any = None) -> tuple[dict[str, Any], int]:
    """The trigger's first event, and how many times the loop ticked while waiting."""
    pending = asyncio.ensure_future(trigger.run().__anext__())
    ticks = 0
    while not pending.done():
        await asyncio.sleep(0.01)
        ticks += 1
        if meanwhile is not None and ticks == 20:
            meanwhile()
    return (await pending).payload, ticks


def test_running_trigger_waits_without_blocking_the_loop(
    connection: str, store: MetadataStore
) -> None:
    store.configs.create_connector("c", CONFIG)
    trigger = ConnectorStateTrigger("c", connection, poll_interval=0.05, timeout=60)
    kind, kwargs = trigger.serialize()
    assert kind.endswith("ConnectorStateTrigger") and kwargs["connector_name"] == "c"
    event, ticks = asyncio.run(first_event(trigger, lambda: report_running(store, "c")))
    assert event["status"] == "success" and ticks >= 20
    assert event["connector_status"]["tasks"][0]["state"] == "RUNNING"


def test_triggers_report_failures_and_timeouts(connection: str, store: MetadataStore) -> None:
    store.configs.create_connector("c", CONFIG)
    timeout = ConnectorStateTrigger("c", connection, poll_interval=0.05, timeout=0.2)
    assert asyncio.run(first_event(timeout))[0]["status"] == "timeout"

    missing = ConnectorDeletedTrigger("ghost", connection, poll_interval=0.05)
    event, _ = asyncio.run(first_event(missing))
    assert event["status"] == "failed" and "ghost not found" in event["message"]

    store.configs.delete_connector("c")
    deleted = ConnectorDeletedTrigger("c", connection, poll_interval=0.05, timeout=60)
    event, _ = asyncio.run(
        first_event(deleted, lambda: store.configs.finish_deletion("c", "Traceback: cleanup broke"))
    )
    assert event["status"] == "failed" and "cleanup broke" in event["message"]


def test_triggers_keep_their_deadline_and_say_what_they_waited_on(
    connection: str, store: MetadataStore
) -> None:
    store.configs.create_connector("c", CONFIG, TargetState.PAUSED)
    report_running(store, "c")
    generation, _ = store.configs.task_configs("c")
    store.statuses.put_connector_status("c", State.PAUSED, "w", None, generation, 1)
    deadline = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=0.5)).isoformat()
    trigger = ConnectorOffsetTrigger(
        "c",
        connection,
        poll_interval=30,  # the deadline comes first: the trigger wakes up for it
        started_at=dt.datetime.now(dt.timezone.utc).isoformat(),
        source_offset={"position": 10},
        deadline=deadline,
        stall_timeout=300,
    )
    path, kwargs = trigger.serialize()
    assert (kwargs["deadline"], kwargs["stall_timeout"]) == (deadline, 300)
    restarted = ConnectorOffsetTrigger(**kwargs)  # as a restarted triggerer rebuilds it
    assert restarted.serialize() == (path, kwargs)
    event, _ = asyncio.run(first_event(restarted))
    assert event == {
        "status": "timeout",
        "connector_name": "c",
        "message": (
            f"Timed out at {deadline}; last waited on: no runtime runs the connectors (no "
            "herder holds the lease); connector c is PAUSED and makes no progress until "
            "resumed; connector c has committed no source offset yet"
        ),
    }


# -- the metadata database away ---------------------------------------------------------------
def outage_connection(monkeypatch: pytest.MonkeyPatch, url: str, timeout_s: float) -> str:
    """The connection ``outage`` to the metadata database ``url``, each transaction within
    ``timeout_s`` seconds (the extra ``metadata_timeout``); returns its id."""
    extra = {"metadata_url": url, "metadata_timeout": str(timeout_s)}
    monkeypatch.setenv("AIRFLOW_CONN_OUTAGE", json.dumps({"conn_type": "connect", "extra": extra}))
    return "outage"


class Output:
    """What Airflow's loggers (the triggerer's, a task's) printed since the test began."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys
        self.text = capsys.readouterr().out

    def lines(self, containing: str) -> list[str]:
        self.text += self.capsys.readouterr().out
        return [line for line in self.text.splitlines() if containing in line]


LOST = "Still waiting: The metadata database "
BACK = "The metadata database is reachable again (after "


def test_a_trigger_polls_on_while_the_database_is_away_and_fires_once_it_is_back(
    pg_cluster: PostgresCluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MetadataStore(pg_cluster.url)
    store.configs.create_connector("away", CONFIG)
    trigger = ConnectorStateTrigger(
        "away", outage_connection(monkeypatch, pg_cluster.url, 1), poll_interval=0.1, timeout=120
    )
    output = Output(capsys)
    named = f"The metadata database {pg_cluster.url} is unreachable: connection failed: "

    async def scenario() -> tuple[dict[str, Any], int]:
        pending = asyncio.ensure_future(trigger.run().__anext__())
        ticks = 0

        async def until(condition: Callable[[], object]) -> None:
            nonlocal ticks
            for _ in range(60 * 20):
                if condition():
                    return
                assert not pending.done(), pending.result().payload
                await asyncio.sleep(0.05)
                ticks += 1
            raise AssertionError("timed out")

        await until(lambda: output.lines("Still waiting: no runtime runs the connectors"))
        await asyncio.to_thread(pg_cluster.crash)
        await until(lambda: output.lines(LOST))
        during = ticks
        await until(lambda: ticks >= during + 40)  # the loop runs on, the trigger polls on
        await asyncio.to_thread(pg_cluster.restart)
        await asyncio.to_thread(report_running, store, "away")
        return (await pending).payload, ticks - during

    try:
        event, ticks = asyncio.run(scenario())
    finally:
        store.close()
    assert event["status"] == "success" and ticks >= 40
    assert event["connector_status"]["tasks"][0]["state"] == "RUNNING"
    (lost,) = output.lines(LOST)  # once, however many polls failed
    assert "[warning" in lost and f"Still waiting: {named}" in lost
    assert "Connection refused" in lost
    (back,) = output.lines(BACK)
    assert "[info" in back


def test_a_trigger_that_times_out_while_the_database_is_away_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"postgresql+psycopg://connect:s3cret@127.0.0.1:{free_port()}/meta"
    trigger = ConnectorDeletedTrigger(
        "c", outage_connection(monkeypatch, url, 0.5), poll_interval=0.1, timeout=2
    )
    event, _ = asyncio.run(first_event(trigger))
    assert event["status"] == "timeout"
    assert event["message"].startswith(
        "Gave up after 2s; last waited on: The metadata database "
        "postgresql+psycopg://connect:***@127.0.0.1:"
    )
    assert "is unreachable: connection failed: " in event["message"]
    assert "s3cret" not in event["message"]
