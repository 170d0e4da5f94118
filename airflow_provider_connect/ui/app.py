"""The Connectors page and its API, a FastAPI app that Airflow's API server mounts at
``/connect``.

Every route but the static files is behind Airflow's auth manager, with the dependencies
Airflow's own routes use: reading needs access to plugin views (any Airflow user with a
role), changing a connector needs the right to edit connections, deleting one the right to
delete connections. Reads and writes go through ``ConnectHook`` on the connection the
``[connect] ui_conn_id`` setting names: the metadata database, never Kafka or Spark.
Writes are the operators' store writes; the runtime applies them at its next reconcile.

The page's store has a short deadline (:data:`PAGE_TIMEOUT_S` per transaction) and fails
fast: while the metadata database cannot be reached, every API call answers 503 at once with
Kafka Connect's error body, whose message names the database and the cause, and the page
shows it in its banner until the database answers again (a background probe finds it).
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow import settings as airflow_settings
from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
from airflow.api_fastapi.core_api.security import (
    requires_access_connection,
    requires_access_view,
)
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response, status
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from airflow_provider_connect.connect.plugins import short_names
from airflow_provider_connect.control.body_limit import RequestBodyLimit
from airflow_provider_connect.control.error_answers import answer_errors
from airflow_provider_connect.control.errors import BadRequestError
from airflow_provider_connect.control.offsets import (
    OFFSETS_ALTERED,
    OFFSETS_RESET,
    InitialOffsets,
)
from airflow_provider_connect.control.plugins import connector_keys, connector_plugins, plugin_info
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.settings import setting

STATIC = Path(__file__).parent / "static"

READ = [Depends(requires_access_view(AccessView.PLUGINS))]
CHANGE = [Depends(requires_access_connection("PUT"))]
DELETE = [Depends(requires_access_connection("DELETE"))]

HISTORY_WINDOW = dt.timedelta(hours=1)
"""How far back the page's charts reach (the runtime keeps an hour by default)."""
PAGE_REQUEST_MAX_BYTES = 1_048_576
"""The largest request body the page's API reads (as the REST API's default
``rest.request.max.bytes``); a larger one gets a 413 naming the limit."""
PAGE_TIMEOUT_S = 1.5
"""The deadline of each metadata-database transaction of the page's API (connecting
included), so that it answers within a couple of seconds even while the database hangs."""


@functools.cache
def connect_hook() -> ConnectHook:
    """One hook (and so one connection pool) for the life of the API server, failing fast
    while the metadata database cannot be reached."""
    return ConnectHook(setting("ui_conn_id"), metadata_timeout=PAGE_TIMEOUT_S, fail_fast=True)


def create_app() -> FastAPI:
    app = FastAPI(
        title="Kafka Connect on Spark: connectors",
        description="The Connectors page of the Airflow UI and the API it reads and acts with.",
    )
    app.add_middleware(RequestBodyLimit, max_bytes=PAGE_REQUEST_MAX_BYTES)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    answer_errors(app, unexpected=False)
    app.add_exception_handler(HTTPException, _login_for_pages)
    app.add_exception_handler(RequestValidationError, _malformed)

    @app.get("/", dependencies=READ, include_in_schema=False)
    def page() -> FileResponse:
        """The page; it asks ``api/connectors`` for everything it shows."""
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/connectors", dependencies=READ)
    def connectors() -> dict[str, Any]:
        """Every connector (see ``ConnectHook.connectors_overview``), the refresh interval,
        and Airflow's timezone (``[core] default_timezone`` as a zone name; ``system``: the
        API server's), the page's times' zone unless its user chose one in Airflow's UI."""
        overview = connect_hook().connectors_overview()
        return {
            "refresh_interval_s": float(setting("ui_refresh_interval")),
            "timezone": str(airflow_settings.TIMEZONE.name),
            **overview,
        }

    @app.get("/api/history", dependencies=READ)
    def history() -> dict[str, Any]:
        """Each connector's throughput and lag over the last :data:`HISTORY_WINDOW`, as the
        page charts them (see ``ConnectHook.connectors_history``)."""
        return {
            "window_s": HISTORY_WINDOW.total_seconds(),
            "connectors": connect_hook().connectors_history(HISTORY_WINDOW),
        }

    @app.post("/api/connectors", status_code=201, dependencies=CHANGE)
    def create(request: NewConnector) -> dict[str, Any]:
        """Kafka Connect's ``POST /connectors``: validated and written as the hook and the
        REST API write (``control.connectors``); the runtime starts it at its next reconcile."""
        if not request.name.strip():
            raise BadRequestError('Connector name must be provided in the request body as "name"')
        connect_hook().create_connector(
            request.name,
            request.config,
            initial_state=request.initial_state,
            initial_offsets=request.initial_offsets,
        )
        return connect_hook().get_info(request.name)

    @app.put("/api/connectors/{name}/config", dependencies=CHANGE)
    def replace_config(name: str, config: dict[str, str]) -> dict[str, Any]:
        """Kafka Connect's ``PUT /connectors/{name}/config`` for an existing connector; a
        ``[hidden]`` password value keeps the stored secret."""
        connect_hook().update_connector(name, config)
        return connect_hook().get_info(name)

    @app.patch("/api/connectors/{name}/offsets", dependencies=CHANGE)
    def alter_offsets(name: str, request: OffsetsBody) -> dict[str, str]:
        """KIP-875's alter of a STOPPED connector's offsets (409 before): a source's at
        once, a sink's written to its consumer group by the runtime before it next starts."""
        connect_hook().alter_offsets(name, request.offsets)
        return {"message": OFFSETS_ALTERED}

    @app.delete("/api/connectors/{name}/offsets", dependencies=DELETE)
    def reset_offsets(name: str) -> dict[str, str]:
        """KIP-875's reset of a STOPPED connector's offsets (409 before), a sink's applied
        by the runtime before it next starts."""
        connect_hook().reset_offsets(name)
        return {"message": OFFSETS_RESET}

    @app.put("/api/connectors/{name}/pause", status_code=202, dependencies=CHANGE)
    def pause(name: str) -> None:
        connect_hook().pause_connector(name)

    @app.put("/api/connectors/{name}/resume", status_code=202, dependencies=CHANGE)
    def resume(name: str) -> None:
        connect_hook().resume_connector(name)

    @app.put("/api/connectors/{name}/stop", status_code=202, dependencies=CHANGE)
    def stop(name: str) -> None:
        connect_hook().stop_connector(name)

    @app.post("/api/connectors/{name}/restart", status_code=202, dependencies=CHANGE)
    def restart(name: str, includeTasks: bool = False, onlyFailed: bool = False) -> None:
        """Kafka Connect's ``POST /connectors/{name}/restart`` and its query parameters."""
        connect_hook().restart_connector(name, include_tasks=includeTasks, only_failed=onlyFailed)

    @app.delete("/api/connectors/{name}", status_code=204, dependencies=DELETE)
    def delete(name: str) -> Response:
        """Marks the connector deleted; its tasks stop with connectorDeleted=true and the
        page shows the cleanup's outcome once the runtime recorded it."""
        connect_hook().delete_connector(name)
        return Response(status_code=204)

    app.include_router(plugin_routes())
    return app


