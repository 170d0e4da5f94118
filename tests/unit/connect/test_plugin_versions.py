"""KIP-891's plugin version requirements: Maven's version specs (the cases of Maven's own
``VersionRangeTest``), Kafka's reading of them, the installed version of each kind of plugin,
and the per-field validation messages."""

from __future__ import annotations

import importlib.metadata
import re

import pytest
from packaging.version import Version

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.errors import ConfigException, ConnectException
from airflow_provider_connect.connect.plugin_versions import (
    VERSION_SPEC_VALIDATOR,
    InvalidVersionSpecification,
    VersionedPluginLoadingException,
    VersionRange,
    ensure_version,
    version_requirement,
)
from airflow_provider_connect.connect.storage import StringConverter
from airflow_provider_connect.control.plugins import (
    all_plugins,
    ensure_plugin_versions,
    plugin_config_def,
    plugin_info,
    plugin_version,
)
from airflow_provider_connect.control.status import installed_versions
from airflow_provider_connect.control.validation import error_lines, validate_connector_config
from airflow_provider_connect.transforms.routers import RegexRouter
from tests.connectors import SEQUENCE_SOURCE, SequenceSourceConnector

# -- Maven's syntax ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "written", "inside", "outside"),
    [
        ("(,1.0]", "(,1.0]", ["0.5", "1.0"], ["1.1"]),
        ("1.0", "1.0", ["0.1", "1.0", "9"], []),  # a soft version: recommended, no restriction
        ("[1.0]", "[1.0,1.0]", ["1.0", "1.0.0"], ["1.1", "0.9"]),
        ("[1.2,1.3]", "[1.2,1.3]", ["1.2", "1.2.5", "1.3"], ["1.1", "1.3.1"]),
        ("[1.0,2.0)", "[1.0,2.0)", ["1.0", "1.9.9", "2.0rc1"], ["2.0", "0.9"]),
        ("[1.5,)", "[1.5,)", ["1.5", "100"], ["1.4"]),
        ("(,1.0],[1.2,)", "(,1.0],[1.2,)", ["1.0", "1.2", "3"], ["1.1"]),
        ("(,1.1),(1.1,)", "(,1.1),(1.1,)", ["1.0", "1.2"], ["1.1"]),
        ("(1.0,2.0)", "(1.0,2.0)", ["1.5"], ["1.0", "2.0"]),
        ("[1.0,1.0]", "[1.0,1.0]", ["1.0"], ["1.1"]),  # allowed since Maven 3.9
        (" [1.0,2.0) , [3.0,4.0) ", None, ["1.5", "3.5"], ["2.5"]),  # blanks between sets
    ],
)
def test_maven_version_ranges(
    spec: str, written: str | None, inside: list[str], outside: list[str]
) -> None:
    parsed = VersionRange.from_spec(spec.strip())
    if written is not None:
        assert str(parsed) == written
    assert parsed.has_restrictions is (spec.strip() != "1.0")
    assert all(parsed.contains(v) for v in inside), inside
    assert not any(parsed.contains(v) for v in outside), outside


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("(1.0)", "Single version must be surrounded by []: (1.0)"),
        ("[1.0)", "Single version must be surrounded by []: [1.0)"),
        ("(1.0]", "Single version must be surrounded by []: (1.0]"),
        ("(1.0,1.0]", "Range defies version ordering: (1.0,1.0]"),
        ("[1.0,1.0)", "Range defies version ordering: [1.0,1.0)"),
        ("(1.0,1.0)", "Range defies version ordering: (1.0,1.0)"),
        ("[1.1,1.0]", "Range defies version ordering: [1.1,1.0]"),
        (
            "[1.0,1.2),1.3",
            "Only fully-qualified sets allowed in multiple set scenario: [1.0,1.2),1.3",
        ),
        ("[1.0,1.2),(1.1,1.3]", "Ranges overlap: [1.0,1.2),(1.1,1.3]"),
        ("[1.1,1.3),(1.0,1.2]", "Ranges overlap: [1.1,1.3),(1.0,1.2]"),
        ("(1.1,1.2],[1.0,1.1)", "Ranges overlap: (1.1,1.2],[1.0,1.1)"),
        ("[1.0", "Unbounded range: [1.0"),
        ("(,1.0],[1.2", "Unbounded range: (,1.0],[1.2"),
        # ordered as PEP 440: a bound must be a Python package version
        ("[1.0-SNAPSHOT,2.0)", "Range bound 1.0-SNAPSHOT is not a PEP 440 version"),
    ],
)
def test_invalid_specs_say_what_maven_says(spec: str, message: str) -> None:
    with pytest.raises(InvalidVersionSpecification, match=re.escape(message)):
        VersionRange.from_spec(spec)


