"""What a change-capture task runs, and in what order, whatever the database (Debezium's
``ChangeEventSourceCoordinator``): at the first poll it loads the stored offset, decides
from ``snapshot.mode`` whether to snapshot, and starts the database's snapshot source or
its streaming source; a snapshot runs to its end before the stream starts at the
snapshot's consistent point (:mod:`.snapshot`), or, under ``initial_only``, the task then
idles.

A failure of the database's connections while streaming (its retriable error) drops that
poll's records and goes back to where the last returned record left the task: the position,
the incremental snapshot's progress (:meth:`.offsets.OffsetContext.restore`) and the
streaming source's own state; every connection closes, and the next poll, after a backoff
(0.5 s doubling to 10 s), resumes the stream after the last returned record, so nothing is
lost and nothing returned is sent again. A failure while a snapshot is read fails the task
(the next start takes the snapshot again).

Signals (:mod:`.signal_processor`) are read at each poll; a blocking snapshot they ask for
runs between two polls: the stream's connections close, the tables are read in a snapshot
of their own (its records at the stream's position), and the stream then resumes from the
last returned record. A change committed while it ran comes after the snapshot's rows, so
the topics end as the tables are; a restart during it, or a failure of its connection,
streams on without it (``ABORTED``). Each poll's notifications (:mod:`.notifications`)
follow its records."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture import notifications as n
from airflow_provider_connect.connectors.change_capture.notifications import Notifier
from airflow_provider_connect.connectors.change_capture.offsets import (
    OffsetContext,
    snapshot_completed,
)
from airflow_provider_connect.connectors.change_capture.signal_processor import SignalProcessor
from airflow_provider_connect.connectors.change_capture.snapshot import snapshot_needed

log = logging.getLogger(__name__)

FIRST_RETRY_S = 0.5
MAX_RETRY_S = 10.0
"""Backoff between attempts to reach the database again after a failure."""


class SnapshotSource(Protocol):
    """An initial snapshot (Debezium's ``SnapshotChangeEventSource``), read batch by batch."""

    @property
    def done(self) -> bool:
        """The batch with the snapshot's last row was returned."""

    def poll(self) -> list[SourceRecord] | None:
        """The snapshot's next batch."""


class StreamingSource(Protocol):
    """The database's stream of changes (Debezium's ``StreamingChangeEventSource``), from
    the offset context's position."""

    def poll(self) -> list[SourceRecord] | None:
        """The events the stream delivers now."""

    def save(self) -> Any:
        """What :meth:`restore` goes back to: the source's own state now (taken before each
        poll, after the last returned record)."""

    def restore(self, saved: Any) -> None:
        """Back to ``saved`` after a failed poll; the stream is then started again from the
        offset context's position."""


class ChangeEventSources(Protocol):
    """The database's side of the coordinator (Debezium's ``ChangeEventSourceFactory`` and
    the database's handling of its log: PostgreSQL's publication and slot)."""

    @property
    def streaming(self) -> StreamingSource: ...

    def prepare(self) -> None:
        """Called first at each start, before the stored offset is loaded."""

    def position_lost(self) -> bool:
        """Whether the log no longer holds the loaded position (asked only under
        ``when_needed``)."""

    def snapshot(self, then_stream: bool) -> SnapshotSource:
        """A new initial snapshot; ``then_stream``: read at a consistent point of the log the
        stream then starts from (else, ``initial_only``, on its own)."""

    def stream(self, resumed: bool) -> None:
        """Starts the stream from the loaded position (``resumed``: a stored offset was
        loaded)."""

    def blocking_snapshot(self, tables: list[str]) -> SnapshotSource:
        """A snapshot of ``tables`` (captured ``<container>.<table>`` names) of its own,
        its records at the stream's current position; called between polls, with every
        connection closed."""

    def close(self) -> None:
        """Closes every connection, whatever each does; the sources open them again when
        next needed."""


class ChangeEventSourceCoordinator:
    """The snapshot, then the stream, of one task, run from its ``poll``. Used from the
    task's poll thread, except that ``stopping`` is set from any thread."""

    def __init__(
        self,
        sources: ChangeEventSources,
        offsets: OffsetContext[Any],
        snapshot_mode: str,
        stored: Callable[[], Mapping[str, Any] | None],
        retriable: type[BaseException],
        poll_interval_s: float,
        stopping: threading.Event,
        signals: SignalProcessor,
        notifier: Notifier,
    ) -> None:
        """``stored`` reads the stored offset of the task's partition; ``retriable`` is the
        error of the database's connections that the task recovers from by reconnecting;
        ``snapshot_mode`` is lower-case."""
        self.signals = signals
        self.notifier = notifier
        self.sources = sources
        self.offsets = offsets
        self.snapshot_mode = snapshot_mode
        self.stored = stored
        self.retriable = retriable
        self.poll_interval_s = poll_interval_s
        self.stopping = stopping
        self.snapshot: SnapshotSource | None = None
        """The snapshot being read (None: none, or done)."""
        self.then_stream = snapshot_mode != "initial_only"
        """The stream follows the snapshot (every mode but ``initial_only``)."""
        self.idle = False
        """Nothing is left to do: ``initial_only`` after its snapshot."""
        self.opened = False
        self.blocking = False
        """The snapshot being read is a blocking one: the stream goes on after it."""
        self.retry_s = FIRST_RETRY_S

    def poll(self) -> list[SourceRecord] | None:
        """The task's next records (None while there are none or once stopping); raises
        :class:`RetriableException` after a connection failure while streaming."""
        if self.stopping.is_set():
            return None
        saved = None
        try:
            if not self.opened:
                self._open()
            if self.idle:
                self.stopping.wait(self.poll_interval_s)
                return None
            self.signals.poll()  # before the save: what a signal did outlives a failure below
            saved = self.offsets.save(), self.sources.streaming.save()
            records = self._next()
        except self.retriable as e:
            self.notifier.discard()
            if self.stopping.is_set():
                return None
            if self.snapshot is not None and not self.blocking:
                self.notifier.notify(n.INITIAL_SNAPSHOT, n.ABORTED)
                raise ConnectException(f"The snapshot's connection failed: {e}") from e
            if self.snapshot is not None:
                self._abort_blocking(e)
            if saved is not None:  # this poll's records are dropped
                self.offsets.restore(saved[0])
                self.sources.streaming.restore(saved[1])
            self.sources.close()
            self.stopping.wait(self.retry_s)
            self.retry_s = min(self.retry_s * 2, MAX_RETRY_S)
            raise RetriableException(f"The connection to the database failed: {e}") from e
        self.retry_s = FIRST_RETRY_S
        records = self._with_notifications(records)
        if records:  # what commit may confirm
            self.offsets.record(records[-1].source_offset or {})
        return records

    def _with_notifications(self, records: list[SourceRecord] | None) -> list[SourceRecord] | None:
        """``records`` followed by this poll's notifications, at the offset of the last
        of them (or of the current position); ``records`` themselves when there are none."""
        if not self.notifier.pending:
            return records
        offset = records[-1].source_offset if records else None
        notes = self.notifier.records(
            self.offsets.partition, dict(offset) if offset else self.offsets.position_offset()
        )
        return [*(records or ()), *notes] or None

    def close(self) -> None:
        """Closes the signal channels; called once, when the task has stopped."""
        self.signals.close()

    def _open(self) -> None:
        """Starts from the stored offset: a snapshot, the stream, or nothing
        (``initial_only`` with its snapshot done). After a failure every connection is
        closed and the next poll opens again, from the stored offset."""
        try:
            stored = self.stored()
            self.sources.prepare()
            self.offsets.load(stored)
            snapshot = snapshot_needed(
                self.snapshot_mode, snapshot_completed(stored), self.sources.position_lost
            )
            if snapshot:
                self.snapshot = self.sources.snapshot(self.then_stream)
            else:
                self.notifier.notify(n.INITIAL_SNAPSHOT, n.SKIPPED)
                if self.then_stream:
                    self.sources.stream(resumed=stored is not None)
                else:
                    self.idle = True
        except BaseException:
            self.sources.close()
            raise
        self.opened = True

    def _abort_blocking(self, cause: BaseException) -> None:
        """Ends the blocking snapshot whose connection failed: the stream resumes without
        it, and its ``ABORTED`` notification goes with the next poll's records."""
        log.warning("The blocking snapshot is aborted, its connection failed: %s", cause)
        self.snapshot, self.blocking = None, False
        self.notifier.notify(n.INITIAL_SNAPSHOT, n.ABORTED)

    def _next(self) -> list[SourceRecord] | None:
        """The snapshot's next batch while it runs, else the stream's events."""
        if self.snapshot is None and (blocking := self.signals.take_blocking()) is not None:
            self.sources.close()
            try:
                self.snapshot = self.sources.blocking_snapshot(blocking.tables)
            except BaseException:
                self.signals.blocking = blocking  # asked for again at the next poll
                raise
            self.blocking = True
        if self.snapshot is not None:
            records = self.snapshot.poll()
            if self.snapshot.done:
                self.snapshot = None
                self.idle = not self.then_stream and not self.blocking
                self.blocking = False
            return records
        return self.sources.streaming.poll()
