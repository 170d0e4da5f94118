"""Triggers for the connector sensors' deferrable modes (see :class:`PollingTrigger`):
``failed`` carries the trace, or says that the connector does not exist; while waiting for
RUNNING or for progress they log why they wait, and ``stalled`` and ``timeout`` say it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow_provider_connect.control.progress import SinkCatchUp, Waiting
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.triggers.polling import DEFAULT_POLL_INTERVAL_S, PollingTrigger


class _ConnectorTrigger(PollingTrigger):
    """Polls a condition of one connector; ``failed`` when it does not exist."""

    def __init__(
        self,
        connector_name: str,
        connect_conn_id: str = ConnectHook.default_conn_name,
        poll_interval: float = DEFAULT_POLL_INTERVAL_S,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(connect_conn_id, poll_interval, timeout, **kwargs)
        self.connector_name = connector_name

    def _subject(self) -> dict[str, Any]:
        return {"connector_name": self.connector_name}


class ConnectorStateTrigger(_ConnectorTrigger):
    """Fires when the connector and every task are in ``state`` (RUNNING, PAUSED or
    STOPPED; RUNNING as of ``config_version`` of the config, default the current one);
    payload ``connector_status``. Waiting for RUNNING, it says why it waits (PAUSED,
    UNASSIGNED waiting for a Spark task slot, ...)."""

    def __init__(
        self,
        *args: Any,
        state: str = "RUNNING",
        config_version: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.state = state
        self.config_version = config_version

    def _arguments(self) -> dict[str, Any]:
        return {"state": self.state, "config_version": self.config_version}

    def check(self, hook: ConnectHook) -> dict[str, Any] | Waiting | None:
        if self.state == "RUNNING":
            status: dict[str, Any] | Waiting | None = hook.check_health(
                self.connector_name, self.config_version
            )
        else:
            status = hook.state_status(self.connector_name, self.state, self.config_version)
        if status is None or isinstance(status, Waiting):
            return status
        return {"connector_status": status}


class ConnectorDeletedTrigger(_ConnectorTrigger):
    """Fires when the connectorDeleted cleanup of a deleted connector has finished:
    ``success`` when it ran, ``failed`` with the trace when it failed."""

    def check(self, hook: ConnectHook) -> dict[str, Any] | None:
        deletion = hook.deletion_outcome(self.connector_name)
        return None if deletion is None else {"deletion": deletion.state.value}


class ConnectorOffsetTrigger(_ConnectorTrigger):
    """Fires when a connector has made the progress ``ConnectorOffsetSensor`` describes:
    a sink caught up to its topics' end offsets as of ``started_at``, or a source's
    committed offset at or past ``source_offset``. Says why it waits (the connector's state,
    a topic that does not exist, how far behind it is)."""

    def __init__(
        self,
        *args: Any,
        started_at: str,
        source_offset: dict[str, Any] | None = None,
        source_partition: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.started_at = started_at
        self.source_offset = source_offset
        self.source_partition = source_partition
        self.catch_up = SinkCatchUp(dt.datetime.fromisoformat(started_at))

    def _arguments(self) -> dict[str, Any]:
        return {
            "started_at": self.started_at,
            "source_offset": self.source_offset,
            "source_partition": self.source_partition,
        }

    def check(self, hook: ConnectHook) -> dict[str, Any] | Waiting | None:
        behind = hook.check_progress(
            self.connector_name, self.catch_up, self.source_offset, self.source_partition
        )
        return {} if behind is None else behind
