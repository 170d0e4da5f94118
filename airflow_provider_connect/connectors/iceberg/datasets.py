"""What an Iceberg sink config reads and writes (the sink's ``datasets``): its topics, and
each table of ``iceberg.tables`` named by its location
(:func:`~airflow_provider_connect.connect.datasets.iceberg_table`). Reads the config only:
no catalog is loaded and pyiceberg is not imported, so a DAG that names the sink parses
without them."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.datasets import (
    ConnectorData,
    iceberg_table,
    listed,
    topics,
)

TABLES = "iceberg.tables"
DYNAMIC_ENABLED = "iceberg.tables.dynamic-enabled"
CATALOG_PREFIX = "iceberg.catalog."
NAMING_PROPS = ("type", "uri", "warehouse")
"""The catalog properties a table's location depends on; the others (credentials, often a
config provider's placeholder) are never read here."""


def iceberg_datasets(config: Mapping[str, str], cluster: str | None) -> ConnectorData:
    """Reads the config's ``topics`` (a ``topics.regex`` names none) on ``cluster``;
    writes each table of ``iceberg.tables`` whose location the catalog properties
    ``iceberg.catalog.type``, ``.uri`` and ``.warehouse`` give. With
    ``iceberg.tables.dynamic-enabled`` the tables are named by the records' route field, at
    run time: none is named here."""
    reads = topics(cluster, listed(config.get("topics")))
    if (config.get(DYNAMIC_ENABLED) or "").strip().lower() == "true":
        return ConnectorData(reads)
    catalog = {k: v for k in NAMING_PROPS if (v := config.get(CATALOG_PREFIX + k)) is not None}
    named = (iceberg_table(catalog, t) for t in listed(config.get(TABLES)))
    return ConnectorData(reads, [d for d in named if d is not None])
