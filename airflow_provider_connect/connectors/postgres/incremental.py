"""Incremental snapshots, as Debezium runs them (DBLog's watermarks): an ``execute-snapshot``
row inserted into the signal table (``signal.data.collection``) asks for tables to be read
again while the stream goes on, without stopping or recreating the connector.

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
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_connect.connectors.postgres.database import (
    TableInfo,
    quote,
    text_connection,
)

log = logging.getLogger(__name__)

EXECUTE_SNAPSHOT = "execute-snapshot"
WINDOW_OPEN = "snapshot-window-open"
WINDOW_CLOSE = "snapshot-window-close"


@dataclass
class _Window:
    """A chunk read between its open and close rows, waiting for the stream to reach them."""

    id: str
    table: str
    info: TableInfo
    """The table's columns as the chunk was read (the rows' order of values)."""
    rows: dict[tuple[Any, ...], tuple[Any, ...]]
    """The chunk's rows by key (text values), in key order."""
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


class IncrementalSnapshots:
    """The incremental snapshots of one task. Called from the task's poll thread only."""

    def __init__(
        self,
        parameters: dict[str, Any],
        signal_table: str,
        chunk_size: int,
        table_info: Callable[[str], TableInfo | None],
        state: dict[str, Any] | None,
    ) -> None:
        self.parameters = parameters
        self.signal_table = signal_table
        self.chunk_size = chunk_size
        self.table_info = table_info
        self.progress = Progress.of(state)
        self.window: _Window | None = None
        self.connection: Any = None

    @property
    def state(self) -> dict[str, Any] | None:
        """The progress to store with the next records (None when no snapshot runs)."""
        return self.progress.state()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    # -- signals, as the stream delivers them ---------------------------------------------
    def on_signal(self, kind: str, data: str | None, tables: list[str]) -> None:
        """An ``execute-snapshot`` row: queues the tables it names (names or regular
        expressions of ``schema.table``, among ``tables``, the captured ones)."""
        if kind != EXECUTE_SNAPSHOT:
            return
        try:
            request = json.loads(data or "{}")
            wanted = request.get("data-collections") or []
            if request.get("type", "incremental").lower() != "incremental":
                log.warning("Only incremental snapshots are supported; signal ignored: %s", data)
                return
        except (ValueError, AttributeError):
            log.warning("Malformed execute-snapshot signal ignored: %s", data)
            return
        for pattern in wanted:
            for table in tables:
                if re.fullmatch(pattern, table) and table not in self.progress.tables:
                    self.progress.tables.append(table)
        log.info("Incremental snapshot of %s", ", ".join(self.progress.tables) or "nothing")

    def on_window(self, signal_id: str, kind: str) -> list[tuple[TableInfo, tuple[Any, ...]]]:
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
        """A streamed change of ``table``'s row ``key`` (text values): it supersedes the
        chunk's copy of that row while the window is open."""
        window = self.window
        if window is not None and window.opened and window.table == table and key is not None:
            window.rows.pop(key, None)

    # -- chunks ---------------------------------------------------------------------------
    def next_chunk(self) -> None:
        """Reads the next chunk between a window's open and close rows, when a snapshot is
        asked for and no window is waiting for the stream."""
        while self.window is None and self.progress.tables:
            table = self.progress.tables[0]
            info = self.table_info(table)
            keys = [i for i, c in enumerate(info.columns) if c.key] if info else []
            if info is None or not keys:
                log.warning(
                    "%s is not snapshotted: no such captured table with a primary key", table
                )
                self.progress.tables.pop(0)
                continue
            self._read_chunk(table, info, keys)

    def _read_chunk(self, table: str, info: TableInfo, keys: list[int]) -> None:
        if self.connection is None:
            self.connection = text_connection(self.parameters)
        quote = self._quote
        key_list = ", ".join(quote(info.columns[i].name) for i in keys)
        source = f"{quote(info.schema)}.{quote(info.name)}"
        progress = self.progress
        with self.connection.cursor() as cursor:
            if progress.max_key is None:
                cursor.execute(f"SELECT {key_list} FROM {source} ORDER BY {key_list} DESC LIMIT 1")
                top = cursor.fetchone()
                if top is None:
                    progress.tables.pop(0)
                    progress.last_key = None
                    return
                progress.max_key = list(top)
            window_id = f"{uuid.uuid4()}"
            self._insert(cursor, f"{window_id}-open", WINDOW_OPEN)
            conditions = [f"({key_list}) <= ({_placeholders(keys)})"]
            args = list(progress.max_key)
            if progress.last_key is not None:
                conditions.append(f"({key_list}) > ({_placeholders(keys)})")
                args += progress.last_key
            columns = ", ".join(quote(c.name) for c in info.columns)
            cursor.execute(
                f"SELECT {columns} FROM {source} WHERE {' AND '.join(conditions)} "
                f"ORDER BY {key_list} LIMIT {self.chunk_size}",
                args,
            )
            rows = cursor.fetchall()
            self._insert(cursor, f"{window_id}-close", WINDOW_CLOSE)
        chunk = {tuple(row[i] for i in keys): tuple(row) for row in rows}
        last = list(next(reversed(chunk))) if len(rows) == self.chunk_size else None
        self.window = _Window(window_id, table, info, chunk, last)

    def _insert(self, cursor: Any, signal_id: str, kind: str) -> None:
        schema, _, name = self.signal_table.partition(".")
        cursor.execute(
            f"INSERT INTO {self._quote(schema)}.{self._quote(name)} (id, type, data) "
            "VALUES (%s, %s, NULL)",
            (signal_id, kind),
        )

    def _quote(self, identifier: str) -> str:
        return quote(identifier, self.connection)


def _placeholders(keys: list[int]) -> str:
    return ", ".join(["%s"] * len(keys))
