"""The configuration of the Schema Registry converters, with the names and defaults of
Confluent's (``AbstractKafkaSchemaSerDeConfig``, ``AbstractDataConfig`` and the format's
own ``*DataConfig``), and its translation into confluent-kafka's ``SchemaRegistryClient``
configuration.

A connector sets them under its converter's prefix
(``value.converter.schema.registry.url``), a worker for every connector
(``value.converter.schema.registry.url`` in the worker properties); the converter sees them
without the prefix. This module loads no Kafka client: the Airflow side and REST validate
these keys without one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    LambdaValidator,
    Password,
    Range,
    Type,
    ValidString,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.storage import converter_config_def

URL_CONFIG = "schema.registry.url"
AUTO_REGISTER_CONFIG = "auto.register.schemas"
USE_LATEST_VERSION_CONFIG = "use.latest.version"
LATEST_COMPATIBILITY_STRICT_CONFIG = "latest.compatibility.strict"
LATEST_CACHE_TTL_CONFIG = "latest.cache.ttl.sec"
NORMALIZE_SCHEMAS_CONFIG = "normalize.schemas"
MAX_SCHEMAS_PER_SUBJECT_CONFIG = "max.schemas.per.subject"
KEY_SUBJECT_NAME_STRATEGY_CONFIG = "key.subject.name.strategy"
VALUE_SUBJECT_NAME_STRATEGY_CONFIG = "value.subject.name.strategy"
BASIC_AUTH_SOURCE_CONFIG = "basic.auth.credentials.source"
BASIC_AUTH_USER_INFO_CONFIG = "basic.auth.user.info"
BEARER_AUTH_SOURCE_CONFIG = "bearer.auth.credentials.source"
BEARER_AUTH_TOKEN_CONFIG = "bearer.auth.token"
BEARER_AUTH_LOGICAL_CLUSTER_CONFIG = "bearer.auth.logical.cluster"
BEARER_AUTH_IDENTITY_POOL_CONFIG = "bearer.auth.identity.pool.id"
BEARER_AUTH_ISSUER_URL_CONFIG = "bearer.auth.issuer.endpoint.url"
BEARER_AUTH_CLIENT_ID_CONFIG = "bearer.auth.client.id"
BEARER_AUTH_CLIENT_SECRET_CONFIG = "bearer.auth.client.secret"
BEARER_AUTH_SCOPE_CONFIG = "bearer.auth.scope"
SSL_PREFIX = "schema.registry.ssl."
SSL_TRUSTSTORE_LOCATION_CONFIG = SSL_PREFIX + "truststore.location"
SSL_TRUSTSTORE_TYPE_CONFIG = SSL_PREFIX + "truststore.type"
SSL_KEYSTORE_LOCATION_CONFIG = SSL_PREFIX + "keystore.location"
SSL_KEYSTORE_TYPE_CONFIG = SSL_PREFIX + "keystore.type"
SSL_KEY_PASSWORD_CONFIG = SSL_PREFIX + "key.password"
SSL_ENDPOINT_IDENTIFICATION_CONFIG = SSL_PREFIX + "endpoint.identification.algorithm"
PROXY_HOST_CONFIG = "proxy.host"
PROXY_PORT_CONFIG = "proxy.port"
CONNECT_TIMEOUT_CONFIG = "http.connect.timeout.ms"
READ_TIMEOUT_CONFIG = "http.read.timeout.ms"
MAX_RETRIES_CONFIG = "max.retries"
RETRIES_WAIT_CONFIG = "retries.wait.ms"
RETRIES_MAX_WAIT_CONFIG = "retries.max.wait.ms"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.config"
IGNORE_DEFAULT_FOR_NULLABLES_CONFIG = "ignore.default.for.nullables"
GENERALIZED_SUM_TYPE_SUPPORT_CONFIG = "generalized.sum.type.support"

SERIALIZERS = "io.confluent.kafka.serializers.subject."
TOPIC_NAME_STRATEGY = SERIALIZERS + "TopicNameStrategy"
RECORD_NAME_STRATEGY = SERIALIZERS + "RecordNameStrategy"
TOPIC_RECORD_NAME_STRATEGY = SERIALIZERS + "TopicRecordNameStrategy"
STRATEGIES = (TOPIC_NAME_STRATEGY, RECORD_NAME_STRATEGY, TOPIC_RECORD_NAME_STRATEGY)
"""Confluent's subject name strategies, by their Java class names (simple names work too)."""

