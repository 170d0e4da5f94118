"""Triggers for the deferrable modes: each polls one condition of ``ConnectHook`` in a
worker thread (the store is synchronous SQLAlchemy), so the triggerer's event loop never
blocks, and fires exactly one event: ``success``, ``failed`` (with the trace, or when the
connector does not exist) or ``timeout``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent
from asgiref.sync import sync_to_async

from airflow_provider_connect.connect.errors import NotFoundException
from airflow_provider_connect.hooks.connect import ConnectHook, ConnectorFailedError
from airflow_provider_connect.hooks.progress import SinkCatchUp

DEFAULT_POLL_INTERVAL_S = 2.0


class _ConnectorTrigger(BaseTrigger):
    """Polls ``check`` every ``poll_interval`` seconds until it returns a payload, raises
    ConnectorFailedError, or ``timeout`` (seconds, None for none) passes."""

    def __init__(
        self,
        connector_name: str,
        connect_conn_id: str = ConnectHook.default_conn_name,
        poll_interval: float = DEFAULT_POLL_INTERVAL_S,
        timeout: float | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # BaseTrigger.__init__ has no annotations
        self.connector_name = connector_name
        self.connect_conn_id = connect_conn_id
        self.poll_interval = poll_interval
        self.timeout = timeout

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "connector_name": self.connector_name,
                "connect_conn_id": self.connect_conn_id,
                "poll_interval": self.poll_interval,
                "timeout": self.timeout,
                **self._arguments(),
            },
        )

    def _arguments(self) -> dict[str, Any]:
        """The subclass's own constructor arguments."""
        return {}

    def check(self, hook: ConnectHook) -> dict[str, Any] | None:
        """The success payload once the condition holds; None until then."""
        raise NotImplementedError

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = ConnectHook(self.connect_conn_id)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        check = sync_to_async(self.check, thread_sensitive=False)
        try:
            while True:
                try:
                    payload = await check(hook)
                except (ConnectorFailedError, NotFoundException) as e:
                    yield self._event("failed", str(e))
                    return
                if payload is not None:
                    yield self._event("success", **payload)
                    return
                if deadline is not None and time.monotonic() >= deadline:
                    yield self._event("timeout", f"Gave up after {self.timeout}s")
                    return
                await asyncio.sleep(self.poll_interval)
        finally:
            hook.close()

    def _event(self, status: str, message: str = "", **payload: Any) -> TriggerEvent:
        return TriggerEvent(
            {"status": status, "connector_name": self.connector_name, "message": message, **payload}
        )


class ConnectorStateTrigger(_ConnectorTrigger):
    """Fires when the connector and every task are in ``state`` (RUNNING, PAUSED or
    STOPPED; RUNNING as of ``config_version`` of the config, default the current one);
    payload ``connector_status``."""

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

    def check(self, hook: ConnectHook) -> dict[str, Any] | None:
        status = hook.state_status(self.connector_name, self.state, self.config_version)
        return None if status is None else {"connector_status": status}


class ConnectorDeletedTrigger(_ConnectorTrigger):
    """Fires when the connectorDeleted cleanup of a deleted connector has finished:
    ``success`` when it ran, ``failed`` with the trace when it failed."""

    def check(self, hook: ConnectHook) -> dict[str, Any] | None:
        deletion = hook.deletion_outcome(self.connector_name)
        return None if deletion is None else {"deletion": deletion.state.value}


class ConnectorOffsetTrigger(_ConnectorTrigger):
    """Fires when a connector has made the progress ``ConnectorOffsetSensor`` describes:
    a sink caught up to its topics' end offsets as of ``started_at``, or a source's
    committed offset at or past ``source_offset``."""

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

    def check(self, hook: ConnectHook) -> dict[str, Any] | None:
        reached = hook.progress_reached(
            self.connector_name, self.catch_up, self.source_offset, self.source_partition
        )
        return {} if reached else None
