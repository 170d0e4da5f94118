"""The end of a connector's snapshot, as its notifications tell it: Debezium's sink
notification channel (``notification.enabled.channels=sink``) writes each step of a snapshot
as a record of ``notification.sink.topic.name``, key ``{id}``
(``io.debezium.connector.common.NotificationKey``), value ``{id, type, aggregate_type,
additional_data, timestamp}`` (``io.debezium.connector.common.Notification``), through the
connector's converters. An incremental snapshot's notifications (aggregate type
``Incremental Snapshot``) carry the id of the signal that asked for it; a blocking
snapshot's (``Initial Snapshot``, as an initial snapshot's) carry random ids.

:class:`NotificationReader` reads them from Kafka (confluent-kafka, loaded only when a
reader starts), :class:`SnapshotNotificationTrigger` waits for them in the triggerer."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async

from airflow_provider_connect.connect.config import originals_with_prefix
from airflow_provider_connect.connect.connector_config import VALUE_CONVERTER_CLASS_CONFIG
from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.signals import BLOCKING, INCREMENTAL
from airflow_provider_connect.connect.storage import Converter
from airflow_provider_connect.connectors.change_capture.notifications import (
    ABORTED,
    COMPLETED,
    CONNECTOR_NAME,
    INCREMENTAL_SNAPSHOT,
    INITIAL_SNAPSHOT,
)
from airflow_provider_connect.control.progress import Waiting
from airflow_provider_connect.hooks.connect import ConnectHook, ConnectorFailedError
from airflow_provider_connect.triggers.connector import _ConnectorTrigger

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from airflow.triggers.base import TriggerEvent
    from confluent_kafka import Consumer

AGGREGATE_TYPES = {INCREMENTAL: INCREMENTAL_SNAPSHOT, BLOCKING: INITIAL_SNAPSHOT}
"""The aggregate type of the notifications of each kind of snapshot a signal asks for."""
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
"""Kafka Connect's default ``value.converter``."""
READ_WAIT_S = 0.5
"""How long a read waits for more records before it counts the topic as read to its end."""
READ_BUDGET_S = 5.0
"""How long one read (a poke, a trigger's poll) reads at most."""


class SnapshotAborted(ConnectorFailedError):
    """The connector notified that the snapshot was ABORTED."""


@dataclass(frozen=True)
class NotificationWatch:
    """Which notifications end a snapshot: those of ``topic`` on ``bootstrap_servers``
    (values decoded by ``value_converter`` configured with ``value_converter_config``)
    whose ``additional_data.connector_name`` is ``topic_prefix``, whose aggregate type is
    that of ``snapshot_type``'s snapshots, and with id ``signal_id`` when given (an
    incremental snapshot's), else with a timestamp at or after ``since_ms`` (epoch ms) when
    given. Records are read from ``since_ms`` on (their Kafka timestamps; None: from the
    topic's beginning)."""

    bootstrap_servers: str
    topic: str
    topic_prefix: str
    snapshot_type: str = INCREMENTAL
    signal_id: str | None = None
    since_ms: int | None = None
    value_converter: str = JSON_CONVERTER
    value_converter_config: dict[str, Any] = field(default_factory=dict)

    def matches(self, notification: Mapping[str, Any]) -> bool:
        """Whether ``notification`` (:func:`notification_fields`) is of the watched snapshot."""
        extra = notification.get("additional_data") or {}
        return (
            extra.get(CONNECTOR_NAME) == self.topic_prefix
            and notification.get("aggregate_type") == AGGREGATE_TYPES[self.snapshot_type]
            and (self.signal_id is None or notification.get("id") == self.signal_id)
            and (
                self.signal_id is not None
                or self.since_ms is None
                or (notification.get("timestamp") or 0) >= self.since_ms
            )
        )

    def arguments(self) -> dict[str, Any]:
        """The watch as a trigger's arguments: without the converter's settings, which may
        hold credentials (a Schema Registry's): the trigger reads them from the store."""
        arguments = asdict(self)
        del arguments["value_converter_config"]
        return arguments

    def describe(self) -> str:
        which = f" {self.signal_id}" if self.signal_id else ""
        return f"the {self.snapshot_type} snapshot{which} of {self.topic_prefix}"


