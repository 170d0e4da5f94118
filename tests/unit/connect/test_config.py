"""ConfigDef: parsing, validation errors, ConfigInfos output, password masking, and the
common connector configuration."""

from __future__ import annotations

import logging

import pytest

from airflow_provider_connect.connect.config import (
    CompositeValidator,
    Config,
    ConfigDef,
    ConfigException,
    Importance,
    LambdaValidator,
    NonEmptyString,
    Password,
    Range,
    Recommender,
    Type,
    ValidList,
    ValidString,
    config_infos,
    originals_with_prefix,
    parse_value,
)
from airflow_provider_connect.connect.connector_config import (
    CONNECTOR_CONFIG_DEF,
    SINK_CONNECTOR_CONFIG_DEF,
    validate_sink_topics,
)
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.storage import StringConverter


@pytest.mark.parametrize(
    ("type_", "raw", "parsed"),
    [
        (Type.BOOLEAN, " TRUE ", True),
        (Type.BOOLEAN, False, False),
        (Type.STRING, "  padded ", "padded"),
        (Type.INT, "42", 42),
        (Type.SHORT, "-32768", -32768),
        (Type.LONG, str(2**63 - 1), 2**63 - 1),
        (Type.DOUBLE, "1.5", 1.5),
        (Type.DOUBLE, 2, 2.0),
        (Type.LIST, "a, b ,c", ["a", "b", "c"]),
        (Type.LIST, "", []),
        (Type.LIST, ["x"], ["x"]),
        (Type.CLASS, "JsonConverter", JsonConverter),
        (Type.CLASS, "org.apache.kafka.connect.storage.StringConverter", StringConverter),
        (Type.CLASS, "airflow_provider_connect.connect.json.JsonConverter", JsonConverter),
        (Type.CLASS, "airflow_provider_connect.connect.json:JsonConverter", JsonConverter),
        (Type.PASSWORD, "s3cret", Password("s3cret")),
    ],
)
def test_parses_each_type(type_: Type, raw: object, parsed: object) -> None:
    assert parse_value("k", raw, type_) == parsed


@pytest.mark.parametrize(
    ("type_", "raw", "message"),
    [
        (
            Type.BOOLEAN,
            "yes",
            "Invalid value yes for configuration k: Expected value to be either true or false",
        ),
        (Type.INT, "4x", "Invalid value 4x for configuration k: Not a number of type INT"),
        (Type.INT, str(2**31), "Not a number of type INT"),
        (Type.INT, 1.5, "Expected value to be a 32-bit integer, but it was a float"),
        (Type.SHORT, "40000", "Not a number of type SHORT"),
        (Type.LONG, "x", "Not a number of type LONG"),
        (Type.DOUBLE, "x", "Not a number of type DOUBLE"),
        (Type.STRING, 5, "Expected value to be a string, but it was a int"),
        (Type.LIST, 5, "Expected a comma separated list."),
        (Type.CLASS, "no.such.Thing", "Class no.such.Thing could not be found."),
        (Type.PASSWORD, 5, r"Invalid value \[hidden\] for configuration k"),
    ],
)
def test_parse_errors_name_the_key(type_: Type, raw: object, message: str) -> None:
    with pytest.raises(ConfigException, match=message) as e:
        parse_value("k", raw, type_)
    assert e.value.name == "k"


@pytest.mark.parametrize(
    ("validator", "value", "message"),
    [
        (Range.at_least(1), 0, "Value must be at least 1"),
        (Range.between(1, 5), 6, "Value must be no more than 5"),
        (Range.at_least(1), None, "Value must be non-null"),
        (ValidString("a", "b"), "c", "String must be one of: a, b"),
        (
            ValidString("a", "b", case_sensitive=False),
            "c",
            r"String must be one of \(case insensitive\): a, b",
        ),
        (ValidList("a", "b"), ["a", "z"], "list values must be one of: a, b"),
        (NonEmptyString(), "  ", "String must be non-empty"),
        (CompositeValidator(NonEmptyString(), ValidString("x")), "y", "String must be one of: x"),
    ],
)
def test_validators(validator, value: object, message: str) -> None:
    with pytest.raises(ConfigException, match=message):
        validator.ensure_valid("k", value)


