"""Iceberg catalogs for the sink's tests: pyiceberg's SQL catalog on a SQLite file or on a
fresh database of the local PostgreSQL server, its warehouse on local files or in a bucket
of the S3 endpoint (moto's server); tables judged by scanning them with pyiceberg."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog import Catalog, load_catalog

from tests.databases import postgres_database
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
