"""The metadata database: engines, short transactions with deadlines, and the schema's
version.

SQLite (the embedded default) runs in WAL mode with a busy timeout, and every transaction
begins ``IMMEDIATE``, so the driver and the executors of a local Spark master can all write
to one file without "database is locked" failures. The writing transactions of one process
take turns on a lock of their own before they ask SQLite for its write lock: SQLite lets one
writer in at a time anyway, and its busy handler makes waiters sleep up to 100 ms between
tries, so a hundred task threads of one slot host asking at once would keep the file locked
in turn while every other process (the herder's above all) slept; in turn, each process has
one writer asking.

Every transaction on PostgreSQL has a deadline (``timeout_s``): new connections get
``connect_timeout``, sessions ``statement_timeout`` and ``lock_timeout``, a connection taken
from the pool is pinged first, and a watchdog (``deadlines.py``) shuts down the socket of a
transaction still running at its deadline, so a server that hangs fails the call instead of
blocking it. A connection that cannot be had is tried again, with backoff, until the
deadline. Whatever keeps a transaction from reaching the database raises
:class:`StoreUnavailable`, whose message names the database (never its password) and the
cause; the first such failure and the first success after it are logged, once each.

The schema is migrated by the runtime (``connect-runtime serve``/``standalone`` at start) or
by ``connect-runtime db migrate``, never by Airflow: every other opener checks that the
database is at :data:`SCHEMA_REVISION` and fails with :class:`SchemaVersionError` otherwise.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, Table, create_engine, event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect, make_url
from sqlalchemy.exc import (
    DBAPIError,
    DisconnectionError,
    InternalError,
    OperationalError,
    ProgrammingError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm import DeclarativeBase, Session
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.store.deadlines import DEADLINES

if TYPE_CHECKING:  # a Python built without _sqlite3 still opens PostgreSQL
    import sqlite3

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"
VERSION_TABLE = "connect_alembic_version"
REVISIONS = (
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0006",
    "0007",
    "0008",
    "0009",
    "0010",
    "0011",
    "0012",
    "0013",
    "0014",
    "0015",
)
"""Every migration, oldest first (a test checks this against the migration scripts)."""
SCHEMA_REVISION = REVISIONS[-1]
SQLITE_BUSY_TIMEOUT_S = 30
_WRITERS: dict[str, threading.Lock] = {}
"""By SQLite URL: the lock the writing transactions of this process take turns on."""
_WRITERS_LOCK = threading.Lock()
READ_ONLY = "connect_read_only"
"""The execution option of a transaction's connection that says it only reads."""
DEFAULT_TIMEOUT_S = 10.0
"""The deadline of one transaction on PostgreSQL unless the opener sets another."""
PROBE_INTERVAL_S = 0.5
MIGRATION_TIMEOUT_S = 600
"""The deadline of a schema migration (its statements have none of their own)."""
IDLE_IN_TRANSACTION_TIMEOUT_S = 60
"""How long PostgreSQL keeps a session that hangs inside a transaction (its locks) alive."""
MIGRATE_COMMAND = "connect-runtime db migrate"
_SQLITE_UNAVAILABLE = ("locked", "unable to open", "disk i/o", "readonly")
_UNAVAILABLE_SQLSTATES = ("08", "57P", "57014", "55P03", "53", "25006")
"""Connection exceptions, the server shutting down or not yet up, a statement or lock wait
past the deadline, no resources left, a read-only server (a failover under way); no
SQLSTATE at all is the client's own failure (refused, closed)."""


class StoreUnavailable(ConnectException):
    """The metadata database could not be reached, or did not answer before the deadline;
    the message names it and the cause. Nothing of the transaction was committed, or its
    commit's outcome is unknown (the connection broke during it)."""


class SchemaVersionError(ConnectException):
    """The metadata database's schema is not the one this version of the code uses."""


class SchemaBehindError(SchemaVersionError):
    """The metadata database has no schema yet, or an older one: a runtime of this version
    migrates it when it starts."""


