"""DAGs scheduled on committed data: an event trigger for Airflow's ``AssetWatcher``.

::

    from airflow.sdk import DAG, Asset, AssetWatcher

    batches = Asset(
        "postgres://warehouse:5432/shop/public/orders",
        watchers=[
            AssetWatcher(
                name="orders_sink_commits",
                trigger=ConnectorCommitTrigger(connector_name="orders-sink", min_interval=60),
            )
        ],
    )
    with DAG("orders_models", schedule=[batches]): ...

Each run of the DAG then follows a commit of new progress by the connector; the asset
event's ``extra`` says what was committed since the previous event (see
:meth:`ConnectorCommitTrigger.run`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent
from asgiref.sync import sync_to_async

from airflow_provider_connect.connect.errors import NotFoundException
from airflow_provider_connect.control.commits import Committed, advance, committed, state_of
from airflow_provider_connect.hooks.connect import ConnectHook

STATE_KEY = "connect.commits.{connector}"
"""The key of a trigger's state in the watched asset's state store."""
DEFAULT_POLL_INTERVAL_S = 5.0
NOTHING = Committed("", {}, {})


class ConnectorCommitTrigger(BaseEventTrigger):
    """Fires an event each time connector ``connector_name`` has committed new progress: a
    sink's committed offsets advanced past records (not only past transaction markers), or
    a source's committed offsets moved. At most one
    event every ``min_interval`` seconds: what is committed meanwhile goes into the next.

    Every event's payload (the asset event's ``extra``): ``connector``, ``type`` (source or
    sink), ``positions`` (every position committed so far: see ``control.commits``),
    ``changed`` (the positions that moved since the previous event), ``records`` and
    ``committed_at`` (epoch seconds: when the trigger saw the commit). A sink's ``records``
    are the records its commits passed since the previous event, as its tasks counted them:
    records, not offsets (the commit markers of a topic written transactionally take
    offsets, and are not counted). A source's offsets do not say how many records they
    passed: its ``records`` are those its tasks wrote to Kafka since the previous event, as
    of their last heartbeats, which may be ahead of what its offsets committed.

    Progress is read from the metadata database every ``poll_interval`` seconds, in a
    worker thread. What was last reported is kept in the watched asset's state store, in
    Airflow's metadata database, under :data:`STATE_KEY`: a restarted triggerer reports
    every advance made while it was away in its first event, and nothing twice. The state
    is written before the event is handed to the triggerer; a triggerer killed between the
    two (an instant) loses that one event, and the next event reports its positions with
    its own. The first start, with no state yet, reports nothing: what is committed then
    is where reporting starts (nothing, when the connector does not exist yet). Outside an
    asset watcher (no state store) the state is kept in memory, as it is for a trigger that
    watches several assets. While the metadata database is unreachable, or the connector
    does not exist (yet), or a check fails, the trigger waits and checks again (a failure is
    logged once, until it changes).
    """

    def __init__(
        self,
        connector_name: str,
        connect_conn_id: str = ConnectHook.default_conn_name,
        poll_interval: float = DEFAULT_POLL_INTERVAL_S,
        min_interval: float = 0,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # BaseEventTrigger.__init__ has no annotations
        self.connector_name = connector_name
        self.connect_conn_id = connect_conn_id
        self.poll_interval = poll_interval
        self.min_interval = min_interval
        self._memory: dict[str, Any] | None = None
        self._memory_only = False

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "connector_name": self.connector_name,
                "connect_conn_id": self.connect_conn_id,
                "poll_interval": self.poll_interval,
                "min_interval": self.min_interval,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = ConnectHook(self.connect_conn_id)
        read = sync_to_async(self._committed, thread_sensitive=False)
        state: dict[str, Any] | None = None
        loaded = False
        failing: str | None = None
        try:
            while True:
                try:
                    if not loaded:
                        state, loaded = await self._state(), True
                    state, event = await self._step(state, read, hook)
                except Exception as e:  # the watcher outlives any one failed check
                    if str(e) != failing:
                        self.log.warning("%s: checking for commits failed: %s", self, e)
                    failing = str(e)
                else:
                    if failing is not None:
                        self.log.info("%s: checking for commits works again", self)
                    failing = None
                    if event is not None:
                        yield event
                await asyncio.sleep(self.poll_interval)
        finally:
            hook.close()

    async def _step(
        self, state: dict[str, Any] | None, read: Any, hook: ConnectHook
    ) -> tuple[dict[str, Any] | None, TriggerEvent | None]:
        """One check: the state after it, and the event to fire, if any."""
        try:
            now: Committed = await read(hook)
        except NotFoundException:  # not created yet, or deleted
            if state is None:  # all it commits once created is new
                state = await self._save(state_of(NOTHING, 0))
            return state, None
        if state is None:
            return await self._save(state_of(now, time.time())), None
        moved, at = advance(state, now), time.time()
        if moved is None or at - state["fired_at"] < self.min_interval:
            return state, None
        state = await self._save(state_of(now, at))
        payload = {"connector": self.connector_name, "type": now.kind, **moved, "committed_at": at}
        return state, TriggerEvent(payload)

    def _committed(self, hook: ConnectHook) -> Committed:
        return committed(hook.store, self.connector_name, hook.connector_type(self.connector_name))

    @property
    def _key(self) -> str:
        return STATE_KEY.format(connector=self.connector_name)

    def _store(self) -> Any | None:
        """The watched asset's state store (Airflow's ``AssetStateStoreAccessors``: its ``get``
        and ``set`` are called off the event loop, in a thread, as the triggerer's comms
        allow; Airflow 3.3.1 has no ``aget``/``aset``); None outside an asset watcher (Airflow
        before 3.3 has none), or when the trigger watches several assets (one trigger serves
        identical watchers: their assets have no single store)."""
        store = getattr(self, "asset_state_store", None)
        if store is None or self._memory_only:
            return None
        return store

    async def _state(self) -> dict[str, Any] | None:
        store = self._store()
        if store is not None:
            try:
                stored = await sync_to_async(store.get, thread_sensitive=False)(self._key)
            except ValueError as e:  # several watched assets
                self._keep_in_memory(e)
            else:
                return stored if isinstance(stored, dict) else None
        return self._memory

    async def _save(self, state: dict[str, Any]) -> dict[str, Any]:
        store = self._store()
        if store is not None:
            try:
                await sync_to_async(store.set, thread_sensitive=False)(self._key, state)
            except ValueError as e:  # several watched assets
                self._keep_in_memory(e)
        self._memory = state
        return state

    def _keep_in_memory(self, error: ValueError) -> None:
        self._memory_only = True
        self.log.warning(
            "%s watches several assets (%s): its state is kept in memory, and a restarted "
            "triggerer starts reporting from what is committed then",
            self,
            error,
        )

    def __repr__(self) -> str:
        return f"ConnectorCommitTrigger({self.connector_name!r})"
