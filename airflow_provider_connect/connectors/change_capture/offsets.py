"""The offsets of a change-capture task: one object per task, :class:`OffsetContext`
(Debezium's ``OffsetContext``), tracks where the task is in its database's log and builds
every offset its records carry, so their keys are written in one place and stored offsets
of earlier runs keep resuming.

An offset is the stream position of its database (the subclass's keys, first), then what
the core adds: ``snapshot`` (true on every record of an initial snapshot) with
``last_snapshot_record`` (true on its last), and ``incremental`` (the progress of a running
incremental snapshot, :attr:`.incremental.IncrementalSnapshots.state`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots

SNAPSHOT = "snapshot"
LAST_SNAPSHOT_RECORD = "last_snapshot_record"
INCREMENTAL = "incremental"


class _Ordered(Protocol):
    def __lt__(self, other: Any, /) -> bool: ...

    def __le__(self, other: Any, /) -> bool: ...


P = TypeVar("P", bound=_Ordered)


class OffsetContext(ABC, Generic[P]):
    """Where a task is in its database's log, and the offsets of its records from there.
    A position ``P`` is totally ordered as the log delivers events (PostgreSQL: a commit
    LSN and an index in its transaction). Used from the task's poll thread only."""

    def __init__(
        self,
        partition: dict[str, Any],
        start: P,
        incremental: IncrementalSnapshots[Any] | None,
    ) -> None:
        self.partition = partition
        """The source partition of every record of the task."""
        self.position: P = start
        """The position of the last event handed out (or skipped as already stored): set
        by :meth:`load` (the stored offset's), :meth:`advance` (each event),
        :meth:`catch_up` (a position the log reached without an event, as a heartbeat's or
        a new slot's), :meth:`restart_at` (a new snapshot's consistent point) and
        :meth:`restore` (after a failed poll)."""
        self.recorded: P | None = None
        """The position of the last record returned by a poll: what may be confirmed."""
        self.incremental = incremental
        """The task's incremental snapshots (None: no signal table), whose progress every
        streamed offset carries."""

    @abstractmethod
    def position_keys(self, position: P) -> dict[str, Any]:
        """The stored keys of ``position``, in their stored order (a new dict)."""

    @abstractmethod
    def position_of(self, offset: Mapping[str, Any]) -> P:
        """The position a stored (or just built) offset is at."""

    # -- moving -----------------------------------------------------------------------------
    def load(self, stored: Mapping[str, Any] | None) -> None:
        """Resumes at the ``stored`` offset, its incremental snapshot's progress with it
        (none: stays where it is, with no incremental snapshot running)."""
        if stored is not None:
            self.position = self.recorded = self.position_of(stored)
        if self.incremental is not None:
            self.incremental.load(incremental_state(stored))

    def advance(self, position: P) -> bool:
        """Moves to ``position``; False when the task is at or past it already (a replay
        after a restart: the event was delivered)."""
        if position <= self.position:
            return False
        self.position = position
        return True

    def catch_up(self, position: P) -> None:
        """Moves to ``position`` unless already past it."""
        self.position = max(self.position, position)

    def restart_at(self, position: P) -> None:
        """Moves to ``position`` (the consistent point of a new snapshot), whatever came
        before."""
        self.position = position

    def record(self, offset: Mapping[str, Any]) -> None:
        """Notes ``offset`` as that of the last record returned."""
        self.recorded = self.position_of(offset)

    def save(self) -> tuple[P, dict[str, Any] | None]:
        """What :meth:`restore` goes back to: the position and the incremental snapshot's
        progress now."""
        return self.position, None if self.incremental is None else self.incremental.state

    def restore(self, saved: tuple[P, dict[str, Any] | None]) -> None:
        """Back to ``saved`` (:meth:`save` after the last record returned), after a failed
        poll dropped its records: the stream resumes after the last record returned, and
        an incremental snapshot reads again the chunk whose rows were dropped."""
        self.position, state = saved
        if self.incremental is not None:
            self.incremental.load(state)

    # -- offsets ----------------------------------------------------------------------------
    def stream_position(self) -> dict[str, Any]:
        """The keys of the current stream position, in their stored order (a new dict)."""
        return self.position_keys(self.position)

    def snapshot_offset(self, consistent: P, last: bool) -> dict[str, Any]:
        """The offset of a record of an initial snapshot read at the log's position
        ``consistent`` (``last``: its last record)."""
        offset = self.position_keys(consistent)
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
