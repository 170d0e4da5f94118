"""The metadata database: connector configs, target states, task configs per generation,
task-count records, status, source offsets and deletions (SQLite or PostgreSQL)."""

from airflow_provider_connect.store.api import (
    Connector,
    Deletion,
    MetadataStore,
    RestartRequest,
    SinkProgress,
    Status,
    TaskControl,
    partition_key,
)
from airflow_provider_connect.store.states import DeletionState, State, TargetState

__all__ = [
    "Connector",
    "Deletion",
    "DeletionState",
    "MetadataStore",
    "RestartRequest",
    "SinkProgress",
    "State",
    "Status",
    "TargetState",
    "TaskControl",
    "partition_key",
]
