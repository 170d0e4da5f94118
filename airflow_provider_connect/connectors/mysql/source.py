"""Log-based change capture from MySQL and MariaDB, compatible with Debezium's binlog
connectors (``io.debezium.connector.mysql.MySqlConnector`` and
``io.debezium.connector.mariadb.MariaDbConnector``): their configs, topics, envelope,
``source`` block, keys, tombstones, schema change events and type mapping, read from the
server's binlog as a replica reads it (``mysql-replication``).

Guarantees:

* **Snapshot, then stream, without a gap or a double.** The tables are read in one consistent
  snapshot transaction (``op`` ``r``) whose binlog position the server states, and the
  stream starts at that position: a row committed before it is read, a change committed
  after it is streamed, never both and never neither. A snapshot the task did not finish is
  taken again from the start at the next start, as Debezium does: its ``r`` events may then
  come twice.
* **Resumed where the stored offset says**, by GTID set or binlog file and position, inside a
  transaction by the count of its events and rows already handed out: the streamed changes
  are delivered at least once, and exactly once on the exactly-once worker (KIP-618).
* **Heartbeats** (``heartbeat.interval.ms``) carry the stream's position, so the stored
  offset of a server with no captured writes still advances.
* **KIP-901**: the connector creates nothing on the server (no slot, no history topic); the
  window rows an incremental snapshot writes to the signal table are its own, and
  ``stop(connector_deleted=True)`` deletes them. The binlog, the tables and the signal
  table's other rows are the user's and stay.

The task wires its parts, each in a module of its own as Debezium's are: the typed config
(``config.py``, the flavour in ``flavors.py``), the connections (``connections.py``,
``binlog.py``), the offset context (``offsets.py``), the snapshot source
(``snapshot_source.py``) and the streaming source (``streaming_source.py``), and the
database-independent parts of the change-capture core (``connectors/change_capture/``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigDef
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.datasets import ConnectorData
from airflow_provider_connect.connect.signals import SignalChannels
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from airflow_provider_connect.connectors.change_capture.config import (
    SIGNAL_DATA_COLLECTION,
    channel_errors,
)
from airflow_provider_connect.connectors.change_capture.coordinator import (
    ChangeEventSourceCoordinator,
)
from airflow_provider_connect.connectors.change_capture.signal_processor import SignalProcessor
from airflow_provider_connect.connectors.mysql import config as keys
from airflow_provider_connect.connectors.mysql.config import (
    CONFIG_DEFS,
    BinlogConnectorConfig,
    conflicts,
    connection_parameters,
    pattern_errors,
)
from airflow_provider_connect.connectors.mysql.connections import BinlogConnections
from airflow_provider_connect.connectors.mysql.context import TaskContext
from airflow_provider_connect.connectors.mysql.database import Database, require_pymysql
from airflow_provider_connect.connectors.mysql.datasets import captured_datasets
from airflow_provider_connect.connectors.mysql.events import ChangeEvents
from airflow_provider_connect.connectors.mysql.flavors import MARIADB, MYSQL, Flavor
from airflow_provider_connect.connectors.mysql.incremental import BinlogChunkReader
from airflow_provider_connect.connectors.mysql.offsets import BinlogOffsetContext
from airflow_provider_connect.connectors.mysql.signals import signal_channels
from airflow_provider_connect.connectors.mysql.sources import BinlogChangeEventSources
from airflow_provider_connect.connectors.mysql.streaming_source import (
    BinlogStreamingChangeEventSource,
)


class BinlogConnector(SourceConnector):
    """One task: the binlog has one reader per server id. Subclasses name the flavour."""

    flavor: Flavor

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEFS[self.flavor.name]

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """See :func:`~airflow_provider_connect.connectors.mysql.datasets.captured_datasets`."""
        return captured_datasets(config, cluster)

    def signal_channels(self, config: Mapping[str, str]) -> SignalChannels:
        """See :func:`~airflow_provider_connect.connectors.mysql.signals.signal_channels`."""
        return signal_channels(self.flavor, config)

    def validate(self, connector_configs: dict[str, str]) -> Config:
        """Kafka Connect's checks of each value, then Debezium's of the filters, then the
        server's settings and the user's privileges, each on the key whose value or the
        server's setting must change."""
        config = super().validate(connector_configs)
        if config.error_count:
            return config
        values = {v.name: v for v in config.config_values}
        parsed = self.config().parse(connector_configs)
        errors = {**pattern_errors(parsed), **conflicts(parsed), **channel_errors(parsed)}
        for key, error in errors.items():
            values[key].add_error_message(error)
        if config.error_count:
            return config
        try:
            database = Database(connection_parameters(parsed, parsed[keys.SSL_MODE].lower()))
        except Exception as e:
            values[keys.HOSTNAME].add_error_message(f"Unable to connect: {e}")
            return config
        try:
            for key, message in database.server_problems(self.flavor.name, parsed[keys.SERVER_ID]):
                values[key].add_error_message(message)
            signal = parsed[SIGNAL_DATA_COLLECTION]
            if signal and tuple(signal.split(".", 1)) not in set(database.tables()):
                values[SIGNAL_DATA_COLLECTION].add_error_message(
                    f"The signal table {signal} does not exist"
                )
        finally:
            database.close()
        return config

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return BinlogConnectorTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, _FLAVOR: self.flavor.name}]

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        """Offsets are binlog positions, replayed in the same order by the server."""
        return ExactlyOnceSupport.SUPPORTED

    def stop(self, is_deleted: bool = False) -> None:
        """Nothing held here: the task deletes its window rows when deleted."""


