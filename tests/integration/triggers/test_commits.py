"""ConnectorCommitTrigger over a real metadata store: an event per commit of new progress,
none without one, none twice across a restart of the triggerer, and what was committed
while it was away in its first event. The commits are written as the sink tasks write them
(``record_sink_progress``: committed offset, end offset, records the commit passed; on a
topic written transactionally each transaction's commit marker takes an offset); the watched asset's state store, which Airflow's triggerer
injects (kept in Airflow's metadata database), is a dict here."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from airflow_provider_connect.store import MetadataStore
from airflow_provider_connect.triggers.commits import ConnectorCommitTrigger

# On both stores: the triggerer reads the commits through the Airflow side's store connection.
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]

SINK = {"connector.class": "FileStreamSink", "file": "/tmp/out.txt", "topics": "t"}
QUIET_CHECKS = 3  # a trigger that fires nothing in three checks of the store fires nothing


class AssetStateStore:
    """The accessor the triggerer gives a watcher's trigger (``get``/``set``, which every
    Airflow 3.3 has), over a dict; values go through JSON, as Airflow stores them."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.values[key] = json.loads(json.dumps(value))


class CheckedTrigger(ConnectorCommitTrigger):
    """The trigger, counting the checks of the store it has finished."""

    checks = 0

    async def _step(self, *args: Any) -> Any:
        result = await super()._step(*args)
        self.checks += 1
        return result


def watcher(connection: str, state: AssetStateStore, **kwargs: Any) -> CheckedTrigger:
    """The trigger as a (re)started triggerer builds it from its serialized arguments."""
    _, arguments = ConnectorCommitTrigger("s", connection, poll_interval=0.05, **kwargs).serialize()
    trigger = CheckedTrigger(**arguments)
    trigger.asset_state_store = state  # type: ignore[assignment]  # the accessor's duck type
    return trigger


class Running:
    """A trigger running in the loop as the triggerer runs it, its events queued."""

    def __init__(self, trigger: CheckedTrigger) -> None:
        self.trigger = trigger
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task = asyncio.ensure_future(self._pump(trigger.run()))

    async def _pump(self, events: AsyncIterator[Any]) -> None:
        async for event in events:
            await self.events.put(event.payload)

    async def next(self, timeout_s: float = 30) -> dict[str, Any]:
        return await asyncio.wait_for(self.events.get(), timeout_s)

    async def quiet(self, timeout_s: float = 30) -> bool:
        """Whether no event has come once the trigger finished ``QUIET_CHECKS`` more checks
        (an event of a check is queued before the next check starts)."""
        until = self.trigger.checks + QUIET_CHECKS
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self.trigger.checks < until:
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"{QUIET_CHECKS} checks did not end within {timeout_s} s")
            await asyncio.sleep(0.01)
        return self.events.empty()

    async def stop(self) -> None:
        """As the triggerer stops: the trigger is cancelled."""
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def test_an_event_per_commit_and_none_twice_across_restarts(
    connection: str, store: MetadataStore
) -> None:
    state = AssetStateStore()

    async def scenario() -> None:
        running = Running(watcher(connection, state))
        assert await running.quiet()  # no connector yet: the baseline is nothing
        store.configs.create_connector("s", SINK)
        store.offsets.record_sink_progress("s", [("t", 0, 10, 10, 9), ("t", 1, None, 4, 0)])
        first = await running.next()
        assert first["connector"] == "s" and first["type"] == "sink"
        assert (first["records"], first["changed"]) == (9, ["t/0"])  # records, not offsets
        assert await running.quiet()  # nothing new committed: no second event
        await running.stop()  # the triggerer stops

        store.offsets.record_sink_progress("s", [("t", 0, 25, 30, 14), ("t", 1, 3, 4, 2)])
        restarted = Running(watcher(connection, state))
        caught_up = await restarted.next()  # what was committed while it was away
        assert (caught_up["records"], caught_up["changed"]) == (16, ["t/0", "t/1"])
        assert caught_up["positions"] == {"t/0": 25, "t/1": 3}
        await restarted.stop()

        again = Running(watcher(connection, state))
        assert await again.quiet()  # reported once: a restart does not report it again
        await again.stop()

    asyncio.run(scenario())


def test_commits_within_min_interval_make_one_event(connection: str, store: MetadataStore) -> None:
    store.configs.create_connector("s", SINK)
    store.offsets.record_sink_progress("s", [("t", 0, 5, 5, 5)])
    state = AssetStateStore()

    async def scenario() -> None:
        first = Running(watcher(connection, state, min_interval=3600))
        assert await first.quiet()  # the first start: what is committed is the baseline
        await first.stop()
        # As if the last event fired just now: the next may fire in an hour.
        key = "connect.commits.s"
        state.values[key] = {**state.values[key], "fired_at": 1e12}
        store.offsets.record_sink_progress("s", [("t", 0, 9, 9, 4)])
        held = Running(watcher(connection, state, min_interval=3600))
        assert await held.quiet()
        await held.stop()
        state.values[key]["fired_at"] = 0  # the hour has passed
        store.offsets.record_sink_progress("s", [("t", 0, 12, 12, 3)])
        due = Running(watcher(connection, state, min_interval=3600))
        both = await due.next()
        assert both["records"] == 7  # 5 → 9 → 12, in one event
        await due.stop()

    asyncio.run(scenario())


class SeveralAssets(AssetStateStore):
    """The accessors of a trigger that watches several assets: Airflow's single-asset
    methods raise ValueError, as ``AssetStateStoreAccessors`` does."""

    def get(self, key: str, default: Any = None) -> Any:
        raise ValueError("Task has 2 concrete inlets and outlets")

    def set(self, key: str, value: Any) -> None:
        raise ValueError("Task has 2 concrete inlets and outlets")


def test_a_trigger_of_several_assets_keeps_its_state_in_memory(
    connection: str, store: MetadataStore
) -> None:
    store.configs.create_connector("s", SINK)

    async def scenario() -> None:
        running = Running(watcher(connection, SeveralAssets()))
        assert await running.quiet()  # the baseline: nothing committed
        store.offsets.record_sink_progress("s", [("t", 0, 4, 4, 4)])
        assert (await running.next())["records"] == 4
        assert await running.quiet()
        await running.stop()

    asyncio.run(scenario())
