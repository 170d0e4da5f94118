"""Sensors that watch a connector through the metadata database: its health, and its
progress. Both fail fast, with the trace, when the connector or a task is FAILED, say what
they wait on each time that changes (PAUSED, UNASSIGNED waiting for a Spark task slot, a
topic that does not exist, how far behind, the metadata database unreachable), can give up
when nothing moves for ``stall_timeout``, and wait in the triggerer with
``deferrable=True``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from airflow.sdk import Context
from airflow.sdk.bases.sensor import poke_mode_only
from airflow.sdk.exceptions import AirflowException

from airflow_provider_connect.control.progress import SinkCatchUp, Waiting, stall_timeout_s
from airflow_provider_connect.links.connector import ConnectorStatusLink
from airflow_provider_connect.sensors.hook_sensor import HookSensor
from airflow_provider_connect.triggers.connector import (
    ConnectorOffsetTrigger,
    ConnectorStateTrigger,
)


class _ConnectorSensor(HookSensor):
    template_fields: Sequence[str] = ("connector_name", "stall_timeout")
    operator_extra_links = (ConnectorStatusLink(),)

    def __init__(
        self,
        *,
        connector_name: str,
        stall_timeout: float | str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.connector_name = connector_name
        self.stall_timeout = stall_timeout
        if stall_timeout is not None and self.mode == "reschedule" and not self.deferrable:
            raise ValueError(
                "stall_timeout needs mode='poke' or deferrable=True: in reschedule mode the "
                "sensor forgets between pokes what it saw"
            )

    def stall_timeout_s(self) -> float | None:
        return stall_timeout_s(self.stall_timeout)

    def execute_complete(self, context: Context, event: dict[str, Any]) -> None:
        """Called once, when the trigger fired."""
        super().execute_complete(context, event)
        self.log.info("Connector %s: condition met", self.connector_name)


class ConnectorHealthSensor(_ConnectorSensor):
    """Waits until the connector and every task of its current config are RUNNING; fails
    as soon as one is FAILED, with its trace. Poke, reschedule and deferrable modes.

    Logs why it waits each time that changes (not at every poke; in reschedule mode at
    every poke, which starts afresh): ``connector X is PAUSED and makes no progress until
    resumed``, ``connector X is RUNNING, tasks starting; task 0: <why it is UNASSIGNED>``,
    ``connector X is not RUNNING yet; the connector is UNASSIGNED``, ...

    :param connector_name: the connector (templated)
    :param stall_timeout: seconds (templated; None: off): give up, saying why, once the
        connector's and its tasks' states have not changed for that long. Poke and
        deferrable modes only.
    """

    def check(self, context: Context) -> bool:
        health = self.hook.check_health(self.connector_name)
        if isinstance(health, Waiting):
            self.waiting(health)
            return False
        self.log.info("Connector %s is healthy: %s", self.connector_name, health)
        return True

    def trigger(self, context: Context) -> ConnectorStateTrigger:
        return ConnectorStateTrigger(
            self.connector_name,
            self.connect_conn_id,
            poll_interval=self.poke_interval,
            stall_timeout=self.stall_timeout_s(),
        )


@poke_mode_only
class ConnectorOffsetSensor(_ConnectorSensor):
    """Waits until a connector has made progress:

    * a sink (no ``source_offset``): its consumer group has caught up to the end offsets its
      topics had when the sensor started (as the sink tasks record them at each offset
      commit, so allow ``offset.flush.interval.ms``);
    * a source: the committed offset of ``source_partition`` (or of every partition) has
      reached ``source_offset``: numbers at or past, other values equal.

    Fails as soon as the connector or a task is FAILED. Poke and deferrable modes: the
    sink's targets are held by the running sensor or trigger, so reschedule mode (which
    would forget them) is refused; ``deferrable=True`` frees the worker slot instead.

    Logs why it waits each time that changes, not at every poke: the connector's state
    (``connector X is PAUSED and makes no progress until resumed``), a subscribed topic
    that does not exist (``topic T does not exist``), no progress recorded yet, and how far
    behind it is (``connector X is 1000 records behind``; a source's committed offset
    against the target).

    :param connector_name: the connector (templated)
    :param source_offset: the offset to reach, for a source connector (templated)
    :param source_partition: the source partition to watch (templated)
    :param stall_timeout: seconds (templated; None: off): give up, saying why, once the
        committed offsets (and the connector's states) have not moved for that long; make
        it longer than the worker's ``offset.flush.interval.ms``, the pace of commits
    """

    template_fields: Sequence[str] = (
        "connector_name",
        "source_offset",
        "source_partition",
        "stall_timeout",
    )

    def __init__(
        self,
        *,
        source_offset: dict[str, Any] | None = None,
        source_partition: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.source_offset = source_offset
        self.source_partition = source_partition
        self._kind_checked = False

    @cached_property
    def catch_up(self) -> SinkCatchUp:
        return SinkCatchUp(dt.datetime.now(dt.timezone.utc))

    def execute(self, context: Context) -> Any:
        self._kind_checked = False
        _ = self.catch_up  # the sink's targets are taken from now on
        return super().execute(context)

    def check(self, context: Context) -> bool:
        if not self._kind_checked:  # at the first poke that reaches the metadata database
            kind = self.hook.connector_type(self.connector_name)
            if kind == "source" and self.source_offset is None:
                raise AirflowException(
                    f"{self.connector_name} is a source connector: set source_offset, the "
                    "offset its committed offset must reach"
                )
            self._kind_checked = True
        behind = self.hook.check_progress(
            self.connector_name, self.catch_up, self.source_offset, self.source_partition
        )
        if behind is None:
            self.log.info("Connector %s reached its target", self.connector_name)
            return True
        self.waiting(behind)
        return False

    def trigger(self, context: Context) -> ConnectorOffsetTrigger:
        return ConnectorOffsetTrigger(
            self.connector_name,
            self.connect_conn_id,
            poll_interval=self.poke_interval,
            started_at=self.catch_up.started_at.isoformat(),
            source_offset=self.source_offset,
            source_partition=self.source_partition,
            stall_timeout=self.stall_timeout_s(),
        )
