"""The initial snapshot and its handover to the stream, whatever the database (Debezium's
``Snapshotter`` and ``SnapshotChangeEventSource``).

No gap, no double: the database's connector reads the tables at one consistent point of
its log (PostgreSQL: the slot's exported snapshot) and streams from that point on, so a row
committed before it is read and a change committed after it is streamed, never both and
never neither. Every snapshot record's offset is that point with ``snapshot`` set, the last
one with ``last_snapshot_record`` (:meth:`.offsets.OffsetContext.snapshot_offset`): a
snapshot whose last record was not stored is taken again from the start at the next start
(:func:`.offsets.snapshot_completed`), as Debezium does, so its ``r`` events may then come
twice.

The rows of a snapshot (an initial or a blocking one) are handed out table after table with
Debezium's ``source.snapshot`` markers (:class:`SnapshotEvents`), its progress told as
Debezium's ``Initial Snapshot`` notifications (:class:`SnapshotNotifications`); with
``snapshot.max.threads`` above 1 the tables are read several at once, in bounded memory
(:class:`ParallelRows`)."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    SNAPSHOT_FIRST,
    SNAPSHOT_FIRST_IN_DATA_COLLECTION,
    SNAPSHOT_LAST,
    SNAPSHOT_LAST_IN_DATA_COLLECTION,
    SNAPSHOT_TRUE,
)
from airflow_provider_connect.connectors.change_capture.notifications import (
    COMPLETED,
    CURRENT_COLLECTION_IN_PROGRESS,
    DATA_COLLECTIONS,
    IN_PROGRESS,
    INITIAL_SNAPSHOT,
    SCANNED_COLLECTION,
    STARTED,
    STATUS,
    SUCCEEDED,
    TABLE_SCAN_COMPLETED,
    TOTAL_ROWS_SCANNED,
    Notifier,
)

SNAPSHOT_MODES = ("initial", "always", "initial_only", "no_data", "never", "when_needed")
"""Debezium's snapshot modes without a custom implementation; ``never`` is its deprecated
name of ``no_data``."""

T = TypeVar("T")
R = TypeVar("R")
T_contra = TypeVar("T_contra", contravariant=True)


def snapshot_needed(mode: str, completed: bool, position_lost: Callable[[], bool]) -> bool:
    """Whether to take an initial snapshot at this start under ``snapshot.mode`` ``mode``:
    ``always``; ``initial``, ``initial_only`` and ``when_needed`` while no completed one is
    stored (``completed``, :func:`.offsets.snapshot_completed`); ``when_needed`` also when
    the log no longer holds the stored position (``position_lost()``, asked only then).
    ``mode`` is lower-case, as the connector's config holds it."""
    if mode == "always":
        return True
    if mode in ("initial", "initial_only", "when_needed") and not completed:
        return True
    return mode == "when_needed" and position_lost()


class SnapshotProgress(Protocol[T_contra]):
    """What a snapshot tells as it goes (Debezium's ``InitialSnapshotNotificationService``:
    :class:`SnapshotNotifications`). Called from the thread handing out the records."""

    def snapshot_started(self) -> None:
        """Before the snapshot's first batch."""

    def table_started(self, table: T_contra) -> None:
        """Before the first of ``table``'s rows is handed out (an empty table's too)."""

    def table_scanned(self, table: T_contra, rows: int) -> None:
        """``table``'s ``rows`` rows were read; called in the batch with its last row (of an
        empty table: with the next row handed out, or the snapshot's last batch)."""

    def snapshot_completed(self) -> None:
        """With the snapshot's last batch."""