_REGISTRY = "Schema Registry"
_DATA = "Connect data"


def _strategy(name: str, value: Any) -> None:
    if strategy_name(value) is None:
        raise ConfigException.invalid(
            name, value, "Expected one of " + ", ".join(STRATEGIES) + " (or their simple names)"
        )


def strategy_name(value: str) -> str | None:
    """The full class name of the strategy ``value`` names (full or simple), else None."""
    return next((s for s in STRATEGIES if value in (s, s.rpartition(".")[2])), None)


def _bearer_source(name: str, value: Any) -> None:
    if value is not None:
        ValidString("STATIC_TOKEN", "OAUTHBEARER").ensure_valid(name, value)


def _pem_only(name: str, value: Any) -> None:
    if value is not None and str(value).upper() != "PEM":
        raise ConfigException.invalid(
            name,
            value,
            "Only PEM stores can be read here (Java's JKS and PKCS12 cannot): convert the "
            "store to PEM, e.g. with openssl pkcs12 -nodes",
        )


def only_false(what: str) -> LambdaValidator:
    """A validator refusing true for a key whose true value is not supported here."""

    def check(name: str, value: Any) -> None:
        if value:
            raise ConfigException.invalid(name, value, f"{what} is not supported here")

    return LambdaValidator(check, "[false]")


