"""The runtime's side of the connector API's connector context: a connector instance runs on
the driver, where the herder starts it and takes its requests."""

from __future__ import annotations

import threading

from airflow_provider_connect.connect.connector import ConnectorContext


class HerderConnectorContext(ConnectorContext):
    """Lets a connector instance on the driver ask for task reconfiguration or fail."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reconfiguration_requested = False
        self.error: Exception | None = None

    def request_task_reconfiguration(self) -> None:
        with self._lock:
            self.reconfiguration_requested = True

    def raise_error(self, error: Exception) -> None:
        with self._lock:
            self.error = error

    def take_reconfiguration_request(self) -> bool:
        with self._lock:
            requested, self.reconfiguration_requested = self.reconfiguration_requested, False
            return requested