def test_validators_accept_valid_values_and_describe_themselves() -> None:
    Range.between(1, 5).ensure_valid("k", 5)
    ValidString("a", case_sensitive=False).ensure_valid("k", "A")
    ValidList("a").ensure_valid("k", ["a", "a"])
    assert str(Range.at_least(1)) == "[1,...]"
    assert str(Range.between(1, 5)) == "[1,...,5]"
    assert str(ValidString("a", "b")) == "[a, b]"


def definition() -> ConfigDef:
    def even(name: str, value: object) -> None:
        if value is not None and value % 2:
            raise ConfigException.invalid(name, value, "must be even")

    return (
        ConfigDef()
        .define(
            "host",
            Type.STRING,
            importance=Importance.HIGH,
            documentation="Host.",
            group="Connection",
            order_in_group=1,
        )
        .define(
            "port",
            Type.INT,
            5432,
            Range.between(1, 65535),
            Importance.HIGH,
            "Port.",
            group="Connection",
            order_in_group=2,
        )
        .define(
            "password",
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "Secret.",
            group="Connection",
            order_in_group=3,
        )
        .define(
            "batch",
            Type.INT,
            2,
            LambdaValidator(even, "an even number"),
            documentation="Batch.",
            group="Tuning",
        )
    )


def test_parse_fills_defaults_and_raises_on_the_first_problem() -> None:
    assert definition().parse({"host": "db", "password": "pw"}) == {
        "host": "db",
        "port": 5432,
        "password": Password("pw"),
        "batch": 2,
    }
    with pytest.raises(
        ConfigException, match='Missing required configuration "host" which has no default value.'
    ):
        definition().parse({})
    with pytest.raises(
        ConfigException, match="Invalid value 3 for configuration batch: must be even"
    ):
        definition().parse({"host": "db", "batch": "3"})


def test_validate_reports_every_error_in_config_infos_shape() -> None:
    values = definition().validate(
        {"port": "99999", "password": "pw", "batch": "3", "unknown": "x"}
    )
    infos = config_infos("MyConnector", definition(), values)
    assert infos["name"] == "MyConnector"
    assert infos["error_count"] == 3
    assert infos["groups"] == ["Connection", "Tuning"]
    by_name = {c["value"]["name"]: c for c in infos["configs"]}
    assert set(by_name) == {"host", "port", "password", "batch"}
    assert by_name["host"]["value"]["errors"] == [
        'Missing required configuration "host" which has no default value.'
    ]
    assert by_name["port"]["value"] == {
        "name": "port",
        "value": "99999",
        "recommended_values": [],
        "errors": ["Invalid value 99999 for configuration port: Value must be no more than 65535"],
        "visible": True,
    }
    assert by_name["port"]["definition"] == {
        "name": "port",
        "type": "INT",
        "required": False,
        "default_value": "5432",
        "importance": "HIGH",
        "documentation": "Port.",
        "group": "Connection",
        "order": 2,
        "width": "NONE",
        "display_name": "port",
        "dependents": [],
    }
    assert by_name["host"]["definition"]["required"] is True
    assert by_name["host"]["definition"]["default_value"] is None


def test_recommenders_fill_recommended_values_and_visibility() -> None:
    class Modes(Recommender):
        def valid_values(self, name, parsed):
            return ["a", "b"] if parsed["enabled"] else []

        def visible(self, name, parsed):
            return bool(parsed["enabled"])

    d = (
        ConfigDef()
        .define("enabled", Type.BOOLEAN, False)
        .define("mode", Type.STRING, "a", recommender=Modes())
    )
    on = d.validate_all({"enabled": "true"})["mode"]
    off = d.validate_all({})["mode"]
    assert (on.recommended_values, on.visible) == (["a", "b"], True)
    assert (off.recommended_values, off.visible) == ([], False)


