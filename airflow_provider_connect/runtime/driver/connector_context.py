"""The runtime's side of the connector API's connector context: a connector instance runs on
the driver, where the herder starts it and takes its requests. Its plugin metrics (KIP-877)
live here too, read directly by ``/metrics``."""

from __future__ import annotations

import threading

from airflow_provider_connect.connect.connector import ConnectorContext
from airflow_provider_connect.connect.metrics import SimplePluginMetrics


class HerderConnectorContext(ConnectorContext):
    """Lets a connector instance on the driver ask for task reconfiguration or fail, and
    register metrics tagged ``connector=<connector>``. One context per started instance."""

    def __init__(self, connector: str) -> None:
        self._lock = threading.Lock()
        self.reconfiguration_requested = False
        self.error: Exception | None = None
        self.metrics = SimplePluginMetrics({"connector": connector})
        self.closed = False

    def request_task_reconfiguration(self) -> None:
        with self._lock:
            self.reconfiguration_requested = True

    def raise_error(self, error: Exception) -> None:
        with self._lock:
            self.error = error

    def plugin_metrics(self) -> SimplePluginMetrics:
        return self.metrics

    def take_reconfiguration_request(self) -> bool:
        with self._lock:
            requested, self.reconfiguration_requested = self.reconfiguration_requested, False
            return requested

    def close(self) -> None:
        """Removes the connector's plugin metrics; called once its instance has stopped (a
        new instance gets a new context)."""
        self.closed = True
        self.metrics.close()
