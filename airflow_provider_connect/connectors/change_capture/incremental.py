"""Incremental snapshots, as Debezium runs them (DBLog's watermarks), whatever the
database: an ``execute-snapshot`` signal (:mod:`.signals`) asks for tables to be read again
while the stream goes on, without stopping or recreating the connector.

A table is read in chunks of ``incremental.snapshot.chunk.size`` rows in primary-key order,
up to the largest key it had when its snapshot began (later rows come through the stream).
Each chunk is read between two rows the task writes to the signal table, a window open and
a window close. When the stream reaches the window's open row, every change to a row of the
chunk that the stream carries before the close row supersedes the chunk's copy of that
row, which is dropped; at the close row, what is left of the chunk is emitted as ``r``
events (``source.snapshot`` ``incremental``). A row is so never emitted older than a change
the stream already delivered.

The progress (tables left, the last key read, the largest key, the rows read of the table,
whether it is paused, the id of the signal that asked for it) travels in the offsets of
the records, so a restart resumes with the chunk after the last one stored. Window rows of
an earlier run are ignored. Tables without a primary key are not snapshotted (logged).

Notifications (:mod:`.notifications`, aggregate ``Incremental Snapshot``, their id the
asking signal's) tell STARTED, PAUSED, RESUMED, IN_PROGRESS after each chunk emitted,
TABLE_SCAN_COMPLETED after each table, COMPLETED after the last one and ABORTED when a
``stop-snapshot`` ends it.

The database's side, reading and writing rows, is a :class:`ChunkReader`.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from airflow_provider_connect.connectors.change_capture import notifications as n
from airflow_provider_connect.connectors.change_capture.notifications import Notifier
from airflow_provider_connect.connectors.change_capture.signals import WINDOW_CLOSE, WINDOW_OPEN

log = logging.getLogger(__name__)


class Column(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def key(self) -> bool: ...


class Table(Protocol):
    """A table as its chunks are read: its columns, in the rows' order of values."""

    @property
    def columns(self) -> Sequence[Column]: ...


T = TypeVar("T", bound=Table)


class ChunkReader(Protocol[T]):
    """The database's side of incremental snapshots, on a connection of its own."""

    def table(self, name: str) -> T | None:
        """The captured table ``name`` (``<schema>.<table>``) as it is now, or None."""

    def max_key(self, table: T, keys: list[int]) -> list[Any] | None:
        """The largest key of ``table`` (the columns ``keys``), None when it is empty."""

    def chunk(
        self, table: T, keys: list[int], max_key: list[Any], last_key: list[Any] | None, size: int
    ) -> list[tuple[Any, ...]]:
        """Up to ``size`` rows of ``table`` in key order, after ``last_key`` (when set) and
        up to ``max_key``, each with every column, its values as the stream carries them:
        the key columns' values of a row compare equal to the keys the stream's changes of
        that row are given to :meth:`IncrementalSnapshots.on_change` with."""

    def signal(self, signal_id: str, kind: str) -> None:
        """Writes a window row (``id``, ``type``, a null ``data``) to the signal table."""


@dataclass
class _Window(Generic[T]):
    """A chunk read between its open and close rows, waiting for the stream to reach them."""

    id: str
    table: str
    info: T
    """The table's columns as the chunk was read (the rows' order of values)."""
    rows: dict[tuple[Any, ...], tuple[Any, ...]]
    """The chunk's rows by key (the key columns' values, as :meth:`ChunkReader.chunk`
    returns them), in key order."""
    last_key: list[Any] | None
    opened: bool = False


