"""A worker's health as KIP-1017's ``GET /health`` reports it: ``healthy`` (200) once the
herder has completed a pass over the connectors and keeps doing so; ``starting`` (503) until
its first pass; ``unhealthy`` (500) when the herder's passes stopped (a connector call that
does not return holds it up), with Kafka Connect's messages and what the herder was last
doing. (While the metadata database cannot be reached, ``GET /health`` says ``unhealthy``
with 503, naming the database: see ``rest.app``.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

HEALTH_CHECK_TIMEOUT_S = 10.0
"""How long the herder may go without completing a pass before the worker is unhealthy
(Kafka Connect's health check timeout)."""


class WorkerHealth(NamedTuple):
    status: str
    """``healthy``, ``starting`` or ``unhealthy``."""
    message: str

    @property
    def http_status(self) -> int:
        return {"healthy": 200, "starting": 503}.get(self.status, 500)


HEALTHY = WorkerHealth("healthy", "Worker has completed startup and is ready to handle requests.")

HealthCheck = Callable[[], WorkerHealth]
"""What the REST API asks a runtime for its health (the store's reachability aside)."""


def starting(details: str | None = None) -> WorkerHealth:
    message = "Worker is still starting up."
    return WorkerHealth("starting", f"{message} {details}" if details else message)


def unhealthy(details: str | None = None) -> WorkerHealth:
    message = "Worker was unable to handle this request and may be unable to handle other requests."
    return WorkerHealth("unhealthy", f"{message} {details}" if details else message)
