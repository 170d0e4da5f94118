"""The PySpark connect runtime, in three rooms that match how its code runs:

- ``driver/``: what only the driver process runs: the herder, the Spark runner that submits
  each task run as a Spark job, the run watcher and the fencing of exactly-once producers;
- ``executor/``: what a Spark executor's Python worker loads to run a task: the task loops
  and everything they use. It never imports the driver or the REST server;
- ``rest/``: Kafka Connect's REST API, its admin endpoints and metrics, and their servers.

At the top level is what the rooms, the embedded API and the CLI share: the worker config,
logging, the resolution of config providers' placeholders, the Kafka names of a connector's
clients, the embedded ``Connect`` API, the ``connect-runtime`` CLI and the spark-submit entry
script.

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
