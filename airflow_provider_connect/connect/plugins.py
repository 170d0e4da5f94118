"""The plugin registry: every connector, converter, transformation, predicate and config
provider (built-in or third-party) is an entry point of one of the groups below, and config values name plugins
the way Kafka Connect users know them.

A package registers a plugin under its group, named after the plugin's Kafka class name when
it has one (else its class name), for example in ``pyproject.toml``::

    [project.entry-points."airflow_provider_connect.connectors"]
    "com.example.OrdersSourceConnector" = "example_connect.orders:OrdersSourceConnector"

A config may then name it by that name, by its simple name (``OrdersSourceConnector``; a
connector also without the ``Connector`` suffix, ``OrdersSource``), by its Python class name,
or by its dotted Python path (``example_connect.orders.OrdersSourceConnector``, also
``example_connect.orders:OrdersSourceConnector``). A nested class is named as Kafka names
one, ``MaskField$Value``, or as Python does, ``MaskField.Value``. An alias two plugins share names neither,
as in Kafka Connect, unless it is one's Python class name (:func:`_alias_paths`); any class
can still be named by its dotted path. This module names no
plugin itself: the built-ins are declared in this distribution's own entry points.

The entry points are also the one mapping the other way: a plugin registered under a Kafka
class name (a dotted entry point name) is known by that name wherever a class is named, as
``GET /connector-plugins`` lists it, as config/validate recommends it, in error contexts
(:func:`class_name`); a plugin without one is known by its dotted Python path.
"""

from __future__ import annotations

import functools
import importlib
import logging
import sys
from collections import defaultdict
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points, packages_distributions, version

log = logging.getLogger(__name__)

CONNECTORS_GROUP = "airflow_provider_connect.connectors"
CONVERTERS_GROUP = "airflow_provider_connect.converters"
"""Converters and header converters (a class may be both, as ``StringConverter`` is)."""
TRANSFORMS_GROUP = "airflow_provider_connect.transforms"
PREDICATES_GROUP = "airflow_provider_connect.predicates"
CONFIG_PROVIDERS_GROUP = "airflow_provider_connect.config_providers"
PLUGIN_GROUPS = (
    CONNECTORS_GROUP,
    CONVERTERS_GROUP,
    TRANSFORMS_GROUP,
    PREDICATES_GROUP,
    CONFIG_PROVIDERS_GROUP,
)


def _python_path(entry: EntryPoint) -> str:
    return f"{entry.module}:{entry.attr}"


def _without_suffix(entry: EntryPoint, names: set[str]) -> set[str]:
    """``names`` and, for a connector, those ending in ``Connector`` without it."""
    if entry.group == CONNECTORS_GROUP:
        names |= {n.removesuffix("Connector") for n in names if n.endswith("Connector")}
    return names


def _own_aliases(entry: EntryPoint) -> set[str]:
    """The names of ``entry``'s plugin only it can claim: its registered name, its Python
    class name and path."""
    return _without_suffix(entry, {entry.name, entry.attr, f"{entry.module}.{entry.attr}"})


def _aliases(entry: EntryPoint) -> set[str]:
    """The names a config may use for the plugin of ``entry``: its own and the simple name
    of its registered (Kafka) class name."""
    return _own_aliases(entry) | _without_suffix(entry, {entry.name.rpartition(".")[2]})


@functools.cache
def _alias_paths() -> dict[str, str]:
    """Every unambiguous alias of every registered plugin, to its dotted Python path. An
    alias several plugins share names the one whose own name (its Python class name) it
    is, when exactly one is: ``JdbcSinkConnector`` stays Confluent's JDBC sink beside
    Debezium's ``io.debezium.connector.jdbc.JdbcSinkConnector``; else it names none."""
    candidates: dict[str, set[str]] = defaultdict(set)
    owners: dict[str, set[str]] = defaultdict(set)
    for group in PLUGIN_GROUPS:
        for entry in entry_points(group=group):
            for alias in _aliases(entry):
                candidates[alias].add(_python_path(entry))
            for alias in _own_aliases(entry):
                owners[alias].add(_python_path(entry))
    resolved = {}
    for alias, paths in candidates.items():
        if len(paths) == 1:
            resolved[alias] = paths.pop()
        elif len(owners[alias]) == 1:
            resolved[alias] = next(iter(owners[alias]))
        else:
            log.warning("ignoring the ambiguous plugin alias %s of %s", alias, sorted(paths))
    return resolved


def plugin_path(name: str) -> str:
    """The ``module:Class`` path of the plugin a config value names, found without importing
    it; ``name`` itself when it is no plugin's alias."""
    return _alias_paths().get(name, name)


def _attribute(found: object, dotted: str) -> object:
    """``found``'s attribute ``dotted`` (``Outer.Inner``: an attribute's attribute), or None."""
    for part in dotted.split("."):
        found = getattr(found, part, None)
    return found