def serde_config_def() -> ConfigDef:
    """The keys every Schema Registry converter takes: the registry, its client and the
    subjects (Confluent's ``AbstractKafkaSchemaSerDeConfig``), and the Connect data keys
    shared by the formats (``AbstractDataConfig``)."""
    d = converter_config_def()
    for order, (name, type_, default, validator, importance, doc) in enumerate(
        [
            (
                URL_CONFIG,
                Type.LIST,
                ConfigDef.NO_DEFAULT,
                LambdaValidator(_urls, "a list of http(s) URLs"),
                Importance.HIGH,
                "Comma-separated list of URLs for Schema Registry instances that can be used "
                "to register or look up schemas.",
            ),
            (
                AUTO_REGISTER_CONFIG,
                Type.BOOLEAN,
                True,
                None,
                Importance.MEDIUM,
                "Specify if the Serializer should attempt to register the Schema with Schema "
                "Registry.",
            ),
            (
                USE_LATEST_VERSION_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.LOW,
                "Specify if the Serializer should use the latest subject version for "
                "serialization; the Deserializer reads with it as the reader schema.",
            ),
            (
                LATEST_COMPATIBILITY_STRICT_CONFIG,
                Type.BOOLEAN,
                True,
                None,
                Importance.LOW,
                "If true, check the backward compatibility between the latest subject version "
                "and the schema of the object being serialized.",
            ),
            (
                LATEST_CACHE_TTL_CONFIG,
                Type.LONG,
                -1,
                None,
                Importance.LOW,
                "TTL in seconds for caching the latest schema of a subject; -1 caches it for "
                "the converter's life.",
            ),
            (
                NORMALIZE_SCHEMAS_CONFIG,
                Type.BOOLEAN,
                False,
                None,
                Importance.LOW,
                "Whether to normalize schemas, which generally ignores ordering when it is "
                "not significant.",
            ),
            (
                MAX_SCHEMAS_PER_SUBJECT_CONFIG,
                Type.INT,
                1000,
                Range.at_least(1),
                Importance.LOW,
                "Maximum number of schemas to create or cache locally.",
            ),
            (
                KEY_SUBJECT_NAME_STRATEGY_CONFIG,
                Type.STRING,
                TOPIC_NAME_STRATEGY,
                LambdaValidator(_strategy, "[" + ", ".join(STRATEGIES) + "]"),
                Importance.MEDIUM,
                "Determines how to construct the subject name under which the key schema is "
                "registered with the schema registry.",
            ),
            (
                VALUE_SUBJECT_NAME_STRATEGY_CONFIG,
                Type.STRING,
                TOPIC_NAME_STRATEGY,
                LambdaValidator(_strategy, "[" + ", ".join(STRATEGIES) + "]"),
                Importance.MEDIUM,
                "Determines how to construct the subject name under which the value schema is "
                "registered with the schema registry.",
            ),
            (
                BASIC_AUTH_SOURCE_CONFIG,
                Type.STRING,
                "URL",
                ValidString("URL", "USER_INFO"),
                Importance.MEDIUM,
                "Specify how to pick the credentials for the Basic Auth header: URL (the "
                "user info of schema.registry.url) or USER_INFO (basic.auth.user.info).",
            ),
            (
                BASIC_AUTH_USER_INFO_CONFIG,
                Type.PASSWORD,
                "",
                None,
                Importance.MEDIUM,
                "Specify the user info for Basic Auth in the form of {username}:{password}.",
            ),
            (
                BEARER_AUTH_SOURCE_CONFIG,
                Type.STRING,
                None,
                LambdaValidator(_bearer_source, "[STATIC_TOKEN, OAUTHBEARER]"),
                Importance.MEDIUM,
                "Specify how to pick the credentials for the Bearer Auth header: STATIC_TOKEN "
                "(bearer.auth.token) or OAUTHBEARER (a client credentials grant at "
                "bearer.auth.issuer.endpoint.url). Unset: no bearer auth.",
            ),
            (
                BEARER_AUTH_TOKEN_CONFIG,
                Type.PASSWORD,
                "",
                None,
                Importance.MEDIUM,
                "Specify the Bearer token to be used for authentication.",
            ),
            (
                BEARER_AUTH_LOGICAL_CLUSTER_CONFIG,
                Type.STRING,
                "",
                None,
                Importance.MEDIUM,
                "The logical cluster of the Schema Registry (Confluent Cloud).",
            ),
            (
                BEARER_AUTH_IDENTITY_POOL_CONFIG,
                Type.STRING,
                "",
                None,
                Importance.LOW,
                "The identity pool ID, for Confluent Cloud's identity pools.",
            ),
            (
                BEARER_AUTH_ISSUER_URL_CONFIG,
                Type.STRING,
                "",
                None,
                Importance.MEDIUM,
                "The URL of the OAuth/OIDC identity provider's token endpoint.",
            ),
            (
                BEARER_AUTH_CLIENT_ID_CONFIG,
                Type.STRING,
                "",
                None,
                Importance.MEDIUM,
                "The client ID of the OAuth client credentials grant.",
            ),
            (
                BEARER_AUTH_CLIENT_SECRET_CONFIG,
                Type.PASSWORD,
                "",
                None,
                Importance.MEDIUM,
                "The client secret of the OAuth client credentials grant.",
            ),
            (
                BEARER_AUTH_SCOPE_CONFIG,
                Type.STRING,
                "",
                None,
                Importance.LOW,
                "The scope requested with the OAuth client credentials grant.",
            ),
            (
                SSL_TRUSTSTORE_LOCATION_CONFIG,
                Type.STRING,
                None,
                None,
                Importance.MEDIUM,
                "A PEM file of the certificates that sign the registry's certificate.",
            ),
            (
                SSL_TRUSTSTORE_TYPE_CONFIG,
                Type.STRING,
                "PEM",
                LambdaValidator(_pem_only, "[PEM]"),
                Importance.LOW,
                "The format of the trust store file: PEM.",
            ),
            (
                SSL_KEYSTORE_LOCATION_CONFIG,
                Type.STRING,
                None,
                None,
                Importance.MEDIUM,
                "A PEM file of the client's certificate chain and private key (mutual TLS).",
            ),
            (
                SSL_KEYSTORE_TYPE_CONFIG,
                Type.STRING,
                "PEM",
                LambdaValidator(_pem_only, "[PEM]"),
                Importance.LOW,
                "The format of the key store file: PEM.",
            ),
            (
                SSL_KEY_PASSWORD_CONFIG,
                Type.PASSWORD,
                None,
                None,
                Importance.MEDIUM,
                "The password of the private key in the key store file.",
            ),
            (
                SSL_ENDPOINT_IDENTIFICATION_CONFIG,
                Type.STRING,
                "https",
                None,
                Importance.LOW,
                "The endpoint identification algorithm; empty turns verification of the "
                "registry's certificate off.",
            ),
            (
                PROXY_HOST_CONFIG,
                Type.STRING,
                "",
                None,
                Importance.LOW,
                "The hostname, or address, of the proxy server that will be used to connect "
                "to the schema registry instances.",
            ),
            (
                PROXY_PORT_CONFIG,
                Type.INT,
                -1,
                None,
                Importance.LOW,
                "The port number of the proxy server.",
            ),
            (
                CONNECT_TIMEOUT_CONFIG,
                Type.INT,
                60000,
                Range.at_least(1),
                Importance.LOW,
                "Milliseconds to wait for a connection to the registry.",
            ),
            (
                READ_TIMEOUT_CONFIG,
                Type.INT,
                60000,
                Range.at_least(1),
                Importance.LOW,
                "Milliseconds to wait for the registry's answer.",
            ),
            (
                MAX_RETRIES_CONFIG,
                Type.INT,
                3,
                Range.at_least(0),
                Importance.LOW,
                "How many times the client tries a request again on a network error or a "
                "retriable status (408, 429, 5xx), with backoff, before the converter fails.",
            ),
            (
                RETRIES_WAIT_CONFIG,
                Type.INT,
                1000,
                Range.at_least(0),
                Importance.LOW,
                "The longest wait, in ms, before the first retry (jittered).",
            ),
            (
                RETRIES_MAX_WAIT_CONFIG,
                Type.INT,
                20000,
                Range.at_least(0),
                Importance.LOW,
                "The longest wait, in ms, between retries.",
            ),
        ]
    ):
        d.define(
            name, type_, default, validator, importance, doc, group=_REGISTRY, order_in_group=order
        )
    return (
        d.define(
            SCHEMAS_CACHE_SIZE_CONFIG,
            Type.INT,
            1000,
            Range.at_least(1),
            Importance.LOW,
            "Size of the converted schemas cache.",
            group=_DATA,
            order_in_group=0,
        )
        .define(
            IGNORE_DEFAULT_FOR_NULLABLES_CONFIG,
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Whether to ignore the default for nullable fields when the value is null.",
            group=_DATA,
            order_in_group=1,
        )
        .define(
            GENERALIZED_SUM_TYPE_SUPPORT_CONFIG,
            Type.BOOLEAN,
            False,
            only_false(GENERALIZED_SUM_TYPE_SUPPORT_CONFIG),
            Importance.MEDIUM,
            "Toggle for enabling/disabling generalized sum type support: interoperability of "
            "enum/union with other schema formats. Only false is supported here.",
            group=_DATA,
            order_in_group=2,
        )
    )


