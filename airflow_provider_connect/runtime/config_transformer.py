"""Resolving ``${provider:path:key}`` in connector and task configs (KIP-297), where the
connector and its tasks start, with the worker's config providers (``config.providers``).

The metadata database keeps configs as they were written: the herder gives a connector its
config resolved, and stores the task configs it returns with the placeholders put back
(Kafka's ``reverseTransform``), so a resolved secret never reaches the store, REST, Airflow
or a log; each task run resolves its own configs on its executor.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from airflow_provider_connect.connect.config import originals_with_prefix
from airflow_provider_connect.connect.config_provider import PLACEHOLDER, ConfigProvider
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.plugins import load_class

PROVIDERS_CONFIG = "config.providers"


class ConfigTransformer:
    """The worker's config providers, made and configured on first use, closed by
    :meth:`close`."""

    def __init__(self, worker: Mapping[str, str]) -> None:
        self.worker = worker
        listed = worker.get(PROVIDERS_CONFIG, "")
        self.aliases = [a.strip() for a in listed.split(",") if a.strip()]
        self._providers: dict[str, ConfigProvider] = {}

    def _provider(self, alias: str) -> ConfigProvider | None:
        if alias not in self.aliases:
            return None
        if alias not in self._providers:
            prefix = f"{PROVIDERS_CONFIG}.{alias}."
            name = self.worker.get(prefix + "class")
            if not name:
                raise ConfigException(f'Missing required configuration "{prefix}class"')
            cls = load_class(name)
            if not issubclass(cls, ConfigProvider):
                raise ConfigException.invalid(prefix + "class", name, "Not a ConfigProvider")
            provider = cls()
            provider.configure(originals_with_prefix(self.worker, prefix + "param."))
            self._providers[alias] = provider
        return self._providers[alias]

    def transform(self, config: Mapping[str, str]) -> dict[str, str]:
        """``config`` with every variable of a known provider replaced by its value; a
        variable whose provider or key is unknown is left as it is (as Kafka leaves it)."""
        wanted: dict[tuple[str, str], set[str]] = {}
        for value in config.values():
            for provider, path, key in PLACEHOLDER.findall(value):
                wanted.setdefault((provider, path or ""), set()).add(key)
        if not wanted:
            return dict(config)
        found: dict[tuple[str, str, str], str] = {}
        for (alias, path), keys in wanted.items():
            provider = self._provider(alias)
            if provider is not None:
                for key, value in provider.get(path, keys).items():
                    found[(alias, path, key)] = value

        def replace(match: re.Match[str]) -> str:
            provider, path, key = match.group(1), match.group(2) or "", match.group(3)
            return found.get((provider, path, key), match.group(0))

        return {k: PLACEHOLDER.sub(replace, v) for k, v in config.items()}

    def mask(self, raw_config: Mapping[str, str], text: str) -> str:
        """``text`` with every value a provider gives for a placeholder of ``raw_config``
        replaced by the placeholder itself (whole words only, so a short value does not
        mangle other words): a message about the resolved config that may be shown and
        logged."""
        for placeholder in {
            m.group(0) for v in raw_config.values() for m in PLACEHOLDER.finditer(v)
        }:
            value = self.transform({"": placeholder})[""]
            if value and value != placeholder:
                text = re.sub(
                    rf"(?<!\w){re.escape(value)}(?!\w)", placeholder.replace("\\", "\\\\"), text
                )
        return text

    def close(self) -> None:
        for provider in self._providers.values():
            provider.close()
        self._providers.clear()


def reverse_transform(
    raw_config: Mapping[str, str], task_configs: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Task configs with the connector's placeholders back where a task config has a key the
    raw connector config holds a variable in (Kafka's ``Worker.reverseTransform``)."""
    variables = {k: v for k, v in raw_config.items() if PLACEHOLDER.search(v)}
    return [{**task, **{k: v for k, v in variables.items() if k in task}} for task in task_configs]