def load_class(name: str) -> type:
    """The class a config value names (see the module docstring); raises ``ImportError``
    naming it when there is none."""
    path = plugin_path(name)
    if ":" in path:
        module_name, _, attr = path.partition(":")
        candidates = [(module_name, attr)]
    else:  # module.Class, or module.Outer.Inner: the longest importable module wins
        parts = path.split(".")
        candidates = [
            (".".join(parts[:i]), ".".join(parts[i:])) for i in range(len(parts) - 1, 0, -1)
        ]
    cause: ImportError | None = None
    for module_name, attr in candidates:
        if not module_name or module_name.startswith("."):  # no module (".Foo"): not a name
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            cause = cause or e  # the longest module's failure says most
            continue
        found = _attribute(module, attr)
        if isinstance(found, type):
            return found
        if found is not None:
            raise ImportError(f"{name} is not a class.")
        break
    raise ImportError(f"Class {name} could not be found.") from cause


@functools.cache
def _kafka_names() -> dict[tuple[str, str], str]:
    """The Kafka class name of each plugin registered under one, by the ``(module,
    attribute)`` of its entry point's value: every entry point named with a dotted name that
    names its plugin alone, the first in the order of :data:`PLUGIN_GROUPS`, then by name,
    winning. Read from the entry points' values, importing nothing."""
    resolved = _alias_paths()
    names: dict[tuple[str, str], str] = {}
    for group in PLUGIN_GROUPS:
        for entry in sorted(entry_points(group=group), key=lambda e: e.name):
            if "." in entry.name and resolved.get(entry.name) == _python_path(entry):
                names.setdefault((entry.module, entry.attr), entry.name)
    return names


_known_as: dict[type, str] = {}
"""The name of each class :func:`class_name` was asked about (whether registered or not)."""


def _registered_name(cls: type) -> str | None:
    """The Kafka class name of the entry point whose value names ``cls``: by the module that
    defines it, or by a package that module is inside of and that exports it (an entry point
    may name the package's re-export). A package is imported before any module inside it,
    so the answer does not depend on what was imported when."""
    names = _kafka_names()
    qualname = cls.__qualname__
    module = cls.__module__
    name = names.get((module, qualname))
    while name is None and "." in module:
        module = module.rpartition(".")[0]
        name = names.get((module, qualname))
        if name is not None and _attribute(sys.modules.get(module), qualname) is not cls:
            name = None  # another class of the same name is registered there
    return name


def class_name(cls: type) -> str:
    """The name ``cls`` is known by, which :func:`load_class` resolves back to it: the Kafka
    class name a plugin is registered under (``org.apache.kafka.connect.transforms.Cast$Value``)
    when it is the class that entry point names, else its dotted Python path. The same
    answer every time, whatever was imported before; found once per class (one dictionary
    look-up afterwards, a class registered nowhere included), importing nothing."""
    known = _known_as.get(cls)
    if known is None:
        known = _registered_name(cls) or f"{cls.__module__}.{cls.__qualname__}"
        _known_as[cls] = known
    return known


def short_names(cls: type) -> list[str]:
    """The names without a package that a config may give ``cls`` and that :func:`load_class`
    resolves to it: its simple class name (and its Kafka class name's last part), for a
    connector also without the ``Connector`` suffix (``FileStreamSourceConnector``,
    ``FileStreamSource``). Only aliases that name ``cls`` alone, through the entry point
    it was loaded from; none for a class registered nowhere. Imports nothing."""
    simple = dict.fromkeys((cls.__name__, class_name(cls).rpartition(".")[2]))
    candidates = dict.fromkeys([*simple, *(n.removesuffix("Connector") for n in simple)])
    resolved = _alias_paths()
    return [n for n in candidates if n and _names(resolved.get(n), cls)]


def _names(path: str | None, cls: type) -> bool:
    """True when ``path`` (``module:attribute``) is ``cls`` in an imported module."""
    module, _, attr = (path or "").partition(":")
    return bool(attr) and _attribute(sys.modules.get(module), attr) is cls


def plugin_classes(group: str) -> list[type]:
    """The classes registered under ``group``, sorted by the name each is known by
    (:func:`class_name`: its Kafka class name, else its dotted path); an entry point that fails to
    load is logged and left out (a broken third-party package must not hide the others)."""
    found: dict[str, type] = {}
    for entry in entry_points(group=group):
        try:
            cls = entry.load()
        except Exception:
            log.exception("plugin %s (%s) could not be loaded", entry.name, entry.value)
            continue
        if isinstance(cls, type):
            found[class_name(cls)] = cls
    return [found[k] for k in sorted(found)]


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    return packages_distributions()


def distribution_version(cls: type) -> str | None:
    """The version of the installed distribution that provides the top-level package of
    ``cls``'s module; None when no distribution does (a module on ``sys.path`` only)."""
    names = _distributions().get(cls.__module__.partition(".")[0])
    return version(names[0]) if names else None
