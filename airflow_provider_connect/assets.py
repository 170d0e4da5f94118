"""The Airflow assets a connector reads and writes, from its config.

Each asset is named as the Airflow provider for its system names it, so that the asset graph
joins this provider's connectors to the other tasks that use the same data:

* Kafka topics as the Apache Kafka provider does: ``kafka://<bootstrap server>/<topic>``
  (the first of the bootstrap servers);
* tables as the PostgreSQL and MySQL providers do: ``postgres://host:port/database/schema/table``
  and ``mysql://host:port/database/table``; tables of other databases as
  ``<dialect>://host:port/database/table``, and of SQLite as ``sqlite:///<file path>/<table>``;
* files as the common IO provider does: ``file:///path``.

An asset is named by its URI (Airflow's default), so that two connectors naming the same
data name the same asset.

A source reads its system (inlets) and writes topics (outlets); a sink reads topics and
writes its system. What a config leaves open is left out, never guessed: topics chosen by a
pattern (``topics.regex``, ``table.include.list`` regexes), tables found at run time,
relative paths, and every asset of a config whose keys this module reads hold a Jinja
template or a config provider's placeholder (``${env:HOST}``): an operator's assets are
known when the DAG is parsed, before templates render and secrets resolve. Declare
``inlets``/``outlets`` yourself where they depend on one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from airflow.sdk import Asset

from airflow_provider_connect.connect.plugins import plugin_path
from airflow_provider_connect.connectors.jdbc.source import topic_for
from airflow_provider_connect.connectors.postgres.envelope import data_topic

TEMPLATE = "{{"
PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
BOOTSTRAP_OVERRIDES = (
    "producer.override.bootstrap.servers",
    "consumer.override.bootstrap.servers",
)
_DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306}
_SCHEMES = {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql", "mariadb": "mysql"}
_LITERAL_NAME = re.compile(r"^[\w$-]+(\.[\w$-]+)*$")
_ESCAPED = re.compile(r"\\(\W)")
_REGEX_SYNTAX = re.compile(r"[\\^$*+?{}\[\]()|]")


@dataclass(frozen=True)
class ConnectorAssets:
    """What a connector reads (``inlets``) and writes (``outlets``)."""

    inlets: list[Asset] = field(default_factory=list)
    outlets: list[Asset] = field(default_factory=list)


def connector_assets(
    config: Mapping[str, Any], bootstrap_servers: str | None = None
) -> ConnectorAssets:
    """The assets of a connector ``config``; topics on the config's own
    ``producer.override.``/``consumer.override.bootstrap.servers``, else on
    ``bootstrap_servers`` (no topic assets when neither says). A connector class this module
    does not know gives its ``topics`` as inlets when it sets them (a sink), nothing else."""
    values = _Known(config)
    try:
        servers = next((v for k in BOOTSTRAP_OVERRIDES if (v := values.get(k))), None)
        topic = _topic_asset(servers or bootstrap_servers)
        describe = _DESCRIBERS.get(plugin_path(values.get("connector.class") or ""))
        if describe is None:
            return ConnectorAssets(inlets=topic(_listed(values.get("topics"))))
        return describe(values, topic)
    except _Unknown:
        return ConnectorAssets()


class _Unknown(Exception):
    """A key the assets depend on holds what only rendering or a config provider resolves."""


class _Known(dict[str, str]):
    """A config's values as text; reading one that holds a template or a placeholder (other
    than ``${topic}``, the connectors' own) raises :class:`_Unknown`."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__({k: str(v) for k, v in config.items() if v is not None})

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        value = super().get(key)
        if value is None:
            return default
        if TEMPLATE in value or PLACEHOLDER.search(value.replace("${topic}", "")):
            raise _Unknown(key)
        return value


TopicAssets = Callable[[Iterable[str]], list[Asset]]


def _topic_asset(servers: str | None) -> TopicAssets:
    server = servers.split(",")[0].strip().rpartition("://")[2] if servers else ""

    def assets(topics: Iterable[str]) -> list[Asset]:
        if not server:
            return []
        return [Asset(uri=f"kafka://{server}/{t}") for t in topics if t]

    return assets