def value_converter(
    config: Mapping[str, str], worker_converter_config: Mapping[str, str] | None
) -> tuple[str, dict[str, Any]]:
    """The class and settings of the converter of a connector's values: its own
    ``value.converter`` and ``value.converter.*`` keys, else those of
    ``worker_converter_config`` (the worker's), else Kafka's default ``JsonConverter``."""
    given = config if config.get(VALUE_CONVERTER_CLASS_CONFIG) else worker_converter_config or {}
    settings = originals_with_prefix(given, f"{VALUE_CONVERTER_CLASS_CONFIG}.")
    return given.get(VALUE_CONVERTER_CLASS_CONFIG) or JSON_CONVERTER, settings


def notification_fields(value: Any) -> dict[str, Any]:
    """A notification value as the converter gave it (a Struct with schemas, a map
    without), as a plain dict; DataException when it is neither."""
    if isinstance(value, Struct):
        return {name: dict(v) if isinstance(v, Mapping) else v for name, v in value.items()}
    if isinstance(value, Mapping):
        return dict(value)
    raise DataException(f"a notification value is a Struct or a map, not {type(value).__name__}")


class NotificationReader:
    """Reads the notifications of a :class:`NotificationWatch`, in order, each once,
    through one consumer (assigned, no group membership, nothing committed). Until the
    topic exists (the connector creates it with its first notification) each read finds
    none."""

    def __init__(self, watch: NotificationWatch) -> None:
        self.watch = watch
        self._consumer: Consumer | None = None
        self.last: dict[str, Any] | None = None
        """The last watched notification read that did not end the snapshot."""
        self.undecodable: str | None = None
        converter: Converter = load_class(watch.value_converter)()
        converter.configure(watch.value_converter_config, False)
        self._converter = converter

    def read(self) -> list[dict[str, Any]]:
        """The watched notifications that arrived since the previous read, up to the first
        that ends the snapshot (COMPLETED, ABORTED); a read lasts at most
        :data:`READ_BUDGET_S`. A record the converter cannot read is skipped (the latest
        such error is kept in :attr:`undecodable`)."""
        consumer = self._consumer or self._start()
        if consumer is None:
            return []
        found: list[dict[str, Any]] = []
        deadline = time.monotonic() + READ_BUDGET_S
        while time.monotonic() < deadline:
            batch = consumer.consume(500, READ_WAIT_S)
            for message in batch:
                notification = self._decoded(message.value()) if message.error() is None else None
                if notification is not None and self.watch.matches(notification):
                    found.append(notification)
                    if notification.get("type") in (COMPLETED, ABORTED):
                        return found
            if not batch:
                break
        return found

    def _decoded(self, value: bytes | None) -> dict[str, Any] | None:
        try:
            data = self._converter.to_connect_data(self.watch.topic, value)
            return None if data.value is None else notification_fields(data.value)
        except DataException as e:
            self.undecodable = f"{self.watch.value_converter} cannot read a record: {e}"
            return None

    def _start(self) -> Consumer | None:
        """A consumer assigned to each partition of the topic from ``since_ms`` (else from
        the beginning); None while the topic does not exist."""
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        watch = self.watch
        consumer = Consumer(
            {
                "bootstrap.servers": watch.bootstrap_servers,
                "group.id": f"airflow-snapshot-notifications-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "allow.auto.create.topics": False,
            }
        )
        try:
            topic = consumer.list_topics(watch.topic, timeout=10).topics.get(watch.topic)
            if topic is None or topic.error is not None or not topic.partitions:
                consumer.close()
                return None
            partitions = [TopicPartition(watch.topic, p) for p in sorted(topic.partitions)]
            if watch.since_ms is None:
                for partition in partitions:
                    partition.offset = OFFSET_BEGINNING
            else:
                for partition in partitions:
                    partition.offset = watch.since_ms
                partitions = consumer.offsets_for_times(partitions, timeout=10)
                for partition in partitions:
                    if partition.offset < 0:  # nothing that late yet: from the end, as now
                        partition.offset = consumer.get_watermark_offsets(
                            partition, timeout=10, cached=False
                        )[1]
            consumer.assign(partitions)
        except Exception:
            consumer.close()
            raise
        self._consumer = consumer
        return consumer

    def outcome(self) -> dict[str, Any] | Waiting:
        """The snapshot's COMPLETED notification once read, else what it last notified;
        raises :class:`SnapshotAborted` at an ABORTED one. A broker that cannot be reached
        is a reason to wait."""
        from confluent_kafka import KafkaException

        try:
            notifications = self.read()
        except KafkaException as e:
            return Waiting(f"Kafka at {self.watch.bootstrap_servers} is unreachable: {e}", "")
        for notification in notifications:
            if notification.get("type") == COMPLETED:
                return notification
            if notification.get("type") == ABORTED:
                raise SnapshotAborted(
                    f"The connector aborted {self.watch.describe()}: {_details(notification)}"
                )
            self.last = notification
        if self._consumer is None:
            return Waiting(
                f"topic {self.watch.topic} does not exist yet (the connector creates it "
                "with its first notification)",
                "",
            )
        if self.last is None:
            skipped = f" ({self.undecodable})" if self.undecodable else ""
            return Waiting(f"no notification of {self.watch.describe()} yet{skipped}", "")
        kind = self.last.get("type")
        return Waiting(
            f"{self.watch.describe()} is {kind}: {_details(self.last)}",
            f"{kind} {self.last.get('timestamp')}",
        )

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