class MySqlConnector(BinlogConnector):
    """``io.debezium.connector.mysql.MySqlConnector``."""

    flavor = MYSQL


class MariaDbConnector(BinlogConnector):
    """``io.debezium.connector.mariadb.MariaDbConnector``."""

    flavor = MARIADB


_FLAVOR = "binlog.flavor"
"""The task config key naming the connector's flavour (the task class serves both)."""


def flavor_of(props: Mapping[str, str]) -> Flavor:
    """The flavour a task config names (``binlog.flavor``, else its ``connector.class``)."""
    named = props.get(_FLAVOR) or props.get("connector.class", "")
    return MARIADB if MARIADB.name in named.lower() else MYSQL


def _known(value: float | None) -> float:
    """A gauge's value; NaN (left out of the sample) while unknown."""
    return math.nan if value is None else float(value)


class BinlogConnectorTask(SourceTask):
    """Wires the parts of change capture (its config, connections, offset context,
    incremental snapshots, transaction monitor, heartbeat, snapshot and streaming sources
    under the core's coordinator: see the module docstring) and runs them from ``poll`` and
    ``stop``. Connections are opened at the first ``poll``, not in ``start``."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        flavor = flavor_of(props)
        self.config = config = BinlogConnectorConfig.of(flavor, props)
        self.connections = connections = BinlogConnections(config)
        signal = config.filters.signal_table
        self.chunks = BinlogChunkReader(config.parameters, signal, connections) if signal else None
        notifier = config.notifier()
        incremental = config.incremental(self.chunks, notifier)
        self.offsets = offsets = BinlogOffsetContext(config.topic_prefix, incremental)
        signals = SignalProcessor(
            config.signals,
            config.topic_prefix,
            incremental,
            lambda: [f"{db}.{t}" for db, t in connections.captured_tables()],
        )
        context = TaskContext(
            config, connections, offsets, ChangeEvents(config, offsets), notifier, signals
        )
        self.streaming = streaming = BinlogStreamingChangeEventSource(
            context,
            config.transaction_monitor(offsets.partition),
            config.heartbeat(offsets.partition),
        )
        self.stopping = threading.Event()
        self.coordinator = ChangeEventSourceCoordinator(
            BinlogChangeEventSources(context, streaming),
            offsets,
            config.snapshot_mode,
            lambda: self.context.offset_storage_reader().offset(offsets.partition),
            require_pymysql().Error,
            config.poll_interval_s,
            self.stopping,
            signals,
            notifier,
        )
        self.deleted = False
        metrics = self.context.plugin_metrics()
        metrics.add_metric(
            metrics.metric_name(
                "milliseconds-behind-source",
                "Time from the last streamed change's binlog event to its processing",
            ),
            lambda: _known(self.streaming.behind_ms),
        )

    def poll(self) -> list[SourceRecord] | None:
        """See :meth:`ChangeEventSourceCoordinator.poll`."""
        return self.coordinator.poll()

    def stop(self, connector_deleted: bool = False) -> None:
        """Ends the polls; deleted (KIP-901), the window rows go in :meth:`stopped`."""
        self.stopping.set()
        self.deleted = self.deleted or connector_deleted

    def stopped(self) -> None:
        """Closes every connection; deleted, removes the window rows the task wrote to the
        signal table."""
        self.connections.close()
        self.coordinator.close()
        if self.chunks is not None:
            if self.deleted:
                self.chunks.remove_windows()
            self.chunks.close()