def _listed(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def file_asset(path: str) -> Asset | None:
    """A file, as the common IO provider's ``create_asset`` names it; None for a relative
    path (relative to a runtime's working directory: not known here)."""
    return Asset(uri=f"file://{path}") if path.startswith("/") else None


def _files(paths: Iterable[str]) -> list[Asset]:
    return [a for a in map(file_asset, paths) if a is not None]


def table_asset(url: str, table: str, schema: str | None = None) -> Asset | None:
    """A table of the database at ``url`` (a SQLAlchemy or ``jdbc:`` URL): ``table`` is
    ``schema.table`` or ``table`` (PostgreSQL's schema then is ``schema``, else ``public``).
    None for a URL without a host (or, for SQLite, an absolute file), a port that is not a
    number, or a MySQL URL without a database."""
    parts = urlsplit(url.removeprefix("jdbc:"))
    dialect = parts.scheme.split("+")[0]
    if dialect == "sqlite":
        path = "/" + parts.path.lstrip("/") if parts.path.startswith("//") else ""
        return Asset(uri=f"sqlite://{path}/{table}") if path else None
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
    netloc = f"{host}:{port}" if port else host
    in_schema, _, name = table.rpartition(".")
    if scheme == "postgres":
        path = f"{database}/{in_schema or schema or 'public'}/{name}"
    else:
        path = f"{database}/{name}" if database else name
    return Asset(uri=f"{scheme}://{netloc}/{path}")


def _tables(url: str | None, names: Iterable[str], schema: str | None = None) -> list[Asset]:
    if not url:
        return []
    if schema is not None and not _LITERAL_NAME.match(schema):
        schema = None
    found = (table_asset(url, n, schema) for n in names if _LITERAL_NAME.match(n))
    return [a for a in found if a is not None]


def lineage_name(asset: Asset) -> tuple[str, str]:
    """The OpenLineage dataset namespace and name of an asset of this module, as the
    providers' converters name them: ``kafka://<server>`` and the topic,
    ``postgres://host:port`` and ``database.schema.table``, ``mysql://host:port`` and
    ``database.table``, ``file`` and the path; a SQLite table ``sqlite://<file>`` and the
    table; another database's ``<dialect>://host:port`` and ``database.table``."""
    parts = urlsplit(asset.uri)
    path = parts.path.lstrip("/")
    if parts.scheme == "file":
        return "file", parts.path
    if parts.scheme == "kafka":
        return f"kafka://{parts.netloc}", path
    if parts.scheme == "sqlite":
        database, _, table = parts.path.rpartition("/")
        return f"sqlite://{database}", table
    return f"{parts.scheme}://{parts.netloc}", path.replace("/", ".")


def connector_lineage(config: Mapping[str, Any], bootstrap_servers: str | None) -> Any:
    """The ``OperatorLineage`` of a connector ``config`` for Airflow's OpenLineage provider
    (installed with this package's ``openlineage`` extra): its inlets as inputs, its outlets
    as outputs (:func:`connector_assets`)."""
    from airflow.providers.common.compat.openlineage.facet import Dataset
    from airflow.providers.openlineage.extractors import OperatorLineage

    assets = connector_assets(config, bootstrap_servers)
    return OperatorLineage(
        inputs=[Dataset(*lineage_name(a)) for a in assets.inlets],
        outputs=[Dataset(*lineage_name(a)) for a in assets.outlets],
    )


# -- the built-in connectors -----------------------------------------------------------------
def _file_source(values: _Known, topic: TopicAssets) -> ConnectorAssets:
    files = _listed(values.get("files")) or _listed(values.get("file"))
    return ConnectorAssets(_files(files), topic(_listed(values.get("topic"))))


def _file_sink(values: _Known, topic: TopicAssets) -> ConnectorAssets:
    files = _listed(values.get("file"))
    return ConnectorAssets(topic(_listed(values.get("topics"))), _files(files))


def _jdbc_source(values: _Known, topic: TopicAssets) -> ConnectorAssets:
    """JDBC and audit-trigger sources: a topic per table, as the JDBC source names it
    (``topic.prefix`` + the table; the prefix alone for a ``query``)."""
    prefix = values.get("topic.prefix") or ""
    if values.get("query"):
        return ConnectorAssets([], topic([prefix]))
    tables = _listed(values.get("table.whitelist"))
    return ConnectorAssets(
        _tables(values.get("connection.url"), tables, values.get("schema.pattern")),
        topic(topic_for(prefix, t) for t in tables),
    )


def _jdbc_sink(values: _Known, topic: TopicAssets) -> ConnectorAssets:
    topics = _listed(values.get("topics"))
    name = values.get("table.name.format") or "${topic}"
    tables = [name.replace("${topic}", t) for t in topics]
    return ConnectorAssets(topic(topics), _tables(values.get("connection.url"), tables))


def _postgres_cdc(values: _Known, topic: TopicAssets) -> ConnectorAssets:
    """Debezium's PostgreSQL connector: per table of ``table.include.list`` that names one
    (:func:`_named_table`), the table and its topic as the connector names it
    (:func:`~airflow_provider_connect.connectors.postgres.envelope.data_topic`:
    ``<topic.prefix>.<schema>.<table>``, characters a topic cannot hold as ``_``)."""
    host, prefix = values.get("database.hostname"), values.get("topic.prefix") or ""
    if not host:
        return ConnectorAssets()
    port, database = values.get("database.port") or "5432", values.get("database.dbname") or ""
    url = f"postgresql://{host}:{port}/{database}"
    named = (_named_table(p) for p in _listed(values.get("table.include.list")))
    tables = [t for t in named if t is not None]
    return ConnectorAssets(
        _tables(url, [f"{schema}.{table}" for schema, table in tables]),
        topic(data_topic(prefix, schema, table) for schema, table in tables),
    )


def _named_table(pattern: str) -> tuple[str, str] | None:
    """The schema and table a regular expression of ``table.include.list`` names, when it
    names one: a character escaped with ``\\`` stands for itself, and so does ``.`` (which
    matches any character, itself among them: ``public.orders`` is read as that table).
    None for any other regular expression syntax (``public.ordres$2026`` matches no table:
    ``$`` ends the name; ``public.ordres\\$2026`` names ``ordres$2026``) and for a name
    without its schema (the list's expressions match ``<schema>.<table>`` whole)."""
    if _REGEX_SYNTAX.search(_ESCAPED.sub("", pattern)):
        return None
    name = _ESCAPED.sub(r"\1", pattern)
    schema, dot, table = name.partition(".")
    if not dot or "." in table or not _LITERAL_NAME.match(name):
        return None
    return schema, table


def _parquet_sink(values: _Known, topic: TopicAssets) -> ConnectorAssets:
    topics = _listed(values.get("topics"))
    store = (values.get("store.url") or "").removeprefix("file://").rstrip("/")
    folder = (values.get("topics.dir") or "topics").strip("/")
    local = "://" not in store  # an fsspec URL of another file system: no provider's scheme
    return ConnectorAssets(
        topic(topics), _files(f"{store}/{folder}/{t}" for t in topics) if local else []
    )


def _mirror_source(values: _Known, topic: TopicAssets) -> ConnectorAssets:
    topics = _listed(values.get("topics"))
    rename = values.get("topic.rename.format") or "${topic}"
    source = _topic_asset(values.get("source.bootstrap.servers"))
    return ConnectorAssets(source(topics), topic(rename.replace("${topic}", t) for t in topics))


_DESCRIBERS: dict[str, Callable[[_Known, TopicAssets], ConnectorAssets]] = {
    "airflow_provider_connect.connectors.file:FileStreamSourceConnector": _file_source,
    "airflow_provider_connect.connectors.file:FileStreamSinkConnector": _file_sink,
    "airflow_provider_connect.connectors.jdbc.source:JdbcSourceConnector": _jdbc_source,
    "airflow_provider_connect.connectors.audit:AuditSourceConnector": _jdbc_source,
    "airflow_provider_connect.connectors.jdbc.sink:JdbcSinkConnector": _jdbc_sink,
    "airflow_provider_connect.connectors.postgres.source:PostgresConnector": _postgres_cdc,
    "airflow_provider_connect.connectors.parquet:ParquetSinkConnector": _parquet_sink,
    "airflow_provider_connect.connectors.mirror:MirrorSourceConnector": _mirror_source,
}
