"""Keeping password-typed connector configs out of everything shown to people: REST bodies,
Airflow XCom and logs show ``[hidden]``, and a ``[hidden]`` sent back means "unchanged"."""

from __future__ import annotations

from airflow_provider_connect.connect.config import HIDDEN, Type
from airflow_provider_connect.connect.connector_config import (
    CONNECTOR_CONFIG_DEF,
    SINK_CONNECTOR_CONFIG_DEF,
)
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.control.plugins import connector_class


def password_keys(config: dict[str, str]) -> set[str]:
    """The keys of ``config`` that its connector (or the shared definition) types PASSWORD."""
    try:
        cls = connector_class(config.get("connector.class", ""))
    except ImportError:
        return set()
    common = SINK_CONNECTOR_CONFIG_DEF if issubclass(cls, SinkConnector) else CONNECTOR_CONFIG_DEF
    definition = common.merged(cls().config())
    return {k for k, key in definition.config_keys.items() if key.type is Type.PASSWORD}


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