def test_kafka_reads_a_soft_version_as_that_version_exactly() -> None:
    assert version_requirement(None) is None
    assert version_requirement("latest") is None
    assert version_requirement("  ") is None  # beyond Kafka: blank is no requirement
    exact = version_requirement(" 1.2 ")
    assert exact is not None and str(exact) == "[1.2,1.2]"
    assert exact.contains("1.2.0") and not exact.contains("1.3")
    ranged = version_requirement("[1.0,2.0)")
    assert ranged is not None and ranged.contains("1.3")
    named = version_requirement("test")  # any string as a single version: equality
    assert named is not None and named.contains("test") and not named.contains("1.0")


def test_a_version_outside_the_requirement_is_kafkas_loading_error() -> None:
    ensure_version("p.Q", "[1.0,2.0)", "1.5")
    ensure_version("p.Q", None, "anything")
    with pytest.raises(
        VersionedPluginLoadingException,
        match=r"^Plugin p.Q not found that matches the version range \[2.0,\), "
        r"available versions: \[1.5\]$",
    ):
        ensure_version("p.Q", "[2.0,)", "1.5")
    with pytest.raises(VersionedPluginLoadingException):  # unordered: in no interval
        ensure_version("p.Q", "[1.0,)", "test")


def test_the_validator_names_the_key_and_the_value() -> None:
    VERSION_SPEC_VALIDATOR.ensure_valid("connector.plugin.version", "[1.0,2.0)")
    VERSION_SPEC_VALIDATOR.ensure_valid("connector.plugin.version", None)
    with pytest.raises(ConfigException) as raised:
        VERSION_SPEC_VALIDATOR.ensure_valid("connector.plugin.version", "[1.0")
    assert str(raised.value) == (
        "Invalid value [1.0 for configuration connector.plugin.version: Unbounded range: [1.0"
    )


# -- installed versions ------------------------------------------------------------------------


class Versioned(StringConverter):
    def version(self) -> str:
        return "7.1"


def test_each_plugin_reports_its_installed_version() -> None:
    assert plugin_version(SequenceSourceConnector) == "1.0"  # a connector's version()
    assert plugin_version(Versioned) == "7.1"  # another plugin's own version()
    # else the distribution that provides its top-level package
    assert plugin_version(Version) == importlib.metadata.version("packaging")
    assert plugin_version(RegexRouter) == importlib.metadata.version("airflow-provider-connect")
    assert plugin_version(type("Local", (StringConverter,), {})) == __version__  # none


def test_every_kind_of_plugin_is_listed_with_its_types_and_versions() -> None:
    listed = [plugin_info(cls, type_) for cls, type_ in all_plugins()]
    assert {p["type"] for p in listed} == {
        "source",
        "sink",
        "converter",
        "header_converter",
        "transformation",
        "predicate",
    }
    string = "org.apache.kafka.connect.storage.StringConverter"
    assert {p["type"] for p in listed if p["class"] == string} == {"converter", "header_converter"}
    assert all(p["version"] for p in listed)


def test_a_connector_plugin_definition_has_the_shared_keys_with_its_version() -> None:
    definition = plugin_config_def(SequenceSourceConnector)
    assert definition.names()[0] == "topic"  # its own first
    assert definition.config_keys["tasks.max.enforce"].default is True
    assert definition.config_keys["connector.plugin.version"].default == "1.0"
    assert "exactly.once.support" in definition.names()  # a source connector's


