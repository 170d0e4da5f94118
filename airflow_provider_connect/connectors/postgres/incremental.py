"""The PostgreSQL side of incremental snapshots
(:mod:`~airflow_provider_connect.connectors.change_capture.incremental`): chunks read and
window rows written on a text connection of their own, in autocommit, so each window row is
in the log before the chunk is read and the close row after it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow_provider_connect.connectors.postgres.database import (
    TableInfo,
    quote,
    text_connection,
)


class PostgresChunkReader:
    """A :class:`~airflow_provider_connect.connectors.change_capture.incremental.ChunkReader`
    of the captured database; the connection opens at the first chunk."""

    def __init__(
        self,
        parameters: dict[str, Any],
        signal_table: str,
        table_info: Callable[[str], TableInfo | None],
    ) -> None:
        self.parameters = parameters
        self.signal_table = signal_table
        self.table_info = table_info
        self.connection: Any = None

    def table(self, name: str) -> TableInfo | None:
        return self.table_info(name)

    def max_key(self, table: TableInfo, keys: list[int]) -> list[Any] | None:
        key_list = self._key_list(table, keys)
        with self._connection().cursor() as cursor:
            cursor.execute(
                f"SELECT {key_list} FROM {self._source(table)} ORDER BY {key_list} DESC LIMIT 1"
            )
            top = cursor.fetchone()
        return None if top is None else list(top)

    def chunk(
        self,
        table: TableInfo,
        keys: list[int],
        max_key: list[Any],
        last_key: list[Any] | None,
        size: int,
    ) -> list[tuple[Any, ...]]:
        key_list = self._key_list(table, keys)
        conditions = [f"({key_list}) <= ({_placeholders(keys)})"]
        args = list(max_key)
        if last_key is not None:
            conditions.append(f"({key_list}) > ({_placeholders(keys)})")
            args += last_key
        columns = ", ".join(self._quote(c.name) for c in table.columns)
        with self._connection().cursor() as cursor:
            cursor.execute(
                f"SELECT {columns} FROM {self._source(table)} WHERE {' AND '.join(conditions)} "
                f"ORDER BY {key_list} LIMIT {size}",
                args,
            )
            return [tuple(row) for row in cursor.fetchall()]

    def signal(self, signal_id: str, kind: str) -> None:
        schema, _, name = self.signal_table.partition(".")
        with self._connection().cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {self._quote(schema)}.{self._quote(name)} (id, type, data) "
                "VALUES (%s, %s, NULL)",
                (signal_id, kind),
            )

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def _connection(self) -> Any:
        if self.connection is None:
            self.connection = text_connection(self.parameters)
        return self.connection

    def _key_list(self, table: TableInfo, keys: list[int]) -> str:
        return ", ".join(self._quote(table.columns[i].name) for i in keys)

    def _source(self, table: TableInfo) -> str:
        return f"{self._quote(table.schema)}.{self._quote(table.name)}"

    def _quote(self, identifier: str) -> str:
        return quote(identifier, self._connection())


def _placeholders(keys: list[int]) -> str:
    return ", ".join(["%s"] * len(keys))