def _urls(name: str, value: Any) -> None:
    urls = [u for u in (value or []) if u]
    if not urls:
        raise ConfigException.invalid(name, value, "At least one URL is required")
    for url in urls:
        if not url.startswith(("http://", "https://", "mock://")):
            raise ConfigException.invalid(name, url, "Expected an http:// or https:// URL")


@dataclass(frozen=True)
class RegistrySettings:
    """What the converters do with the registry, from their parsed configuration."""

    auto_register: bool
    use_latest_version: bool
    latest_compatibility_strict: bool
    normalize: bool
    key_strategy: str
    value_strategy: str
    schemas_cache_size: int
    ignore_default_for_nullables: bool
    latest_ttl_s: float | None
    """How long the subject's latest version is cached (``latest.cache.ttl.sec``), None
    for good: a plan made with it is checked against the latest version again once that
    passed, and remade when it changed."""

    @classmethod
    def of(cls, parsed: Mapping[str, Any]) -> RegistrySettings:
        key = strategy_name(parsed[KEY_SUBJECT_NAME_STRATEGY_CONFIG])
        value = strategy_name(parsed[VALUE_SUBJECT_NAME_STRATEGY_CONFIG])
        assert key is not None and value is not None  # validated
        return cls(
            parsed[AUTO_REGISTER_CONFIG],
            parsed[USE_LATEST_VERSION_CONFIG],
            parsed[LATEST_COMPATIBILITY_STRICT_CONFIG],
            parsed[NORMALIZE_SCHEMAS_CONFIG],
            key,
            value,
            parsed[SCHEMAS_CACHE_SIZE_CONFIG],
            parsed[IGNORE_DEFAULT_FOR_NULLABLES_CONFIG],
            parsed[LATEST_CACHE_TTL_CONFIG] if parsed[LATEST_CACHE_TTL_CONFIG] >= 0 else None,
        )


