"""The plugins a runtime offers, as ``GET /connector-plugins`` lists them, the lookup of a
config's connector class, and each plugin's installed version, the one KIP-891's
``*.plugin.version`` requirements are checked against (the registry itself is
:mod:`airflow_provider_connect.connect.plugins`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import ConfigDef
from airflow_provider_connect.connect.connector import Connector
from airflow_provider_connect.connect.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    CONNECTOR_VERSION_CONFIG,
    CONVERTER_VERSION_CONFIGS,
    SINK_CONNECTOR_CONFIG_DEF,
    SOURCE_CONNECTOR_CONFIG_DEF,
)
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.plugin_versions import (
    PLUGIN_VERSION_SUFFIX,
    InvalidVersionSpecification,
    ensure_version,
)
from airflow_provider_connect.connect.plugins import (
    CONNECTORS_GROUP,
    CONVERTERS_GROUP,
    PREDICATES_GROUP,
    TRANSFORMS_GROUP,
    class_name,
    distribution_version,
    load_class,
    plugin_classes,
)
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connect.storage import Converter, HeaderConverter
from airflow_provider_connect.connect.transform_config import (
    PREDICATES_CONFIG,
    TRANSFORMS_CONFIG,
    TYPE_CONFIG,
    aliases,
)
from airflow_provider_connect.connect.transforms import Predicate, Transformation

_NON_CONNECTOR_TYPES: dict[str, tuple[type, str]] = {
    "converter": (Converter, CONVERTERS_GROUP),
    "header_converter": (HeaderConverter, CONVERTERS_GROUP),
    "transformation": (Transformation, TRANSFORMS_GROUP),
    "predicate": (Predicate, PREDICATES_GROUP),
}
"""Kafka's ``PluginType`` names of the other plugins ``/connector-plugins`` lists, to their
base class and registry group."""
PLUGIN_TYPES = ("sink", "source", *_NON_CONNECTOR_TYPES)


class UnknownPlugin(LookupError):
    """No class of that name, or one that is no plugin of :data:`PLUGIN_TYPES`; the message
    is Kafka's (REST 404 or 400)."""

    def __init__(self, message: str, *, found: bool) -> None:
        super().__init__(message)
        self.found = found


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


def connector_keys(name: str) -> list[str]:
    """The keys connector class ``name`` defines itself (its ``config()``), in its order;
    none when no connector of that name can be loaded."""
    try:
        cls = connector_class(name)
    except ImportError:
        return []
    return list(cls().config().config_keys)


def plugin_class(name: str) -> type:
    """The plugin of any listed type that ``name`` names; UnknownPlugin (Kafka's
    ``connectorPluginConfig`` messages) when there is none (an abstract class is none, as
    Kafka's plugin scan finds none)."""
    try:
        cls = load_class(name)
    except ImportError:
        cls = None
    if cls is None or inspect.isabstract(cls):
        raise UnknownPlugin(f"Unknown plugin {name}.", found=False)
    if not issubclass(cls, (Connector, *(base for base, _ in _NON_CONNECTOR_TYPES.values()))):
        raise UnknownPlugin(
            f"Invalid plugin class {name}. Valid types are {', '.join(PLUGIN_TYPES)}.",
            found=True,
        )
    return cls


def connector_type(connector_class_name: str) -> str:
    """``source``, ``sink``, or ``unknown`` when the class cannot be loaded."""
    try:
        cls = connector_class(connector_class_name)
    except ImportError:
        return "unknown"
    return "sink" if issubclass(cls, SinkConnector) else "source"


_LISTING_ORDER = ("transformation", "predicate", "converter", "header_converter")
"""The order Kafka's ``ConnectorPluginsResource`` lists the other plugin types in."""


def connector_plugins() -> list[type]:
    """The connector plugins as ``GET /connector-plugins`` lists them: sink connectors, then
    source connectors, each by the class name it is known by (Kafka's sorted plugin sets)."""
    connectors = [c for c in plugin_classes(CONNECTORS_GROUP) if issubclass(c, Connector)]
    return sorted(connectors, key=lambda c: not issubclass(c, SinkConnector))


def all_plugins() -> list[tuple[type, str]]:
    """Every registered plugin with each type it has, as Kafka 4 lists them with
    ``connectorsOnly=false``: sink and source connectors, transformations, predicates,
    converters, then header converters (a class that is both, as ``StringConverter``, is
    listed as each), each type by class name."""
    found = [(c, plugin_type(c)) for c in connector_plugins()]
    for type_ in _LISTING_ORDER:
        base, group = _NON_CONNECTOR_TYPES[type_]
        found += [(c, type_) for c in plugin_classes(group) if issubclass(c, base)]
    return found