def test_passwords_are_hidden_everywhere(caplog: pytest.LogCaptureFixture) -> None:
    secret = "hunter2-very-secret"
    parsed = definition().parse({"host": "db", "password": secret})
    pw = parsed["password"]
    assert repr(pw) == str(pw) == f"{pw}" == "[hidden]"
    assert pw.value == secret
    with caplog.at_level(logging.INFO):
        logging.getLogger("test").info("config: %s", parsed)
    assert secret not in caplog.text
    infos = config_infos(
        "C", definition(), definition().validate({"host": "db", "password": secret})
    )
    assert secret not in repr(infos)
    assert {c["value"]["name"]: c["value"]["value"] for c in infos["configs"]}[
        "password"
    ] == "[hidden]"
    assert definition().masked({"host": "db", "password": secret}) == {
        "host": "db",
        "password": "[hidden]",
    }
    with pytest.raises(ConfigException) as e:
        parse_value("password", 12345, Type.PASSWORD)
    assert "12345" not in str(e.value)


def test_defaults_are_parsed_and_validated_when_defined() -> None:
    assert ConfigDef().define("n", Type.INT, "7").config_keys["n"].default == 7
    with pytest.raises(ConfigException, match="Value must be at least 1"):
        ConfigDef().define("n", Type.INT, 0, Range.at_least(1))
    with pytest.raises(ConfigException, match="defined twice"):
        ConfigDef().define("n", Type.INT).define("n", Type.INT)


def test_config_counts_errors() -> None:
    assert Config(definition().validate({})).error_count == 1


def test_originals_with_prefix() -> None:
    props = {
        "value.converter.schemas.enable": "false",
        "value.converter": "JsonConverter",
        "key.converter.x": "1",
    }
    assert originals_with_prefix(props, "value.converter.") == {"schemas.enable": "false"}


def test_load_class_errors() -> None:
    with pytest.raises(ImportError, match="Class Nope could not be found"):
        load_class("Nope")
    with pytest.raises(ImportError, match="is not a class"):
        load_class("airflow_provider_connect.connect.plugins.load_class")


# -- the common connector configuration ---------------------------------------------------------
def errors_of(definition: ConfigDef, props: dict[str, str]) -> dict[str, list[str]]:
    return {
        name: v.error_messages
        for name, v in definition.validate_all(props).items()
        if v.error_messages
    }


def test_connector_config_accepts_a_valid_config() -> None:
    props = {
        "name": "orders",
        "connector.class": "my.Connector",
        "tasks.max": "4",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "JsonConverter",
    }
    assert errors_of(CONNECTOR_CONFIG_DEF, props) == {}
    parsed = CONNECTOR_CONFIG_DEF.parse(props)
    assert parsed["tasks.max"] == 4 and parsed["value.converter"] is JsonConverter
    assert parsed["header.converter"] is None


def test_connector_config_errors_name_each_field() -> None:
    errors = errors_of(
        CONNECTOR_CONFIG_DEF,
        {
            "name": "bad\nname",
            "tasks.max": "0",
            "value.converter": "airflow_provider_connect.connect.config.ConfigDef",
        },
    )
    assert set(errors) == {"name", "connector.class", "tasks.max", "value.converter"}
    assert "control sequences" in errors["name"][0]
    assert "Value must be at least 1" in errors["tasks.max"][0]
    assert "Class must implement Converter" in errors["value.converter"][0]


@pytest.mark.parametrize(
    ("topics", "message"),
    [
        ({"topics": "a,b", "topics.regex": "a.*"}, "mutually exclusive options, but both are set"),
        ({}, "Must configure one of topics or topics.regex"),
        ({"topics.regex": "("}, "Not a valid regular expression"),
    ],
)
def test_sink_topics_validation(topics: dict[str, str], message: str) -> None:
    props = {"name": "s", "connector.class": "x.Y", **topics}
    results = SINK_CONNECTOR_CONFIG_DEF.validate_all(props)
    validate_sink_topics(props, results)
    assert any(message in e for v in results.values() for e in v.error_messages)


def test_sink_topics_valid() -> None:
    props = {"name": "s", "connector.class": "x.Y", "topics": "a, b"}
    results = SINK_CONNECTOR_CONFIG_DEF.validate_all(props)
    validate_sink_topics(props, results)
    assert not any(v.error_messages for v in results.values())
    assert results["topics"].value == ["a", "b"]
