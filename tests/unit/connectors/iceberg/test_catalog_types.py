"""The catalog types the config accepts are pyiceberg's (kept as a constant so that checking
a config imports no pyiceberg)."""

from pyiceberg.catalog import CatalogType

from airflow_provider_connect.connectors.iceberg.config import CATALOG_TYPES


def test_the_accepted_catalog_types_are_pyicebergs() -> None:
    assert list(CATALOG_TYPES) == [t.value for t in CatalogType]
