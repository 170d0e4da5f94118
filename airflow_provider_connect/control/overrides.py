"""``connector.client.config.override.policy``: which Kafka client settings a connector may
override with ``producer.override.*``, ``consumer.override.*`` and ``admin.override.*``, as
Kafka Connect's policies decide (``None``, ``Principal``, ``All`` (the default) and
``Allowlist`` with ``connector.client.config.override.allowlist``).

The runtime enforces its own worker config and records it in the metadata database, so the
Airflow hook enforces the same policy without the worker config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from airflow_provider_connect.connect.config import ConfigValue

POLICY_CONFIG = "connector.client.config.override.policy"
ALLOWLIST_CONFIG = "connector.client.config.override.allowlist"
NONE, PRINCIPAL, ALL, ALLOWLIST = "None", "Principal", "All", "Allowlist"
POLICIES = (NONE, PRINCIPAL, ALL, ALLOWLIST)
OVERRIDE_PREFIXES = ("producer.override.", "consumer.override.", "admin.override.")
_PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


@dataclass(frozen=True)
class OverridePolicy:
    """A policy by its Kafka name; ``allowlist`` for ``Allowlist``."""

    name: str = ALL
    allowlist: frozenset[str] = frozenset()

    def allows(self, client_key: str) -> bool:
        if self.name == ALL:
            return True
        if self.name == PRINCIPAL:
            return client_key in _PRINCIPAL_KEYS
        if self.name == ALLOWLIST:
            return client_key in self.allowlist
        return False

    @staticmethod
    def of(settings: Mapping[str, str]) -> OverridePolicy:
        """The policy worker settings (or recorded ones) name; ``All`` when they name none."""
        names = {p.lower(): p for p in POLICIES}
        name = names.get(settings.get(POLICY_CONFIG, ALL).strip().lower(), ALL)
        listed = settings.get(ALLOWLIST_CONFIG, "")
        return OverridePolicy(name, frozenset(k.strip() for k in listed.split(",") if k.strip()))

    def settings(self) -> dict[str, str]:
        """The policy as worker settings (what the runtime records)."""
        return {POLICY_CONFIG: self.name, ALLOWLIST_CONFIG: ",".join(sorted(self.allowlist))}


def validate_overrides(
    config: Mapping[str, str], policy: OverridePolicy, results: dict[str, ConfigValue]
) -> None:
    """Adds an error, in Kafka's words, for every client override the policy refuses."""
    for key, value in config.items():
        prefix = next((p for p in OVERRIDE_PREFIXES if key.startswith(p)), None)
        if prefix is None:
            continue
        client_key = key[len(prefix) :]
        if not policy.allows(client_key):
            result = results.setdefault(key, ConfigValue(key, value))
            result.add_error_message(
                f"The '{policy.name}' policy does not allow '{client_key}' to be overridden "
                "in the connector configuration."
            )
