"""Heartbeats (``heartbeat.interval.ms``), as Debezium's ``HeartbeatImpl`` writes them: a
record keyed by the server's logical name (``topic.prefix``) on the heartbeat topic
(:func:`~.topics.heartbeat_topic`), whose offset lets the connector confirm its position
while no captured change arrives."""

from __future__ import annotations

import time
from typing import Any

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.source import SourceRecord

# SchemaFactory.heartbeatKeySchema/heartbeatValueSchema
HEARTBEAT_KEY_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.ServerNameKey")
    .version(1)
    .field("serverName", Schema.STRING_SCHEMA)
    .build()
)

HEARTBEAT_VALUE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.Heartbeat")
    .version(1)
    .field("ts_ms", Schema.INT64_SCHEMA)
    .build()
)


def heartbeat(server_name: str, ts_ms: int) -> tuple[Struct, Struct]:
    """Key and value of a heartbeat record: ``{serverName}`` (the ``topic.prefix``) and
    ``{ts_ms}`` (when it was sent)."""
    return (
        Struct.of(HEARTBEAT_KEY_SCHEMA, {"serverName": server_name}),
        Struct.of(HEARTBEAT_VALUE_SCHEMA, {"ts_ms": ts_ms}),
    )


class Heartbeat:
    """The heartbeats of one task: due every ``interval_s`` seconds (never when 0), the
    first one ``interval_s`` after it was made."""

    def __init__(
        self, interval_s: float, server_name: str, topic: str, partition: dict[str, Any]
    ) -> None:
        self.interval_s = interval_s
        self.server_name = server_name
        self.topic = topic
        self.partition = partition
        self._next = time.monotonic() + interval_s

    def due(self) -> bool:
        """Whether a heartbeat is due; true once per interval: the next one is then
        scheduled an interval from now."""
        if not self.interval_s or time.monotonic() < self._next:
            return False
        self._next = time.monotonic() + self.interval_s
        return True

    def record(self, offset: dict[str, Any]) -> SourceRecord:
        """A heartbeat record at ``offset``, sent now."""
        key, value = heartbeat(self.server_name, int(time.time() * 1000))
        return SourceRecord(
            self.partition,
            offset,
            self.topic,
            key_schema=HEARTBEAT_KEY_SCHEMA,
            key=key,
            value_schema=HEARTBEAT_VALUE_SCHEMA,
            value=value,
        )
