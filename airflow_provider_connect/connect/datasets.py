"""What a connector reads and writes, as a connector describes it
(:meth:`~airflow_provider_connect.connect.connector.Connector.datasets`).

Each :class:`Dataset` is named as the Airflow provider for its system names its asset (the
``uri``) and as OpenLineage names the dataset (``namespace`` and ``name``), so that the asset
graph and the lineage join a connector to the other tasks that use the same data:

* Kafka topics as the Apache Kafka provider does: ``kafka://<bootstrap server>/<topic>``
  (:func:`topic`);
* tables as the PostgreSQL and MySQL providers do: ``postgres://host:port/database/schema/table``
  and ``mysql://host:port/database/table``; tables of other databases as
  ``<dialect>://host:port/database/table``, and of SQLite as ``sqlite:///<file path>/<table>``
  (:func:`table`);
* files as the common IO provider does: ``file:///path`` (:func:`file`);
* object-store prefixes as the object-store providers do: ``s3://bucket/prefix``
  (:func:`object_prefix`);
* Iceberg tables by their location, as OpenLineage names a table stored in files (no
  Airflow provider names Iceberg assets): ``file:///warehouse/namespace/table``,
  ``s3://bucket/warehouse/namespace/table`` (:func:`iceberg_table`).

A connector leaves out what its config leaves open rather than guessing it (a pattern, a
relative path, a table found at run time): each helper returns None (or leaves the name out)
for what it cannot name. Pure Python: this module imports nothing of Airflow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

TOPIC = "topic"
TABLE = "table"
FILE = "file"
PREFIX = "object-store prefix"
LAKEHOUSE_TABLE = "lakehouse table"

LITERAL_NAME = re.compile(r"^[\w$-]+(\.[\w$-]+)*$")
_DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306}
_SCHEMES = {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql", "mariadb": "mysql"}
_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "abfs": "abfss"}
_OBJECT_STORES |= {"abfss": "abfss", "wasb": "wasbs", "wasbs": "wasbs"}
_PLAIN_LAYOUT = ("sql", "in-memory")
_HIVE_LAYOUT = ("hive", "glue", "dynamodb")


@dataclass(frozen=True)
class Dataset:
    """One dataset a connector reads or writes: its ``kind`` (:data:`TOPIC`, :data:`TABLE`,
    :data:`FILE`, :data:`PREFIX`, :data:`LAKEHOUSE_TABLE` or a connector's own), its
    OpenLineage ``namespace`` and ``name``, and the ``uri`` of its Airflow asset."""

    kind: str
    namespace: str
    name: str
    uri: str


@dataclass(frozen=True)
class ConnectorData:
    """What a connector config reads and writes: a source reads its system and writes
    topics, a sink reads topics and writes its system."""

    reads: list[Dataset] = field(default_factory=list)
    writes: list[Dataset] = field(default_factory=list)


def kafka_cluster(bootstrap_servers: str | None) -> str | None:
    """The cluster a ``bootstrap.servers`` list names, as the Kafka provider's assets name
    it: its first server's ``host:port`` (without a ``PLAINTEXT://``-style prefix); None
    when the list is empty."""
    if not bootstrap_servers:
        return None
    return bootstrap_servers.split(",")[0].strip().rpartition("://")[2] or None


def topic(cluster: str | None, name: str) -> Dataset | None:
    """Topic ``name`` on ``cluster`` (:func:`kafka_cluster`); None when either is unknown."""
    if not cluster or not name:
        return None
    return Dataset(TOPIC, f"kafka://{cluster}", name, f"kafka://{cluster}/{name}")


def topics(cluster: str | None, names: Iterable[str]) -> list[Dataset]:
    """The topics of :func:`topic` that are known."""
    return [d for d in (topic(cluster, n) for n in names) if d is not None]


def file(path: str) -> Dataset | None:
    """A file, as the common IO provider's ``create_asset`` names it; None for a relative
    path (relative to a runtime's working directory: not known here)."""
    return Dataset(FILE, "file", path, f"file://{path}") if path.startswith("/") else None


def files(paths: Iterable[str]) -> list[Dataset]:
    """The files of :func:`file` that are known."""
    return [d for d in map(file, paths) if d is not None]


def table(url: str, name: str, schema: str | None = None) -> Dataset | None:
    """A table of the database at ``url`` (a SQLAlchemy or ``jdbc:`` URL): ``name`` is
    ``schema.table`` or ``table`` (PostgreSQL's schema then is ``schema``, else ``public``).
    None for a URL without a host (or, for SQLite, an absolute file), a port that is not a
    number, or a MySQL URL without a database."""
    parts = urlsplit(url.removeprefix("jdbc:"))
    dialect = parts.scheme.split("+")[0]
    if dialect == "sqlite":
        path = "/" + parts.path.lstrip("/") if parts.path.startswith("//") else ""
        return Dataset(TABLE, f"sqlite://{path}", name, f"sqlite://{path}/{name}") if path else None
    try:
        port = parts.port
        host = parts.hostname
    except ValueError:
        return None
    scheme = _SCHEMES.get(dialect, dialect)
    database = parts.path.strip("/").split(";")[0]
    if not host or (scheme == "mysql" and not database):
        return None
    port = port or _DEFAULT_PORTS.get(scheme)
    namespace = f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"
    in_schema, _, relation = name.rpartition(".")
    if scheme == "postgres":
        parts_of_name = [database, in_schema or schema or "public", relation]
    else:
        parts_of_name = [database, relation] if database else [relation]
    return Dataset(
        TABLE, namespace, ".".join(parts_of_name), f"{namespace}/{'/'.join(parts_of_name)}"
    )


def tables(url: str | None, names: Iterable[str], schema: str | None = None) -> list[Dataset]:
    """The tables of :func:`table` that are known, of the ``names`` that name one table
    (a pattern names none); a ``schema`` that is a pattern is left out."""
    if not url:
        return []
    if schema is not None and not LITERAL_NAME.match(schema):
        schema = None
    found = (table(url, n, schema) for n in names if LITERAL_NAME.match(n))
    return [d for d in found if d is not None]


def object_prefix(url: str) -> Dataset | None:
    """The objects under ``url`` (``s3://bucket/prefix``, ``gs://…``, ``abfs://…``) as the
    object-store providers name them: namespace ``<scheme>://<bucket>``, name the prefix;
    None for a URL without a bucket."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    namespace = f"{parts.scheme}://{parts.netloc}"
    return Dataset(PREFIX, namespace, parts.path.strip("/"), url)


def iceberg_table(catalog_props: Mapping[str, str], table: str) -> Dataset | None:
    """Iceberg table ``table`` (``namespace.table``, the namespace possibly nested:
    ``a.b.table``) of the catalog that pyiceberg's ``load_catalog`` makes of
    ``catalog_props`` (``type``, ``uri``, ``warehouse``; the ``type`` inferred from the
    ``uri`` as pyiceberg infers it), named by the location the catalog gives the table when it
    creates it, as OpenLineage names a table stored in files: namespace ``file`` and the
    absolute path, or ``s3://bucket`` (``s3a``/``s3n`` as ``s3``; ``gs``, ``abfss``,
    ``wasbs`` alike) and the key prefix; the asset URI the two joined. pyiceberg 0.12's
    locations: a SQL (or in-memory) catalog's ``<warehouse>/<namespace>/<table>`` (a nested
    namespace joined with ``.``), a Hive, Glue or DynamoDB catalog's
    ``<warehouse>/<namespace>.db/<table>`` (one level of namespace).

    None when the catalog chooses otherwise or the config does not say: a REST or BigQuery
    catalog (its server chooses), no ``warehouse``, a relative warehouse path, a
    ``table`` without a namespace or that is not a literal name. A table created with a
    location of its own, or in a namespace with a ``location`` property, lies elsewhere:
    only the catalog knows that, and it is not asked here."""
    *namespace, name = table.split(".")
    warehouse = (catalog_props.get("warehouse") or "").strip().rstrip("/")
    kind = _catalog_type(catalog_props)
    if not namespace or not LITERAL_NAME.match(table) or not warehouse:
        return None
    if kind in _PLAIN_LAYOUT:
        location = f"{warehouse}/{'.'.join(namespace)}/{name}"
    elif kind in _HIVE_LAYOUT and len(namespace) == 1:
        location = f"{warehouse}/{namespace[0]}.db/{name}"
    else:
        return None
    return _stored_at(location)


def _catalog_type(catalog_props: Mapping[str, str]) -> str | None:
    """The catalog type pyiceberg's ``load_catalog`` gives ``catalog_props``: their ``type``,
    else the one ``infer_catalog_type`` reads from the ``uri``."""
    if declared := (catalog_props.get("type") or "").strip().lower():
        return declared
    uri = catalog_props.get("uri") or ""
    if uri.startswith("http"):
        return "rest"
    if uri.startswith("thrift"):
        return "hive"
    return "sql" if uri.startswith(("sqlite", "postgresql")) else None


def _stored_at(location: str) -> Dataset | None:
    """The data stored at ``location`` (a folder: a table's), as OpenLineage's filesystem
    naming (``FilesystemDatasetUtils.fromLocation``) names it."""
    parts = urlsplit(location)
    if parts.scheme in ("", "file"):
        found = file(parts.path) if not parts.netloc else None
    elif parts.scheme in _OBJECT_STORES:
        found = object_prefix(parts._replace(scheme=_OBJECT_STORES[parts.scheme]).geturl())
    else:
        namespace = f"{parts.scheme}://{parts.netloc}"
        found = Dataset(PREFIX, namespace, parts.path, location)
    return replace(found, kind=LAKEHOUSE_TABLE) if found is not None else None


def listed(value: str | None) -> list[str]:
    """The items of a comma-separated config value, blanks left out."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]
