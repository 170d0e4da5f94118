"""Signals a connector reads from a table of its database (Debezium's source signal
channel), as the connector describes them
(:meth:`~airflow_provider_connect.connect.source.SourceConnector.snapshot_signal`), so that
what writes a signal (the incremental-snapshot operator) only asks the connector which table
and which row. Pure Python: this module imports nothing of Airflow or of a driver."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SignalDatabase:
    """The database of a signal table, as SQLAlchemy's ``URL.create`` takes it."""

    drivername: str
    host: str | None
    port: int | None
    username: str | None
    password: str | None
    database: str | None
    query: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Signal:
    """One signal row for ``table`` (``schema.table`` or ``table``) of ``database``: the
    columns ``id``, ``type`` and ``data`` and their values."""

    database: SignalDatabase
    table: str
    row: dict[str, str]


class NoSignals(Exception):
    """The connector, as configured, reads no signals; the message says what to set."""
