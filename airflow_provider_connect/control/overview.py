"""Every connector at once, as the Airflow UI page shows them: status with task generations,
config with passwords hidden, source offsets, sink progress with lag, and the last deletion.

Read with one query per table whatever the number of connectors, never one per connector."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.control.offsets import sink_entry
from airflow_provider_connect.control.secrets import masked_config
from airflow_provider_connect.control.status import stale_after, status_of
from airflow_provider_connect.store import Deletion, MetadataStore, SinkProgress, State, Status

LIVE = (State.RUNNING.value, State.PAUSED.value)
"""The task states in which a run's heartbeat is recent, so what it waits on is current."""


def current_waiting_on(status: Status, entry: dict[str, Any]) -> str | None:
    """What a task's run waits on (``status.waiting_on``), while its REST status ``entry``
    is RUNNING or PAUSED; None otherwise (a stale run's word is outdated)."""
    return status.waiting_on if entry["state"] in LIVE else None


def connectors_overview(store: MetadataStore) -> dict[str, Any]:
    """``{"connectors": [...], "deletions": [...]}``.

    Each connector (those deleted and awaiting cleanup too, ``"deleted": true``) carries its
    REST status, each task with its ``generation``, its run's ``metrics`` (counters as of
    its last heartbeat) and, when its run waits on something beyond its state, ``waiting_on``
    (``topic orders does not exist``; only while the task is RUNNING or PAUSED: a stale
    run's word is outdated); ``class``, ``target_state`` and
    ``config_version``; its ``config`` with password values ``[hidden]``;
    ``source_offsets`` (partition and offset each); ``sink_progress`` (topic, partition,
    committed and end offset and their ``lag``); ``staged_offsets``, a sink's offsets
    that the runtime writes to its consumer group before it next starts (initial offsets,
    or offsets altered or reset while STOPPED; None when there are none), which alter only
    the partitions they name when ``staged_offsets_alter`` and replace every offset
    otherwise; and ``deletion``, the last deletion of a
    connector by that name (None when there was none). ``deletions`` lists the last
    deletion of every name that no longer has a connector."""
    connectors = store.configs.connectors(include_deleted=True)
    statuses = store.statuses.connector_statuses()
    tasks = store.statuses.all_task_statuses()
    offsets = store.offsets.all_source_offsets()
    progress = store.offsets.all_sink_progress()
    deletions = store.configs.latest_deletions()
    stale = stale_after(store)
    found = []
    for connector in connectors:
        name = connector.name
        task_statuses = tasks.get(name, [])
        entry = status_of(connector, statuses.get(name), task_statuses, stale)
        for task, status in zip(entry["tasks"], task_statuses, strict=True):
            task["generation"] = status.generation
            task["metrics"] = status.metrics or {}
            waiting_on = current_waiting_on(status, task)
            if waiting_on:
                task["waiting_on"] = waiting_on
        deletion = deletions.get(name)
        entry.update(
            {
                "class": connector.config.get("connector.class", ""),
                "target_state": connector.target_state.value,
                "config_version": connector.config_version,
                "created_at": connector.created_at.isoformat(),
                "deleted": connector.deleted,
                "config": masked_config(connector.config),
                "source_offsets": [{"partition": p, "offset": o} for p, o in offsets.get(name, [])],
                "sink_progress": [_progress(p) for p in progress.get(name, [])],
                "staged_offsets": None
                if connector.initial_offsets is None
                else [sink_entry(*p) for p in sorted(connector.initial_offsets)],
                "staged_offsets_alter": connector.initial_offsets_alter,
                "deletion": None if deletion is None else _deletion(deletion),
            }
        )
        found.append(entry)
    live = {c.name for c in connectors}
    gone = [_deletion(d) for name, d in sorted(deletions.items()) if name not in live]
    return {"connectors": found, "deletions": gone}


def _progress(progress: SinkProgress) -> dict[str, Any]:
    committed, end = progress.committed_offset, progress.end_offset
    return {
        "topic": progress.topic,
        "partition": progress.partition,
        "committed_offset": committed,
        "end_offset": end,
        "lag": progress.lag,
        "updated_at": progress.updated_at.isoformat(),
    }


def _deletion(deletion: Deletion) -> dict[str, Any]:
    return {
        "connector": deletion.connector,
        "state": deletion.state.value,
        "trace": deletion.trace,
        "requested_at": deletion.requested_at.isoformat(),
        "finished_at": None if deletion.finished_at is None else deletion.finished_at.isoformat(),
    }
