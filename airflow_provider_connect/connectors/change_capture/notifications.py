"""Notifications of snapshot progress, as Debezium's ``NotificationService`` sends them
(``notification.enabled.channels``): the ``sink`` channel writes a record to
``notification.sink.topic.name``, the ``log`` channel a line to the task's log.

A notification is Debezium's ``Notification``: an ``id``, an ``aggregate_type`` (``Initial
Snapshot`` or ``Incremental Snapshot``), a ``type`` (Debezium's ``SnapshotStatus`` values
but its chunk ones, and ``SKIPPED``), ``additional_data`` (strings, always with ``connector_name``, the
``topic.prefix``) and a ``timestamp`` in ms. The notifications of one incremental snapshot
share the id of the signal that asked for it (its correlation id); an initial or blocking
snapshot's have random ids.

Delivery: a sink notification is a record of the poll during which it was made, after that
poll's other records, with the offset of the last of them (or of the current position when
there are none), so it is delivered at least once, as the change events are."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.source import SourceRecord

log = logging.getLogger(__name__)

INITIAL_SNAPSHOT = "Initial Snapshot"
INCREMENTAL_SNAPSHOT = "Incremental Snapshot"

STARTED = "STARTED"
PAUSED = "PAUSED"
RESUMED = "RESUMED"
ABORTED = "ABORTED"
IN_PROGRESS = "IN_PROGRESS"
TABLE_SCAN_COMPLETED = "TABLE_SCAN_COMPLETED"
COMPLETED = "COMPLETED"
SKIPPED = "SKIPPED"

CHANNEL_ERROR = (
    "Notification topic name must be provided when kafka notification channel is enabled"
)
"""Debezium's message for the ``sink`` channel without ``notification.sink.topic.name``."""

# The keys of additional_data (IncrementalSnapshotNotificationService and
# InitialSnapshotNotificationService)
CONNECTOR_NAME = "connector_name"
DATA_COLLECTIONS = "data_collections"
CURRENT_COLLECTION_IN_PROGRESS = "current_collection_in_progress"
SCANNED_COLLECTION = "scanned_collection"
TOTAL_ROWS_SCANNED = "total_rows_scanned"
MAXIMUM_KEY = "maximum_key"
LAST_PROCESSED_KEY = "last_processed_key"
STATUS = "status"
SUCCEEDED = "SUCCEEDED"
"""A table scan's ``status``; Debezium's others are ``EMPTY``, ``NO_PRIMARY_KEY``, ``SKIPPED``,
``SQL_EXCEPTION``, ``UNKNOWN_SCHEMA``."""

# SchemaFactory.notificationKeySchema/notificationValueSchema
NOTIFICATION_KEY_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.NotificationKey")
    .version(1)
    .field("id", Schema.STRING_SCHEMA)
    .build()
)
NOTIFICATION_VALUE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.Notification")
    .version(1)
    .field("id", Schema.STRING_SCHEMA)
    .field("type", Schema.STRING_SCHEMA)
    .field("aggregate_type", Schema.STRING_SCHEMA)
    .field(
        "additional_data",
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).optional().build(),
    )
    .field("timestamp", Schema.INT64_SCHEMA)
    .build()
)


@dataclass(frozen=True)
class Notification:
    """One notification, as Debezium's ``Notification`` holds it."""

    id: str
    aggregate_type: str
    type: str
    additional_data: dict[str, str]
    timestamp: int

    def __str__(self) -> str:
        """As Debezium's ``toString`` writes it (the log channel's line)."""
        data = ", ".join(f"{k}={v}" for k, v in self.additional_data.items())
        return (
            f"{{id='{self.id}', aggregateType='{self.aggregate_type}', type='{self.type}', "
            f"additionalData={{{data}}}, timestamp={self.timestamp}}}"
        )


class Notifier:
    """The notifications of one task, sent through its enabled channels. Used from the
    task's poll thread."""

    def __init__(
        self,
        channels: frozenset[str],
        topic: str | None,
        connector_name: str,
    ) -> None:
        """``channels``: the enabled ones (``sink``, ``log``); ``topic``: the sink's (set
        when ``sink`` is enabled); ``connector_name``: the ``topic.prefix``."""
        if "sink" in channels and not topic:
            raise ConfigException(CHANNEL_ERROR, name="notification.sink.topic.name")
        self.sink = "sink" in channels
        self.log = "log" in channels
        self.topic = topic
        self.connector_name = connector_name
        self.pending: list[Notification] = []

    @property
    def enabled(self) -> bool:
        return self.sink or self.log

    def notify(
        self,
        aggregate_type: str,
        status: str,
        data: Mapping[str, str] | None = None,
        notification_id: str | None = None,
    ) -> None:
        """Sends a notification of ``status`` now (log) or with this poll's records (sink,
        :meth:`records`); ``notification_id`` None: a random one."""
        if not self.enabled:
            return
        notification = Notification(
            notification_id or str(uuid.uuid4()),
            aggregate_type,
            status,
            {**(data or {}), CONNECTOR_NAME: self.connector_name},
            int(time.time() * 1000),
        )
        if self.log:
            log.info("[Notification Service]  %s", notification)
        if self.sink:
            self.pending.append(notification)

    def records(self, partition: dict[str, Any], offset: dict[str, Any]) -> list[SourceRecord]:
        """The sink records of the notifications made since the last call, at ``offset``
        of ``partition``."""
        if not self.pending:
            return []
        pending, self.pending = self.pending, []
        return [
            SourceRecord(
                partition,
                offset,
                self.topic or "",
                key_schema=NOTIFICATION_KEY_SCHEMA,
                key=Struct.of(NOTIFICATION_KEY_SCHEMA, {"id": n.id}),
                value_schema=NOTIFICATION_VALUE_SCHEMA,
                value=Struct.of(
                    NOTIFICATION_VALUE_SCHEMA,
                    {
                        "id": n.id,
                        "type": n.type,
                        "aggregate_type": n.aggregate_type,
                        "additional_data": n.additional_data,
                        "timestamp": n.timestamp,
                    },
                ),
            )
            for n in pending
        ]

    def discard(self) -> None:
        """Drops the notifications of a poll whose records were dropped (a failure): the
        poll is made again, and so are they."""
        self.pending.clear()
