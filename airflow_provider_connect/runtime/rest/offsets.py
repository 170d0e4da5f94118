"""Kafka Connect's offsets resources (KIP-875): a connector's offsets read, altered and
reset. A source connector's are its source partitions' offsets in the metadata store; a sink
connector's are its consumer group's committed offsets in Kafka. Altering or resetting them
needs the connector STOPPED (409 otherwise)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.offsets import (
    OFFSETS_ALTERED,
    OFFSETS_RESET,
    offset_entries,
    sink_entry,
    sink_offsets,
    source_offsets,
)
from airflow_provider_connect.control.plugins import connector_type
from airflow_provider_connect.runtime.rest.common import body, off_loop
from airflow_provider_connect.runtime.rest.schema import OFFSETS, json_body
from airflow_provider_connect.runtime.sink_offsets import ConsumerGroupOffsets
from airflow_provider_connect.runtime.worker_config import WorkerConfig


def offsets_router(writes: ConnectorWrites, worker: WorkerConfig) -> APIRouter:
    """The offsets routes over ``writes.store``, reaching a sink connector's consumer group
    with ``worker``'s admin client config."""
    router = APIRouter()
    store = writes.store

    def group(name: str) -> ConsumerGroupOffsets:
        return ConsumerGroupOffsets(worker, name, store.configs.connector(name).config)

    @router.get("/connectors/{name}/offsets")
    def get_offsets(name: str) -> dict[str, Any]:
        connector = store.configs.connector(name)
        if connector_type(connector.config.get("connector.class", "")) != "sink":
            return {
                "offsets": [
                    {"partition": p, "offset": o} for p, o in store.offsets.source_offsets(name)
                ]
            }
        committed = [] if connector.initial_offsets is None else connector.initial_offsets
        if connector.initial_offsets is None or connector.initial_offsets_alter:
            committed = [*group(name).committed(), *committed]  # staged: over Kafka's
        positions = {(t, p): o for t, p, o in committed}  # what the herder will have written
        return {"offsets": [sink_entry(t, p, o) for (t, p), o in sorted(positions.items())]}

    @router.patch("/connectors/{name}/offsets", openapi_extra=json_body(OFFSETS))
    async def alter_offsets(name: str, request: Request) -> dict[str, str]:
        payload = await body(request)

        def altered() -> dict[str, str]:
            kind = writes.require_stopped(name)
            entries = offset_entries(payload.get("offsets") if isinstance(payload, dict) else None)
            if kind == "sink":
                group(name).alter(sink_offsets(entries))
                store.configs.drop_initial_offsets(name)  # what the user set now stands
            else:
                writes.alter_source_offsets(name, source_offsets(entries))
            return {"message": OFFSETS_ALTERED}

        return await off_loop(request, f"altering the offsets of connector {name}", altered)

    @router.delete("/connectors/{name}/offsets")
    def reset_offsets(name: str) -> dict[str, str]:
        kind = writes.require_stopped(name)
        if kind == "sink":
            group(name).reset()
            store.configs.drop_initial_offsets(name)
        else:
            writes.reset_source_offsets(name)
        return {"message": OFFSETS_RESET}

    return router
