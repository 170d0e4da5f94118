"""What the stores return: plain, immutable records (never ORM rows)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import orjson

from airflow_provider_connect.store.states import DeletionState, State, TargetState


@dataclass(frozen=True)
class ConnectorRecord:
    """A connector as submitted: its config and the state it should be in."""

    name: str
    config: dict[str, str]
    target_state: TargetState
    deleted: bool
    config_version: int
    created_at: dt.datetime
    initial_offsets: tuple[tuple[str, int, int], ...] | None = None
    """A new sink connector's consumer group positions (topic, partition, offset) that the
    herder has yet to write to Kafka (KIP-995); None once written, and for other connectors."""
    source_offsets_set: bool = False
    """A source connector's offsets were set outside its tasks since they last ran (initial
    offsets, KIP-875's alter or reset): an exactly-once worker's offsets topic lacks them."""
    initial_offsets_alter: bool = False
    """``initial_offsets`` alter only the partitions they name (KIP-875's alter staged while
    the sink was STOPPED); otherwise they replace every offset of its consumer group."""


@dataclass(frozen=True)
class Status:
    """The status of a connector (``task_id`` None) or of one of its tasks."""

    connector: str
    task_id: int | None
    state: State
    worker_id: str
    trace: str | None
    generation: int
    heartbeat_at: dt.datetime | None = None
    config_version: int = 0
    metrics: dict[str, float] | None = None
    waiting_on: str | None = None
    """What a task's run waits on beyond its state, as of its last heartbeat (a topic that
    does not exist); None when nothing, and always for a connector."""


@dataclass(frozen=True)
class LeaseHolder:
    """The driver whose herder runs the connectors, until ``expires_at`` unless renewed;
    ``rest_url`` where it serves the REST API (None when it serves none)."""

    holder: str
    expires_at: dt.datetime
    rest_url: str | None


RECORD_COUNTERS = ("source_record_write_total", "sink_record_send_total")
"""The counters (``runtime/executor/task_metrics.py``) of the records a task run moved: a
source's written to Kafka, a sink's put into the external system; a task has one of them."""


@dataclass(frozen=True)
class RunReport:
    """What a task run writes with each heartbeat: its counters, and what it waits on
    beyond its state (None: nothing); ``final`` on the last report of a run that ended,
    after which it moves no more records."""

    metrics: dict[str, float]
    waiting_on: str | None = None
    final: bool = False

    @property
    def records(self) -> int:
        """The records the run moved so far (see :data:`RECORD_COUNTERS`)."""
        return int(sum(self.metrics.get(counter, 0) for counter in RECORD_COUNTERS))


@dataclass(frozen=True)
class TaskControl:
    """What a running task learns at each heartbeat: whether its run is still the current
    one, what its connector should be doing, and the latest version of the cluster-wide log
    levels (``log_levels_version``, 0 before any)."""

    current: bool
    target_state: TargetState
    deleted: bool
    log_levels_version: int = 0


@dataclass(frozen=True)
class Deletion:
    connector: str
    state: DeletionState
    trace: str | None
    requested_at: dt.datetime
    finished_at: dt.datetime | None


@dataclass(frozen=True)
class SinkProgress:
    """A sink connector's committed offset and the end offset in one topic partition, as of
    ``updated_at``, and the records it has committed there (see ``SinkProgressRow``)."""

    topic: str
    partition: int
    committed_offset: int | None
    end_offset: int | None
    updated_at: dt.datetime
    records: int = 0

    @property
    def lag(self) -> int | None:
        """Records of the partition not committed yet, as of ``updated_at`` (never below 0);
        None while the committed or the end offset is unknown."""
        if self.committed_offset is None or self.end_offset is None:
            return None
        return max(self.end_offset - self.committed_offset, 0)


@dataclass(frozen=True)
class Sample:
    """A connector's throughput and lag at ``sampled_at``: ``records``, the records its task
    runs moved since its previous sample (or, for its first one, since its first run
    started), as of their heartbeats, every run counted to its last report, including those
    that ended in between; and a sink's total lag over the partitions whose lag is known
    (None for a source, and for a sink before any is known). The samples of a connector add
    up to the records it moved."""

    sampled_at: dt.datetime
    records: int
    lag: int | None


@dataclass(frozen=True)
class RestartRequest:
    connector: str
    task_id: int | None
    include_tasks: bool
    only_failed: bool


def partition_key(partition: dict[str, Any]) -> str:
    """The canonical text of a source partition (sorted keys), its identity in the store."""
    return orjson.dumps(partition, option=orjson.OPT_SORT_KEYS).decode()


def aware(moment: dt.datetime) -> dt.datetime:
    """SQLite returns naive datetimes; every time in the store is UTC."""
    return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment
