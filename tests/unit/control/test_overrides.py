"""connector.client.config.override.policy, as Kafka Connect's policies decide."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.config import ConfigValue
from airflow_provider_connect.control.overrides import OverridePolicy, validate_overrides
from airflow_provider_connect.runtime.worker_config import WorkerConfig

CONFIG = {
    "name": "c",
    "producer.override.acks": "all",
    "consumer.override.security.protocol": "SSL",
    "admin.override.sasl.jaas.config": "secret",
    "producer.not.an.override": "x",
}


@pytest.mark.parametrize(
    ("policy", "refused"),
    [
        (OverridePolicy("All"), []),
        (
            OverridePolicy("None"),
            [
                "producer.override.acks",
                "consumer.override.security.protocol",
                "admin.override.sasl.jaas.config",
            ],
        ),
        (OverridePolicy("Principal"), ["producer.override.acks"]),
        (
            OverridePolicy("Allowlist", frozenset({"acks"})),
            ["consumer.override.security.protocol", "admin.override.sasl.jaas.config"],
        ),
    ],
)
def test_each_policy_refuses_what_kafka_refuses(policy: OverridePolicy, refused: list[str]) -> None:
    results: dict[str, ConfigValue] = {}
    validate_overrides(CONFIG, policy, results)
    assert sorted(k for k, v in results.items() if v.error_messages) == sorted(refused)
    for key in refused:
        client_key = key.split(".override.")[1]
        assert results[key].error_messages == [
            f"The '{policy.name}' policy does not allow '{client_key}' to be overridden in the "
            "connector configuration."
        ]


def test_the_policy_from_worker_config_and_recorded_settings() -> None:
    assert WorkerConfig({}).override_policy == OverridePolicy("All")
    worker = WorkerConfig(
        {
            "connector.client.config.override.policy": "allowlist",
            "connector.client.config.override.allowlist": "acks, linger.ms",
        }
    )
    assert worker.override_policy == OverridePolicy("Allowlist", frozenset({"acks", "linger.ms"}))
    assert OverridePolicy.of(worker.override_policy.settings()) == worker.override_policy
    assert OverridePolicy.of({}) == OverridePolicy("All")
