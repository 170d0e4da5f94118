"""Kafka Connect's admin endpoints (KIP-495): the log levels of the driver, read and changed
while it runs. Served with the REST API, or only on ``admin.listeners`` when that is set."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, Request

from airflow_provider_connect.runtime.rest.common import error

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")
"""Kafka's level names; TRACE reads as Python's DEBUG, FATAL as CRITICAL, OFF above it."""
_PYTHON_LEVEL = {"TRACE": 5, "WARN": logging.WARNING, "FATAL": logging.CRITICAL, "OFF": 100}
_KAFKA_NAME = {5: "TRACE", logging.WARNING: "WARN", logging.CRITICAL: "FATAL", 100: "OFF"}
ROOT = "root"


def _name(level: int) -> str:
    return _KAFKA_NAME.get(level) or logging.getLevelName(level)


def _logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == ROOT else logging.getLogger(name)


def admin_router() -> APIRouter:
    router = APIRouter(prefix="/admin")
    modified: dict[str, int] = {}  # logger → when its level was last set here (ms)

    def entry(name: str) -> dict[str, Any]:
        return {
            "level": _name(_logger(name).getEffectiveLevel()),
            "last_modified": modified.get(name),
        }

    @router.get("/loggers")
    def loggers() -> dict[str, dict[str, Any]]:
        """The root logger and every logger with a level of its own."""
        named = [
            name
            for name, logger in logging.root.manager.loggerDict.items()
            if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET
        ]
        return {name: entry(name) for name in [ROOT, *sorted(named)]}

    @router.get("/loggers/{logger}")
    def logger(logger: str) -> dict[str, Any]:
        return entry(logger)

    @router.put("/loggers/{logger}")
    async def set_level(logger: str, request: Request) -> Any:
        """Sets the level of ``logger`` and of its descendants; returns the names of the
        loggers whose level changed (``scope=worker``; this runtime has one driver, so
        ``scope=cluster`` means the same)."""
        try:
            level = str((await request.json())["level"]).upper()
        except (ValueError, KeyError, TypeError):
            return error(400, 'The request body must be {"level": "<level>"}')
        if level not in LEVELS:
            return error(400, f"Invalid log level '{level}'; one of {', '.join(LEVELS)}")
        value = _PYTHON_LEVEL.get(level) or logging.getLevelName(level)
        prefix = "" if logger == ROOT else logger + "."  # the root's descendants: all
        descendants = sorted(
            name
            for name, found in logging.root.manager.loggerDict.items()
            if isinstance(found, logging.Logger) and name.startswith(prefix)
        )
        affected = [logger, *descendants]
        now = int(time.time() * 1000)
        for name in affected:
            _logger(name).setLevel(value)
            modified[name] = now
        return affected

    return router
