"""What the PostgreSQL change-capture task's parts share (Debezium's
``ChangeEventSourceContext``): its config, connections, offset context, the maker of its
change events' records (:mod:`.events`), its notifications and its signals."""

from __future__ import annotations

from dataclasses import dataclass

from airflow_provider_connect.connectors.change_capture.notifications import Notifier
from airflow_provider_connect.connectors.change_capture.signal_processor import SignalProcessor
from airflow_provider_connect.connectors.postgres.config import PostgresConnectorConfig
from airflow_provider_connect.connectors.postgres.connections import PostgresConnections
from airflow_provider_connect.connectors.postgres.events import ChangeEvents
from airflow_provider_connect.connectors.postgres.offsets import PostgresOffsetContext


@dataclass(frozen=True)
class TaskContext:
    """One task's config, connections, offset context, records of change events,
    notifications and signals, made once in its ``start`` and handed to its change-event
    sources."""

    config: PostgresConnectorConfig
    connections: PostgresConnections
    offsets: PostgresOffsetContext
    events: ChangeEvents
    notifier: Notifier
    signals: SignalProcessor
