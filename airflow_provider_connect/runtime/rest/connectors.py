"""Kafka Connect's connector resources: the connectors, their configs and status, restart,
pause, resume and stop, delete, and the topics they use (KIP-558).

Every connector write (create, replace or patch a config, pause/resume/stop, restart, delete)
goes through the control layer's :class:`~airflow_provider_connect.control.connectors.ConnectorWrites`,
as the Airflow hook's and the Connectors page's do: validated before it is written
(placeholders kept as written, checked where the runtime resolves them), a store write that
the herder applies within a second. Password-typed config values are returned as
``[hidden]``; a ``[hidden]`` sent back in a PUT or PATCH keeps the stored value.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.error_answers import RestError
from airflow_provider_connect.control.offsets import OFFSETS_ALTERED
from airflow_provider_connect.control.secrets import masked_config
from airflow_provider_connect.control.status import connector_info, connector_status
from airflow_provider_connect.runtime.rest.common import body, config_body, flag, off_loop
from airflow_provider_connect.runtime.rest.schema import CONFIG, CREATE, PATCH, json_body
from airflow_provider_connect.store import MetadataStore


def connectors_router(writes: ConnectorWrites) -> APIRouter:
    """The connector routes over ``writes.store``: the connectors, their configs, and their
    states."""
    router = APIRouter()
    for part in (_connectors, _configs, _states):
        router.include_router(part(writes))
    return router


def _connectors(writes: ConnectorWrites) -> APIRouter:
    """List, create, read and delete connectors."""
    router = APIRouter()
    store = writes.store

    @router.get("/connectors")
    def list_connectors(expand: Annotated[list[str] | None, Query()] = None) -> Any:
        names = [c.name for c in store.configs.connectors()]
        if not expand:
            return names
        result: dict[str, dict[str, Any]] = {}
        for name in names:
            entry: dict[str, Any] = {}
            if "status" in expand:
                entry["status"] = connector_status(store, name)
            if "info" in expand:
                entry["info"] = connector_info(store, name)
            result[name] = entry
        return result

    @router.post("/connectors", status_code=201, openapi_extra=json_body(CREATE))
    async def create(request: Request) -> Any:
        payload = await body(request)
        if (
            not isinstance(payload, dict)
            or not isinstance(payload.get("name"), str)
            or not payload["name"].strip()
        ):
            raise RestError(400, 'Connector name must be provided in the request body as "name"')
        name, initial_offsets = payload["name"], payload.get("initial_offsets")
        config = config_body(payload.get("config", {}))

        def created() -> dict[str, Any]:
            writes.create(
                name,
                config,
                initial_state=payload.get("initial_state"),
                initial_offsets=initial_offsets,
            )
            return connector_info(store, name)

        info = await off_loop(
            request, f"creating connector {name} (validating its config)", created
        )
        if initial_offsets is not None:  # KIP-995: only then
            info["offsets_status"] = OFFSETS_ALTERED
        return JSONResponse(info, status_code=201)

    @router.get("/connectors/{name}")
    def get_connector(name: str) -> dict[str, Any]:
        return connector_info(store, name)

    @router.delete("/connectors/{name}", status_code=204)
    def delete(name: str) -> Response:
        writes.delete(name)
        return Response(status_code=204)

    return router


def _configs(writes: ConnectorWrites) -> APIRouter:
    """Read, replace and patch a connector's config."""
    router = APIRouter()
    store = writes.store

    @router.get("/connectors/{name}/config")
    def get_config(name: str) -> dict[str, str]:
        return masked_config(store.configs.connector(name).config)

    @router.put("/connectors/{name}/config", openapi_extra=json_body(CONFIG))
    async def put_config(name: str, request: Request) -> JSONResponse:
        config = config_body(await body(request))

        def put() -> JSONResponse:
            _, created = writes.put(name, config)
            return JSONResponse(connector_info(store, name), status_code=201 if created else 200)

        return await off_loop(
            request, f"writing the config of connector {name} (validating it)", put
        )

    @router.patch("/connectors/{name}/config", openapi_extra=json_body(PATCH))
    async def patch_config(name: str, request: Request) -> dict[str, Any]:
        patch = await body(request)
        if not isinstance(patch, dict):
            raise RestError(400, "Connector configuration patch must be a JSON object")

        def patched() -> dict[str, Any]:
            writes.patch(name, patch)  # null removes a key
            return connector_info(store, name)

        doing = f"patching the config of connector {name} (validating it)"
        return await off_loop(request, doing, patched)

    return router


def _states(writes: ConnectorWrites) -> APIRouter:
    """A connector's status, restart, pause, resume and stop."""
    router = APIRouter()
    store = writes.store

    @router.get("/connectors/{name}/status")
    def get_status(name: str) -> dict[str, Any]:
        return connector_status(store, name)

    @router.post("/connectors/{name}/restart")
    def restart(
        name: str, includeTasks: str | None = None, onlyFailed: str | None = None
    ) -> Response:
        include_tasks, only_failed = flag(includeTasks), flag(onlyFailed)
        writes.restart(name, include_tasks=include_tasks, only_failed=only_failed)
        if not include_tasks and not only_failed:
            return Response(status_code=204)
        return JSONResponse(connector_status(store, name), status_code=202)

    @router.put("/connectors/{name}/pause", status_code=202)
    def pause(name: str) -> Response:
        writes.pause(name)
        return Response(status_code=202)

    @router.put("/connectors/{name}/resume", status_code=202)
    def resume(name: str) -> Response:
        writes.resume(name)
        return Response(status_code=202)

    @router.put("/connectors/{name}/stop", status_code=204)
    def stop(name: str) -> Response:
        writes.stop(name)
        return Response(status_code=204)

    return router


def topics_router(store: MetadataStore) -> APIRouter:
    """The routes of the topics connectors use (KIP-558), over ``store``."""
    router = APIRouter()

    @router.get("/connectors/{name}/topics")
    def topics(name: str) -> dict[str, Any]:
        store.configs.connector(name)
        return {name: {"topics": store.statuses.active_topics(name)}}

    @router.put("/connectors/{name}/topics/reset", status_code=202)
    def reset_topics(name: str) -> Response:
        store.configs.connector(name)
        store.statuses.reset_active_topics(name)
        return Response(status_code=202)

    return router