def snapshot_markers(
    tables: Iterable[tuple[T, Iterable[R]]], progress: SnapshotProgress[T] | None = None
) -> Iterator[tuple[T, R, str]]:
    """``(table, row, marker)`` of every row of ``tables`` (each table with its rows, read
    lazily: a table's first row is asked for when the last row of the table before it is
    handed out), the marker as Debezium's ``source.snapshot`` says where the row is:
    ``first``, ``last``, ``first_in_data_collection``, ``last_in_data_collection``, else
    ``true``. ``progress`` hears of each table as its rows are reached and scanned, in table
    order, each table scanned before its last row is handed out."""
    remaining = iter(tables)
    first = True
    found = _next_with_rows(remaining, progress)
    while found is not None:
        table, rows, row = found
        marker = SNAPSHOT_FIRST if first else SNAPSHOT_FIRST_IN_DATA_COLLECTION
        count = 1
        for following in rows:
            yield table, row, marker
            marker, row = SNAPSHOT_TRUE, following
            count += 1
        if progress is not None:
            progress.table_scanned(table, count)
        found = _next_with_rows(remaining, progress)
        if found is None:
            marker = SNAPSHOT_LAST
        elif not (first and count == 1):
            marker = SNAPSHOT_LAST_IN_DATA_COLLECTION
        first = False
        yield table, row, marker


def _next_with_rows(
    tables: Iterator[tuple[T, Iterable[R]]], progress: SnapshotProgress[T] | None
) -> tuple[T, Iterator[R], R] | None:
    """The next of ``tables`` that has a row, with its rows after the first and its first
    (None: none has); the empty ones before it are reported scanned."""
    for table, table_rows in tables:
        if progress is not None:
            progress.table_started(table)
        rows = iter(table_rows)
        for row in rows:
            return table, rows, row
        if progress is not None:
            progress.table_scanned(table, 0)
    return None


class SnapshotEvents(Generic[T, R]):
    """The rows of an initial or blocking snapshot, handed out in batches of records."""

    def __init__(
        self,
        tables: Iterable[tuple[T, Iterable[R]]],
        progress: SnapshotProgress[T] | None = None,
    ) -> None:
        """``progress`` hears of the snapshot's start, tables and end (:func:`snapshot_markers`)."""
        self._events = snapshot_markers(tables, progress)
        self._progress = progress
        self._started = False
        self.done = False
        """The batch holding the last row (or the first batch, when there is none) was
        handed out."""

    def next_batch(
        self, max_batch: int, record: Callable[[T, R, str, bool], SourceRecord]
    ) -> list[SourceRecord]:
        """The records of the next rows, up to ``max_batch``, each made by
        ``record(table, row, marker, last)``."""
        if not self._started and self._progress is not None:
            self._progress.snapshot_started()
        self._started = True
        records = []
        last = True
        for table, row, marker in self._events:
            last = marker == SNAPSHOT_LAST
            records.append(record(table, row, marker, last))
            if last or len(records) >= max_batch:
                break
        self.done = last
        if last and self._progress is not None:
            self._progress.snapshot_completed()
        return records


class SnapshotNotifications(Generic[T]):
    """A :class:`SnapshotProgress` sending Debezium's ``Initial Snapshot`` notifications
    (``InitialSnapshotNotificationService``, which its blocking snapshots send too):
    ``STARTED``, ``IN_PROGRESS`` and ``TABLE_SCAN_COMPLETED`` of each table, ``COMPLETED``.
    ``name`` gives a table's data collection name; ``tables`` are all of the snapshot's."""

    def __init__(self, notifier: Notifier, name: Callable[[T], str], tables: Sequence[T]) -> None:
        self.notifier = notifier
        self.name = name
        self.collections = ",".join(name(t) for t in tables)

    def snapshot_started(self) -> None:
        self.notifier.notify(INITIAL_SNAPSHOT, STARTED)

    def table_started(self, table: T) -> None:
        self.notifier.notify(
            INITIAL_SNAPSHOT,
            IN_PROGRESS,
            {CURRENT_COLLECTION_IN_PROGRESS: self.name(table), DATA_COLLECTIONS: self.collections},
        )

    def table_scanned(self, table: T, rows: int) -> None:
        self.notifier.notify(
            INITIAL_SNAPSHOT,
            TABLE_SCAN_COMPLETED,
            {
                SCANNED_COLLECTION: self.name(table),
                DATA_COLLECTIONS: self.collections,
                TOTAL_ROWS_SCANNED: str(rows),
                STATUS: SUCCEEDED,
            },
        )

    def snapshot_completed(self) -> None:
        self.notifier.notify(INITIAL_SNAPSHOT, COMPLETED)


