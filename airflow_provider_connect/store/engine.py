"""Engines for the metadata database, migrated to the latest schema.

SQLite (the embedded default) runs in WAL mode with a busy timeout, and every transaction
begins ``IMMEDIATE``, so the driver and the executors of a local Spark master can all write
to one file without "database is locked" failures. PostgreSQL needs nothing special.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

MIGRATIONS = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30


def open_engine(url: str, *, migrate: bool = True) -> Engine:
    """An engine for ``url`` (a SQLAlchemy URL), with the schema migrated to head first
    unless ``migrate`` is false (executors: the driver has migrated already)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
        _configure_sqlite(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    if migrate:
        migrate_to_head(engine)
    return engine


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, not by pysqlite
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def migrate_to_head(engine: Engine) -> None:
    """Applies every migration the database lacks; safe to call at every start. (Alembic is
    imported here: the task runs on executors never migrate.)"""
    from alembic import command
    from alembic.config import Config as AlembicConfig

    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
