"""The PostgreSQL side of change capture over an ordinary connection: the catalog (captured
tables, their columns and types), the publication, the replication slot's state and the
log it retains, snapshots read in an exported snapshot.

Every connection uses :data:`~.config.SESSION_OPTIONS`, so values come in the text form
``types.py`` parses. psycopg2 is imported here and in ``stream.py`` only, with an error that
names the extra to install when it is missing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.change_capture.snapshot import ParallelRows
from airflow_provider_connect.connectors.postgres.pgoutput import parse_lsn
from airflow_provider_connect.connectors.postgres.types import PgType

try:
    import psycopg2
    import psycopg2.extensions
    import psycopg2.extras
except ImportError:  # pragma: no cover - the extra is installed with the project's tests
    psycopg2 = None  # type: ignore[assignment]

T = TypeVar("T")

CREATED_BY = "created by airflow-provider-connect for connector "
"""The comment on a publication the connector created: only such a one is dropped when the
connector is deleted."""


def require_psycopg2() -> Any:
    if psycopg2 is None:
        raise ConnectException(
            "The PostgreSQL change-capture connector needs psycopg2: "
            "pip install 'airflow-provider-connect[postgres]'"
        )
    return psycopg2


@dataclass(frozen=True)
class ColumnInfo:
    """A column as the stream carries it (in attribute order, without dropped and generated
    columns)."""

    name: str
    type: PgType
    optional: bool
    key: bool


@dataclass(frozen=True)
class TableInfo:
    oid: int
    schema: str
    name: str
    columns: tuple[ColumnInfo, ...]

    @property
    def full_name(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True)
class SlotState:
    plugin: str
    database: str
    active_pid: int | None
    confirmed_flush_lsn: int | None
    retained_bytes: int | None
    """Log the slot holds back (from its restart position to the server's current one)."""
    lag_bytes: int | None
    """Log written since the slot's confirmed position."""


_TABLES = """
SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY n.nspname, c.relname
"""

_COLUMNS = """
SELECT a.attname, a.atttypid, a.atttypmod, NOT a.attnotnull,
       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid
               AND a.attnum = ANY(i.indkey) AND CASE WHEN c.relreplident = 'i'
               THEN i.indisreplident ELSE i.indisprimary END)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum
"""
"""A table's columns; the key is its primary key, or its replica identity index when it has
one (REPLICA IDENTITY USING INDEX: the columns a delete carries), whatever else the replica
identity is (FULL sends every column as the old row)."""

_TYPE = """
SELECT t.typname, t.typtype, t.typcategory, t.typelem, t.typbasetype, t.typtypmod,
       ARRAY(SELECT e.enumlabel FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder)
FROM pg_type t WHERE t.oid = %s
"""

_SLOT = """
SELECT plugin, database, active_pid, confirmed_flush_lsn::text,
       pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint,
       pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint
FROM pg_replication_slots WHERE slot_name = %s
"""


class Database:
    """An ordinary connection to the captured database, in autocommit."""

    def __init__(self, parameters: dict[str, Any]) -> None:
        self.parameters = parameters
        self.connection = require_psycopg2().connect(**parameters)
        self.connection.autocommit = True
        self._types: dict[tuple[int, int], PgType] = {}

    def close(self) -> None:
        self.connection.close()

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql, args)
            return cursor.fetchall() if cursor.description else []

    def setting(self, name: str) -> str:
        return str(self.query("SELECT current_setting(%s)", (name,))[0][0])

    def can_replicate(self) -> bool:
        rows = self.query(
            "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"
        )
        return bool(rows and rows[0][0])

    # -- the catalog ----------------------------------------------------------------------
    def tables(self) -> list[tuple[int, str, str]]:
        """``(oid, schema, table)`` of every ordinary and partitioned root table."""
        return [(int(o), s, t) for o, s, t in self.query(_TABLES)]

    def table(self, oid: int, schema: str, name: str) -> TableInfo:
        columns = tuple(
            ColumnInfo(column, self.type(type_oid, modifier), bool(optional), bool(key))
            for column, type_oid, modifier, optional, key in self.query(_COLUMNS, (oid,))
        )
        return TableInfo(oid, schema, name, columns)

    def type(self, oid: int, modifier: int) -> PgType:
        """The type ``oid`` with its element (arrays) or base (domains) type, cached."""
        cached = self._types.get((oid, modifier))
        if cached is not None:
            return cached
        rows = self.query(_TYPE, (oid,))
        if not rows:
            raise ConnectException(f"Unknown PostgreSQL type oid {oid}")
        name, kind, category, element, base, base_modifier, labels = rows[0]
        found = PgType(
            name=name,
            modifier=modifier,
            kind=kind,
            enum_values=tuple(labels or ()),
            element=self.type(element, modifier) if category == "A" and element else None,
            base=self.type(base, base_modifier) if kind == "d" else None,
        )
        self._types[(oid, modifier)] = found
        return found

    # -- the publication ------------------------------------------------------------------
    def publication(self, name: str) -> tuple[bool, str | None] | None:
        """``(for all tables, comment)`` of publication ``name``, None when missing."""
        rows = self.query(
            "SELECT puballtables, obj_description(oid, 'pg_publication') FROM pg_publication "
            "WHERE pubname = %s",
            (name,),
        )
        return (bool(rows[0][0]), rows[0][1]) if rows else None

    def create_publication(self, name: str, mode: str, tables: list[str], connector: str) -> None:
        """Creates publication ``name`` as ``publication.autocreate.mode`` says, marked as
        this connector's."""
        quoted = self.quote(name)
        if mode == "all_tables":
            self.query(f"CREATE PUBLICATION {quoted} FOR ALL TABLES")
        elif mode == "filtered" and tables:
            self.query(f"CREATE PUBLICATION {quoted} FOR TABLE {self.table_list(tables)}")
        else:
            self.query(f"CREATE PUBLICATION {quoted}")
        self.query(f"COMMENT ON PUBLICATION {quoted} IS %s", (CREATED_BY + connector,))

    def set_publication_tables(self, name: str, tables: list[str]) -> None:
        """``filtered`` mode on an existing publication: its tables become ``tables``."""
        if tables:
            self.query(f"ALTER PUBLICATION {self.quote(name)} SET TABLE {self.table_list(tables)}")

    def drop_publication(self, name: str) -> None:
        self.query(f"DROP PUBLICATION IF EXISTS {self.quote(name)}")

    # -- the slot -------------------------------------------------------------------------
    def slot(self, name: str) -> SlotState | None:
        rows = self.query(_SLOT, (name,))
        if not rows:
            return None
        plugin, database, pid, confirmed, retained, lag = rows[0]
        return SlotState(
            plugin, database, pid, parse_lsn(confirmed) if confirmed else None, retained, lag
        )

    def drop_slot(self, name: str, attempts: int = 50) -> bool:
        """Drops slot ``name``, ending the session that streams it first (a run of this
        connector being stopped, or one left behind on a lost executor); False when there
        was none. Raises when it stays in use."""
        for _ in range(attempts):
            state = self.slot(name)
            if state is None:
                return False
            if state.active_pid is not None:
                self.query("SELECT pg_terminate_backend(%s)", (state.active_pid,))
                self.query("SELECT pg_sleep(0.1)")  # the walsender exits asynchronously
                continue
            try:
                self.query("SELECT pg_drop_replication_slot(%s)", (name,))
                return True
            except psycopg2.errors.ObjectInUse:
                continue
            except psycopg2.errors.UndefinedObject:
                return False
        raise ConnectException(f"Replication slot {name} is still in use; it was not dropped")

    # -- snapshots ------------------------------------------------------------------------
    def quote(self, identifier: str) -> str:
        return quote(identifier, self.connection)

    def table_list(self, tables: list[str]) -> str:
        return ", ".join(self.qualified(t) for t in tables)

    def qualified(self, full_name: str) -> str:
        schema, _, table = full_name.partition(".")
        return f"{self.quote(schema)}.{self.quote(table)}"


