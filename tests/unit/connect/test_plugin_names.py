"""Plugins are named as Kafka Connect names them: ``GET /connector-plugins`` lists each under
the Java class name it is registered under (its Python path stays an alias), config/validate
recommends and echoes those names, and only project-only plugins keep their Python path."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from airflow_provider_connect.connect import plugins
from airflow_provider_connect.connect.json.converter import JsonConverter
from airflow_provider_connect.connect.plugins import class_name, load_class
from airflow_provider_connect.connect.storage import StringConverter
from airflow_provider_connect.connectors.audit import AuditSourceConnector
from airflow_provider_connect.control.plugins import all_plugins, connector_plugins, plugin_info
from airflow_provider_connect.control.validation import error_lines, validate_connector_config
from airflow_provider_connect.transforms.insert_field import InsertFieldValue
from tests.plugins import KAFKA, KAFKA_ORDER, KAFKA_PLUGINS

PROJECT_ONLY = "airflow_provider_connect.connectors.audit.AuditSourceConnector"


def listed() -> list[dict[str, Any]]:
    return [plugin_info(cls, type_) for cls, type_ in all_plugins()]


def test_every_plugin_with_a_kafka_counterpart_is_listed_under_its_java_name() -> None:
    plugins = listed()
    assert {(p["class"], p["type"]) for p in plugins} >= KAFKA_PLUGINS
    python_named = {p["class"] for p in plugins if p["class"].startswith("airflow_provider_")}
    # what has no Java counterpart keeps its Python path: the project's own connectors
    assert python_named == {
        PROJECT_ONLY,
        PROJECT_ONLY.replace("audit.AuditSource", "parquet.ParquetSink"),
    }
    assert all(set(p) == {"class", "type", "version"} and p["version"] for p in plugins)


def test_the_listing_is_in_kafkas_order_each_type_by_class_name() -> None:
    plugins = listed()
    types = [p["type"] for p in plugins]
    assert sorted(types, key=KAFKA_ORDER.index) == types  # one run of each type, in order
    for type_ in KAFKA_ORDER:
        names = [p["class"] for p in plugins if p["type"] == type_]
        assert names and names == sorted(names), type_
    connectors = [plugin_info(c) for c in connector_plugins()]
    assert connectors == [p for p in plugins if p["type"] in ("sink", "source")]


@pytest.mark.parametrize(
    ("cls", "name"),
    [
        (StringConverter, KAFKA + "storage.StringConverter"),
        (InsertFieldValue, KAFKA + "transforms.InsertField$Value"),
        # registered as its package's re-export (airflow_provider_connect.connect.json)
        (JsonConverter, KAFKA + "json.JsonConverter"),
        (AuditSourceConnector, PROJECT_ONLY),
    ],
)
def test_a_class_is_named_as_listed_and_that_name_loads_it_back(cls: type, name: str) -> None:
    assert class_name(cls) == name
    assert load_class(name) is cls
    # the Python path stays an alias of the plugin
    assert load_class(f"{cls.__module__}.{cls.__qualname__}") is cls


def _forget_names() -> None:
    plugins._alias_paths.cache_clear()
    plugins._kafka_names.cache_clear()
    plugins._known_as.clear()


@pytest.fixture
def register(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[EntryPoint], None]]:
    """Adds an entry point to the installed ones; the registry forgets what it found."""
    added: list[EntryPoint] = []
    installed = plugins.entry_points

    def entries(group: str) -> list[EntryPoint]:
        return [*installed(group=group), *(e for e in added if e.group == group)]

    def add(entry: EntryPoint) -> None:
        added.append(entry)
        _forget_names()

    monkeypatch.setattr(plugins, "entry_points", entries)
    yield add
    _forget_names()


def _unimported_module(name: str, source: str) -> types.ModuleType:
    """A module that defines ``source``'s classes, not in ``sys.modules``: as a plugin's
    module is until something imports it by name."""
    module = types.ModuleType(name)
    exec(source, module.__dict__)
    assert name not in sys.modules
    return module


def test_a_registered_class_is_named_so_whatever_was_imported_before(
    register: Callable[[EntryPoint], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    orders = _unimported_module("example_connect_orders", "class OrdersConverter: ...")
    group = plugins.CONVERTERS_GROUP
    register(
        EntryPoint("com.example.OrdersConverter", "example_connect_orders:OrdersConverter", group)
    )
    assert class_name(orders.OrdersConverter) == "com.example.OrdersConverter"
    monkeypatch.setitem(sys.modules, orders.__name__, orders)
    plugins._known_as.clear()  # asked again once the module is imported: the same answer
    assert class_name(orders.OrdersConverter) == "com.example.OrdersConverter"
    # a class of the same name inside a registered package is not the package's plugin
    register(EntryPoint("com.example.Shipments", "example_connect_pkg:ShipmentsConverter", group))
    inside = _unimported_module("example_connect_pkg.mod", "class ShipmentsConverter: ...")
    package = _unimported_module("example_connect_pkg", "class ShipmentsConverter: ...")
    monkeypatch.setitem(sys.modules, package.__name__, package)
    assert class_name(inside.ShipmentsConverter) == "example_connect_pkg.mod.ShipmentsConverter"
    assert class_name(package.ShipmentsConverter) == "com.example.Shipments"


class _Unregistered:
    pass


def test_a_class_registered_nowhere_is_named_by_its_path_once() -> None:
    path = f"{__name__}._Unregistered"
    assert class_name(_Unregistered) == path
    walked = plugins._kafka_names.cache_info()
    assert [class_name(_Unregistered) for _ in range(3)] == [path] * 3
    assert plugins._kafka_names.cache_info() == walked  # the registry is not looked at again


def _validated(config: dict[str, str]) -> dict[str, dict[str, Any]]:
    base = {"name": "c", "topic": "t", "file": "/tmp/in.txt"}
    infos = validate_connector_config({**base, **config})
    assert error_lines(infos) == []
    return {c["value"]["name"]: c["value"] for c in infos["configs"]}


def test_configs_naming_java_classes_validate_and_recommendations_are_java_names() -> None:
    values = _validated(
        {
            "connector.class": KAFKA + "file.FileStreamSourceConnector",
            "key.converter": KAFKA + "converters.IntegerConverter",
            "value.converter": KAFKA + "json.JsonConverter",
            "header.converter": KAFKA + "storage.SimpleHeaderConverter",
            "transforms": "add,route",
            "transforms.add.type": KAFKA + "transforms.InsertField$Value",
            "transforms.add.static.field": "f",
            "transforms.add.static.value": "v",
            "transforms.add.predicate": "topic",
            "transforms.route.type": KAFKA + "transforms.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "$1-x",
            "predicates": "topic",
            "predicates.topic.type": KAFKA + "transforms.predicates.TopicNameMatches",
            "predicates.topic.pattern": "t.*",
        }
    )
    assert values["value.converter"]["value"] == KAFKA + "json.JsonConverter"
    assert values["transforms.add.type"]["value"] == KAFKA + "transforms.InsertField$Value"
    recommended = {name: value["recommended_values"] for name, value in values.items()}
    assert {KAFKA + "json.JsonConverter", "io.confluent.connect.avro.AvroConverter"} <= set(
        recommended["value.converter"]
    )
    assert KAFKA + "storage.SimpleHeaderConverter" in recommended["header.converter"]
    assert {KAFKA + "transforms.InsertField$Key", KAFKA + "transforms.InsertField$Value"} <= set(
        recommended["transforms.add.type"]
    )
    assert recommended["predicates.topic.type"] == [
        KAFKA + "transforms.predicates.HasHeaderKey",
        KAFKA + "transforms.predicates.RecordIsTombstone",
        KAFKA + "transforms.predicates.TopicNameMatches",
    ]
    for key in ("key.converter", "header.converter", "transforms.route.type"):
        assert recommended[key] == sorted(recommended[key])
        assert not [v for v in recommended[key] if v.startswith("airflow_provider_connect")]


def test_a_python_alias_validates_and_is_echoed_by_its_java_name() -> None:
    values = _validated(
        {
            "connector.class": "airflow_provider_connect.connectors.file.FileStreamSourceConnector",
            "value.converter": "airflow_provider_connect.connect.converters.IntegerConverter",
            "transforms": "add",
            "transforms.add.type": "airflow_provider_connect.transforms.insert_field.InsertFieldValue",
            "transforms.add.static.field": "f",
            "transforms.add.static.value": "v",
        }
    )
    assert values["value.converter"]["value"] == KAFKA + "converters.IntegerConverter"
    assert values["transforms.add.type"]["value"] == KAFKA + "transforms.InsertField$Value"


@pytest.mark.parametrize(
    "given",
    [
        "FileStreamSource",
        KAFKA + "file.FileStreamSourceConnector",
        "airflow_provider_connect.connectors.file.FileStreamSourceConnector",
    ],
)
def test_validation_answers_under_the_connector_class_as_given(given: str) -> None:
    """Kafka's validateConnectorConfig answers ``mergeConfigInfos(connType, ...)``, where
    ``connType`` is the config's ``connector.class``."""
    infos = validate_connector_config({"name": "c", "connector.class": given, "topic": "t"})
    assert infos["name"] == given