@dataclass
class Progress:
    """What is left to read, as the offsets carry it."""

    tables: list[str] = field(default_factory=list)
    last_key: list[Any] | None = None
    max_key: list[Any] | None = None
    rows: int = 0
    """Rows of the first table emitted so far."""
    paused: bool = False
    id: str | None = None
    """The id of the signal that asked for the snapshot (its notifications')."""

    def state(self) -> dict[str, Any] | None:
        if not self.tables:
            return None
        state: dict[str, Any] = {
            "tables": list(self.tables),
            "last_key": self.last_key,
            "max_key": self.max_key,
        }
        if self.rows:
            state["rows"] = self.rows
        if self.paused:
            state["paused"] = True
        if self.id is not None:
            state["id"] = self.id
        return state

    @classmethod
    def of(cls, state: dict[str, Any] | None) -> Progress:
        if not state:
            return cls()
        return cls(
            list(state["tables"]),
            state.get("last_key"),
            state.get("max_key"),
            int(state.get("rows") or 0),
            bool(state.get("paused")),
            state.get("id"),
        )


class IncrementalSnapshots(Generic[T]):
    """The incremental snapshots of one task. Called from the task's poll thread only."""

    def __init__(
        self,
        reader: ChunkReader[T],
        chunk_size: int,
        notifier: Notifier,
        state: dict[str, Any] | None = None,
    ) -> None:
        self.reader = reader
        self.chunk_size = chunk_size
        self.notifier = notifier
        self.progress = Progress.of(state)
        self.window: _Window[T] | None = None

    def load(self, state: dict[str, Any] | None) -> None:
        """Resumes from the progress ``state`` (as :attr:`state` gave it; None: no snapshot
        runs). A window waiting for the stream is dropped: its rows are read again in a
        window of their own, and its window rows, when the stream reaches them, are
        ignored."""
        self.progress = Progress.of(state)
        self.window = None

    @property
    def state(self) -> dict[str, Any] | None:
        """The progress to store with the next records (None when no snapshot runs)."""
        return self.progress.state()

    # -- signals --------------------------------------------------------------------------
    def request(self, wanted: list[str], tables: list[str], signal_id: str) -> None:
        """An ``execute-snapshot`` signal: queues the tables it names (names or regular
        expressions of ``schema.table``, among ``tables``, the captured ones). As in
        Debezium, the snapshot's notifications carry the latest request's id from then on
        (an earlier request still running hears no more of it)."""
        progress = self.progress
        progress.tables.extend(t for t in named(tables, wanted) if t not in progress.tables)
        log.info("Incremental snapshot of %s", ", ".join(progress.tables) or "nothing")
        if progress.tables:
            progress.id = signal_id
            self._notify(n.STARTED, {n.DATA_COLLECTIONS: ",".join(progress.tables)})

    def stop(self, wanted: list[str]) -> None:
        """A ``stop-snapshot`` signal: drops the tables named (names or regular
        expressions; all when none), the one being read included."""
        progress = self.progress
        stopped = named(progress.tables, wanted) if wanted else list(progress.tables)
        if not stopped:
            return
        if progress.tables[0] in stopped:
            self.window = None
            progress.last_key = progress.max_key = None
            progress.rows = 0
        progress.tables = [t for t in progress.tables if t not in stopped]
        data = {n.DATA_COLLECTIONS: ",".join(stopped)} if wanted else {}
        self._notify(n.ABORTED, data)
        if not progress.tables:
            progress.paused, progress.id = False, None

    def pause(self) -> None:
        """A ``pause-snapshot`` signal: no chunk is read until :meth:`resume`."""
        if self.progress.tables and not self.progress.paused:
            self.progress.paused = True
            self._notify(n.PAUSED, {n.DATA_COLLECTIONS: ",".join(self.progress.tables)})

    def resume(self) -> None:
        """A ``resume-snapshot`` signal."""
        if self.progress.paused:
            self.progress.paused = False
            self._notify(n.RESUMED, {n.DATA_COLLECTIONS: ",".join(self.progress.tables)})

    def on_window(self, signal_id: str, kind: str) -> list[tuple[T, tuple[Any, ...]]]:
        """A window row: opens the window, or closes it and returns ``(table, row)`` of the
        chunk rows left to emit (the table as the chunk was read)."""
        window = self.window
        if window is None or not signal_id.startswith(window.id):
            return []  # an earlier run's window
        if kind == WINDOW_OPEN:
            window.opened = True
            return []
        self.window = None
        progress = self.progress
        progress.last_key = window.last_key
        progress.rows += len(window.rows)
        self._notify(
            n.IN_PROGRESS,
            {
                n.DATA_COLLECTIONS: ",".join(progress.tables),
                n.CURRENT_COLLECTION_IN_PROGRESS: window.table,
                n.MAXIMUM_KEY: _key_text(progress.max_key),
                n.LAST_PROCESSED_KEY: _key_text(window.last_key),
            },
        )
        if window.last_key is None:  # the table is done
            self._table_done(n.SUCCEEDED)
        return [(window.info, row) for row in window.rows.values()]

    def on_change(self, table: str, key: tuple[Any, ...] | None) -> None:
        """A streamed change of ``table``'s row ``key`` (its key columns' values, comparing
        equal to those of the same row in a chunk, :meth:`ChunkReader.chunk`): it
        supersedes the chunk's copy of that row while the window is open."""
        window = self.window
        if window is not None and window.opened and window.table == table and key is not None:
            window.rows.pop(key, None)

    def _table_done(self, status: str) -> None:
        """The first table is done (``status``: Debezium's table scan status)."""
        progress = self.progress
        table = progress.tables.pop(0)
        self._notify(
            n.TABLE_SCAN_COMPLETED,
            {
                n.DATA_COLLECTIONS: ",".join([table, *progress.tables]),
                n.SCANNED_COLLECTION: table,
                n.TOTAL_ROWS_SCANNED: str(progress.rows),
                n.STATUS: status,
            },
        )
        progress.last_key = progress.max_key = None
        progress.rows = 0
        if not progress.tables:
            self._notify(n.COMPLETED, {})
            progress.paused, progress.id = False, None

    def _notify(self, status: str, data: dict[str, str]) -> None:
        self.notifier.notify(n.INCREMENTAL_SNAPSHOT, status, data, self.progress.id)

    # -- chunks ---------------------------------------------------------------------------
    def next_chunk(self) -> None:
        """Reads the next chunk between a window's open and close rows, when a snapshot is
        asked for, not paused, and no window is waiting for the stream."""
        while self.window is None and self.progress.tables and not self.progress.paused:
            table = self.progress.tables[0]
            info = self.reader.table(table)
            keys = [i for i, c in enumerate(info.columns) if c.key] if info else []
            if info is None or not keys:
                log.warning(
                    "%s is not snapshotted: no such captured table with a primary key", table
                )
                self._table_done("UNKNOWN_SCHEMA" if info is None else "NO_PRIMARY_KEY")
                continue
            self._read_chunk(table, info, keys)

    def _read_chunk(self, table: str, info: T, keys: list[int]) -> None:
        progress = self.progress
        if progress.max_key is None:
            top = self.reader.max_key(info, keys)
            if top is None:
                self._table_done("EMPTY")
                return
            progress.max_key = top
        window_id = f"{uuid.uuid4()}"
        self.reader.signal(f"{window_id}-open", WINDOW_OPEN)
        rows = self.reader.chunk(info, keys, progress.max_key, progress.last_key, self.chunk_size)
        self.reader.signal(f"{window_id}-close", WINDOW_CLOSE)
        chunk = {tuple(row[i] for i in keys): tuple(row) for row in rows}
        last = list(next(reversed(chunk))) if len(rows) == self.chunk_size else None
        self.window = _Window(window_id, table, info, chunk, last)


def named(tables: Iterable[str], patterns: list[str]) -> list[str]:
    """Those of ``tables`` one of ``patterns`` names (regular expressions, matched whole),
    as a signal's ``data-collections`` name tables."""
    return [t for t in tables if any(re.fullmatch(p, t) for p in patterns)]


def _key_text(key: list[Any] | None) -> str:
    """A key as Debezium's notifications write it."""
    return "<null>" if key is None else ",".join("<null>" if v is None else str(v) for v in key)