_ISOLATION_LEVELS = {
    "serializable": "SERIALIZABLE",
    "repeatable_read": "REPEATABLE READ",
    "read_committed": "READ COMMITTED",
    "read_uncommitted": "READ UNCOMMITTED",
}
"""``snapshot.isolation.mode``'s transaction isolation levels."""


class Snapshot:
    """Read-only transactions on ``connections`` connections of their own, all in one
    snapshot of the database: the one a slot exported when it was created (every connection
    imports it, REPEATABLE READ), or else a fresh one (the first connection's, at the level
    of ``isolation``, ``snapshot.isolation.mode``; exported for the others to import, except
    under ``read_committed`` and ``read_uncommitted``, where each connection reads on its
    own). What every table read through them sees is the database at one point, so with a
    slot's snapshot the stream from the slot's consistent point holds exactly the changes
    the reads do not."""

    def __init__(
        self,
        parameters: dict[str, Any],
        exported: str | None,
        fetch_size: int,
        connections: int = 1,
        isolation: str = "repeatable_read",
    ) -> None:
        self.fetch_size = fetch_size
        self.connections: list[Any] = []
        self._parallel: ParallelRows[Any, tuple[Any, ...]] | None = None
        level = "REPEATABLE READ" if exported else _ISOLATION_LEVELS[isolation]
        shared = level in ("SERIALIZABLE", "REPEATABLE READ")
        try:
            for _ in range(connections):
                exported = self._open(
                    parameters, exported, level, export=connections > 1 and shared
                )
        except BaseException:
            self.close()
            raise

    def _open(
        self, parameters: dict[str, Any], exported: str | None, level: str, export: bool
    ) -> str | None:
        """Opens a connection at isolation ``level`` in the snapshot ``exported`` (None: a
        fresh one, exported with ``export``); returns the snapshot the next connections
        import."""
        # The text casts are set up first: the snapshot must be the transaction's first query.
        connection = text_connection(parameters)
        self.connections.append(connection)
        connection.autocommit = False
        # PostgreSQL imports no snapshot into a DEFERRABLE transaction: the first one only
        connection.set_session(
            isolation_level=level,
            readonly=True,
            deferrable=level == "SERIALIZABLE" and not exported,
        )
        with connection.cursor() as cursor:
            if exported:
                cursor.execute("SET TRANSACTION SNAPSHOT %s", (exported,))
            elif export:
                cursor.execute("SELECT pg_export_snapshot()")
                return str(cursor.fetchone()[0])
            else:
                cursor.execute("SELECT 1")
        return exported

    def rows(
        self, table: TableInfo, quote: Any, connection: int = 0
    ) -> Generator[list[tuple[Any, ...]], None, None]:
        """The rows of ``table`` in batches, read on connection number ``connection``, each
        value in PostgreSQL's text output form (``None`` for NULL), its columns in
        ``table.columns``' order."""
        columns = ", ".join(quote(c.name) for c in table.columns) or "1"
        with self.connections[connection].cursor(name=f"snapshot_{table.oid}") as cursor:
            cursor.itersize = self.fetch_size
            cursor.execute(f"SELECT {columns} FROM {quote(table.schema)}.{quote(table.name)}")
            while batch := cursor.fetchmany(self.fetch_size):
                yield batch

    def tables(
        self, tables: Sequence[T], info: Callable[[T], TableInfo], quote: Any, name: str
    ) -> Iterable[tuple[T, Iterable[tuple[Any, ...]]]]:
        """Each of ``tables`` (``info`` gives what is read of it) with its rows, in order.
        With one connection (or one table) they are read lazily on the caller's thread,
        else as many at once as there are connections, each on a thread of its own (named
        after ``name``)
        (:class:`~airflow_provider_connect.connectors.change_capture.snapshot.ParallelRows`)."""
        if len(self.connections) == 1 or len(tables) < 2:
            return (
                (t, (row for batch in self.rows(info(t), quote) for row in batch)) for t in tables
            )
        self._parallel = ParallelRows(
            tables,
            lambda connection, table: self.rows(info(table), quote, connection),
            len(self.connections),
            name,
            self.cancel,
        )
        return self._parallel.tables()

    def cancel(self) -> None:
        """Interrupts the queries running on the snapshot's connections (from any thread)."""
        for connection in self.connections:
            with contextlib.suppress(psycopg2.Error):  # closed or broken: nothing runs on it
                connection.cancel()

    def close(self) -> None:
        """Stops the reading threads, then ends the transactions and closes the connections
        (each whatever the others do)."""
        if self._parallel is not None:
            self._parallel.close()
        for connection in self.connections:
            try:
                with contextlib.suppress(psycopg2.Error):  # broken: closing it is what is left
                    connection.rollback()
            finally:
                connection.close()


def text_connection(parameters: dict[str, Any]) -> Any:
    """A connection in autocommit whose values come as the server's text output."""
    connection = require_psycopg2().connect(**parameters)
    connection.autocommit = True
    _keep_text(connection)
    return connection


def quote(identifier: str, connection: Any) -> str:
    """``identifier`` quoted for SQL on ``connection``."""
    return str(psycopg2.extensions.quote_ident(identifier, connection))


def _keep_text(connection: Any) -> None:
    """Makes ``connection`` return every value as the server's text output, as the stream
    carries it (psycopg2 parses the types it knows otherwise)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT oid FROM pg_type")
        oids = tuple(oid for (oid,) in cursor.fetchall())
    raw = psycopg2.extensions.new_type(oids, "TEXT_OUTPUT", lambda value, _cursor: value)
    psycopg2.extensions.register_type(raw, connection)
