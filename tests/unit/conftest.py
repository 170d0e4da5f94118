"""Fixtures of the unit tests: nothing beyond a local file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_provider_connect.store import MetadataStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MetadataStore]:
    """A migrated metadata store in a SQLite file of the test's own."""
    store = MetadataStore(f"sqlite:///{tmp_path / 'metadata.db'}", migrate=True)
    yield store
    store.close()
