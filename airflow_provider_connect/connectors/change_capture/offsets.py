"""The offsets of a change-capture task: one object per task, :class:`OffsetContext`
(Debezium's ``OffsetContext``), builds every offset its records carry, so their keys are
written in one place and stored offsets of earlier runs keep resuming.

An offset is the stream position of its database (the subclass's keys, first), then what
the core adds: ``snapshot`` (true on every record of an initial snapshot) with
``last_snapshot_record`` (true on its last), and ``incremental`` (the progress of a running
incremental snapshot, :attr:`.incremental.IncrementalSnapshots.state`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots

SNAPSHOT = "snapshot"
LAST_SNAPSHOT_RECORD = "last_snapshot_record"
INCREMENTAL = "incremental"


class OffsetContext(ABC):
    """Where a task is, and the offsets of its records from there. Used from the task's
    poll thread only."""

    def __init__(self) -> None:
        self.incremental: IncrementalSnapshots[Any] | None = None
        """The task's incremental snapshots, whose progress every streamed offset carries."""

    @abstractmethod
    def stream_position(self) -> dict[str, Any]:
        """The keys of the current stream position, in their stored order (a new dict)."""

    def snapshot_offset(self, last: bool) -> dict[str, Any]:
        """The offset of a record of an initial snapshot (``last``: its last record)."""
        offset = self.stream_position()
        offset[SNAPSHOT] = True
        if last:
            offset[LAST_SNAPSHOT_RECORD] = True
        return offset

    def position_offset(self) -> dict[str, Any]:
        """The offset of the current position, with the incremental snapshot's progress."""
        return self.with_incremental(self.stream_position())

    def with_incremental(self, offset: dict[str, Any]) -> dict[str, Any]:
        """``offset`` (a streamed event's: the position, then the database's details of the
        event) with the incremental snapshot's progress, when one runs."""
        if self.incremental is not None and (state := self.incremental.state) is not None:
            offset[INCREMENTAL] = state
        return offset


def snapshot_completed(stored: Mapping[str, Any] | None) -> bool:
    """Whether a stored offset says the initial snapshot is done: there is one, and it is
    not of a snapshot whose last record was not stored."""
    return stored is not None and not (
        stored.get(SNAPSHOT) and not stored.get(LAST_SNAPSHOT_RECORD)
    )


def incremental_state(stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The incremental snapshot's progress a stored offset carries (None: none running)."""
    return None if stored is None else stored.get(INCREMENTAL)
