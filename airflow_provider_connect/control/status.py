"""Connector status and info in Kafka Connect's REST shapes."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from airflow_provider_connect.control.plugins import connector_class, connector_type, plugin_version
from airflow_provider_connect.control.secrets import masked_config
from airflow_provider_connect.store import ConnectorRecord, MetadataStore, State, Status


def _entry(
    status: Status | None, stale_after: dt.timedelta | None = None, version: str | None = None
) -> dict[str, Any]:
    if status is None:
        return {"state": State.UNASSIGNED.value, "worker_id": ""}
    silent = (
        None
        if status.heartbeat_at is None
        else dt.datetime.now(dt.timezone.utc) - status.heartbeat_at
    )
    if (
        stale_after is not None
        and status.state in (State.RUNNING, State.PAUSED)
        and silent is not None
        and silent > stale_after
    ):  # no heartbeat for too long: not running anywhere we know
        entry: dict[str, Any] = {
            "state": State.UNASSIGNED.value,
            "worker_id": status.worker_id,
            "trace": (
                f"No heartbeat from worker {status.worker_id} for {silent.total_seconds():.0f} "
                f"s (task.heartbeat.timeout.ms is {stale_after.total_seconds() * 1000:.0f}): "
                "the executor running the task cannot reach the metadata database (a network "
                "partition, a lost executor) or has stopped"
            ),
        }
    else:
        entry = {"state": status.state.value, "worker_id": status.worker_id}
        if status.trace and status.state in (State.FAILED, State.UNASSIGNED):
            entry["trace"] = status.trace  # UNASSIGNED: why it waits (for a Spark task slot)
    if version is not None:
        entry["version"] = version
    return entry


@functools.lru_cache(maxsize=512)
def installed_versions(connector_class_name: str) -> tuple[str | None, str | None]:
    """The versions of the connector class a config names and of its task class, as they
    are installed where this runs: what a connector and its tasks started here report
    (KIP-891). None where the class cannot be loaded, or its ``version()`` (or the
    connector's ``task_class()``) fails. Worked out once per class name in a process,
    which runs one installed version of each."""
    try:
        cls = connector_class(connector_class_name)
        connector_version = plugin_version(cls)
    except Exception:
        return None, None
    try:
        task_version = str(cls().task_class()().version())
    except Exception:
        task_version = None
    return connector_version, task_version


def connector_status(store: MetadataStore, name: str) -> dict[str, Any]:
    """``{"name", "connector": {state, worker_id[, trace][, version]}, "tasks": [{id,
    state, worker_id[, trace][, version]}], "type"}``; raises NotFoundException for an
    unknown connector.

    ``version`` (KIP-891), on every entry with a status, is the version of the connector's
    class, and for tasks of its task class, as installed where the status is read (see
    :func:`installed_versions`). Python runs one installed version of a plugin, so read by
    the runtime's REST API (in its driver) it is the version the runtime's instances report;
    the Airflow hook reports the version installed on the Airflow side.

    A RUNNING or PAUSED task reads UNASSIGNED once its last heartbeat is older than the
    ``task.heartbeat.timeout.ms`` the runtime recorded in the store. Beyond Kafka, an
    UNASSIGNED task's ``trace`` may say why it waits (no free Spark task slot)."""
    connector = store.configs.connector(name)
    return status_of(
        connector,
        store.statuses.connector_status(name),
        store.statuses.task_statuses(name),
        stale_after(store),
    )


def stale_after(store: MetadataStore) -> dt.timedelta:
    """How old a task's last heartbeat may be before the task reads UNASSIGNED."""
    return dt.timedelta(milliseconds=store.statuses.heartbeat_timeout_ms())


def status_of(
    connector: ConnectorRecord,
    status: Status | None,
    tasks: list[Status],
    stale_after: dt.timedelta,
) -> dict[str, Any]:
    """The REST status of ``connector`` from its status rows (see ``connector_status``)."""
    class_name = connector.config.get("connector.class", "")
    connector_version, task_version = installed_versions(class_name)
    return {
        "name": connector.name,
        "connector": _entry(status, version=connector_version),
        "tasks": [{"id": t.task_id, **_entry(t, stale_after, task_version)} for t in tasks],
        "type": connector_type(class_name),
    }


def connector_info(store: MetadataStore, name: str) -> dict[str, Any]:
    """Kafka Connect's ``ConnectorInfo`` of ``name``: its config (passwords hidden), tasks
    and type; raises NotFoundException for an unknown connector."""
    connector = store.configs.connector(name)
    _, task_configs = store.configs.task_configs(name)
    return {
        "name": name,
        "config": masked_config(connector.config),
        "tasks": [{"connector": name, "task": i} for i in range(len(task_configs))],
        "type": connector_type(connector.config.get("connector.class", "")),
    }
