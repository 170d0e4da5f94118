"""``SnapshotNotificationSensor``: a backfill task that ends when the backfill has, waiting
for the COMPLETED notification of the snapshot a signal asked for (see
:mod:`airflow_provider_connect.operators.snapshot` and
:mod:`airflow_provider_connect.triggers.snapshot`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import Context, PokeReturnValue
from airflow.sdk.configuration import conf
from airflow.sdk.exceptions import AirflowException

from airflow_provider_connect.connect.signals import BLOCKING, INCREMENTAL, SNAPSHOT_TYPES
from airflow_provider_connect.connectors.change_capture.config import (
    NOTIFICATION_ENABLED_CHANNELS,
    NOTIFICATION_SINK_TOPIC_NAME,
    TOPIC_PREFIX,
)
from airflow_provider_connect.links.connector import ConnectorStatusLink
from airflow_provider_connect.sensors.hook_sensor import HookSensor
from airflow_provider_connect.settings import KAFKA_BOOTSTRAP_SERVERS, SECTION
from airflow_provider_connect.triggers.snapshot import (
    NotificationReader,
    NotificationWatch,
    SnapshotAborted,
    SnapshotNotificationTrigger,
    epoch_ms,
    value_converter,
)


class SnapshotNotificationSensor(HookSensor):
    """Waits until connector ``connector_name`` notifies that a snapshot COMPLETED; fails
    when it notifies ABORTED (a ``stop-snapshot``, also of part of its tables). Pushes the
    COMPLETED notification (``id``, ``type``, ``aggregate_type``, ``additional_data``,
    ``timestamp``) to XCom. Poke, reschedule and deferrable modes.

    The connector must write notifications to Kafka (``notification.enabled.channels``
    with ``sink``, ``notification.sink.topic.name``). They are read from that topic on
    ``bootstrap_servers`` (default ``[connect] kafka_bootstrap_servers``), decoded with the
    connector's ``value.converter`` and its keys, else with ``worker_converter_config``
    (the worker's ``value.converter`` and ``value.converter.*`` keys, for a worker whose
    converter is not Kafka's default ``JsonConverter`` with schemas), and kept when their
    ``connector_name`` is the connector's ``topic.prefix``.

    An ``incremental`` snapshot (``snapshot_type``) is told by ``signal_id``, the id of the
    signal that asked for it (an ``IncrementalSnapshotOperator``'s XCom ``signal_id``); a
    ``blocking`` one's notifications carry no signal id (``signal_id`` is ignored), and are
    those at or after ``since`` (its XCom ``sent_at``), which a blocking snapshot needs. Notifications are
    read from ``since`` on (an ISO time, a datetime or epoch milliseconds; None: from the
    topic's beginning), so that one written before the sensor started still counts.

    What the snapshot last notified (STARTED, IN_PROGRESS with its table and key,
    TABLE_SCAN_COMPLETED, PAUSED, ...) is logged once per change.
    """

    template_fields: Sequence[str] = (
        "connector_name",
        "signal_id",
        "snapshot_type",
        "since",
        "bootstrap_servers",
        "worker_converter_config",
    )
    operator_extra_links = (ConnectorStatusLink(),)

    def __init__(
        self,
        *,
        connector_name: str,
        signal_id: str | None = None,
        snapshot_type: str = "incremental",
        since: str | int | None = None,
        bootstrap_servers: str | None = None,
        worker_converter_config: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.connector_name = connector_name
        self.signal_id = signal_id
        self.snapshot_type = snapshot_type
        self.since = since
        self.bootstrap_servers = bootstrap_servers
        self.worker_converter_config = worker_converter_config
        self._reader: NotificationReader | None = None

    def notification_watch(self) -> NotificationWatch:
        """What to read, from the connector's config and the sensor's arguments;
        AirflowException naming what to set when the connector writes no notifications to
        Kafka or the sensor lacks an argument."""
        name = self.connector_name
        config = self.hook.store.configs.connector(name).config
        channels = [c.strip() for c in config.get(NOTIFICATION_ENABLED_CHANNELS, "").split(",")]
        topic = config.get(NOTIFICATION_SINK_TOPIC_NAME)
        if "sink" not in channels or not topic:
            raise AirflowException(
                f"Connector {name} writes no notifications to Kafka: add sink to "
                f"{NOTIFICATION_ENABLED_CHANNELS} and set {NOTIFICATION_SINK_TOPIC_NAME}"
            )
        servers = self.bootstrap_servers or conf.get(SECTION, KAFKA_BOOTSTRAP_SERVERS, fallback="")
        if not servers:
            raise AirflowException(
                f"Give bootstrap_servers, or set [{SECTION}] {KAFKA_BOOTSTRAP_SERVERS}"
            )
        kind = str(self.snapshot_type).lower()
        if kind not in SNAPSHOT_TYPES:
            raise AirflowException(f"snapshot_type {kind!r} is none of {', '.join(SNAPSHOT_TYPES)}")
        since = epoch_ms(self.since)
        if kind == BLOCKING and since is None:
            raise AirflowException(
                "A blocking snapshot's notifications carry no signal id: give since (the "
                "signal operator's XCom sent_at)"
            )
        converter, converter_config = value_converter(config, self.worker_converter_config)
        return NotificationWatch(
            bootstrap_servers=servers,
            topic=topic,
            topic_prefix=config.get(TOPIC_PREFIX, ""),
            snapshot_type=kind,
            signal_id=(self.signal_id or None) if kind == INCREMENTAL else None,
            since_ms=since,
            value_converter=converter,
            value_converter_config=converter_config,
        )

    def check(self, context: Context) -> PokeReturnValue | bool:
        if self._reader is None:
            self._reader = NotificationReader(self.notification_watch())
        try:
            outcome = self._reader.outcome()
        except SnapshotAborted as e:
            raise AirflowException(str(e)) from None
        if isinstance(outcome, dict):
            self.log.info("%s COMPLETED: %s", self._reader.watch.describe(), outcome)
            return PokeReturnValue(is_done=True, xcom_value=outcome)
        self.waiting(outcome)
        return False

    def trigger(self, context: Context) -> SnapshotNotificationTrigger:
        assert self._reader is not None  # the first poke made it
        return SnapshotNotificationTrigger(
            self.connector_name,
            self.connect_conn_id,
            poll_interval=self.poke_interval,
            watch=self._reader.watch.arguments(),
            worker_converter_config=self.worker_converter_config,
        )

    def execute(self, context: Context) -> Any:
        try:
            return super().execute(context)
        finally:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        """Called once, when the trigger fired: the COMPLETED notification."""
        super().execute_complete(context, event)
        self.log.info("Connector %s: snapshot COMPLETED: %s", self.connector_name, event)
        notification: dict[str, Any] = event["notification"]
        return notification
