"""Keeping password-typed connector configs out of everything shown to people: REST bodies,
Airflow XCom and logs show ``[hidden]``, and a ``[hidden]`` sent back means "unchanged"."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import HIDDEN, ConfigDef, Type
from airflow_provider_connect.connect.connector_config import (
    CONNECTOR_CONFIG_DEF,
    CONVERTER_CLASS_CONFIGS,
    SINK_CONNECTOR_CONFIG_DEF,
)
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connect.storage import Converter, HeaderConverter
from airflow_provider_connect.control.plugins import connector_class

SECRET_WORDS = (
    *("password", "passwd", "secret", "token", "credential", "jaas", "user.info"),
    *("api.key", "api_key", "apikey", "private.key", "private_key"),
)
"""Where the connector class cannot be loaded here (a plugin installed on the runtime only),
keys with these words in their names are taken for passwords: hidden rather than shown."""


_URL_PASSWORD = re.compile(r"://[^/@\s]*:[^/@\s]*@")
"""A URL with a password in its user info (``http://user:password@registry``)."""


def password_keys(config: dict[str, str]) -> frozenset[str]:
    """The keys of ``config`` that its connector (or the shared definition) takes for
    passwords (typed PASSWORD, or matching one of its password patterns, as
    ``iceberg.catalog.s3.secret-access-key``), and those its converters type PASSWORD under
    their prefix (``value.converter.basic.auth.user.info``); where a class cannot be loaded,
    the keys whose names say secret; and the keys whose value is a URL with a password in
    it."""
    guessed = frozenset(k for k in config if any(w in k.lower() for w in SECRET_WORDS))
    try:
        definition = _connector_definition(config.get("connector.class", ""))
        keys = frozenset(k for k in config if definition.is_password(k))
    except ImportError:
        keys = guessed
    for converter_key in CONVERTER_CLASS_CONFIGS:
        name = config.get(converter_key, "").strip()
        if name:
            try:
                keys |= _converter_password_keys(name, converter_key + ".")
            except Exception:  # a class that cannot be loaded or made: its keys guessed
                keys |= {k for k in guessed if k.startswith(converter_key + ".")}
    return keys | {k for k, v in config.items() if _URL_PASSWORD.search(str(v))}


@functools.lru_cache(maxsize=256)
def _connector_definition(class_name: str) -> ConfigDef:
    """Built once per connector class: a page of many connectors of few classes masks
    them all without building a ConfigDef each. Raises ImportError (not cached) for a
    class that cannot be loaded."""
    cls = connector_class(class_name)
    common = SINK_CONNECTOR_CONFIG_DEF if issubclass(cls, SinkConnector) else CONNECTOR_CONFIG_DEF
    return common.merged(cls().config())


@functools.lru_cache(maxsize=256)
def _converter_password_keys(class_name: str, prefix: str) -> frozenset[str]:
    """The password keys of the converter ``class_name``, under ``prefix``. Raises
    ImportError (not cached) for a class that cannot be loaded."""
    cls = load_class(class_name)
    if not issubclass(cls, (Converter, HeaderConverter)):
        raise ImportError(f"{class_name} is not a converter")
    keys = cls().config().config_keys.items()
    return frozenset(prefix + k for k, key in keys if key.type is Type.PASSWORD)


def masked_config(config: dict[str, str]) -> dict[str, str]:
    """``config`` with password values replaced by ``[hidden]``."""
    secret = password_keys(config)
    return {k: HIDDEN if k in secret else v for k, v in config.items()}


def restore_hidden(config: dict[str, str], stored: dict[str, str]) -> dict[str, str]:
    """``config`` with every ``[hidden]`` password value replaced by the stored secret."""
    secret = password_keys(config) | password_keys(stored)
    return {
        k: stored[k] if k in secret and v == HIDDEN and k in stored else v
        for k, v in config.items()
    }


def hide_restored(infos: dict[str, Any], restored: Mapping[str, str]) -> dict[str, Any]:
    """A ``ConfigInfos`` validated with the stored secrets ``restored`` (key to value) in
    place of their ``[hidden]``: each of those keys' values ``[hidden]`` again, and every
    error message with any of the secrets in it masked, so the answer shows none of them."""
    secrets = sorted({v for v in restored.values() if v}, key=len, reverse=True)
    for entry in infos["configs"]:
        value = entry["value"]
        if value["name"] in restored:
            value["value"] = HIDDEN
        for i, error in enumerate(value["errors"]):
            for secret in secrets:
                error = error.replace(secret, HIDDEN)
            value["errors"][i] = error
    return infos
