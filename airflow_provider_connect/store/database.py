"""The metadata database: engines, short transactions, and the schema's version.

SQLite (the embedded default) runs in WAL mode with a busy timeout, and every transaction
begins ``IMMEDIATE``, so the driver and the executors of a local Spark master can all write
to one file without "database is locked" failures. PostgreSQL needs nothing special.

The schema is migrated by the runtime (``connect-runtime serve``/``standalone`` at start) or
by ``connect-runtime db migrate``, never by Airflow: every other opener checks that the
database is at :data:`SCHEMA_REVISION` and fails with :class:`SchemaVersionError` otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, Table, create_engine, event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import DeclarativeBase, Session
from sqlalchemy.pool import ConnectionPoolEntry

from airflow_provider_connect.connect.errors import ConnectException

if TYPE_CHECKING:  # a Python built without _sqlite3 still opens PostgreSQL
    import sqlite3

MIGRATIONS = Path(__file__).parent / "migrations"
VERSION_TABLE = "connect_alembic_version"
REVISIONS = ("0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008")
"""Every migration, oldest first (a test checks this against the migration scripts)."""
SCHEMA_REVISION = REVISIONS[-1]
SQLITE_BUSY_TIMEOUT_S = 30
MIGRATE_COMMAND = "connect-runtime db migrate"


class SchemaVersionError(ConnectException):
    """The metadata database's schema is not the one this version of the code uses."""


class SchemaBehindError(SchemaVersionError):
    """The metadata database has no schema yet, or an older one: a runtime of this version
    migrates it when it starts."""


class Database:
    """One metadata database (a SQLAlchemy URL: ``sqlite:///path.db`` or
    ``postgresql+psycopg://…``): an engine and its transactions, shared by the stores."""

    def __init__(self, url: str) -> None:
        self.url = url
        if make_url(url).get_backend_name() == "sqlite":
            self.engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
            _configure_sqlite(self.engine)
        else:
            self.engine = create_engine(url, pool_pre_ping=True)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def tx(self) -> Iterator[Session]:
        """One short transaction, committed when the block ends without an error."""
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    def insert(self, table: type[DeclarativeBase] | Table) -> postgresql.Insert | sqlite.Insert:
        """An INSERT with the dialect's ``on_conflict_*`` upserts (a mapped class or its
        table)."""
        if self.engine.dialect.name == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    def revision(self) -> str | None:
        """The schema revision the database is at; None before the first migration."""
        try:
            with self.engine.connect() as connection:
                return connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
        except (OperationalError, ProgrammingError):  # no version table: never migrated
            return None

    def check_schema(self) -> None:
        """Raises :class:`SchemaVersionError`, naming the command that fixes it, unless the
        database is at :data:`SCHEMA_REVISION`."""
        current = self.revision()
        if current == SCHEMA_REVISION:
            return
        where = f"The metadata database {make_url(self.url).render_as_string()}"
        if current is None:
            raise SchemaBehindError(
                f"{where} has no Connect schema yet: run `{MIGRATE_COMMAND}` (or start the "
                "runtime, which migrates it)"
            )
        if current in REVISIONS:
            raise SchemaBehindError(
                f"{where} is at schema revision {current}, behind {SCHEMA_REVISION}: run "
                f"`{MIGRATE_COMMAND}` with this version of airflow-provider-connect"
            )
        raise SchemaVersionError(
            f"{where} is at schema revision {current}, which this version of "
            f"airflow-provider-connect does not know (it knows up to {SCHEMA_REVISION}): a "
            f"newer version migrated it; upgrade airflow-provider-connect here"
        )

    def migrate(self) -> None:
        """Applies every migration the database lacks; safe to call at every start.
        (Alembic is imported here only: executors and Airflow never migrate.)"""
        from alembic import command
        from alembic.config import Config as AlembicConfig

        config = AlembicConfig()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, not by pysqlite
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