def _details(notification: Mapping[str, Any]) -> str:
    extra = {
        k: v for k, v in (notification.get("additional_data") or {}).items() if k != CONNECTOR_NAME
    }
    return ", ".join(f"{k}={v}" for k, v in sorted(extra.items())) or "no details"


def epoch_ms(since: str | dt.datetime | int | float | None) -> int | None:
    """``since`` (an ISO time, a datetime, or epoch milliseconds) in epoch milliseconds;
    a time without a zone is UTC."""
    if since is None or since == "":
        return None
    if isinstance(since, (int, float)):
        return int(since)
    moment = since if isinstance(since, dt.datetime) else dt.datetime.fromisoformat(since)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


class SnapshotNotificationTrigger(_ConnectorTrigger):
    """Fires ``success`` with the snapshot's COMPLETED notification (payload
    ``notification``), or ``failed`` at its ABORTED one, reading the notifications of
    ``watch`` (a :class:`NotificationWatch`'s fields) every ``poll_interval`` seconds;
    what the snapshot last notified (STARTED, IN_PROGRESS, TABLE_SCAN_COMPLETED, ...) is
    logged once per change. A restarted triggerer reads again from the watch's start."""

    def __init__(
        self,
        *args: Any,
        watch: dict[str, Any],
        worker_converter_config: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """``watch``: :meth:`NotificationWatch.arguments`; the converter's settings are read
        from the connector's stored config (else ``worker_converter_config``) when the
        trigger runs, so none is serialized with it."""
        super().__init__(*args, **kwargs)
        self.watch = NotificationWatch(**watch)
        self.worker_converter_config = worker_converter_config
        self._reader: NotificationReader | None = None

    def _arguments(self) -> dict[str, Any]:
        return {
            "watch": self.watch.arguments(),
            "worker_converter_config": self.worker_converter_config,
        }

    def check(self, hook: ConnectHook) -> dict[str, Any] | Waiting | None:
        if self._reader is None:
            config = hook.store.configs.connector(self.connector_name).config
            converter, settings = value_converter(config, self.worker_converter_config)
            self._reader = NotificationReader(
                replace(self.watch, value_converter=converter, value_converter_config=settings)
            )
        outcome = self._reader.outcome()
        return {"notification": outcome} if isinstance(outcome, dict) else outcome

    async def run(self) -> AsyncIterator[TriggerEvent]:
        try:
            async for event in super().run():
                yield event
        finally:
            if self._reader is not None:
                await sync_to_async(self._reader.close, thread_sensitive=False)()
