"""The Airflow assets a connector reads and writes, from its config, as the connector
describes them (:meth:`~airflow_provider_connect.connect.connector.Connector.datasets`,
named as :mod:`airflow_provider_connect.connect.datasets` names them: Kafka topics as the
Apache Kafka provider does, ``kafka://<bootstrap server>/<topic>``; tables as the
PostgreSQL and MySQL providers do; files as the common IO provider does).

An asset is named by its URI (Airflow's default), so that two connectors naming the same
data name the same asset; its OpenLineage dataset by the namespace and name the connector
gives. A connector that does not describe its data (or whose class cannot be loaded here)
reads its ``topics`` when it sets them (a sink), nothing else.

A source reads its system (inlets) and writes topics (outlets); a sink reads topics and
writes its system. What a config leaves open is left out, never guessed, and a config whose
keys the connector reads hold a Jinja template or a config provider's placeholder
(``${env:HOST}``) has no assets: an operator's assets are known when the DAG is parsed,
before templates render and secrets resolve. Declare ``inlets``/``outlets`` yourself where
they depend on one: :func:`params_assets` gives those of a config whose templates name the
DAG's params, with their defaults.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from airflow.sdk import Asset

from airflow_provider_connect.connect.datasets import (
    ConnectorData,
    Dataset,
    file,
    kafka_cluster,
    listed,
    table,
    topic,
    topics,
)
from airflow_provider_connect.control.plugins import connector_class
from airflow_provider_connect.settings import KAFKA_BOOTSTRAP_SERVERS, setting

TEMPLATE = "{{"
PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
PARAM = re.compile(r"\{\{\s*params\.(\w+)\s*\}\}")
"""A template that is one of the DAG's params: ``{{ params.topic }}``."""
BOOTSTRAP_OVERRIDES = (
    "producer.override.bootstrap.servers",
    "consumer.override.bootstrap.servers",
)


@dataclass(frozen=True)
class ConnectorAssets:
    """What a connector reads (``inlets``) and writes (``outlets``)."""

    inlets: list[Asset] = field(default_factory=list)
    outlets: list[Asset] = field(default_factory=list)


def connector_data(config: Mapping[str, Any], bootstrap_servers: str | None) -> ConnectorData:
    """What a connector ``config`` reads and writes, as its connector class describes it;
    topics on the config's own ``producer.override.``/``consumer.override.bootstrap.servers``,
    else on ``bootstrap_servers`` (no topics when neither says)."""
    values = _Known(config)
    try:
        servers = next((v for k in BOOTSTRAP_OVERRIDES if (v := values.get(k))), None)
        cluster = kafka_cluster(servers or bootstrap_servers)
        try:
            connector = connector_class(values.get("connector.class") or "")()
        except ImportError:
            connector = None
        described = connector.datasets(values, cluster) if connector is not None else None
        return described or ConnectorData(reads=topics(cluster, listed(values.get("topics"))))
    except _Unknown:
        return ConnectorData()


def connector_assets(
    config: Mapping[str, Any], bootstrap_servers: str | None = None
) -> ConnectorAssets:
    """The assets of a connector ``config`` (:func:`connector_data`)."""
    data = connector_data(config, bootstrap_servers)
    return ConnectorAssets(_assets(data.reads), _assets(data.writes))


def params_assets(
    config: Mapping[str, Any],
    params: Mapping[str, Any],
    bootstrap_servers: str | None = None,
) -> ConnectorAssets:
    """The assets of a ``config`` whose templates name a DAG's params (``"{{ params.topic
    }}"``), with the values ``params`` gives them: with a DAG's ``params`` at parse time,
    the assets its runs use with the params' defaults, for an operator's ``inlets`` and
    ``outlets`` (a run triggered with other values reads and writes other data than they
    say). Topics on ``bootstrap_servers``, by default the operators' (``[connect]
    kafka_bootstrap_servers``). A param without a value, and any other template, stays
    unknown: no assets (see the module docstring)."""

    def value(match: re.Match[str]) -> str:
        found = params.get(match[1])
        return match[0] if found is None else str(found)

    rendered = {k: PARAM.sub(value, v) if isinstance(v, str) else v for k, v in config.items()}
    return connector_assets(rendered, bootstrap_servers or setting(KAFKA_BOOTSTRAP_SERVERS) or None)


def connector_lineage(config: Mapping[str, Any], bootstrap_servers: str | None) -> Any:
    """The ``OperatorLineage`` of a connector ``config`` for Airflow's OpenLineage provider
    (installed with this package's ``openlineage`` extra): what it reads as inputs, what it
    writes as outputs (:func:`connector_data`)."""
    from airflow.providers.common.compat.openlineage.facet import Dataset as Facet
    from airflow.providers.openlineage.extractors import OperatorLineage

    data = connector_data(config, bootstrap_servers)
    return OperatorLineage(
        inputs=[Facet(d.namespace, d.name) for d in data.reads],
        outputs=[Facet(d.namespace, d.name) for d in data.writes],
    )


def topic_asset(name: str, bootstrap_servers: str | None = None) -> Asset | None:
    """Topic ``name``'s asset (:func:`~airflow_provider_connect.connect.datasets.topic`) on
    ``bootstrap_servers``, by default the operators' (``[connect]
    kafka_bootstrap_servers``); None when no cluster is known."""
    servers = bootstrap_servers or setting(KAFKA_BOOTSTRAP_SERVERS)
    return _asset(topic(kafka_cluster(servers), name))


def file_asset(path: str) -> Asset | None:
    """A file's asset (:func:`~airflow_provider_connect.connect.datasets.file`)."""
    return _asset(file(path))


def table_asset(url: str, name: str, schema: str | None = None) -> Asset | None:
    """A table's asset (:func:`~airflow_provider_connect.connect.datasets.table`)."""
    return _asset(table(url, name, schema))


def _asset(dataset: Dataset | None) -> Asset | None:
    return Asset(uri=dataset.uri) if dataset is not None else None


def _assets(datasets: list[Dataset]) -> list[Asset]:
    return [Asset(uri=d.uri) for d in datasets]


class _Unknown(Exception):
    """A key the datasets depend on holds what only rendering or a config provider resolves."""


class _Known(Mapping[str, str]):
    """A config's values as text; reading one that holds a template or a placeholder (other
    than ``${topic}``, the connectors' own) raises :class:`_Unknown`."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._values = {k: str(v) for k, v in config.items() if v is not None}

    def __getitem__(self, key: str) -> str:
        value = self._values[key]
        if TEMPLATE in value or PLACEHOLDER.search(value.replace("${topic}", "")):
            raise _Unknown(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)
