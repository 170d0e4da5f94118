"""Iceberg catalogs for the sink's tests: pyiceberg's SQL catalog on a SQLite file, on a
fresh database of the local PostgreSQL server or on a private PostgreSQL cluster (to
crash), its warehouse on local files or in a bucket of the S3 endpoint (moto's server);
tables judged by scanning them with pyiceberg; records fed to a topic while a test runs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog import Catalog, load_catalog

from tests.databases import postgres_database
from tests.records import order, send
from tests_common.postgres_cluster import PostgresCluster, postgres_cluster_or_skip
from tests_common.s3 import S3Endpoint


@dataclass
class IcebergCatalog:
    """A catalog the sink writes to, as ``iceberg.catalog.*`` props and as a pyiceberg
    catalog to judge its tables with."""

    props: dict[str, str]

    def config(self, **extra: str) -> dict[str, str]:
        """The sink's catalog settings (``iceberg.catalog.*``) with ``extra``."""
        return {**{f"iceberg.catalog.{k}": v for k, v in self.props.items()}, **extra}

    def catalog(self) -> Catalog:
        return load_catalog("iceberg", **self.props)

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of ``table`` (a fresh load: what a reader sees now); [] while it does
        not exist."""
        catalog = self.catalog()
        if not catalog.table_exists(table):
            return []
        return catalog.load_table(table).scan().to_arrow().to_pylist()


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Endpoint]:
    with S3Endpoint() as endpoint:
        yield endpoint


def sqlite_local(tmp_path: Path) -> IcebergCatalog:
    return IcebergCatalog(
        {
            "type": "sql",
            "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
            "warehouse": f"file://{tmp_path / 'warehouse'}",
        }
    )


@pytest.fixture
def local_catalog(tmp_path: Path) -> IcebergCatalog:
    """A SQL catalog on SQLite with its warehouse on local files."""
    (tmp_path / "warehouse").mkdir()
    return sqlite_local(tmp_path)


@pytest.fixture
def postgres_s3_catalog(s3: S3Endpoint) -> Iterator[IcebergCatalog]:
    """A SQL catalog on PostgreSQL with its warehouse in a bucket of the S3 endpoint."""
    bucket = s3.new_bucket()
    with postgres_database() as url:
        yield IcebergCatalog(
            {
                "type": "sql",
                "uri": url,
                "warehouse": f"s3://{bucket}/warehouse",
                "s3.endpoint": s3.url,
                "s3.access-key-id": s3.access_key,
                "s3.secret-access-key": s3.secret_key,
                "s3.region": s3.region,
            }
        )


@pytest.fixture
def catalog_cluster() -> Iterator[PostgresCluster]:
    """A private PostgreSQL cluster for a SQL catalog, to crash (skipped where one cannot
    run)."""
    with postgres_cluster_or_skip() as cluster:
        yield cluster


@pytest.fixture
def cluster_catalog(catalog_cluster: PostgresCluster, tmp_path: Path) -> IcebergCatalog:
    """A SQL catalog on ``catalog_cluster`` with its warehouse on local files; connecting
    gives up after 5 s (a frozen server would hold a connect attempt forever)."""
    (tmp_path / "warehouse").mkdir()
    return IcebergCatalog(
        {
            "type": "sql",
            "uri": f"{catalog_cluster.url}?connect_timeout=5",
            "warehouse": f"file://{tmp_path / 'warehouse'}",
        }
    )


@contextmanager
def feeding(bootstrap: str, topic: str, ids: range, batch: int = 20) -> Iterator[None]:
    """Sends ``order(i)`` for each of ``ids`` to ``topic``, ``batch`` records every 0.1 s, on
    a thread while the block runs; leaving the block stops the thread (records not sent by
    then are never sent)."""
    done = threading.Event()

    def produce() -> None:
        for first in range(0, len(ids), batch):
            send(bootstrap, topic, [order(i) for i in ids[first : first + batch]])
            if done.wait(0.1):
                return

    thread = threading.Thread(target=produce, name=f"feeding-{topic}")
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
