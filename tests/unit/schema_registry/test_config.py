"""The Schema Registry converters' configuration: Confluent's keys, parsed and checked, and
their translation into confluent-kafka's client configuration."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.schema_registry.avro import AvroConverter
from airflow_provider_connect.schema_registry.config import (
    TOPIC_RECORD_NAME_STRATEGY,
    RegistrySettings,
    client_config,
    serde_config_def,
)
from airflow_provider_connect.schema_registry.registry import registry_name


def parsed(**configs: str) -> dict[str, Any]:
    return serde_config_def().parse({"schema.registry.url": "http://r:8081", **configs})


def test_defaults_are_confluents() -> None:
    settings = RegistrySettings.of(parsed())
    assert settings.auto_register and not settings.use_latest_version
    assert settings.latest_compatibility_strict and not settings.normalize
    assert settings.value_strategy.endswith(".TopicNameStrategy")
    assert client_config(parsed()) == {
        "url": "http://r:8081",
        "cache.capacity": 1000,
        "max.retries": 3,
        "retries.wait.ms": 1000,
        "retries.max.wait.ms": 20000,
    }


def test_auth_tls_and_proxy_become_the_clients_keys() -> None:
    conf = client_config(
        parsed(
            **{
                "schema.registry.url": "https://a:8081, https://b:8081",
                "basic.auth.credentials.source": "USER_INFO",
                "basic.auth.user.info": "user:secret",
                "schema.registry.ssl.truststore.location": "/etc/ca.pem",
                "schema.registry.ssl.keystore.location": "/etc/client.pem",
                "schema.registry.ssl.key.password": "kp",
                "proxy.host": "proxy",
                "proxy.port": "3128",
                "value.subject.name.strategy": "TopicRecordNameStrategy",
                "latest.cache.ttl.sec": "30",
            }
        )
    )
    assert conf["url"] == "https://a:8081,https://b:8081"
    assert conf["basic.auth.user.info"] == "user:secret"
    assert conf["ssl.ca.location"] == "/etc/ca.pem"
    assert (
        conf["ssl.certificate.location"] == "/etc/client.pem" and conf["ssl.key.password"] == "kp"
    )
    assert conf["proxy"] == "http://proxy:3128" and conf["cache.latest.ttl.sec"] == 30
    bearer = client_config(
        parsed(
            **{
                "bearer.auth.credentials.source": "STATIC_TOKEN",
                "bearer.auth.token": "t0k",
                "bearer.auth.logical.cluster": "lsrc-1",
            }
        )
    )
    assert bearer["bearer.auth.credentials.source"] == "STATIC_TOKEN"
    assert (
        bearer["bearer.auth.token"] == "t0k" and bearer["bearer.auth.logical.cluster"] == "lsrc-1"
    )
    settings = RegistrySettings.of(
        parsed(**{"value.subject.name.strategy": "TopicRecordNameStrategy"})
    )
    assert settings.value_strategy == TOPIC_RECORD_NAME_STRATEGY


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"schema.registry.url": "ftp://r"}, "schema.registry.url"),
        ({"schema.registry.url": ""}, "schema.registry.url"),
        ({"value.subject.name.strategy": "MyStrategy"}, "value.subject.name.strategy"),
        ({"schema.registry.ssl.truststore.type": "JKS"}, "Only PEM stores"),
        ({"basic.auth.credentials.source": "SASL_INHERIT"}, "basic.auth.credentials.source"),
        ({"generalized.sum.type.support": "true"}, "not supported here"),
    ],
)
def test_bad_values_are_refused_naming_the_key(configs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigException, match=message):
        serde_config_def().parse({"schema.registry.url": "http://r", **configs})


def test_user_info_without_a_password_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigException, match=r"basic.auth.user.info") as error:
        client_config(
            parsed(
                **{"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "justuser"}
            )
        )
    assert "justuser" not in str(error.value)


def test_the_registry_is_named_without_its_credentials() -> None:
    assert registry_name("https://user:pw@r:8081/api") == "https://r:8081/api"
    assert registry_name("http://a,http://b:1") == "http://a,http://b:1"


def test_a_converter_used_before_configure_says_so() -> None:
    with pytest.raises(ConfigException, match="not configured"):
        AvroConverter().to_connect_data("t", b"\x00")
