"""Debezium's signals, and the channels a connector reads them from, as the connector
describes them (:meth:`~airflow_provider_connect.connect.source.SourceConnector.signal_channels`),
so that what sends a signal (the snapshot operators) only asks the connector where and in
what shape: a row of a table of its database (the ``source`` channel), a record of a Kafka
topic keyed by the connector's ``topic.prefix`` (``kafka``), a JSON line of a file on the
connector's machine (``file``). Pure Python: this module imports nothing of Airflow or of a
driver."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SOURCE_CHANNEL = "source"
KAFKA_CHANNEL = "kafka"
FILE_CHANNEL = "file"

EXECUTE_SNAPSHOT = "execute-snapshot"
STOP_SNAPSHOT = "stop-snapshot"
PAUSE_SNAPSHOT = "pause-snapshot"
RESUME_SNAPSHOT = "resume-snapshot"
LOG = "log"

INCREMENTAL = "incremental"
BLOCKING = "blocking"
SNAPSHOT_TYPES = (INCREMENTAL, BLOCKING)


class NoSignals(Exception):
    """The connector, as configured, reads no signals (through that channel); the message
    says what to set."""


@dataclass(frozen=True)
class SignalRequest:
    """One signal as Debezium's channels carry it: its ``id`` (an incremental snapshot's
    notifications carry it as theirs), its ``type`` (``execute-snapshot``, ...) and its
    ``data``, a JSON object (empty for the signals whose data Debezium ignores: Debezium's
    kafka and file channels fail on a signal without one)."""

    id: str
    type: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, str]:
        """The source channel's row: columns ``id``, ``type`` and ``data`` (JSON text)."""
        return {"id": self.id, "type": self.type, "data": json.dumps(dict(self.data))}

    def document(self) -> str:
        """The kafka channel's record value and the file channel's line: one JSON object
        ``{"id", "type", "data": {...}}``."""
        return json.dumps({"id": self.id, "type": self.type, "data": dict(self.data)})


def execute_snapshot(
    signal_id: str,
    data_collections: Sequence[str],
    snapshot_type: str = INCREMENTAL,
    additional_conditions: Sequence[Mapping[str, str]] = (),
) -> SignalRequest:
    """Debezium's ``execute-snapshot`` of ``data_collections`` (names or regular
    expressions), ``incremental`` or ``blocking``; ``additional_conditions`` are
    ``{"data-collection": ..., "filter": ...}`` objects."""
    if snapshot_type not in SNAPSHOT_TYPES:
        raise ValueError(f"snapshot type {snapshot_type!r} is none of {', '.join(SNAPSHOT_TYPES)}")
    data: dict[str, Any] = {"data-collections": list(data_collections), "type": snapshot_type}
    if additional_conditions:
        data["additional-conditions"] = [dict(c) for c in additional_conditions]
    return SignalRequest(signal_id, EXECUTE_SNAPSHOT, data)


def stop_snapshot(signal_id: str, data_collections: Sequence[str] = ()) -> SignalRequest:
    """Debezium's ``stop-snapshot`` of an incremental snapshot: of ``data_collections``
    only, or (none) of the whole snapshot."""
    data: dict[str, Any] = {"type": INCREMENTAL}
    if data_collections:
        data["data-collections"] = list(data_collections)
    return SignalRequest(signal_id, STOP_SNAPSHOT, data)


@dataclass(frozen=True)
class SignalDatabase:
    """The database of a signal table, as SQLAlchemy's ``URL.create`` takes it."""

    drivername: str
    host: str | None
    port: int | None
    username: str | None
    password: str | None
    database: str | None
    query: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Signal:
    """A signal for the source channel: ``row`` (columns ``id``, ``type``, ``data``) to
    insert into ``table`` (``schema.table`` or ``table``) of ``database``."""

    database: SignalDatabase
    table: str
    row: dict[str, str]


@dataclass(frozen=True)
class KafkaSignal:
    """A signal for the kafka channel: a record of ``value`` keyed by ``key`` (the
    connector's ``topic.prefix``) for partition 0 of ``topic`` on ``bootstrap_servers``."""

    bootstrap_servers: str
    topic: str
    key: str
    value: str


@dataclass(frozen=True)
class FileSignal:
    """A signal for the file channel: ``line`` to append to the file at ``path``, on the
    machine the connector's task runs on."""

    path: str
    line: str


SignalDelivery = Signal | KafkaSignal | FileSignal


@dataclass(frozen=True)
class SignalChannels:
    """The signal channels of a connector that follows Debezium's config names:
    ``enabled`` (``signal.enabled.channels``, in order), ``topic_prefix`` (the kafka
    channel's record key), ``kafka_topic`` (``signal.kafka.topic``, default
    ``<topic.prefix>-signal``), ``kafka_bootstrap_servers``
    (``signal.kafka.bootstrap.servers``), ``file`` (``signal.file``) and the source
    channel's table (``signal.data.collection``) in its ``database``."""

    enabled: Sequence[str]
    topic_prefix: str
    kafka_topic: str | None = None
    kafka_bootstrap_servers: str | None = None
    file: str = "file-signals.txt"
    table: str | None = None
    database: SignalDatabase | None = None

    def default_channel(self) -> str:
        """The channel a signal goes through when none is named: ``source`` when enabled,
        else the first enabled one."""
        if not self.enabled:
            raise NoSignals("set signal.enabled.channels in its config")
        return SOURCE_CHANNEL if SOURCE_CHANNEL in self.enabled else self.enabled[0]

    def deliver(self, request: SignalRequest, channel: str | None = None) -> SignalDelivery:
        """``request`` as ``channel`` (None: :meth:`default_channel`) carries it; NoSignals
        naming the config to set when the channel is not enabled or not configured."""
        channel = channel or self.default_channel()
        if channel not in self.enabled:
            raise NoSignals(
                f"its {channel} signal channel is not enabled: add {channel} to "
                f"signal.enabled.channels (now {','.join(self.enabled) or 'empty'})"
            )
        if channel == SOURCE_CHANNEL:
            if not self.table or self.database is None:
                raise NoSignals("set signal.data.collection in its config")
            return Signal(self.database, self.table, request.row())
        if channel == KAFKA_CHANNEL:
            if not self.kafka_bootstrap_servers:
                raise NoSignals("set signal.kafka.bootstrap.servers in its config")
            topic = self.kafka_topic or f"{self.topic_prefix}-signal"
            return KafkaSignal(
                self.kafka_bootstrap_servers, topic, self.topic_prefix, request.document()
            )
        if channel == FILE_CHANNEL:
            return FileSignal(self.file, request.document())
        raise NoSignals(f"it has no {channel} signal channel")