def test_status_versions_are_the_installed_connector_and_task_classes() -> None:
    assert installed_versions(SEQUENCE_SOURCE) == ("1.0", "1.0")
    assert installed_versions("nope.Nope") == (None, None)


# -- validation --------------------------------------------------------------------------------


def errors(**config: str) -> list[str]:
    base = {"name": "c", "connector.class": SEQUENCE_SOURCE, "topic": "t"}
    return error_lines(validate_connector_config({**base, **config}))


def test_versions_that_match_validate() -> None:
    assert errors(**{"connector.plugin.version": "[1.0,2.0)"}) == []
    assert errors(**{"connector.plugin.version": "1.0"}) == []
    assert errors(**{"connector.plugin.version": "latest"}) == []
    installed = importlib.metadata.version("airflow-provider-connect")
    assert (
        errors(**{"key.converter": "StringConverter", "key.converter.plugin.version": installed})
        == []
    )


def test_a_connector_version_outside_the_range_is_an_error_on_its_keys() -> None:
    assert errors(**{"connector.plugin.version": "[2.0,)", "topic": ""}) == [
        "connector.class, connector.plugin.version: Plugin "
        "tests.connectors.SequenceSourceConnector not found that matches the version range "
        "[2.0,), available versions: [1.0]"
    ]  # as Kafka, the connector's own checks are skipped: not the version asked for


def test_an_unparsable_spec_is_an_error_on_its_key() -> None:
    assert errors(**{"connector.plugin.version": "(1.0)"}) == [
        "connector.plugin.version: Invalid value (1.0) for configuration "
        "connector.plugin.version: Single version must be surrounded by []: (1.0)"
    ]


def test_converter_transformation_and_predicate_versions_are_checked() -> None:
    installed = importlib.metadata.version("airflow-provider-connect")
    lines = errors(
        **{
            "key.converter": "StringConverter",
            "key.converter.plugin.version": "[9.0,)",
            "value.converter.plugin.version": "[9.0,)",  # no value.converter: the worker's
            "transforms": "route",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "a",
            "transforms.route.replacement": "b",
            "transforms.route.plugin.version": "(,0.0.1]",
            "transforms.route.predicate": "tomb",
            "predicates": "tomb",
            "predicates.tomb.type": "RecordIsTombstone",
            "predicates.tomb.plugin.version": f"[{installed}]",
        }
    )
    assert lines == [
        "key.converter, key.converter.plugin.version: Plugin "
        "org.apache.kafka.connect.storage.StringConverter not found that matches the "
        f"version range [9.0,), available versions: [{installed}]",
        "transforms.route.type, transforms.route.plugin.version: Plugin "
        "org.apache.kafka.connect.transforms.RegexRouter not found that matches the "
        f"version range (,0.0.1], available versions: [{installed}]",
    ]


def test_a_placeholder_requirement_waits_for_the_runtime() -> None:
    assert errors(**{"connector.plugin.version": "${env:VERSION}"}) == []


def test_the_runtime_checks_the_worker_converters_and_refuses_bad_specs() -> None:
    config = {"connector.class": SEQUENCE_SOURCE, "connector.plugin.version": "[1.0]"}
    worker = {"key.converter": StringConverter, "key.converter.plugin.version": "[9.0,)"}
    with pytest.raises(VersionedPluginLoadingException, match="StringConverter not found"):
        ensure_plugin_versions(config, worker)
    ensure_plugin_versions(config, {**worker, "key.converter.plugin.version": None})
    own = {**config, "key.converter": "StringConverter"}  # the connector's wins, unversioned
    ensure_plugin_versions(own, worker)
    with pytest.raises(ConnectException, match=r"^Invalid version range for connector.class: \[1$"):
        ensure_plugin_versions({**config, "connector.plugin.version": "[1"}, {})