class _End:
    """The end of a table's batches in its queue."""


_END = _End()


class ParallelRows(Generic[T, R]):
    """The rows of ``tables`` read on ``threads`` threads at once, each table by one thread,
    handed out table after table in their order (:meth:`tables`, for
    :func:`snapshot_markers`), so each table's rows stay together.

    ``read(thread, table)`` gives a table's rows in batches on the reading thread (numbered
    from 0: its own connection). Bounded memory: at most ``threads`` tables are being read or
    waiting to be handed out at a time, each holding at most ``buffered`` batches. A reader's
    failure is raised where the rows are handed out (the first failure, with its own
    traceback) and stops the other readers. :meth:`close` stops the readers (``cancel``
    interrupts what they wait for) and waits for them; after it, no ``read`` runs."""

    def __init__(
        self,
        tables: Sequence[T],
        read: Callable[[int, T], Generator[list[R], None, None]],
        threads: int,
        name: str,
        cancel: Callable[[], None],
        buffered: int = 4,
    ) -> None:
        self._tables = list(tables)
        self._read = read
        self._cancel = cancel
        self._queues: list[queue.Queue[list[R] | _End]] = [
            queue.Queue(buffered) for _ in self._tables
        ]
        self._slots = threading.Semaphore(threads)
        """Tables being read or waiting to be handed out, at most ``threads``."""
        self._lock = threading.Lock()
        self._next = 0
        self._stopping = threading.Event()
        self._failure: BaseException | None = None
        self._threads = [
            threading.Thread(target=self._run, args=(i,), name=f"{name}-{i}", daemon=True)
            for i in range(max(1, min(threads, len(self._tables))))
        ]
        for thread in self._threads:
            thread.start()

    def tables(self) -> Iterator[tuple[T, Iterator[R]]]:
        """Each table with its rows, in order; a reader's failure is raised from them."""
        for index, table in enumerate(self._tables):
            yield table, self._rows(index)

    def _rows(self, index: int) -> Iterator[R]:
        batches = self._queues[index]
        while True:
            try:
                batch = batches.get(timeout=_WAIT_S)
            except queue.Empty:
                batch = None
            if self._failure is not None:
                raise self._failure
            if batch is None:
                if self._stopping.is_set():
                    raise ConnectException("The snapshot was closed while its rows were read")
                continue
            if isinstance(batch, _End):
                self._slots.release()
                return
            yield from batch

    def _run(self, thread: int) -> None:
        try:
            while self._acquire():
                with self._lock:
                    index, self._next = self._next, self._next + 1
                if index >= len(self._tables):
                    return
                batches, rows = self._queues[index], self._read(thread, self._tables[index])
                try:
                    if not all(self._put(batches, batch) for batch in rows):
                        return
                finally:
                    # closed here and now, on its own thread; on a broken connection, the
                    # read's error is the one to tell, not the closing's
                    with contextlib.suppress(Exception):
                        rows.close()
                if not self._put(batches, _END):
                    return
        except BaseException as e:
            with self._lock:
                if self._failure is None and not self._stopping.is_set():
                    self._failure = e
            self._stopping.set()

    def _acquire(self) -> bool:
        while not self._stopping.is_set():
            if self._slots.acquire(timeout=_WAIT_S):
                return True
        return False

    def _put(self, batches: queue.Queue[list[R] | _End], item: list[R] | _End) -> bool:
        while not self._stopping.is_set():
            try:
                batches.put(item, timeout=_WAIT_S)
                return True
            except queue.Full:
                continue
        return False

    def close(self, timeout_s: float = 30.0) -> None:
        """Stops the readers and waits for them (up to ``timeout_s`` in all)."""
        self._stopping.set()
        if any(t.is_alive() for t in self._threads):
            self._cancel()
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))


_WAIT_S = 0.1
"""How often a waiting reader or consumer looks whether the snapshot is stopping or failed."""
