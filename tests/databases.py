"""Real databases for tests: a SQLite file, or a uniquely named database on the local
PostgreSQL or MariaDB server (``CONNECT_TEST_POSTGRES_URL`` / ``CONNECT_TEST_MARIADB_URL``
point at others), dropped after."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
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
def postgres_database() -> Iterator[str]:
    """A fresh database on the PostgreSQL server; yields its URL, drops it afterwards."""
    name = f"connect_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def mariadb_database() -> Iterator[str]:
    """A fresh database on the MariaDB server; yields its URL, drops it afterwards."""
    name = f"connect_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(MARIADB_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE `{name}`"))
    try:
        yield make_url(MARIADB_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as c:
            c.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
        admin.dispose()


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
