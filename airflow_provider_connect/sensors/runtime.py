"""``ConnectRuntimeSensor``: waits until a Connect runtime runs the connectors of a metadata
database and serves its REST API."""

from __future__ import annotations

from typing import Any

from airflow.sdk import Context, PokeReturnValue

from airflow_provider_connect.sensors.hook_sensor import HookSensor
from airflow_provider_connect.triggers.runtime import ConnectRuntimeTrigger


class ConnectRuntimeSensor(HookSensor):
    """Waits until a runtime's herder holds the lease on the connection's metadata database
    and its REST API says it is healthy (KIP-1017's ``GET /health``) at the URL it advertised
    (``rest.advertised.*``, else its listener); until then each check logs why not. Pushes ``{"holder", "rest_url", "version"}`` as its XCom. Poke, reschedule and
    deferrable modes.

    A runtime that serves no REST API (the embedded ``Connect`` without ``rest``) never
    satisfies it.
    """

    def check(self, context: Context) -> PokeReturnValue | bool:
        health = self.hook.runtime_health()
        runtime = None if health is None else self.hook.healthy_runtime(health)
        if runtime is None:
            self.log.info("%s", self._not_serving(health))
            return False
        self.log.info("Runtime %s serves %s", runtime["holder"], runtime["rest_url"])
        return PokeReturnValue(is_done=True, xcom_value=runtime)

    def _not_serving(self, health: dict[str, Any] | None) -> str:
        if health is not None:
            return f"Runtime {health['holder']} is {health['status']}: {health['message']}"
        active = self.hook.active_runtime()
        if active is None:
            return "No runtime holds the herder lease yet"
        return f"{active.holder} holds the lease; its REST API does not answer yet"

    def trigger(self, context: Context) -> ConnectRuntimeTrigger:
        return ConnectRuntimeTrigger(self.connect_conn_id, poll_interval=self.poke_interval)

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        """Called once, when the trigger fired: the runtime's holder, REST URL and version."""
        super().execute_complete(context, event)
        return {key: event[key] for key in ("holder", "rest_url", "version")}
