"""The plugin registry: built-ins are entry points like any third-party plugin, and configs
name them as Kafka Connect users do."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from airflow_provider_connect.connect import plugins
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connect.storage import StringConverter
from airflow_provider_connect.connectors.file import FileStreamSourceConnector


@pytest.mark.parametrize(
    "name",
    [
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "FileStreamSourceConnector",
        "FileStreamSource",
        "airflow_provider_connect.connectors.file.FileStreamSourceConnector",
        "airflow_provider_connect.connectors.file:FileStreamSourceConnector",
    ],
)
def test_a_connector_resolves_by_every_name_kafka_users_write(name: str) -> None:
    assert plugins.load_class(name) is FileStreamSourceConnector


def test_converters_resolve_by_their_kafka_names() -> None:
    assert plugins.load_class("org.apache.kafka.connect.json.JsonConverter") is JsonConverter
    assert plugins.load_class("StringConverter") is StringConverter


def test_built_ins_are_listed_from_their_entry_points() -> None:
    connectors = plugins.plugin_classes(plugins.CONNECTORS_GROUP)
    assert FileStreamSourceConnector in connectors
    assert {c.__name__ for c in connectors} >= {
        "AuditSourceConnector",
        "FileStreamSinkConnector",
        "JdbcSinkConnector",
        "JdbcSourceConnector",
        "MirrorSourceConnector",
        "ParquetSinkConnector",
    }
    assert JsonConverter in plugins.plugin_classes(plugins.CONVERTERS_GROUP)


def test_a_plugins_short_names_are_those_that_name_it_alone() -> None:
    """What the Connectors page offers beside the class name a plugin is known by."""
    names = plugins.short_names(FileStreamSourceConnector)
    assert names == ["FileStreamSourceConnector", "FileStreamSource"]
    assert plugins.short_names(JsonConverter) == ["JsonConverter"]
    assert all(plugins.load_class(n) is FileStreamSourceConnector for n in names)

    class Unregistered:
        pass

    assert plugins.short_names(Unregistered) == []


def connector_aliases(monkeypatch: pytest.MonkeyPatch, *entries: tuple[str, str]) -> dict[str, str]:
    """The aliases of connectors registered as ``(name, module:Class)`` entries, alone."""
    points = [EntryPoint(name, value, plugins.CONNECTORS_GROUP) for name, value in entries]
    monkeypatch.setattr(
        plugins, "entry_points", lambda group: points if group == plugins.CONNECTORS_GROUP else []
    )
    plugins._alias_paths.cache_clear()
    try:
        return plugins._alias_paths()
    finally:
        plugins._alias_paths.cache_clear()


def test_an_alias_two_plugins_share_names_neither(monkeypatch: pytest.MonkeyPatch) -> None:
    aliases = connector_aliases(
        monkeypatch,
        ("a.Shared", "pkg_a.mod:SharedConnector"),
        ("b.Shared", "pkg_b.mod:SharedConnector"),
        ("Own", "pkg_c.mod:OwnConnector"),
    )
    assert "Shared" not in aliases and "SharedConnector" not in aliases
    assert aliases["a.Shared"] == "pkg_a.mod:SharedConnector"
    assert aliases["Own"] == aliases["OwnConnector"] == "pkg_c.mod:OwnConnector"


def test_a_shared_simple_name_names_the_plugin_whose_python_class_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Confluent's and Debezium's JDBC sinks share the simple name ``JdbcSinkConnector``:
    it stays the one whose Python class has that name, as configs written before knew it."""
    aliases = connector_aliases(
        monkeypatch,
        ("io.confluent.Sink", "pkg_a.mod:Sink"),
        ("io.debezium.Sink", "pkg_b.mod:DebeziumSink"),
    )
    assert aliases["Sink"] == "pkg_a.mod:Sink"
    assert aliases["io.debezium.Sink"] == aliases["DebeziumSink"] == "pkg_b.mod:DebeziumSink"


@pytest.mark.parametrize("name", [".Foo", "..a.B", ".", ""])
def test_a_name_without_a_module_is_no_class(name: str) -> None:
    """Found by the REST fuzz test: ".Foo" once reached ``import_module("")``."""
    with pytest.raises(ImportError, match="could not be found"):
        plugins.load_class(name)
