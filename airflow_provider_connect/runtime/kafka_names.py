"""The names a connector's Kafka clients go by, as in Kafka Connect, which more than one room
of the runtime needs: a sink connector's consumer group (its tasks consume in it, the REST
API reads, alters and resets its offsets) and an exactly-once source task's transactional id
(its producer uses it, the herder fences it before a new generation starts)."""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.runtime.worker_config import GROUP_ID, WorkerConfig


def consumer_group(connector: str, config: Mapping[str, str] | None = None) -> str:
    """The consumer group of a sink connector, as in Kafka Connect: its config's
    ``consumer.override.group.id``, else ``connect-<name>``."""
    return (config or {}).get("consumer.override.group.id") or f"connect-{connector}"


def transactional_id(worker: WorkerConfig, connector: str, task_id: int) -> str:
    """The transactional id of a task, the same for every run and generation (KIP-618)."""
    return f"{worker[GROUP_ID]}-{connector}-{task_id}"
