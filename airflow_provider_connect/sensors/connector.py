"""Sensors that watch a connector through the metadata database: its health, and its
progress. Both fail fast, with the trace, when the connector or a task is FAILED, and both
wait in the triggerer with ``deferrable=True``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from airflow.sdk import Context
from airflow.sdk.bases.sensor import poke_mode_only
from airflow.sdk.exceptions import AirflowException

from airflow_provider_connect.hooks.progress import SinkCatchUp
from airflow_provider_connect.links.connector import ConnectorStatusLink
from airflow_provider_connect.sensors.hook_sensor import HookSensor
from airflow_provider_connect.triggers.connector import (
    ConnectorOffsetTrigger,
    ConnectorStateTrigger,
)


class _ConnectorSensor(HookSensor):
    template_fields: Sequence[str] = ("connector_name",)
    operator_extra_links = (ConnectorStatusLink(),)

    def __init__(self, *, connector_name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.connector_name = connector_name

    def execute_complete(self, context: Context, event: dict[str, Any]) -> None:
        """Called once, when the trigger fired."""
        super().execute_complete(context, event)
        self.log.info("Connector %s: condition met", self.connector_name)


class ConnectorHealthSensor(_ConnectorSensor):
    """Waits until the connector and every task of its current config are RUNNING; fails
    as soon as one is FAILED, with its trace. Poke, reschedule and deferrable modes.

    :param connector_name: the connector (templated)
    """

    def poke(self, context: Context) -> bool:
        status = self.hook.running_status(self.connector_name)
        if status is None:
            waiting = self.hook.waiting_tasks(self.connector_name)
            self.log.info(
                "Connector %s is not RUNNING yet%s",
                self.connector_name,
                "".join(f"; {reason}" for reason in waiting),
            )
            return False
        self.log.info("Connector %s is healthy: %s", self.connector_name, status)
        return True

    def trigger(self, context: Context) -> ConnectorStateTrigger:
        return ConnectorStateTrigger(
            self.connector_name, self.connect_conn_id, poll_interval=self.poke_interval
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

    :param connector_name: the connector (templated)
    :param source_offset: the offset to reach, for a source connector (templated)
    :param source_partition: the source partition to watch (templated)
    """

    template_fields: Sequence[str] = ("connector_name", "source_offset", "source_partition")

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

    @cached_property
    def catch_up(self) -> SinkCatchUp:
        return SinkCatchUp(dt.datetime.now(dt.timezone.utc))

    def execute(self, context: Context) -> Any:
        kind = self.hook.connector_type(self.connector_name)
        if kind == "source" and self.source_offset is None:
            raise AirflowException(
                f"{self.connector_name} is a source connector: set source_offset, the offset "
                "its committed offset must reach"
            )
        _ = self.catch_up  # the sink's targets are taken from now on
        return super().execute(context)

    def poke(self, context: Context) -> bool:
        name = self.connector_name
        if self.hook.progress_reached(
            name, self.catch_up, self.source_offset, self.source_partition
        ):
            self.log.info("Connector %s reached its target", name)
            return True
        if self.source_offset is None:
            lag = self.catch_up.lag(self.hook.get_sink_progress(name))
            self.log.info("Connector %s: %s records behind", name, "?" if lag is None else lag)
        else:
            self.log.info("Connector %s has not reached %s yet", name, self.source_offset)
        return False

    def trigger(self, context: Context) -> ConnectorOffsetTrigger:
        return ConnectorOffsetTrigger(
            self.connector_name,
            self.connect_conn_id,
            poll_interval=self.poke_interval,
            started_at=self.catch_up.started_at.isoformat(),
            source_offset=self.source_offset,
            source_partition=self.source_partition,
        )
