"""The plugins a runtime offers, as ``GET /connector-plugins`` lists them, and the lookup of a
config's connector class (the registry itself is :mod:`airflow_provider_connect.connect.plugins`)."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.connector import Connector
from airflow_provider_connect.connect.plugins import (
    CONNECTORS_GROUP,
    CONVERTERS_GROUP,
    class_name,
    load_class,
    plugin_classes,
)
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connect.storage import Converter, HeaderConverter


def connector_class(name: str) -> type[Connector]:
    """The connector class a config names; raises ImportError with Kafka's message."""
    try:
        cls = load_class(name)
    except ImportError:
        cls = None
    if cls is None or not issubclass(cls, Connector):
        raise ImportError(
            f"Failed to find any class that implements Connector and which name matches {name}"
        )
    return cls


def connector_type(connector_class_name: str) -> str:
    """``source``, ``sink``, or ``unknown`` when the class cannot be loaded."""
    try:
        cls = connector_class(connector_class_name)
    except ImportError:
        return "unknown"
    return "sink" if issubclass(cls, SinkConnector) else "source"


def connector_plugins() -> list[type]:
    return [c for c in plugin_classes(CONNECTORS_GROUP) if issubclass(c, Connector)]


def converter_plugins() -> list[type]:
    return [
        c for c in plugin_classes(CONVERTERS_GROUP) if issubclass(c, (Converter, HeaderConverter))
    ]


def plugin_type(cls: type) -> str:
    if issubclass(cls, Connector):
        return "sink" if issubclass(cls, SinkConnector) else "source"
    if issubclass(cls, Converter):
        return "converter"
    return "header_converter" if issubclass(cls, HeaderConverter) else "unknown"


def plugin_info(cls: type) -> dict[str, Any]:
    """A plugin as ``GET /connector-plugins`` lists it."""
    version = cls().version() if issubclass(cls, Connector) else __version__
    return {"class": class_name(cls), "type": plugin_type(cls), "version": version}
