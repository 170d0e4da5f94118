"""Keeping password-typed connector configs out of everything shown to people: REST bodies,
Airflow XCom and logs show ``[hidden]``, and a ``[hidden]`` sent back means "unchanged"."""

from __future__ import annotations

import functools

from airflow_provider_connect.connect.config import HIDDEN, Type
from airflow_provider_connect.connect.connector_config import (
    CONNECTOR_CONFIG_DEF,
    SINK_CONNECTOR_CONFIG_DEF,
)
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.control.plugins import connector_class

SECRET_WORDS = (
    *("password", "passwd", "secret", "token", "credential", "jaas"),
    *("api.key", "api_key", "apikey", "private.key", "private_key"),
)
"""Where the connector class cannot be loaded here (a plugin installed on the runtime only),
keys with these words in their names are taken for passwords: hidden rather than shown."""


def password_keys(config: dict[str, str]) -> frozenset[str]:
    """The keys of ``config`` that its connector (or the shared definition) types PASSWORD,
    or, when its class cannot be loaded, the keys whose names say secret."""
    try:
        return _password_keys(config.get("connector.class", ""))
    except ImportError:
        return frozenset(k for k in config if any(w in k.lower() for w in SECRET_WORDS))


@functools.lru_cache(maxsize=256)
def _password_keys(class_name: str) -> frozenset[str]:
    """Computed once per connector class: a page of many connectors of few classes masks
    them all without building a ConfigDef each. Raises ImportError (not cached) for a
    class that cannot be loaded."""
    cls = connector_class(class_name)
    common = SINK_CONNECTOR_CONFIG_DEF if issubclass(cls, SinkConnector) else CONNECTOR_CONFIG_DEF
    definition = common.merged(cls().config())
    return frozenset(k for k, key in definition.config_keys.items() if key.type is Type.PASSWORD)


def masked_config(config: dict[str, str]) -> dict[str, str]:
    """``config`` with password values replaced by ``[hidden]``."""
    secret = password_keys(config)
    return {k: HIDDEN if k in secret else v for k, v in config.items()}


def restore_hidden(config: dict[str, str], stored: dict[str, str]) -> dict[str, str]:
    """``config`` with every ``[hidden]`` password value replaced by the stored secret."""
    secret = password_keys(config)
    return {
        k: stored[k] if k in secret and v == HIDDEN and k in stored else v
        for k, v in config.items()
    }