class Database:
    """One metadata database (a SQLAlchemy URL: ``sqlite:///path.db`` or
    ``postgresql+psycopg://…``): an engine and its transactions, shared by the stores.

    ``timeout_s`` is each transaction's deadline on PostgreSQL. With ``fail_fast``, once a
    transaction found the database unreachable, the next ones raise
    :class:`StoreUnavailable` at once (with that cause) while a background probe tries the
    database every :data:`PROBE_INTERVAL_S` until it answers: what the REST API uses, so it
    answers within its deadline however many requests come.

    The engine keeps up to ``pool_size`` connections open and opens up to ``max_overflow``
    more while as many transactions run at once (SQLAlchemy's 5 and 10 when None); a
    transaction finding all of them in use waits for one until its deadline, then raises
    :class:`StoreUnavailable`: whoever runs more transactions at once (a slot host's task
    runs) sizes the pool for them. An in-memory SQLite database has one connection per
    thread and no such bound.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        fail_fast: bool = False,
        pool_size: int | None = None,
        max_overflow: int | None = None,
    ) -> None:
        self.url = url
        self.name = make_url(url).render_as_string(hide_password=True)
        self.timeout_s = timeout_s
        self.fail_fast = fail_fast
        self.sqlite = make_url(url).get_backend_name() == "sqlite"
        self._state = threading.Lock()
        self._down_since: float | None = None  # monotonic; None while reachable
        self._back_since = -math.inf  # monotonic: when it was last found again
        self._cause = ""
        self._probing = False
        self._closed = False
        if self.sqlite:
            with _WRITERS_LOCK:  # every Database of this process on the file shares it
                self._writer = _WRITERS.setdefault(_sqlite_file(url), threading.Lock())
            self.engine = create_engine(
                url,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S},
                **_pool_options(url, pool_size, max_overflow),
            )
            _configure_sqlite(self.engine)
        else:
            self.engine = create_engine(
                url,
                pool_timeout=timeout_s,
                connect_args={"connect_timeout": max(2, math.ceil(timeout_s))},
                **_pool_options(url, pool_size, max_overflow),
            )
            _configure_postgres(self.engine, timeout_s)

    def close(self) -> None:
        """Releases the connections; a probe under way ends at its next attempt."""
        self._closed = True
        self.engine.dispose()

    @property
    def reachable(self) -> bool:
        """False from a transaction that could not reach the database until one that did."""
        return self._down_since is None

    @contextmanager
    def tx(self, *, read_only: bool = False) -> Iterator[Session]:
        """One short transaction, committed when the block ends without an error, within
        the deadline; :class:`StoreUnavailable` when the database cannot be reached. On
        SQLite a transaction takes the write lock when it begins (so that it never fails to
        upgrade a read lock), except a ``read_only`` one, which writes nothing and waits for
        no writer (WAL readers see the last commit)."""
        if self.fail_fast and not self.reachable:
            raise StoreUnavailable(self._message(self._cause))
        timeout_s = SQLITE_BUSY_TIMEOUT_S if self.sqlite else self.timeout_s
        began = time.monotonic()
        deadline = began + timeout_s
        with nullcontext(None) if self.sqlite else DEADLINES.guard(timeout_s) as guard:
            try:
                with self._turn(deadline, read_only), self._session(deadline, read_only) as session:
                    yield session
                    session.commit()
            except StoreUnavailable as e:
                self._lost(e, began=began)
                raise
            except Exception as e:
                if not _unavailable(e):
                    raise
                expired = guard is not None and guard.expired
                cause = f"no answer within {timeout_s:g} s" if expired else _cause(e)
                error = StoreUnavailable(self._message(cause))
                self._lost(error, cause, began=began)
                raise error from e
        self._found()

    def check(self) -> None:
        """One round trip to the database; :class:`StoreUnavailable` when it fails."""
        with self.tx() as session:
            session.execute(text("SELECT 1"))

    @contextmanager
    def _turn(self, deadline: float, read_only: bool) -> Iterator[None]:
        """On SQLite, a writing transaction's turn among this process's (see the module
        docstring); TimeoutError when it does not come by the deadline."""
        if not self.sqlite or read_only:
            yield
            return
        if not self._writer.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise TimeoutError("another transaction of this process held the database's write lock")
        try:
            yield
        finally:
            self._writer.release()

    @contextmanager
    def _session(self, deadline: float, read_only: bool = False) -> Iterator[Session]:
        """A session holding a connection (a transaction begun), tried again with backoff
        while none can be had and the deadline allows."""
        delay = 0.05
        while True:
            session = Session(self.engine, expire_on_commit=False)
            try:
                session.connection(execution_options={READ_ONLY: read_only})
                break
            except Exception as e:
                session.close()
                if not _unavailable(e) or time.monotonic() + delay >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
        with session:
            yield session

    def _message(self, cause: str) -> str:
        return f"The metadata database {self.name} is unreachable: {cause}"

    def _lost(
        self, error: StoreUnavailable, cause: str | None = None, *, began: float = math.inf
    ) -> None:
        """Marks the database away and logs it, once an outage; not for a transaction that
        ``began`` before the database was last found again: it failed in the outage that
        finding ended (a connection attempt whose SYN TCP resent, backed off, after a
        partition healed), which was told already."""
        with self._state:
            if self._down_since is not None or began < self._back_since:
                return
            self._down_since = time.monotonic()
            self._cause = cause or str(error).split(": ", 1)[-1]
            probe = self.fail_fast and not self._probing
            self._probing = self._probing or probe
        log.warning("%s", error)
        if probe:
            threading.Thread(target=self._probe, name="metadata-db-probe", daemon=True).start()

    def _found(self) -> None:
        if self._down_since is None:
            return
        with self._state:
            if self._down_since is None:
                return
            self._back_since = time.monotonic()
            away = self._back_since - self._down_since
            self._down_since = None
        log.info("The metadata database %s is reachable again (after %.1f s)", self.name, away)

    def _probe(self) -> None:
        """Tries the database until it answers or is closed (``fail_fast`` only): any error
        counts as not yet, and the probe ends, atomically with ``_lost``, only once the
        database is reachable."""
        while True:
            with self._state:
                if self._down_since is None or self._closed:
                    self._probing = False
                    return
            try:
                with (
                    DEADLINES.guard(self.timeout_s),
                    self._session(time.monotonic() + self.timeout_s) as session,
                ):
                    session.execute(text("SELECT 1"))
            except Exception:
                time.sleep(PROBE_INTERVAL_S)
            else:
                self._found()

    def insert(self, table: type[DeclarativeBase] | Table) -> postgresql.Insert | sqlite.Insert:
        """An INSERT with the dialect's ``on_conflict_*`` upserts (a mapped class or its
        table)."""
        if self.engine.dialect.name == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    def revision(self) -> str | None:
        """The schema revision the database is at; None before the first migration.
        :class:`StoreUnavailable` when it cannot be reached."""
        try:
            with self.tx() as session:
                return session.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
        except (OperationalError, ProgrammingError):  # no version table: never migrated
            return None

    def check_schema(self) -> None:
        """Raises :class:`SchemaVersionError`, naming the command that fixes it, unless the
        database is at :data:`SCHEMA_REVISION`."""
        current = self.revision()
        if current == SCHEMA_REVISION:
            return
        where = f"The metadata database {self.name}"
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
        """Applies every migration the database lacks; safe to call at every start. Its
        statements may take as long as they need (no statement or lock timeout), the
        whole within :data:`MIGRATION_TIMEOUT_S`; :class:`StoreUnavailable` when the
        database cannot be reached. (Alembic is imported here only: executors and Airflow
        never migrate.)"""
        from alembic import command
        from alembic.config import Config as AlembicConfig

        config = AlembicConfig()
        config.set_main_option("script_location", str(MIGRATIONS))
        with DEADLINES.guard(MIGRATION_TIMEOUT_S) as guard:
            try:
                with self.engine.begin() as connection:
                    if not self.sqlite:
                        connection.exec_driver_sql(
                            "SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0"
                        )
                    config.attributes["connection"] = connection
                    command.upgrade(config, "head")
            except Exception as e:
                if not _unavailable(e):
                    raise
                cause = f"no answer within {MIGRATION_TIMEOUT_S} s" if guard.expired else _cause(e)
                raise StoreUnavailable(self._message(cause)) from e


def _session_timeouts(timeout_s: float) -> str:
    """The statement, lock and idle-in-transaction timeouts each new session sets (with
    ``SET``, which poolers such as PgBouncer pass through, unlike the ``options`` startup
    parameter)."""
    ms = int(timeout_s * 1000)
    return (
        f"SET statement_timeout = {ms}; SET lock_timeout = {ms}; "
        f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_TIMEOUT_S * 1000}"
    )


def _configure_postgres(engine: Engine, timeout_s: float) -> None:
    """Puts every connection a transaction uses under its deadline, from the moment it is
    opened (its setup queries too) until it goes back to the pool; a new session sets its
    timeouts; a pooled connection is pinged before it is handed out (a fresh one needs no
    ping), under the deadline too: SQLAlchemy's own ``pool_pre_ping`` pings before any
    event could attach the socket. Psycopg counts ``connect_timeout`` in whole seconds, two
    at least."""
    timeouts = _session_timeouts(timeout_s)

    @event.listens_for(engine, "connect", insert=True)
    def on_connect(dbapi: Any, record: ConnectionPoolEntry) -> None:
        DEADLINES.attach(dbapi.fileno())
        with dbapi.cursor() as cursor:
            cursor.execute(timeouts)
        dbapi.commit()
        record.info["fresh"] = True

    @event.listens_for(engine, "checkout")
    def on_checkout(dbapi: Any, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection) -> None:
        DEADLINES.attach(dbapi.fileno())
        if record.info.pop("fresh", False):
            return
        try:
            engine.dialect.do_ping(dbapi)
        except Exception as e:
            raise DisconnectionError(f"ping failed: {e}") from e

    @event.listens_for(engine, "checkin")
    def on_checkin(dbapi: Any, _record: ConnectionPoolEntry) -> None:
        if dbapi is not None and not dbapi.closed:  # back in the pool: another's to use
            DEADLINES.detach(dbapi.fileno())

    @event.listens_for(engine, "do_connect")
    def on_do_connect(_dialect: Dialect, _record: Any, _cargs: Any, params: dict[str, Any]) -> None:
        guard = DEADLINES.current()
        if guard is None:
            return
        if guard.expired:  # the transaction is over: no new attempt (a ping failed at it)
            raise TimeoutError("the deadline passed")
        params["connect_timeout"] = max(
            2, min(params["connect_timeout"], math.ceil(guard.remaining()))
        )


def _pool_options(url: str, pool_size: int | None, max_overflow: int | None) -> dict[str, int]:
    """The ``create_engine`` arguments sizing the pool of ``url``'s engine: none for an
    in-memory SQLite database (a connection per thread, no ``QueuePool``), none left unset."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        return {}
    sizes = {"pool_size": pool_size, "max_overflow": max_overflow}
    return {name: size for name, size in sizes.items() if size is not None}


def _sqlite_file(url: str) -> str:
    """The file a SQLite URL names, resolved (the URL itself for an in-memory database)."""
    database = make_url(url).database
    return str(Path(database).resolve()) if database and database != ":memory:" else url


def _unavailable(error: BaseException) -> bool:
    """Whether ``error`` says the database could not be reached, did not answer in time or
    cannot take writes now (a failover under way), not that a statement was wrong or lost
    a race (a deadlock, a serialization failure)."""
    if isinstance(error, (DisconnectionError, PoolTimeoutError, StoreUnavailable, TimeoutError)):
        return True
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return True
    if not isinstance(error, (OperationalError, InternalError)):
        return False
    if type(error.orig).__module__ == "sqlite3":
        return any(part in str(error.orig).lower() for part in _SQLITE_UNAVAILABLE)
    sqlstate = getattr(error.orig, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(_UNAVAILABLE_SQLSTATES)


def _cause(error: BaseException) -> str:
    """The first line of what the driver said, without SQLAlchemy's decorations."""
    orig = getattr(error, "orig", None) or error.__cause__ or error
    text_ = str(orig).strip().splitlines()
    return text_[0] if text_ else type(orig).__name__


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
        read_only = connection.get_execution_options().get(READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")
