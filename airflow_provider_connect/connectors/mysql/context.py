"""What the binlog change-capture task's parts share (Debezium's
``ChangeEventSourceContext``): its config, connections, offset context and the maker of its
change events' records (:mod:`.events`)."""

from __future__ import annotations

from dataclasses import dataclass

from airflow_provider_connect.connectors.mysql.config import BinlogConnectorConfig
from airflow_provider_connect.connectors.mysql.connections import BinlogConnections
from airflow_provider_connect.connectors.mysql.events import ChangeEvents
from airflow_provider_connect.connectors.mysql.offsets import BinlogOffsetContext


@dataclass(frozen=True)
class TaskContext:
    """One task's config, connections, offset context and records of change events, made
    once in its ``start`` and handed to its change-event sources."""

    config: BinlogConnectorConfig
    connections: BinlogConnections
    offsets: BinlogOffsetContext
    events: ChangeEvents
