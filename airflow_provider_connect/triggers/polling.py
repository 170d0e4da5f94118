"""What every trigger of the provider does: poll one condition of ``ConnectHook`` in a
worker thread (the store is synchronous SQLAlchemy), so the triggerer's event loop never
blocks, say in the triggerer's log what it waits on each time that changes, and fire exactly
one event: ``success`` (with the condition's payload), ``failed`` (the connector or a task
FAILED, or the connector does not exist), ``stalled`` (no progress for ``stall_timeout``) or
``timeout``; the last two say what it last waited on. A poll that cannot reach the metadata
database fires nothing: the trigger polls on."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent
from asgiref.sync import sync_to_async

from airflow_provider_connect.connect.errors import NotFoundException
from airflow_provider_connect.control.progress import Waiting, WaitWatch
from airflow_provider_connect.hooks.connect import ConnectHook, ConnectorFailedError
from airflow_provider_connect.store import StoreUnavailable

DEFAULT_POLL_INTERVAL_S = 2.0


class PollingTrigger(BaseTrigger):
    """Polls :meth:`check` every ``poll_interval`` seconds until it returns a payload, raises
    ConnectorFailedError or NotFoundException, or the wait ends: ``timeout`` seconds after
    the trigger started, or at ``deadline`` (an ISO time: a sensor's own timeout, which a
    restarted triggerer keeps), whichever comes first (None: no end). Every event carries
    :meth:`_subject`, what the trigger watches.

    While :meth:`check` returns ``Waiting``, its reason is logged once per change, and with
    ``stall_timeout`` (seconds) the trigger fires ``stalled`` once the progress has not moved
    for that long. The stall clock starts when the trigger starts: a restarted triggerer
    starts it again.

    A poll that cannot reach the metadata database (``StoreUnavailable``, each poll bounded
    by the connection's deadline) is no event: the trigger polls on until its timeout or
    deadline, logs the loss once (WARNING, naming the database and the cause) and the
    return once (INFO); the time the database was away does not count towards
    ``stall_timeout``, and a timeout meanwhile says it last waited on the database.
    """

    def __init__(
        self,
        connect_conn_id: str = ConnectHook.default_conn_name,
        poll_interval: float = DEFAULT_POLL_INTERVAL_S,
        timeout: float | None = None,
        *,
        deadline: str | None = None,
        stall_timeout: float | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # BaseTrigger.__init__ has no annotations
        self.connect_conn_id = connect_conn_id
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.deadline = deadline
        self.stall_timeout = stall_timeout

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                **self._subject(),
                "connect_conn_id": self.connect_conn_id,
                "poll_interval": self.poll_interval,
                "timeout": self.timeout,
                "deadline": self.deadline,
                "stall_timeout": self.stall_timeout,
                **self._arguments(),
            },
        )

    def _subject(self) -> dict[str, Any]:
        """What the trigger watches: constructor arguments, and in every event."""
        return {}

    def _arguments(self) -> dict[str, Any]:
        """The subclass's other constructor arguments."""
        return {}

    def check(self, hook: ConnectHook) -> dict[str, Any] | Waiting | None:
        """The success payload once the condition holds; until then ``Waiting`` (why not)
        or None."""
        raise NotImplementedError

    def _end(self) -> tuple[float, str] | None:
        """Seconds from now until the wait ends, and what to say then; None: it never ends."""
        ends = []
        if self.timeout is not None:
            ends.append((self.timeout, f"Gave up after {self.timeout}s"))
        if self.deadline is not None:
            left = dt.datetime.fromisoformat(self.deadline) - dt.datetime.now(dt.timezone.utc)
            ends.append((left.total_seconds(), f"Timed out at {self.deadline}"))
        return min(ends) if ends else None

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = ConnectHook(self.connect_conn_id)
        ends = self._end()
        end = None if ends is None else (time.monotonic() + ends[0], ends[1])
        watch = WaitWatch(self.stall_timeout)
        check = sync_to_async(self.check, thread_sensitive=False)
        try:
            while True:
                try:
                    payload = await check(hook)
                except StoreUnavailable as e:
                    watch.unreachable(e, self.log)
                    payload = None
                except (ConnectorFailedError, NotFoundException) as e:
                    watch.reachable(self.log)
                    yield self._event("failed", str(e))
                    return
                else:
                    watch.reachable(self.log)
                if isinstance(payload, Waiting):
                    stalled = watch.follow(payload, self.log)
                    if stalled is not None:
                        yield self._event("stalled", stalled)
                        return
                elif payload is not None:
                    yield self._event("success", **payload)
                    return
                sleep = self.poll_interval
                if end is not None:
                    left = end[0] - time.monotonic()
                    if left <= 0:
                        yield self._event("timeout", watch.last_waited_on(end[1]))
                        return
                    sleep = min(sleep, left)
                await asyncio.sleep(sleep)
        finally:
            hook.close()

    def _event(self, status: str, message: str = "", **payload: Any) -> TriggerEvent:
        return TriggerEvent({"status": status, **self._subject(), "message": message, **payload})
