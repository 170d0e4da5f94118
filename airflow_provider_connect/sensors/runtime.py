"""``ConnectRuntimeSensor``: waits until a Connect runtime runs the connectors of a metadata
database and serves its REST API."""

from __future__ import annotations

from typing import Any

from airflow.sdk import Context, PokeReturnValue

from airflow_provider_connect.sensors.hook_sensor import HookSensor
from airflow_provider_connect.triggers.runtime import ConnectRuntimeTrigger


class ConnectRuntimeSensor(HookSensor):
    """Waits until a runtime's herder holds the lease on the connection's metadata database
    and its REST API answers at the URL it advertised (``rest.advertised.*``, else its
    listener). Pushes ``{"holder", "rest_url", "version"}`` as its XCom. Poke, reschedule and
    deferrable modes.

    A runtime that serves no REST API (the embedded ``Connect`` without ``rest``) never
    satisfies it.
    """

    def check(self, context: Context) -> PokeReturnValue | bool:
        runtime = self.hook.serving_runtime()
        if runtime is None:
            active = self.hook.active_runtime()
            if active is None:
                self.log.info("No runtime holds the herder lease yet")
            else:
                self.log.info("%s holds the lease; its REST API does not answer yet", active.holder)
            return False
        self.log.info("Runtime %s serves %s", runtime["holder"], runtime["rest_url"])
        return PokeReturnValue(is_done=True, xcom_value=runtime)

    def trigger(self, context: Context) -> ConnectRuntimeTrigger:
        return ConnectRuntimeTrigger(self.connect_conn_id, poll_interval=self.poke_interval)

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        """Called once, when the trigger fired: the runtime's holder, REST URL and version."""
        super().execute_complete(context, event)
        return {key: event[key] for key in ("holder", "rest_url", "version")}
