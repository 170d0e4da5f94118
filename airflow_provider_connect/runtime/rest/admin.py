"""Kafka Connect's admin endpoints: the log levels of the driver, read and changed while it
runs (KIP-495), for the driver alone or for every process of the runtime (KIP-976). Served
with the REST API, or only on ``admin.listeners`` when that is set."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from airflow_provider_connect.control.error_answers import ErrorAnswer, error_answer
from airflow_provider_connect.runtime.logs import (
    KAFKA_LEVELS,
    LOG_LEVELS,
    ROOT_LOGGER,
    kafka_level,
    named_logger,
)
from airflow_provider_connect.store import MetadataStore, StoreUnavailable

log = logging.getLogger(__name__)

WORKER_SCOPE = "worker"
CLUSTER_SCOPE = "cluster"


def admin_router(store: MetadataStore) -> APIRouter:
    """The ``/admin/loggers`` endpoints of a runtime whose cluster-wide levels live in
    ``store``."""
    router = APIRouter(prefix="/admin")

    def entry(name: str) -> dict[str, Any]:
        return {
            "level": kafka_level(named_logger(name).getEffectiveLevel()),
            "last_modified": LOG_LEVELS.last_modified(name),
        }

    @router.get("/loggers")
    def loggers() -> dict[str, dict[str, Any]]:
        """The root logger and every logger with a level of its own."""
        named = [  # list(): one C call, atomic while other threads create loggers
            name
            for name, logger in list(logging.root.manager.loggerDict.items())
            if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET
        ]
        return {name: entry(name) for name in [ROOT_LOGGER, *sorted(named)]}

    @router.get("/loggers/{logger}")
    def logger(logger: str) -> dict[str, Any]:
        return entry(logger)

    @router.put("/loggers/{logger}")
    async def set_level(logger: str, request: Request, scope: str = WORKER_SCOPE) -> Any:
        """Sets the level of ``logger`` and of its descendants. ``scope=worker`` (the
        default; any other value but ``cluster``, with a warning, as Kafka does): in this
        driver only, answering the names of the loggers set. ``scope=cluster``: written to
        the metadata database and set here at once; every driver whose herder started
        before the write applies it within ``task.heartbeat.interval.ms``, and so do the
        task runs of those drivers, running or started later; answers 204. Refused before
        anything is set or written, as Kafka does: a body without a ``level`` (400), a level
        that is not one of Kafka's (404)."""
        try:
            sent = await request.json()
        except (ValueError, RecursionError):  # not JSON, or nested deeper than it parses
            sent = None
        desired = sent.get("level") if isinstance(sent, dict) else None
        if desired is None or isinstance(desired, list | dict):
            missing = "Desired 'level' parameter was not specified in request."
            return ErrorAnswer(400, missing).response()
        level = str(desired).upper()
        if level not in KAFKA_LEVELS:
            return ErrorAnswer(404, f"invalid log level '{desired}'.").response()
        if scope.lower() == CLUSTER_SCOPE:
            try:
                written = await run_in_threadpool(store.log_levels.set, logger, level)
            except StoreUnavailable as e:  # answered alike in any app the router is part of
                return error_answer(e).response()
            LOG_LEVELS.apply_written(store.log_levels, written)
            return Response(status_code=204)
        if scope.lower() != WORKER_SCOPE:
            log.warning(
                "Received invalid scope '%s' in request to adjust logging level; "
                "will default to %s",
                scope,
                WORKER_SCOPE,
            )
        return LOG_LEVELS.set_level(logger, level)

    return router
