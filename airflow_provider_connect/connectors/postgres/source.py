"""Log-based change capture from PostgreSQL, compatible with Debezium's PostgreSQL connector
(``io.debezium.connector.postgresql.PostgresConnector``): its configs, topics, envelope,
``source`` block, keys, tombstones and type mapping, read from a logical replication slot
with the ``pgoutput`` plugin built into PostgreSQL.

Guarantees:

* **Snapshot, then stream, without a gap or a double.** The slot is created with an
  exported snapshot, the tables are read in it (``op`` ``r``), and the stream starts at the
  slot's consistent point: a row committed before it is read, a change committed after it
  is streamed, never both and never neither. A snapshot the task did not finish is taken
  again from the start (a new slot) at the next start, as Debezium does: its ``r`` events
  may then come twice.
* **The slot's position follows what is stored.** ``commit`` (after the runtime stored the
  offsets of everything polled, or committed their Kafka transaction on the exactly-once
  worker) confirms the position of the last polled event (never under
  ``lsn.flush.mode=manual``); nothing beyond it is ever confirmed, so the slot keeps every
  change not yet safely delivered (psycopg2 itself confirms a keepalive's position only while
  everything received is confirmed). At a start, ``offset.mismatch.strategy`` settles a
  stored offset and a slot that disagree (``sources.py``). A restart resumes
  at the stored offset: events at or before it are skipped by their position (the commit
  LSN of their transaction and their index in it), so the streamed changes are delivered
  at least once, and exactly once on the exactly-once worker (KIP-618).
* **Heartbeats** (``heartbeat.interval.ms``) carry the server's position while no
  transaction is open, so the slot of a database with no captured writes still advances.
* **KIP-901**: ``stop(connector_deleted=True)`` drops the slot and the publication the
  connector created (a publication it found is kept); any other stop keeps both, so no
  change is missed while the connector is paused, stopped or reconfigured.
  ``slot.drop.on.stop`` drops the slot at every stop (Debezium's switch).

The task wires its parts, each in a module of its own as Debezium's are: the typed config
(``config.py``), the connections (``connections.py``), the offset context (``offsets.py``),
the snapshot source (``snapshot_source.py``) and the streaming source
(``streaming_source.py``) with the slot's handling (``sources.py``), and the
database-independent parts of the change-capture core (``connectors/change_capture/``): the
coordinator that runs the snapshot, then the stream, and recovers from connection failures,
transaction metadata, heartbeats, the envelope, incremental snapshots.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigDef
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.datasets import ConnectorData
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.signals import SignalChannels
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from airflow_provider_connect.connectors.change_capture.config import channel_errors
from airflow_provider_connect.connectors.change_capture.coordinator import (
    ChangeEventSourceCoordinator,
)
from airflow_provider_connect.connectors.change_capture.signal_processor import SignalProcessor
from airflow_provider_connect.connectors.postgres import config as keys
from airflow_provider_connect.connectors.postgres.config import (
    CONFIG_DEF,
    PostgresConnectorConfig,
    connection_parameters,
    pattern_errors,
)
from airflow_provider_connect.connectors.postgres.connections import PostgresConnections
from airflow_provider_connect.connectors.postgres.context import TaskContext
from airflow_provider_connect.connectors.postgres.database import Database, require_psycopg2
from airflow_provider_connect.connectors.postgres.datasets import captured_datasets
from airflow_provider_connect.connectors.postgres.events import ChangeEvents
from airflow_provider_connect.connectors.postgres.offsets import PostgresOffsetContext
from airflow_provider_connect.connectors.postgres.signals import signal_channels
from airflow_provider_connect.connectors.postgres.sources import PostgresChangeEventSources
from airflow_provider_connect.connectors.postgres.streaming_source import (
    PostgresStreamingChangeEventSource,
)

SLOT_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def valid_slot_name(name: str) -> bool:
    """PostgreSQL's rule: at most 63 lower-case letters, digits and underscores."""
    return 0 < len(name) <= 63 and set(name) <= SLOT_NAME_CHARS


class PostgresConnector(SourceConnector):
    """One task: a slot has one reader."""

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """See :func:`~airflow_provider_connect.connectors.postgres.datasets.captured_datasets`."""
        return captured_datasets(config, cluster)

    def signal_channels(self, config: Mapping[str, str]) -> SignalChannels:
        """See :func:`~airflow_provider_connect.connectors.postgres.signals.signal_channels`."""
        return signal_channels(config)

    def validate(self, connector_configs: dict[str, str]) -> Config:
        config = super().validate(connector_configs)
        if config.error_count:
            return config
        values = {v.name: v for v in config.config_values}
        parsed = CONFIG_DEF.parse(connector_configs)
        for key, error in {**pattern_errors(parsed), **channel_errors(parsed)}.items():
            values[key].add_error_message(error)
        if not valid_slot_name(parsed[keys.SLOT_NAME]):
            values[keys.SLOT_NAME].add_error_message(
                "A slot name has at most 63 lower-case letters, digits and underscores"
            )
        if config.error_count:
            return config
        try:
            database = Database(connection_parameters(parsed, "connect-validate"))
        except Exception as e:
            values[keys.HOSTNAME].add_error_message(f"Could not connect to the database: {e}")
            return config
        try:
            if database.setting("wal_level") != "logical":
                values[keys.HOSTNAME].add_error_message(
                    "The server's wal_level is not logical: set wal_level = logical and restart it"
                )
            if not database.can_replicate():
                values[keys.USER].add_error_message(
                    f"User {parsed[keys.USER]} has neither the REPLICATION attribute nor superuser"
                )
            mode = parsed[keys.PUBLICATION_AUTOCREATE_MODE].lower()
            if mode == "disabled" and database.publication(parsed[keys.PUBLICATION_NAME]) is None:
                values[keys.PUBLICATION_NAME].add_error_message(
                    f"Publication {parsed[keys.PUBLICATION_NAME]} does not exist and "
                    "publication.autocreate.mode is disabled"
                )
            signal = parsed[keys.SIGNAL_DATA_COLLECTION]
            if signal and signal not in {f"{s}.{t}" for _, s, t in database.tables()}:
                values[keys.SIGNAL_DATA_COLLECTION].add_error_message(
                    f"The signal table {signal} does not exist"
                )
        finally:
            database.close()
        return config

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return PostgresConnectorTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        """Offsets are stream positions, replayed in the same order from the slot."""
        return ExactlyOnceSupport.SUPPORTED

    def stop(self, is_deleted: bool = False) -> None:
        """Nothing held here: the task owns the slot and drops it when deleted."""


