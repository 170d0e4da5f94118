"""The deferrable-mode triggers over a real metadata store: each fires one event, and the
event loop keeps running while they poll."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest

from airflow_provider_connect.store import MetadataStore, State, TargetState
from airflow_provider_connect.triggers.connector import (
    ConnectorDeletedTrigger,
    ConnectorOffsetTrigger,
    ConnectorStateTrigger,
)

pytestmark = pytest.mark.integration

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