def plugin_routes() -> APIRouter:
    """The plugins the form offers, and the validation it asks at each change."""
    router = APIRouter()

    @router.get("/api/connector-plugins", dependencies=READ)
    def plugins() -> list[dict[str, Any]]:
        """Kafka Connect's ``GET /connector-plugins``, the connectors the form offers, each
        with the short names a config may give it too (``aliases``: ``FileStreamSource``)."""
        return [{**plugin_info(c), "aliases": short_names(c)} for c in connector_plugins()]

    @router.put("/api/connector-plugins/{plugin}/config/validate", dependencies=CHANGE)
    def validate(
        plugin: str, config: dict[str, str], connector: str | None = None
    ) -> dict[str, Any]:
        """Kafka Connect's ``PUT /connector-plugins/{plugin}/config/validate``, which the
        form asks at each change: every field's definition (group, type, default,
        documentation), value, recommended values and errors; writes nothing. With
        ``connector``, ``[hidden]`` values keep that connector's stored secrets. Beside
        Kafka's answer, ``connector_keys``: the keys the connector defines itself, which the
        form shows first."""
        given = config.get("connector.class")
        if given is not None and given != plugin:
            raise BadRequestError(
                "Must specify connector.class in config matching the plugin in the path"
            )
        infos = connect_hook().validate_config({**config, "connector.class": plugin}, connector)
        return {**infos, "connector_keys": connector_keys(plugin)}

    return router


@dataclass
class NewConnector:
    """The body of Kafka Connect's ``POST /connectors``."""

    name: str
    config: dict[str, str]
    initial_state: str = "RUNNING"
    """KIP-980: ``RUNNING``, ``PAUSED`` or ``STOPPED``."""
    initial_offsets: InitialOffsets | None = None
    """KIP-995: the offsets it starts from, as ``PATCH .../offsets`` takes them (its body,
    or the list alone)."""


@dataclass
class OffsetsBody:
    """The body of KIP-875's ``PATCH /connectors/{name}/offsets``."""

    offsets: list[dict[str, Any]]


async def _malformed(request: Request, exc: Exception) -> JSONResponse:
    """A body or parameter of the wrong shape: FastAPI's 422, each error's place and
    message without the input it was given (which may be too deep to write back)."""
    assert isinstance(exc, RequestValidationError)
    errors = [{"type": e["type"], "loc": e["loc"], "msg": e["msg"]} for e in exc.errors()]
    return JSONResponse({"detail": errors}, status_code=422)


async def _login_for_pages(request: Request, exc: Exception) -> Response:
    """A browser that asks for the page without being logged in goes to Airflow's login,
    and comes back after it; API calls get the error as it is."""
    assert isinstance(exc, HTTPException)
    wants_page = "text/html" in request.headers.get("accept", "")
    if exc.status_code == status.HTTP_401_UNAUTHORIZED and wants_page:
        return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)))
    return await http_exception_handler(request, exc)
