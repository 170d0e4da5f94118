"""The binlog side of incremental snapshots
(:mod:`~airflow_provider_connect.connectors.change_capture.incremental`): chunks read and
window rows written on a connection of their own, in autocommit, so each window row is in
the binlog before the chunk is read and the close row after it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connectors.change_capture.signals import WINDOW_CLOSE, WINDOW_OPEN
from airflow_provider_connect.connectors.mysql.database import Database, qualified
from airflow_provider_connect.connectors.mysql.types import Column


@dataclass(frozen=True)
class KeyedColumn:
    """A column as the core's incremental snapshots see it."""

    name: str
    key: bool


@dataclass(frozen=True)
class ChunkTable:
    """A captured table as its chunks are read: ``info`` its columns, ``key`` its key's."""

    db: str
    name: str
    info: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def columns(self) -> tuple[KeyedColumn, ...]:
        return tuple(KeyedColumn(c.name, c.name in self.key) for c in self.info)


class BinlogChunkReader:
    """A :class:`~airflow_provider_connect.connectors.change_capture.incremental.ChunkReader`
    of the server; the connection opens at the first chunk."""

    def __init__(self, parameters: dict[str, Any], signal_table: str, connections: Any) -> None:
        """``connections`` (:class:`~.connections.BinlogConnections`) reads the catalog."""
        self.parameters = parameters
        self.signal_table = signal_table
        self.connections = connections
        self._database: Database | None = None

    def table(self, name: str) -> ChunkTable | None:
        db, _, table = name.partition(".")
        if (db, table) not in self.connections.captured_tables():
            return None
        columns, key = self.connections.columns(db, table)
        return ChunkTable(db, table, tuple(columns), tuple(key))

    def max_key(self, table: ChunkTable, keys: list[int]) -> list[Any] | None:
        found = self._connection().max_key(table.db, table.name, list(table.key))
        return None if found is None else list(found)

    def chunk(
        self,
        table: ChunkTable,
        keys: list[int],
        max_key: list[Any],
        last_key: list[Any] | None,
        size: int,
    ) -> list[tuple[Any, ...]]:
        names = [c.name for c in table.info]
        after = None if last_key is None else tuple(last_key)
        return self._connection().chunk(
            table.db, table.name, names, list(table.key), after, tuple(max_key), size
        )

    def signal(self, signal_id: str, kind: str) -> None:
        db, _, name = self.signal_table.partition(".")
        self._connection().execute(
            f"INSERT INTO {qualified(db, name)} (id, type, data) VALUES (%s, %s, NULL)",
            (signal_id, kind),
        )

    def remove_windows(self) -> None:
        """Deletes the window rows of incremental snapshots from the signal table (KIP-901:
        the connector's own rows; the signals users wrote stay)."""
        db, _, name = self.signal_table.partition(".")
        self._connection().execute(
            f"DELETE FROM {qualified(db, name)} WHERE type IN (%s, %s)", (WINDOW_OPEN, WINDOW_CLOSE)
        )

    def close(self) -> None:
        database, self._database = self._database, None
        if database is not None:
            database.close()

    def _connection(self) -> Database:
        if self._database is None:
            self._database = Database(self.parameters)
        return self._database
