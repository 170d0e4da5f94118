"""What the provider's sensors share: a ``ConnectHook``, and a deferrable mode in which the
sensor pokes once and then waits in the triggerer."""

from __future__ import annotations

import datetime as dt
from functools import cached_property
from typing import Any

from airflow.sdk import BaseSensorOperator, Context, PokeReturnValue
from airflow.sdk.exceptions import AirflowException

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import default_deferrable
from airflow_provider_connect.triggers.polling import PollingTrigger


class HookSensor(BaseSensorOperator):
    """A sensor over the metadata database of ``connect_conn_id``. With ``deferrable``
    (default: Airflow's ``[operators] default_deferrable``) it pokes once, then hands the
    wait to :meth:`trigger` in the triggerer, freeing its worker slot."""

    ui_color = "#d9ecf8"

    def __init__(
        self,
        *,
        connect_conn_id: str = ConnectHook.default_conn_name,
        deferrable: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.connect_conn_id = connect_conn_id
        self.deferrable = default_deferrable() if deferrable is None else deferrable

    @cached_property
    def hook(self) -> ConnectHook:
        return ConnectHook(self.connect_conn_id)

    def trigger(self, context: Context) -> PollingTrigger:
        """The trigger that waits for what :meth:`poke` checks."""
        raise NotImplementedError

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        done = self.poke(context)
        if not done:
            self.defer(
                trigger=self.trigger(context),
                method_name="execute_complete",
                timeout=dt.timedelta(seconds=self.timeout),
            )
        return done.xcom_value if isinstance(done, PokeReturnValue) else None

    def execute_complete(self, context: Context, event: dict[str, Any]) -> Any:
        """Called once, when the trigger fired: fails the task unless it fired ``success``;
        returns the task's XCom (none here)."""
        if event["status"] != "success":
            raise AirflowException(event["message"])
        return None
