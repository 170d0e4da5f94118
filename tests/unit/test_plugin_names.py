"""Plugins are named as Kafka Connect names them: ``GET /connector-plugins`` lists each under
the Java class name it is registered under (its Python path stays an alias), config/validate
recommends and echoes those names, and only project-only plugins keep their Python path."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.plugins import class_name, load_class
from airflow_provider_connect.connect.storage import StringConverter
from airflow_provider_connect.connectors.audit import AuditSourceConnector
from airflow_provider_connect.control.plugins import all_plugins, connector_plugins, plugin_info
from airflow_provider_connect.control.validation import error_lines, validate_connector_config
from airflow_provider_connect.transforms.insert_field import InsertFieldValue

KAFKA = "org.apache.kafka.connect."
# Kafka's and Confluent's names of plugins this project has, with the types Kafka lists them as
KAFKA_PLUGINS = {
    (KAFKA + "file.FileStreamSinkConnector", "sink"),
    (KAFKA + "file.FileStreamSourceConnector", "source"),
    ("io.confluent.connect.jdbc.JdbcSourceConnector", "source"),
    ("io.debezium.connector.postgresql.PostgresConnector", "source"),
    (KAFKA + "converters.IntegerConverter", "converter"),
    (KAFKA + "converters.IntegerConverter", "header_converter"),
    (KAFKA + "json.JsonConverter", "converter"),
    (KAFKA + "storage.StringConverter", "converter"),
    (KAFKA + "storage.StringConverter", "header_converter"),
    (KAFKA + "storage.SimpleHeaderConverter", "header_converter"),
    ("io.confluent.connect.avro.AvroConverter", "converter"),
    (KAFKA + "transforms.InsertField$Key", "transformation"),
    (KAFKA + "transforms.InsertField$Value", "transformation"),
    (KAFKA + "transforms.RegexRouter", "transformation"),
    ("io.debezium.transforms.ExtractNewRecordState", "transformation"),
    (KAFKA + "transforms.predicates.TopicNameMatches", "predicate"),
}
PROJECT_ONLY = "airflow_provider_connect.connectors.audit.AuditSourceConnector"
KAFKA_ORDER = ["sink", "source", "transformation", "predicate", "converter", "header_converter"]


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
        (AuditSourceConnector, PROJECT_ONLY),
    ],
)
def test_a_class_is_named_as_listed_and_that_name_loads_it_back(cls: type, name: str) -> None:
    assert class_name(cls) == name
    assert load_class(name) is cls
    # the Python path stays an alias of the plugin
    assert load_class(f"{cls.__module__}.{cls.__qualname__}") is cls


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
