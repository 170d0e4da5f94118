"""What the task runs of one slot host share beyond its process."""

from __future__ import annotations

from dataclasses import dataclass, field

from airflow_provider_connect.runtime.executor.shared_producer import SharedProducers
from airflow_provider_connect.runtime.executor.task_control import HeartbeatGroup


@dataclass(frozen=True)
class HostResources:
    """A slot host's ``heartbeats`` (one transaction for all its runs' beats) and
    ``producers`` (one Kafka producer for its at-least-once source tasks of one config)."""

    heartbeats: HeartbeatGroup
    producers: SharedProducers = field(default_factory=SharedProducers)
