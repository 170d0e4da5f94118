"""Kafka Connect's REST API over the metadata store: the same paths, bodies and status codes.

``create_app`` puts together the middleware, the error handlers and one router per resource:
connectors and their topics (``connectors.py``), tasks (``tasks.py``), offsets
(``offsets.py``), connector plugins (``plugins.py``) and the admin endpoints (``admin.py``).
Writes go through the control layer's ``ConnectorWrites`` (as the Airflow hook's do) to
the store; the herder applies them within a second. Errors are
``{"error_code": <HTTP status>, "message": ...}``: 400 for invalid input (bad JSON, invalid
config, unknown connector class), 413 for a body over ``rest.request.max.bytes``, 404 for unknown connectors or tasks, 409 for a taken name
or offsets of a connector that is not STOPPED, 503 while the metadata database cannot be
reached (the message names it and the cause; ``GET /health`` says ``unhealthy``, with that
503 too: KIP-1017's 500 is for a worker held up, not one whose database is away). The REST
API's store fails fast while the database is known unreachable (``Database``'s
``fail_fast``), so every answer comes within its deadline. What may block (a connector's
``validate``, which may open a connection to its system; writes) runs on a worker thread,
never on the event loop, and is answered 500 "Request timed out. The worker is currently
<what>, …" when it takes longer than Kafka Connect's 90 s. Password-typed config values are returned as
``[hidden]``; a ``[hidden]`` sent back in a PUT or PATCH keeps the stored value.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from airflow_provider_connect import __version__
from airflow_provider_connect.control.body_limit import RequestBodyLimit
from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.error_answers import ErrorAnswer, answer_errors
from airflow_provider_connect.runtime.rest.admin import admin_router
from airflow_provider_connect.runtime.rest.common import REQUEST_TIMEOUT_S
from airflow_provider_connect.runtime.rest.connectors import connectors_router, topics_router
from airflow_provider_connect.runtime.rest.health import HEALTHY, HealthCheck, unhealthy
from airflow_provider_connect.runtime.rest.offsets import offsets_router
from airflow_provider_connect.runtime.rest.plugins import plugins_router
from airflow_provider_connect.runtime.rest.tasks import tasks_router
from airflow_provider_connect.runtime.worker_config import REST_REQUEST_MAX_BYTES, WorkerConfig
from airflow_provider_connect.store import MetadataStore, StoreUnavailable


def create_app(
    store: MetadataStore,
    worker: WorkerConfig,
    *,
    with_admin: bool = True,
    health_check: HealthCheck | None = None,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
) -> FastAPI:
    """The REST API of a runtime whose connectors live in ``store``; ``with_admin``, the
    admin endpoints too (``/admin/loggers``); ``health_check``, the runtime's health for
    ``GET /health``. What may block (a connector's ``validate``, store writes) runs off the
    event loop, answered 500 "Request timed out…" after ``request_timeout_s`` (Kafka
    Connect's 90 s; ``common.off_loop``)."""
    app = FastAPI(title="airflow-provider-connect", version=__version__, redirect_slashes=False)
    app.state.request_timeout_s = request_timeout_s
    app.add_middleware(
        RequestBodyLimit, max_bytes=worker[REST_REQUEST_MAX_BYTES], setting=REST_REQUEST_MAX_BYTES
    )
    if with_admin:
        app.include_router(admin_router(store))
    writes = ConnectorWrites(store, lambda: worker.override_policy, "connector name in the URL")

    @app.middleware("http")
    async def accept_trailing_slash(request: Request, call_next: Any) -> Response:
        path = request.scope["path"]
        if len(path) > 1 and path.endswith("/"):
            request.scope["path"] = path.rstrip("/")
        response: Response = await call_next(request)
        return response

    answer_errors(app, unexpected=True)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, e: RequestValidationError) -> JSONResponse:
        message = f"Invalid request: {e.errors()[0].get('msg', 'malformed body')}"
        return ErrorAnswer(400, message).response()

    app.include_router(cluster_router(store, health_check))
    app.include_router(connectors_router(writes))
    app.include_router(tasks_router(writes))
    app.include_router(topics_router(store))
    app.include_router(offsets_router(writes, worker))
    app.include_router(plugins_router(worker))
    return app


def cluster_router(store: MetadataStore, health_check: HealthCheck | None) -> APIRouter:
    """The worker's version and health (KIP-1017: see ``rest.health``); ``health_check``
    gives the runtime's, None a runtime that is always ready. While the metadata database
    cannot be reached, the health is ``unhealthy`` with 503, the answer of every other
    route meanwhile."""
    router = APIRouter()

    @router.get("/")
    def root() -> dict[str, Any]:
        return {"version": __version__, "commit": "", "kafka_cluster_id": None}

    @router.get("/health")
    def health() -> JSONResponse:
        try:
            store.db.check()
        except StoreUnavailable as e:  # 503 naming the database, as every route answers
            return JSONResponse(unhealthy(str(e))._asdict(), status_code=503)
        found = HEALTHY if health_check is None else health_check()
        return JSONResponse(found._asdict(), status_code=found.http_status)

    return router
