"""What a PostgreSQL change-capture config reads and writes: per table of
``table.include.list`` that names one, the table and its topic as the connector names it."""

from __future__ import annotations

import re
from collections.abc import Mapping

from airflow_provider_connect.connect.datasets import (
    LITERAL_NAME,
    ConnectorData,
    listed,
    tables,
    topics,
)
from airflow_provider_connect.connectors.change_capture.config import TABLE_INCLUDE_LIST
from airflow_provider_connect.connectors.change_capture.topics import data_topic
from airflow_provider_connect.connectors.postgres import config as keys

_ESCAPED = re.compile(r"\\(\W)")
_REGEX_SYNTAX = re.compile(r"[\\^$*+?{}\[\]()|]")


def captured_datasets(config: Mapping[str, str], cluster: str | None) -> ConnectorData:
    """The tables ``table.include.list`` names (:func:`named_table`) and their topics
    (:func:`~airflow_provider_connect.connectors.change_capture.topics.data_topic`:
    ``<topic.prefix>.<schema>.<table>``, characters a topic cannot hold as ``_``); nothing
    without ``database.hostname``."""
    host, prefix = config.get(keys.HOSTNAME), config.get(keys.TOPIC_PREFIX) or ""
    if not host:
        return ConnectorData()
    port, database = config.get(keys.PORT) or "5432", config.get(keys.DBNAME) or ""
    url = f"postgresql://{host}:{port}/{database}"
    named = (named_table(p) for p in listed(config.get(TABLE_INCLUDE_LIST)))
    captured = [t for t in named if t is not None]
    return ConnectorData(
        tables(url, [f"{schema}.{table}" for schema, table in captured]),
        topics(cluster, (data_topic(prefix, schema, table) for schema, table in captured)),
    )


def named_table(pattern: str) -> tuple[str, str] | None:
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
    if not dot or "." in table or not LITERAL_NAME.match(name):
        return None
    return schema, table
