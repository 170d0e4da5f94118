"""The binlog's side of the change-capture core's coordinator
(:class:`~airflow_provider_connect.connectors.change_capture.coordinator.ChangeEventSourceCoordinator`;
Debezium's ``BinlogChangeEventSourceFactory``): the server checked at each start, a snapshot
in a consistent snapshot transaction, or the stream from the loaded position; whether the
server still holds that position (``snapshot.mode=when_needed``)."""

from __future__ import annotations

import logging

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.mysql.context import TaskContext
from airflow_provider_connect.connectors.mysql.snapshot_source import (
    BinlogSnapshotChangeEventSource,
)
from airflow_provider_connect.connectors.mysql.streaming_source import (
    BinlogStreamingChangeEventSource,
)

log = logging.getLogger(__name__)

GONE = (
    "The connector is trying to read the binlog starting at {where}, but this is no longer "
    "available on the server. Reconfigure the connector to use a snapshot mode when needed."
)


class BinlogChangeEventSources:
    """A :class:`~airflow_provider_connect.connectors.change_capture.coordinator.ChangeEventSources`
    of one task. Used from its poll thread."""

    def __init__(self, context: TaskContext, streaming: BinlogStreamingChangeEventSource) -> None:
        self.context = context
        self.streaming = streaming

    def prepare(self) -> None:
        """Opens the ordinary connection, which checks the server's settings."""
        self.context.connections.database()

    def position_lost(self) -> bool:
        """Whether the server no longer holds the loaded position's binlog file (logged)."""
        lost = not self._available()
        if lost:
            log.warning(
                "%s: the binlog no longer holds the stored position: snapshot",
                self.context.config.connector,
            )
        return lost

    def _available(self) -> bool:
        position = self.context.offsets.position
        return (
            not position.file or position.file in self.context.connections.database().binlog_files()
        )

    def snapshot(self, then_stream: bool) -> BinlogSnapshotChangeEventSource:
        """A snapshot read in a consistent snapshot transaction, at its binlog position."""
        return BinlogSnapshotChangeEventSource(self.context)

    def stream(self, resumed: bool) -> None:
        """The stream from the loaded position (the server's current one when none was
        stored). A stored position the server no longer holds fails the task, as Debezium
        does, unless ``snapshot.mode`` is ``when_needed`` (which took a snapshot instead)."""
        offsets = self.context.offsets
        if not resumed:
            current = self.context.connections.database().position()
            offsets.restart_at(offsets.at(current.file, current.pos, current.gtids))
        elif not self._available():
            position = offsets.position
            raise ConnectException(GONE.format(where=f"{position.file}:{position.pos}"))
        self.streaming.resume()

    def blocking_snapshot(self, tables: list[str]) -> BinlogSnapshotChangeEventSource:
        """A blocking snapshot of ``tables``, in a consistent snapshot of its own, its
        records at the stream's position."""
        return BinlogSnapshotChangeEventSource.blocking(self.context, tables)

    def close(self) -> None:
        self.context.connections.close()