def plugin_type(cls: type) -> str:
    """The first of :data:`PLUGIN_TYPES` that ``cls`` has, else ``unknown``."""
    if issubclass(cls, Connector):
        return "sink" if issubclass(cls, SinkConnector) else "source"
    return next(
        (t for t, (base, _) in _NON_CONNECTOR_TYPES.items() if issubclass(cls, base)), "unknown"
    )


@functools.lru_cache(maxsize=1024)
def plugin_version(cls: type) -> str:
    """The installed version of a plugin class: a connector's ``version()``; another
    plugin's own ``version()`` when it defines one, else the version of the distribution
    that provides its top-level package, else this project's version. Worked out once per
    class in a process, which runs one installed version of each."""
    if issubclass(cls, Connector) or callable(getattr(cls, "version", None)):
        return str(cls().version())
    return distribution_version(cls) or __version__


def plugin_info(cls: type, type_: str | None = None) -> dict[str, Any]:
    """A plugin as ``GET /connector-plugins`` lists it (Kafka's ``PluginInfo``): the class
    name it is known by (its Kafka class name where it is registered under one, else its
    Python path), as ``type_`` (default: its first type), with its installed version."""
    return {
        "class": class_name(cls),
        "type": type_ or plugin_type(cls),
        "version": plugin_version(cls),
    }


def plugin_config_def(cls: type) -> ConfigDef:
    """The definition ``GET /connector-plugins/{plugin}/config`` lists, as Kafka 4 does: a
    plugin's own keys; for a connector, followed by the connector keys every connector
    shares that it does not define itself, with ``connector.plugin.version`` defaulting to
    the installed version."""
    own: ConfigDef = cls().config()
    if not issubclass(cls, Connector):
        return own
    shared = (
        SINK_CONNECTOR_CONFIG_DEF if issubclass(cls, SinkConnector) else SOURCE_CONNECTOR_CONFIG_DEF
    )
    return own.merged(
        ConfigDef(
            replace(key, default=plugin_version(cls))
            if key.name == CONNECTOR_VERSION_CONFIG
            else key
            for key in shared.config_keys.values()
            if key.name not in own.config_keys
        )
    )


@dataclass(frozen=True)
class VersionedPlugin:
    """A plugin a connector config names (``plugin``: its class, or the name the config
    gives), under ``class_key``, with the requirement of its ``version_key`` (``spec``)."""

    class_key: str
    version_key: str
    plugin: Any
    spec: str | None

    def plugin_class(self) -> type:
        """The class named; ImportError when there is none."""
        if isinstance(self.plugin, type):
            return self.plugin
        if self.class_key == CONNECTOR_CLASS_CONFIG:
            return connector_class(self.plugin)
        return load_class(self.plugin)


def versioned_plugins(
    config: Mapping[str, Any], worker: Mapping[str, Any] | None = None
) -> list[VersionedPlugin]:
    """Every plugin ``config`` names with its version requirement (KIP-891): the connector,
    each converter the config sets, each transformation's and predicate's type. Given
    ``worker`` (the worker's converter keys and their version keys), a converter the config
    does not set is the worker's, with the worker's requirement."""
    found = [
        VersionedPlugin(
            CONNECTOR_CLASS_CONFIG,
            CONNECTOR_VERSION_CONFIG,
            config.get(CONNECTOR_CLASS_CONFIG),
            config.get(CONNECTOR_VERSION_CONFIG),
        )
    ]
    for class_key, version_key in CONVERTER_VERSION_CONFIGS.items():
        source = config if config.get(class_key) is not None else worker or {}
        if source.get(class_key) is not None:
            found.append(
                VersionedPlugin(class_key, version_key, source[class_key], source.get(version_key))
            )
    for kind in (TRANSFORMS_CONFIG, PREDICATES_CONFIG):
        for alias in aliases(config, kind):
            prefix = f"{kind}.{alias}."
            if config.get(prefix + TYPE_CONFIG) is not None:
                found.append(
                    VersionedPlugin(
                        prefix + TYPE_CONFIG,
                        prefix + PLUGIN_VERSION_SUFFIX,
                        config[prefix + TYPE_CONFIG],
                        config.get(prefix + PLUGIN_VERSION_SUFFIX),
                    )
                )
    return found


def ensure_plugin_versions(config: Mapping[str, Any], worker: Mapping[str, Any]) -> None:
    """What the runtime checks where a connector starts: raises
    VersionedPluginLoadingException (Kafka's message) for the first plugin whose installed
    version misses its requirement, ConnectException (Kafka's "Invalid version range for")
    for a requirement that does not parse. A plugin that cannot be loaded is left to the
    start, which reports it."""
    for versioned in versioned_plugins(config, worker):
        try:
            cls = versioned.plugin_class()
        except ImportError:
            continue
        try:
            ensure_version(class_name(cls), versioned.spec, plugin_version(cls))
        except InvalidVersionSpecification:
            raise ConnectException(
                f"Invalid version range for {versioned.class_key}: {versioned.spec}"
            ) from None
