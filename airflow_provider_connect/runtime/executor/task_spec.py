"""What an executor needs to run one task, or a slot host: plain, picklable descriptions."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

TASK_CLASS_CONFIG = "task.class"
"""The key of a task config naming its task class, written by the herder (as Kafka's)."""


@dataclass(frozen=True)
class TaskSpec:
    """One run of one task.

    ``run_id`` identifies this run in the store: once the store holds another run id for
    the task (a new generation, a restart), this run stops. ``cleanup_only`` runs a deleted
    connector's task just to start it and stop it with ``connector_deleted=True`` (for
    deletes accepted while the runtime was down). ``log_levels_since`` is the cluster-wide
    log levels' version when the runtime's herder started (KIP-976): the run applies only
    the levels written after it.
    """

    connector: str
    task_id: int
    generation: int
    run_id: str
    connector_config: dict[str, str]
    task_config: dict[str, str]
    worker_props: dict[str, str]
    cleanup_only: bool = False
    log_levels_since: int = 0

    @property
    def task_class(self) -> str:
        return self.task_config[TASK_CLASS_CONFIG]

    def hosted(self) -> dict[str, Any]:
        """The spec as the metadata database keeps it for a slot host: its fields but the
        worker config, which the host has from its own :class:`HostSpec`."""
        fields = asdict(self)
        del fields["worker_props"]
        return fields

    @classmethod
    def of_hosted(cls, fields: dict[str, Any], worker_props: dict[str, str]) -> TaskSpec:
        """The spec :meth:`hosted` kept, with the host's worker config."""
        return cls(**fields, worker_props=worker_props)


@dataclass(frozen=True)
class HostSpec:
    """A slot host: one Spark task that runs the task runs the herder gives it (``host_id``
    in the metadata database's hosted runs) as threads of one Python worker."""

    host_id: str
    worker_props: dict[str, str]
