"""What the provider's sensors share: a ``ConnectHook``; a deferrable mode in which the
sensor pokes once and then waits in the triggerer; saying what they wait on once per change;
riding out outages of the metadata database; and timeouts that say what they last waited
on."""

from __future__ import annotations

import datetime as dt
import time
from functools import cached_property
from typing import Any

from airflow.sdk import BaseSensorOperator, Context, PokeReturnValue
from airflow.sdk.exceptions import AirflowException, AirflowSensorTimeout

from airflow_provider_connect.control.progress import Waiting, WaitWatch
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import default_deferrable
from airflow_provider_connect.store import StoreUnavailable
from airflow_provider_connect.triggers.polling import PollingTrigger

TRIGGER_GRACE_S = 60.0
"""How long a deferral outlasts the sensor's timeout, so that the trigger's own ``timeout``
event, which says what it waited on, comes before Airflow's deferral timeout, which does
not."""


class SensorStalled(AirflowSensorTimeout):
    """The watched progress has not moved for the sensor's ``stall_timeout``; the message
    says what it waited on. Like a timeout, it fails the task without retries."""


class HookSensor(BaseSensorOperator):
    """A sensor over the metadata database of ``connect_conn_id``. With ``deferrable``
    (default: Airflow's ``[operators] default_deferrable``) it pokes once, then hands the
    wait to :meth:`trigger` in the triggerer, freeing its worker slot; the trigger fires its
    own ``timeout`` at the sensor's ``timeout``, saying what it last waited on.

    Subclasses implement :meth:`check`, one look at the condition. A check that finds the
    condition unmet reports why through :meth:`waiting`, which logs the reason when it
    changed since the previous poke and raises :class:`SensorStalled` once the progress has
    not moved for :meth:`stall_timeout_s` (None: never). In poke mode, the timeout's message
    ends with what the sensor last waited on too.

    A poke that cannot reach the metadata database (``StoreUnavailable``) is no failure:
    the sensor keeps poking, its ``timeout`` still applies, the database's loss is logged
    once (WARNING, naming it and the cause: ``Still waiting: The metadata database … is
    unreachable: …``) and its return once (INFO), and the time it was away does not count
    towards ``stall_timeout``.
    """

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

    @cached_property
    def watch(self) -> WaitWatch:
        """What the pokes of this execution waited on (reschedule mode: of this poke);
        each execution starts a new one."""
        return WaitWatch(self.stall_timeout_s())

    def stall_timeout_s(self) -> float | None:
        """Seconds without progress after which the sensor gives up; None: never."""
        return None

    def trigger(self, context: Context) -> PollingTrigger:
        """The trigger that waits for what :meth:`check` checks."""
        raise NotImplementedError

    def check(self, context: Context) -> PokeReturnValue | bool:
        """One look at the condition: what :meth:`poke` returns once the metadata database
        answered."""
        raise NotImplementedError

    def poke(self, context: Context) -> PokeReturnValue | bool:
        """:meth:`check`; False (poke again) while the metadata database cannot be reached."""
        try:
            done = self.check(context)
        except StoreUnavailable as e:
            self.watch.unreachable(e, self.log)
            return False
        self.watch.reachable(self.log)
        return done

    def waiting(self, wait: Waiting) -> None:
        """Reports why the condition is unmet: logged once per change; raises
        :class:`SensorStalled` when the progress stood still too long."""
        self.watch.reachable(self.log)  # first, so the stall clock skips the time it was away
        stalled = self.watch.follow(wait, self.log)
        if stalled is not None:
            raise SensorStalled(stalled)

    def execute(self, context: Context) -> Any:
        started = time.monotonic()
        self.watch = WaitWatch(self.stall_timeout_s())
        if not self.deferrable:
            try:
                return super().execute(context)
            except SensorStalled:
                raise
            except AirflowSensorTimeout as e:
                if self.watch.reason is None:
                    raise
                raise AirflowSensorTimeout(self.watch.last_waited_on(str(e).rstrip("."))) from e
        done = self.poke(context)
        if not done:
            left = max(self.timeout - (time.monotonic() - started), 0.0)
            trigger = self.trigger(context)
            trigger.deadline = (
                dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=left)
            ).isoformat()
            self.defer(
                trigger=trigger,
                method_name="execute_complete",
                timeout=dt.timedelta(seconds=left + TRIGGER_GRACE_S),
            )
        return done.xcom_value if isinstance(done, PokeReturnValue) else None

    def execute_complete(self, context: Context, event: dict[str, Any]) -> Any:
        """Called once, when the trigger fired: fails the task unless it fired ``success``
        (``timeout`` and ``stalled`` as a sensor timeout: without retries); returns the
        task's XCom (none here)."""
        if event["status"] in ("timeout", "stalled"):
            raise AirflowSensorTimeout(event["message"])
        if event["status"] != "success":
            raise AirflowException(event["message"])
        return None
