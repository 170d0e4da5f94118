"""The PySpark connect runtime: herder on the driver, task runs as Spark jobs.

``Connect`` is imported on first use, so that an executor running a task does not load the
driver's parts (the REST API, the herder, every connector plugin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_provider_connect.runtime.connect import Connect

__all__ = ["Connect"]


def __getattr__(name: str) -> Any:
    if name == "Connect":
        from airflow_provider_connect.runtime.connect import Connect

        return Connect
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
