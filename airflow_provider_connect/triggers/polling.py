"""What every trigger of the provider does: poll one condition of ``ConnectHook`` in a
worker thread (the store is synchronous SQLAlchemy), so the triggerer's event loop never
blocks, and fire exactly one event: ``success`` (with the condition's payload), ``failed``
(the connector or a task FAILED, or the connector does not exist) or ``timeout``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent
from asgiref.sync import sync_to_async

from airflow_provider_connect.connect.errors import NotFoundException
from airflow_provider_connect.hooks.connect import ConnectHook, ConnectorFailedError

DEFAULT_POLL_INTERVAL_S = 2.0


class PollingTrigger(BaseTrigger):
    """Polls :meth:`check` every ``poll_interval`` seconds until it returns a payload, raises
    ConnectorFailedError or NotFoundException, or ``timeout`` (seconds, None for none)
    passes. Every event carries :meth:`_subject`, what the trigger watches."""

    def __init__(
        self,
        connect_conn_id: str = ConnectHook.default_conn_name,
        poll_interval: float = DEFAULT_POLL_INTERVAL_S,
        timeout: float | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # BaseTrigger.__init__ has no annotations
        self.connect_conn_id = connect_conn_id
        self.poll_interval = poll_interval
        self.timeout = timeout

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                **self._subject(),
                "connect_conn_id": self.connect_conn_id,
                "poll_interval": self.poll_interval,
                "timeout": self.timeout,
                **self._arguments(),
            },
        )

    def _subject(self) -> dict[str, Any]:
        """What the trigger watches: constructor arguments, and in every event."""
        return {}

    def _arguments(self) -> dict[str, Any]:
        """The subclass's other constructor arguments."""
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
        return TriggerEvent({"status": status, **self._subject(), "message": message, **payload})
