"""Fixtures of the JDBC connector tests: the database under test (SQLite, PostgreSQL,
MariaDB), and a SQLite metadata store (these tests vary the connector's database)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine

from airflow_provider_connect.store import MetadataStore
from tests.databases import database


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MetadataStore]:
    """The metadata store: SQLite."""
    with database("sqlite", tmp_path) as url:
        store = MetadataStore(url, migrate=True)
        yield store
        store.close()


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path, "connector.db") as url:
        yield url


@pytest.fixture
def engine(db: str) -> Iterator[Engine]:
    engine = create_engine(db)
    yield engine
    engine.dispose()
