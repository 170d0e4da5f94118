"""Real databases for tests: a SQLite file, or a uniquely named database on the local
PostgreSQL or MariaDB server (``CONNECT_TEST_POSTGRES_URL`` / ``CONNECT_TEST_MARIADB_URL``
point at others), dropped after."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_ADMIN_URL = os.environ.get(
    "CONNECT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
MARIADB_ADMIN_URL = os.environ.get(
    "CONNECT_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/test"
)


@contextmanager
def server_database(admin_url: str, create: str, drop: str) -> Iterator[str]:
    """A fresh database on a server; yields its URL, drops it afterwards. ``create`` and
    ``drop`` are the statements, with ``{name}`` for the database's name."""
    name = f"connect_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(create.format(name=name)))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as c:
            c.execute(text(drop.format(name=name)))
        admin.dispose()


def postgres_database() -> AbstractContextManager[str]:
    return server_database(
        POSTGRES_ADMIN_URL,
        'CREATE DATABASE "{name}"',
        'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
    )


def mariadb_database() -> AbstractContextManager[str]:
    return server_database(
        MARIADB_ADMIN_URL, "CREATE DATABASE `{name}`", "DROP DATABASE IF EXISTS `{name}`"
    )


@contextmanager
def database(kind: str, tmp_path: Path, filename: str = "metadata.db") -> Iterator[str]:
    """The URL of an empty database of ``kind`` ("sqlite", "postgresql" or "mariadb")."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / filename}"
    elif kind == "mariadb":
        with mariadb_database() as url:
            yield url
    else:
        with postgres_database() as url:
            yield url
