"""The trigger of ``ConnectRuntimeSensor``'s deferrable mode."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.triggers.polling import PollingTrigger


class ConnectRuntimeTrigger(PollingTrigger):
    """Fires ``success`` once a runtime holds the herder lease of the connection's metadata
    database and its REST API says it is healthy; payload ``holder``, ``rest_url``, ``version``."""

    def check(self, hook: ConnectHook) -> dict[str, Any] | None:
        return hook.serving_runtime()
