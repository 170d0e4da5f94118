"""The config providers of Apache Kafka (``FileConfigProvider``, ``DirectoryConfigProvider``,
``EnvVarConfigProvider``, with their ``allowed.paths`` and ``allowlist.pattern`` params) and
one for Airflow connections (``AirflowConfigProvider``: ``${airflow:<conn_id>:password}``,
also ``login``, ``host``, ``port``, ``schema`` and ``extra.<key>``), read through Airflow's
secrets backends wherever the runtime has Airflow configured."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from jproperties import Properties

from airflow_provider_connect.connect.config_provider import ConfigProvider
from airflow_provider_connect.connect.errors import ConfigException

log = logging.getLogger(__name__)

ALLOWED_PATHS = "allowed.paths"
ALLOWLIST_PATTERN = "allowlist.pattern"


class _AllowedPaths:
    """Kafka's ``allowed.paths``: when set, only files under these directories are read."""

    def __init__(self, configs: Mapping[str, Any]) -> None:
        listed = str(configs.get(ALLOWED_PATHS) or "")
        self.roots = [Path(p.strip()).resolve() for p in listed.split(",") if p.strip()]
        for root in self.roots:
            if not root.is_absolute():
                raise ConfigException.invalid(ALLOWED_PATHS, listed, "Path must be absolute")

    def checked(self, path: str) -> Path | None:
        """``path`` resolved; None when it is empty, or (logged) outside the allowed paths."""
        if not path:
            return None
        resolved = Path(path).resolve()
        if self.roots and not any(resolved.is_relative_to(root) for root in self.roots):
            log.warning("The path %s is not allowed to be accessed", path)
            return None
        return resolved


def _selected(values: dict[str, str], keys: Iterable[str] | None) -> dict[str, str]:
    if keys is None:
        return values
    return {k: values[k] for k in keys if k in values}


class FileConfigProvider(ConfigProvider):
    """Kafka's ``FileConfigProvider``: the keys of a Java properties file (``path``)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.allowed = _AllowedPaths(configs)

    def get(self, path: str, keys: Iterable[str] | None = None) -> dict[str, str]:
        checked = self.allowed.checked(path)
        if checked is None:
            return {}
        properties = Properties()
        try:
            with checked.open("rb") as f:
                properties.load(f, "utf-8")
        except OSError as e:
            raise ConfigException(f"Could not read properties from file {path}: {e}") from e
        return _selected({k: v.data for k, v in properties.items()}, keys)


class DirectoryConfigProvider(ConfigProvider):
    """Kafka's ``DirectoryConfigProvider``: each regular file of a directory (``path``) is a
    key, its content the value."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.allowed = _AllowedPaths(configs)

    def get(self, path: str, keys: Iterable[str] | None = None) -> dict[str, str]:
        checked = self.allowed.checked(path)
        if checked is None or not checked.is_dir():
            return {}
        wanted = None if keys is None else set(keys)
        return {
            f.name: f.read_text()
            for f in sorted(checked.iterdir())
            if f.is_file() and (wanted is None or f.name in wanted)
        }


class EnvVarConfigProvider(ConfigProvider):
    """Kafka's ``EnvVarConfigProvider``: environment variables (``${env:NAME}``), those whose
    names match ``allowlist.pattern`` only."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        pattern = str(configs.get(ALLOWLIST_PATTERN) or ".*")
        try:
            self.allowlist = re.compile(pattern)
        except re.error as e:
            raise ConfigException.invalid(ALLOWLIST_PATTERN, pattern, str(e)) from None

    def get(self, path: str, keys: Iterable[str] | None = None) -> dict[str, str]:
        if path:
            log.error("Path %s is not supported by the environment variable config provider", path)
            return {}
        allowed = {k: v for k, v in os.environ.items() if self.allowlist.fullmatch(k)}
        return _selected(allowed, keys)


class AirflowConfigProvider(ConfigProvider):
    """Values of an Airflow connection (``path`` is its id), read through Airflow's secrets
    backends: ``login``, ``password``, ``host``, ``port``, ``schema``, ``conn_type`` and
    ``extra.<key>``. Needs Airflow configured where the runtime runs (its secrets backend,
    or ``AIRFLOW_CONN_*`` variables)."""

    def get(self, path: str, keys: Iterable[str] | None = None) -> dict[str, str]:
        from airflow.models.connection import Connection  # only where it is used

        connection = Connection.get_connection_from_secrets(path)
        fields = {
            "login": connection.login,
            "password": connection.password,
            "host": connection.host,
            "port": connection.port,
            "schema": connection.schema,
            "conn_type": connection.conn_type,
        }
        values = {k: str(v) for k, v in fields.items() if v is not None}
        values.update({f"extra.{k}": str(v) for k, v in connection.extra_dejson.items()})
        return _selected(values, keys)
