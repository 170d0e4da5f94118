"""What a change-capture config reads and writes, whatever the database: per table of
``table.include.list`` that names one, the table (in the database at ``url``) and its topic
as the connector names it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from airflow_provider_connect.connect.datasets import (
    LITERAL_NAME,
    ConnectorData,
    Dataset,
    listed,
    topics,
)
from airflow_provider_connect.connectors.change_capture.config import (
    TABLE_INCLUDE_LIST,
    TOPIC_PREFIX,
)
from airflow_provider_connect.connectors.change_capture.topics import data_topic

_ESCAPED = re.compile(r"\\(\W)")
_REGEX_SYNTAX = re.compile(r"[\\^$*+?{}\[\]()|]")


def captured_datasets(
    config: Mapping[str, str],
    table: Callable[[str, str], Dataset | None],
    cluster: str | None,
) -> ConnectorData:
    """The tables ``table.include.list`` names (:func:`named_table`), each as
    ``table(container, name)`` names it, and their topics
    (:func:`~airflow_provider_connect.connectors.change_capture.topics.data_topic`:
    ``<topic.prefix>.<container>.<table>``, characters a topic cannot hold as ``_``)."""
    prefix = config.get(TOPIC_PREFIX) or ""
    named = (named_table(p) for p in listed(config.get(TABLE_INCLUDE_LIST)))
    captured = [t for t in named if t is not None]
    found = (table(container, name) for container, name in captured)
    return ConnectorData(
        [d for d in found if d is not None],
        topics(cluster, (data_topic(prefix, container, name) for container, name in captured)),
    )


def named_table(pattern: str) -> tuple[str, str] | None:
    """The container (schema or database) and table a regular expression of
    ``table.include.list`` names, when it names one: a character escaped with ``\\`` stands
    for itself, and so does ``.`` (which matches any character, itself among them:
    ``public.orders`` is read as that table). None for any other regular expression syntax
    (``public.ordres$2026`` matches no table: ``$`` ends the name; ``public.ordres\\$2026``
    names ``ordres$2026``) and for a name without its container (the list's expressions
    match ``<container>.<table>`` whole)."""
    if _REGEX_SYNTAX.search(_ESCAPED.sub("", pattern)):
        return None
    name = _ESCAPED.sub(r"\1", pattern)
    container, dot, table = name.partition(".")
    if not dot or "." in table or not LITERAL_NAME.match(name):
        return None
    return container, table
