"""Tables of the metadata database: desired state (connector configs, target states,
deletions, restart requests) and observed state (task configs per generation, task-count
records, connector and task status, source offsets), and a bounded history of each
connector's throughput and lag; the task runs that share a Spark task slot (hosted runs); and
the messages of sink connectors' coordination channels.

Changes to these models need a migration in ``store/migrations/versions``; a test checks
that the migrations and the models agree.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Integer, LargeBinary, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAME = String(255)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Base(DeclarativeBase):
    pass


class ConnectorRow(Base):
    """A connector as submitted: its config and the state it should be in.

    ``deleted`` is set when a delete is accepted; the row stays until the connectorDeleted
    cleanup has run, so the cleanup can use the config. ``config_version`` grows with every
    config write, so the herder can tell that a config changed; ``generation`` is the number
    of the latest task configs (0 before the first). ``initial_offsets``: a new sink
    connector's consumer group positions (KIP-995, ``[[topic, partition, offset], ...]``)
    until the herder has written them to Kafka, before anything of the connector starts.
    ``source_offsets_set``: a source connector's offsets were set outside its tasks (initial
    offsets, KIP-875's alter or reset) since its tasks last ran; on an exactly-once worker
    the herder copies them into its offsets topic before they run again.
    ``initial_offsets_alter``: ``initial_offsets`` alter only the partitions they name
    (KIP-875's alter of a STOPPED sink, staged by a writer that reaches no Kafka) instead of
    replacing every offset of the group.
    """

    __tablename__ = "connect_connectors"

    name: Mapped[str] = mapped_column(NAME, primary_key=True)
    config: Mapped[dict[str, str]] = mapped_column(JSON)
    target_state: Mapped[str] = mapped_column(String(16))
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    config_version: Mapped[int] = mapped_column(Integer, default=1)
    generation: Mapped[int] = mapped_column(Integer, default=0)
    initial_offsets: Mapped[list[list[Any]] | None] = mapped_column(JSON, nullable=True)
    source_offsets_set: Mapped[bool] = mapped_column(Boolean, default=False)
    initial_offsets_alter: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TaskConfigRow(Base):
    """One task's config in one generation of a connector's task configs."""

    __tablename__ = "connect_task_configs"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    generation: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    config: Mapped[dict[str, str]] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TaskCountRow(Base):
    """A task-count record (KIP-618): written once the producers of earlier generations are
    fenced, before the tasks of ``generation`` may start."""

    __tablename__ = "connect_task_counts"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    generation: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ConnectorStatusRow(Base):
    __tablename__ = "connect_connector_status"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    worker_id: Mapped[str] = mapped_column(String(255))
    trace: Mapped[str | None] = mapped_column(Text, nullable=True)
    generation: Mapped[int] = mapped_column(Integer, default=0)
    config_version: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TaskStatusRow(Base):
    """A task's status, and the run that owns it: a task run whose ``run_id`` is no longer
    this row's has been superseded (new generation, restart) and must stop."""

    __tablename__ = "connect_task_status"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    task_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    worker_id: Mapped[str] = mapped_column(String(255))
    trace: Mapped[str | None] = mapped_column(Text, nullable=True)
    generation: Mapped[int] = mapped_column(Integer, default=0)
    run_id: Mapped[str] = mapped_column(String(64))
    heartbeat_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    metrics: Mapped[dict[str, float] | None] = mapped_column(JSON, nullable=True)
    """The current run's counters as of its last heartbeat (``TaskMetrics.snapshot``)."""
    waiting_on: Mapped[str | None] = mapped_column(Text, nullable=True)
    """What the current run waits on as of its last heartbeat, beyond its state (a sink's
    subscribed topic that does not exist: ``topic orders does not exist``); None when
    nothing."""


class SourceOffsetRow(Base):
    """The latest committed offset of one source partition; ``partition_key`` is the
    partition's canonical JSON text."""

    __tablename__ = "connect_source_offsets"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    partition_key: Mapped[str] = mapped_column(String(1024), primary_key=True)
    partition: Mapped[dict[str, Any]] = mapped_column(JSON)
    offset: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DeletionRow(Base):
    """A connector deletion and the outcome of its connectorDeleted cleanup."""

    __tablename__ = "connect_deletions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    connector: Mapped[str] = mapped_column(NAME, index=True)
    state: Mapped[str] = mapped_column(String(16))
    trace: Mapped[str | None] = mapped_column(Text, nullable=True)
    requested_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class RestartRequestRow(Base):
    """A restart asked for through REST or Airflow, until the herder has handled it."""

    __tablename__ = "connect_restart_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    connector: Mapped[str] = mapped_column(NAME)
    task_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    include_tasks: Mapped[bool] = mapped_column(Boolean, default=False)
    only_failed: Mapped[bool] = mapped_column(Boolean, default=False)
    requested_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ActiveTopicRow(Base):
    """A topic a connector has used since its topics were last reset (KIP-558)."""

    __tablename__ = "connect_active_topics"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    topic: Mapped[str] = mapped_column(String(255), primary_key=True)
    discovered_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SinkProgressRow(Base):
    """How far a sink connector's consumer group has got in one topic partition, written by
    the task that owns the partition at each offset commit: the committed offset (None
    before the first commit), the partition's end offset as the consumer last saw it, and
    the records committed so far (``records``: each commit adds the records its offsets
    passed; the offsets the consumer skipped, transaction markers and aborted records, are
    not records)."""

    __tablename__ = "connect_sink_progress"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    topic: Mapped[str] = mapped_column(String(255), primary_key=True)
    partition: Mapped[int] = mapped_column(Integer, primary_key=True)
    committed_offset: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    end_offset: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    records: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HerderLeaseRow(Base):
    """Which driver's herder runs the connectors of this database, until when (one row)."""

    __tablename__ = "connect_herder_lease"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    holder: Mapped[str] = mapped_column(String(255))
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    rest_url: Mapped[str | None] = mapped_column(String(1024), nullable=True)


class WorkerSettingRow(Base):
    """A worker setting that readers outside the runtime need (the Airflow hook's notion of
    a stale task comes from ``task.heartbeat.timeout.ms``), written by the herder that holds
    the lease."""

    __tablename__ = "connect_worker_settings"

    name: Mapped[str] = mapped_column(NAME, primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LogLevelRow(Base):
    """The latest cluster-wide level (KIP-976) of a logger namespace (``root``: the root
    logger): a Kafka level name. ``version`` grows with every write, over the whole table,
    so readers ask only for what changed since the version they applied."""

    __tablename__ = "connect_log_levels"

    logger: Mapped[str] = mapped_column(NAME, primary_key=True)
    level: Mapped[str] = mapped_column(String(16))
    version: Mapped[int] = mapped_column(BigInteger, unique=True)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MetricsHistoryRow(Base):
    """One sample of a connector's throughput and lag, written by the herder that holds the
    lease at most once per ``metrics.history.interval.ms`` and kept for
    ``metrics.history.retention.ms``: the records its task runs moved since its previous
    sample (``records``, from :class:`RunRecordsRow`), and a sink's total lag over the
    partitions whose lag is known (None for a source, and for a sink before any is known)."""

    __tablename__ = "connect_metrics_history"

    connector: Mapped[str] = mapped_column(NAME, primary_key=True)
    sampled_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), primary_key=True, index=True
    )
    records: Mapped[int] = mapped_column(BigInteger)
    lag: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class RunRecordsRow(Base):
    """The records one task run moved, as of its last report (its heartbeats, then its final
    report once it ended, written whether or not it is still the task's current run), and
    how many of them the history has counted: what the history's samples are taken from, so
    that records moved by a run that ended, was superseded or whose connector stopped are
    counted too. The sample that counts an ended run's last records forgets the run."""

    __tablename__ = "connect_run_records"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    connector: Mapped[str] = mapped_column(NAME, index=True)
    records: Mapped[int] = mapped_column(BigInteger)
    counted: Mapped[int] = mapped_column(BigInteger, default=0)
    ended: Mapped[bool] = mapped_column(Boolean, default=False)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    """When its first report was written (the run starts counting from zero then)."""
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class HostedRunRow(Base):
    """A task run the herder gave to a slot host (several task runs sharing one Spark task
    slot): what the host needs to start it (``spec``: the run's ``TaskSpec`` but the worker
    config, which the host has from its own spec) and, once it ended, its ``outcome`` (a
    ``TaskOutcome``) for the herder to take."""

    __tablename__ = "connect_hosted_runs"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    host_id: Mapped[str] = mapped_column(String(64), index=True)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    outcome: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    assigned_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ChannelMessageRow(Base):
    """A message of a connector's coordination channel (``connect/channel.py``), sent by a
    run of task ``task_id`` of ``generation``; kept until a task removes it or the connector's
    deletion finishes."""

    __tablename__ = "connect_channel_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    connector: Mapped[str] = mapped_column(NAME, index=True)
    task_id: Mapped[int] = mapped_column(Integer)
    generation: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(255))
    payload: Mapped[bytes] = mapped_column(LargeBinary)
    sent_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