def _secret(value: Password | str | None) -> str:
    return value.value if isinstance(value, Password) else (value or "")


def client_config(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """confluent-kafka's ``SchemaRegistryClient`` configuration for the parsed converter
    configuration (without the ``timeout``, which the client module sets, being httpx's)."""
    urls = [u for u in parsed[URL_CONFIG] if u]
    conf: dict[str, Any] = {
        "url": ",".join(urls),
        "cache.capacity": parsed[MAX_SCHEMAS_PER_SUBJECT_CONFIG],
        "max.retries": parsed[MAX_RETRIES_CONFIG],
        "retries.wait.ms": parsed[RETRIES_WAIT_CONFIG],
        "retries.max.wait.ms": parsed[RETRIES_MAX_WAIT_CONFIG],
    }
    if parsed[LATEST_CACHE_TTL_CONFIG] >= 0:
        conf["cache.latest.ttl.sec"] = parsed[LATEST_CACHE_TTL_CONFIG]
    if parsed[BASIC_AUTH_SOURCE_CONFIG] == "USER_INFO":
        user_info = _secret(parsed[BASIC_AUTH_USER_INFO_CONFIG])
        if ":" not in user_info:
            raise ConfigException.invalid(
                BASIC_AUTH_USER_INFO_CONFIG,
                "[hidden]",
                "basic.auth.credentials.source=USER_INFO needs {username}:{password}",
            )
        conf["basic.auth.user.info"] = user_info
    bearer = parsed[BEARER_AUTH_SOURCE_CONFIG]
    if bearer:
        conf["bearer.auth.credentials.source"] = bearer
        conf |= {
            key: value
            for key, value in (
                ("bearer.auth.logical.cluster", parsed[BEARER_AUTH_LOGICAL_CLUSTER_CONFIG]),
                ("bearer.auth.identity.pool.id", parsed[BEARER_AUTH_IDENTITY_POOL_CONFIG]),
            )
            if value
        }
        if bearer == "STATIC_TOKEN":
            conf["bearer.auth.token"] = _secret(parsed[BEARER_AUTH_TOKEN_CONFIG])
        else:
            conf |= {
                "bearer.auth.client.id": parsed[BEARER_AUTH_CLIENT_ID_CONFIG],
                "bearer.auth.client.secret": _secret(parsed[BEARER_AUTH_CLIENT_SECRET_CONFIG]),
                "bearer.auth.scope": parsed[BEARER_AUTH_SCOPE_CONFIG],
                "bearer.auth.issuer.endpoint.url": parsed[BEARER_AUTH_ISSUER_URL_CONFIG],
            }
    if parsed[SSL_TRUSTSTORE_LOCATION_CONFIG]:
        conf["ssl.ca.location"] = parsed[SSL_TRUSTSTORE_LOCATION_CONFIG]
    if parsed[SSL_ENDPOINT_IDENTIFICATION_CONFIG] == "":
        conf["ssl.ca.location"] = False
    if parsed[SSL_KEYSTORE_LOCATION_CONFIG]:
        conf["ssl.certificate.location"] = parsed[SSL_KEYSTORE_LOCATION_CONFIG]
        if parsed[SSL_KEY_PASSWORD_CONFIG] is not None:
            conf["ssl.key.password"] = _secret(parsed[SSL_KEY_PASSWORD_CONFIG])
    if parsed[PROXY_HOST_CONFIG]:
        conf["proxy"] = f"http://{parsed[PROXY_HOST_CONFIG]}:{parsed[PROXY_PORT_CONFIG]}"
    return conf


def timeouts_s(parsed: Mapping[str, Any]) -> tuple[float, float]:
    """The connect and read timeouts, in seconds."""
    return parsed[CONNECT_TIMEOUT_CONFIG] / 1000, parsed[READ_TIMEOUT_CONFIG] / 1000