def _known(value: float | None) -> float:
    """A gauge's value; NaN (left out of the sample) while unknown."""
    return math.nan if value is None else float(value)


class PostgresConnectorTask(SourceTask):
    """Wires the parts of change capture (its config, connections, offset context,
    incremental snapshots, transaction monitor, heartbeat, snapshot and streaming sources
    under the core's coordinator: see the module docstring) and runs them from ``poll``,
    ``commit`` and ``stop``. Connections are opened at the first ``poll``, not in
    ``start``: a task started only to be stopped as deleted (KIP-901) opens nothing but
    what dropping the slot needs."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.config = config = PostgresConnectorConfig.of(props)
        if not valid_slot_name(config.slot_name):
            raise ConnectException(f"Invalid slot.name {config.slot_name!r}")
        self.connections = connections = PostgresConnections(config)
        notifier = config.notifier()
        incremental = config.incremental(connections.chunks, notifier)
        self.offsets = offsets = PostgresOffsetContext(config.topic_prefix, incremental)
        signals = SignalProcessor(
            config.signals,
            config.topic_prefix,
            incremental,
            lambda: [t for t in connections.captured_names() if t != config.filters.signal_table],
        )
        context = TaskContext(
            config, connections, offsets, ChangeEvents(config, offsets), notifier, signals
        )
        self.streaming = streaming = PostgresStreamingChangeEventSource(
            context,
            config.transaction_monitor(offsets.partition),
            config.heartbeat(offsets.partition),
        )
        self.stopping = threading.Event()
        self.coordinator = ChangeEventSourceCoordinator(
            PostgresChangeEventSources(context, streaming),
            offsets,
            config.snapshot_mode,
            lambda: self.context.offset_storage_reader().offset(offsets.partition),
            require_psycopg2().Error,
            config.poll_interval_s,
            self.stopping,
            signals,
            notifier,
        )
        self.deleted = False
        self._register_metrics()

    def _register_metrics(self) -> None:
        """The slot's retained log and lag, and how far the stream is behind, as the task's
        metrics (KIP-877): through ConnectHook.plugin_metrics, on the Connectors page and at
        ``/metrics``."""
        metrics = self.context.plugin_metrics()
        connections = self.connections
        for name, description, read in (
            (
                "slot-retained-bytes",
                "Write-ahead log the replication slot holds back on the server, in bytes",
                lambda: _known(s.retained_bytes if (s := connections.slot_state) else None),
            ),
            (
                "slot-lag-bytes",
                "Write-ahead log written since the slot's confirmed position, in bytes",
                lambda: _known(s.lag_bytes if (s := connections.slot_state) else None),
            ),
            (
                "milliseconds-behind-source",
                "Time from the last streamed change's commit to its processing",
                lambda: _known(self.streaming.behind_ms),
            ),
        ):
            metrics.add_metric(metrics.metric_name(name, description), read)

    def poll(self) -> list[SourceRecord] | None:
        """See :meth:`ChangeEventSourceCoordinator.poll`."""
        return self.coordinator.poll()

    def commit(self) -> None:
        """Everything polled so far is stored (or committed, exactly-once): the slot may
        release the log before the last polled position (never under
        ``lsn.flush.mode=manual``)."""
        recorded = self.offsets.recorded
        if self.config.lsn_flush_mode == "manual":
            return
        if recorded is not None and not self.stopping.is_set():
            self.connections.confirm(recorded.lsn_commit)

    def stop(self, connector_deleted: bool = False) -> None:
        """Deleted: drops the slot and the publication the connector created (KIP-901),
        ending the session that streams the slot (this task's own poll, which then
        returns). ``stopped`` drops them again in case a first poll created them
        meanwhile."""
        self.stopping.set()
        if connector_deleted:
            self.deleted = True
            self.connections.drop_provisioned()

    def stopped(self) -> None:
        """Closes every connection; drops the slot when deleted (again: see ``stop``) or
        with ``slot.drop.on.stop``."""
        self.connections.close()
        self.coordinator.close()
        if self.deleted or self.config.slot_drop_on_stop:
            self.connections.drop_provisioned(publication=self.deleted)
