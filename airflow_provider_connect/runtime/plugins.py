"""The plugins this runtime knows: built-in connectors and converters, and connectors that
installed packages register under the ``airflow_provider_connect.connectors`` entry-point
group (``name = "package.module:ConnectorClass"``)."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from airflow_provider_connect.connect.classes import class_name, load_class
from airflow_provider_connect.connect.connector import Connector
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connect.storage import (
    ByteArrayConverter,
    Converter,
    HeaderConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from airflow_provider_connect.connectors.audit import AuditSourceConnector
from airflow_provider_connect.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSourceConnector,
)
from airflow_provider_connect.connectors.jdbc.sink import JdbcSinkConnector
from airflow_provider_connect.connectors.jdbc.source import JdbcSourceConnector
from airflow_provider_connect.connectors.mirror import MirrorSourceConnector
from airflow_provider_connect.connectors.parquet import ParquetSinkConnector

ENTRY_POINT_GROUP = "airflow_provider_connect.connectors"
BUILT_IN_CONNECTORS: list[type[Connector]] = [
    AuditSourceConnector,
    FileStreamSinkConnector,
    FileStreamSourceConnector,
    JdbcSinkConnector,
    JdbcSourceConnector,
    MirrorSourceConnector,
    ParquetSinkConnector,
]
CONVERTERS: list[type] = [ByteArrayConverter, JsonConverter, SimpleHeaderConverter, StringConverter]


def connector_plugins() -> list[type[Connector]]:
    """Built-in connectors and the entry-point group's, by class name."""
    found = {class_name(c): c for c in BUILT_IN_CONNECTORS}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        cls = entry.load()
        if isinstance(cls, type) and issubclass(cls, Connector):
            found[class_name(cls)] = cls
    return [found[k] for k in sorted(found)]


def plugin_type(cls: type) -> str:
    if issubclass(cls, Connector):
        return "sink" if issubclass(cls, SinkConnector) else "source"
    if issubclass(cls, Converter):
        return "converter"
    return "header_converter" if issubclass(cls, HeaderConverter) else "unknown"


def plugin_info(cls: type) -> dict[str, Any]:
    """A plugin as ``GET /connector-plugins`` lists it."""
    version = cls().version() if issubclass(cls, Connector) else _package_version()
    return {"class": class_name(cls), "type": plugin_type(cls), "version": version}


def find_connector_plugin(name: str) -> type[Connector] | None:
    """The connector plugin called ``name``: its class path, its simple name with or
    without ``Connector``, or Kafka's Java name of a built-in."""
    for cls in connector_plugins():
        if name in (class_name(cls), cls.__name__, cls.__name__.removesuffix("Connector")):
            return cls
    try:
        cls = load_class(name)
    except ImportError:
        return None
    return cls if issubclass(cls, Connector) else None


def _package_version() -> str:
    from airflow_provider_connect import __version__

    return __version__
