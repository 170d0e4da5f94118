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

The progress (tables left, the last key read, the largest key) travels in the offsets of
the records, so a restart resumes with the chunk after the last one stored. Window rows of
an earlier run are ignored. Tables without a primary key are not snapshotted (logged).

The database's side, reading and writing rows, is a :class:`ChunkReader`.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from airflow_provider_connect.connectors.change_capture.signals import (
    EXECUTE_SNAPSHOT,
    WINDOW_CLOSE,
    WINDOW_OPEN,
    requested_collections,
)

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

    def state(self) -> dict[str, Any] | None:
        if not self.tables:
            return None
        return {"tables": list(self.tables), "last_key": self.last_key, "max_key": self.max_key}

    @classmethod
    def of(cls, state: dict[str, Any] | None) -> Progress:
        if not state:
            return cls()
        return cls(list(state["tables"]), state.get("last_key"), state.get("max_key"))


class IncrementalSnapshots(Generic[T]):
    """The incremental snapshots of one task. Called from the task's poll thread only."""

    def __init__(
        self, reader: ChunkReader[T], chunk_size: int, state: dict[str, Any] | None = None
    ) -> None:
        self.reader = reader
        self.chunk_size = chunk_size
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

    # -- signals, as the stream delivers them ---------------------------------------------
    def on_signal_row(
        self, signal_id: Any, kind: Any, data: Any, captured: Callable[[], list[str]]
    ) -> list[tuple[T, tuple[Any, ...]]]:
        """A row inserted into the signal table, as the stream delivers it: a snapshot
        request (of tables among ``captured()``) or a window row. Returns the chunk rows
        to emit now, with their table (see :meth:`on_window`)."""
        if kind == EXECUTE_SNAPSHOT:
            self.on_signal(data, captured())
            return []
        return self.on_window(str(signal_id), str(kind))

    def on_signal(self, data: str | None, tables: list[str]) -> None:
        """An ``execute-snapshot`` row: queues the tables it names (names or regular
        expressions of ``schema.table``, among ``tables``, the captured ones)."""
        wanted = requested_collections(data)
        if wanted is None:
            return
        for pattern in wanted:
            for table in tables:
                if re.fullmatch(pattern, table) and table not in self.progress.tables:
                    self.progress.tables.append(table)
        log.info("Incremental snapshot of %s", ", ".join(self.progress.tables) or "nothing")

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
        self.progress.last_key = window.last_key
        if window.last_key is None:  # the table is done
            self.progress.tables.pop(0)
            self.progress.last_key = self.progress.max_key = None
        return [(window.info, row) for row in window.rows.values()]

    def on_change(self, table: str, key: tuple[Any, ...] | None) -> None:
        """A streamed change of ``table``'s row ``key`` (its key columns' values, comparing
        equal to those of the same row in a chunk, :meth:`ChunkReader.chunk`): it
        supersedes the chunk's copy of that row while the window is open."""
        window = self.window
        if window is not None and window.opened and window.table == table and key is not None:
            window.rows.pop(key, None)

    # -- chunks ---------------------------------------------------------------------------
    def next_chunk(self) -> None:
        """Reads the next chunk between a window's open and close rows, when a snapshot is
        asked for and no window is waiting for the stream."""
        while self.window is None and self.progress.tables:
            table = self.progress.tables[0]
            info = self.reader.table(table)
            keys = [i for i, c in enumerate(info.columns) if c.key] if info else []
            if info is None or not keys:
                log.warning(
                    "%s is not snapshotted: no such captured table with a primary key", table
                )
                self.progress.tables.pop(0)
                continue
            self._read_chunk(table, info, keys)

    def _read_chunk(self, table: str, info: T, keys: list[int]) -> None:
        progress = self.progress
        if progress.max_key is None:
            top = self.reader.max_key(info, keys)
            if top is None:
                progress.tables.pop(0)
                progress.last_key = None
                return
            progress.max_key = top
        window_id = f"{uuid.uuid4()}"
        self.reader.signal(f"{window_id}-open", WINDOW_OPEN)
        rows = self.reader.chunk(info, keys, progress.max_key, progress.last_key, self.chunk_size)
        self.reader.signal(f"{window_id}-close", WINDOW_CLOSE)
        chunk = {tuple(row[i] for i in keys): tuple(row) for row in rows}
        last = list(next(reversed(chunk))) if len(rows) == self.chunk_size else None
        self.window = _Window(window_id, table, info, chunk, last)
