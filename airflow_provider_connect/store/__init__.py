"""The metadata database, split as Kafka Connect splits its backing stores:

* :class:`ConfigStore` (``configs``): desired state: connector configs and target states,
  task configs per generation, task-count records, restart requests, deletions;
* :class:`StatusStore` (``statuses``): observed state: connector and task status, task runs
  and their heartbeats, active topics, the worker settings status readers need;
* :class:`OffsetStore` (``offsets``): source offsets and sink progress;
* :class:`HerderLease` (``lease``): which driver runs the connectors;
* :class:`LogLevelStore` (``log_levels``): cluster-wide log levels (KIP-976);
* :class:`HistoryStore` (``history``): a bounded history of each connector's throughput
  and lag (what the Connectors page charts);
* :class:`HostStore` (``hosts``): the task runs that share Spark task slots, given to their
  slot hosts by the herder, and their outcomes;
* :class:`ChannelStore` (``channels``): sink connectors' coordination channels, written by
  their task runs, fenced by the runs and generations above.

Each user gets the stores it needs: task runs on executors a ``StatusStore``, an
``OffsetStore`` and a ``ChannelStore``, the herder the configs, statuses and lease, REST and the Airflow hook a
:class:`MetadataStore` with all of them. Every method is one short transaction; none is on
the per-record path.
"""

from __future__ import annotations

from sqlalchemy import Engine

from airflow_provider_connect.store.channels import ChannelRun, ChannelStore
from airflow_provider_connect.store.configs import ConfigStore
from airflow_provider_connect.store.database import (
    DEFAULT_TIMEOUT_S,
    MIGRATE_COMMAND,
    SCHEMA_REVISION,
    Database,
    SchemaBehindError,
    SchemaVersionError,
    StoreUnavailable,
)
from airflow_provider_connect.store.history import HistoryStore
from airflow_provider_connect.store.hosts import HostedRun, HostStore
from airflow_provider_connect.store.lease import HerderLease
from airflow_provider_connect.store.log_levels import LogLevel, LogLevelStore
from airflow_provider_connect.store.offsets import OffsetStore
from airflow_provider_connect.store.records import (
    RECORD_COUNTERS,
    ConnectorRecord,
    Deletion,
    LeaseHolder,
    RestartRequest,
    RunReport,
    Sample,
    SinkProgress,
    Status,
    TaskControl,
    partition_key,
)
from airflow_provider_connect.store.states import DeletionState, State, TargetState
from airflow_provider_connect.store.statuses import StatusStore


class MetadataStore:
    """Every store of one metadata database (a SQLAlchemy URL).

    With ``migrate`` the schema is brought to the latest revision first (the runtime's
    start, ``connect-runtime db migrate``); otherwise it must already be there, or
    :class:`SchemaVersionError` names the command to run. Airflow never migrates.
    ``timeout_s`` and ``fail_fast`` are :class:`Database`'s: the deadline of each
    transaction, and whether to fail at once while the database is known unreachable.
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = False,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        fail_fast: bool = False,
    ) -> None:
        self.db = Database(url, timeout_s=timeout_s, fail_fast=fail_fast)
        try:
            if migrate:
                self.db.migrate()
            else:
                self.db.check_schema()
        except BaseException:
            self.db.close()
            raise
        self.configs = ConfigStore(self.db)
        self.statuses = StatusStore(self.db)
        self.offsets = OffsetStore(self.db)
        self.lease = HerderLease(self.db)
        self.log_levels = LogLevelStore(self.db)
        self.history = HistoryStore(self.db)
        self.hosts = HostStore(self.db)
        self.channels = ChannelStore(self.db)

    @property
    def url(self) -> str:
        return self.db.url

    @property
    def engine(self) -> Engine:
        return self.db.engine

    def close(self) -> None:
        self.db.close()


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "MIGRATE_COMMAND",
    "RECORD_COUNTERS",
    "SCHEMA_REVISION",
    "ChannelRun",
    "ChannelStore",
    "ConfigStore",
    "ConnectorRecord",
    "Database",
    "Deletion",
    "DeletionState",
    "HerderLease",
    "HistoryStore",
    "HostStore",
    "HostedRun",
    "LeaseHolder",
    "LogLevel",
    "LogLevelStore",
    "MetadataStore",
    "OffsetStore",
    "RestartRequest",
    "RunReport",
    "Sample",
    "SchemaBehindError",
    "SchemaVersionError",
    "SinkProgress",
    "State",
    "Status",
    "StatusStore",
    "StoreUnavailable",
    "TargetState",
    "TaskControl",
    "partition_key",
]
