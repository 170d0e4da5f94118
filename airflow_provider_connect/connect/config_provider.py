"""Config providers (KIP-297, KIP-421), as ``org.apache.kafka.common.config.provider``: a
connector config may hold ``${provider:path:key}`` (or ``${provider:key}``) where a secret
or a setting lives elsewhere; the runtime asks the worker's provider called ``provider`` for
``key`` at ``path`` where the connector and its tasks start. The metadata database, the REST
API, Airflow and the logs only ever see the placeholder.

A worker names its providers: ``config.providers=file,env``,
``config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider``
and ``config.providers.<alias>.param.<name>`` for each one's settings. Register a provider
under the ``airflow_provider_connect.config_providers`` entry-point group.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any


class ConfigProvider(ABC):
    """Looks values up by path and key.

    Lifecycle: instantiated with no arguments, :meth:`configure` exactly once with the
    alias's ``param.*`` keys, then :meth:`get` any number of times, :meth:`close` once.
    """

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once, before any ``get``."""

    @abstractmethod
    def get(self, path: str, keys: Iterable[str] | None = None) -> dict[str, str]:
        """The values at ``path`` (of ``keys`` only, when given); a key that is not there is
        left out. ``path`` is empty for ``${provider:key}``."""

    def close(self) -> None:
        """Called once when the provider is no longer used."""


PLACEHOLDER = re.compile(r"\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}")
"""Kafka's ``ConfigTransformer`` pattern: ``${provider:path:key}``, the path optional."""


def placeholder_keys(config: Mapping[str, str]) -> frozenset[str]:
    """The keys of ``config`` whose values hold a ``${provider:path:key}`` placeholder."""
    return frozenset(k for k, v in config.items() if PLACEHOLDER.search(v))
