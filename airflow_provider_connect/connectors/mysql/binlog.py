"""The binlog as the task reads it: ``mysql-replication``'s ``BinLogStreamReader`` opened at
a position (a GTID set, or a file and position), read event by event until a deadline.
Chosen as the binlog client: maintained, pure Python, it decodes every rows event with the
FULL row metadata and gives each event's position.

The reader waits for events (``blocking``) and asks the server for a heartbeat event every
``HEARTBEAT_S`` seconds while the log is idle, so a read returns by its deadline without a
thread of its own, and a connection that stopped answering fails its read after
``read_timeout`` instead of waiting forever. The library's own reconnection is never used: a
failed read raises, and the task's coordinator opens the stream again from the last position
returned (:mod:`~airflow_provider_connect.connectors.change_capture.coordinator`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.mysql.database import require_pymysql

try:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import (
        GtidEvent,
        HeartbeatLogEvent,
        MariadbAnnotateRowsEvent,
        MariadbGtidEvent,
        QueryEvent,
        RotateEvent,
        RowsQueryLogEvent,
        XAPrepareEvent,
        XidEvent,
    )
    from pymysqlreplication.row_event import (
        DeleteRowsEvent,
        TableMapEvent,
        UpdateRowsEvent,
        WriteRowsEvent,
    )
except ImportError:  # pragma: no cover - the extra is installed with the project's tests
    BinLogStreamReader = None

__all__ = [
    "EVENTS",
    "FATAL",
    "HEARTBEAT_S",
    "BinlogStream",
    "DeleteRowsEvent",
    "GtidEvent",
    "MariadbAnnotateRowsEvent",
    "MariadbGtidEvent",
    "QueryEvent",
    "RotateEvent",
    "RowsQueryLogEvent",
    "TableMapEvent",
    "UpdateRowsEvent",
    "WriteRowsEvent",
    "XAPrepareEvent",
    "XidEvent",
    "require_replication",
]

_LOST = 2055
"""PyMySQL's "lost connection" that the library does not take as a cue to reconnect."""
FATAL = (1236, 1045)
"""ER_MASTER_FATAL_ERROR_READING_BINLOG (a purged position, a server id in use) and
ER_ACCESS_DENIED_ERROR: retrying does not help (Debezium's ``MySqlErrorHandler``)."""

HEARTBEAT_S = 0.1
"""The server's heartbeat period while the log is idle: the longest a read overruns its
deadline, and waits after the last event before handing it on."""

EVENTS = (
    (
        RotateEvent,
        MariadbGtidEvent,
        GtidEvent,
        QueryEvent,
        XidEvent,
        XAPrepareEvent,
        TableMapEvent,
        WriteRowsEvent,
        UpdateRowsEvent,
        DeleteRowsEvent,
        HeartbeatLogEvent,
        MariadbAnnotateRowsEvent,
        RowsQueryLogEvent,
    )
    if BinLogStreamReader is not None
    else ()
)


def require_replication() -> Any:
    if BinLogStreamReader is None:
        raise ConnectException(
            "The MySQL and MariaDB change-capture connectors need mysql-replication: "
            "pip install 'airflow-provider-connect[mysql]'"
        )
    return BinLogStreamReader


class BinlogStream:
    """One session reading the binlog from a position. Used from the task's poll thread;
    :meth:`close` from any thread."""

    def __init__(
        self,
        parameters: dict[str, Any],
        server_id: int,
        *,
        mariadb: bool,
        file: str,
        pos: int,
        gtids: str | None,
        annotate: bool,
        timeout_s: float,
    ) -> None:
        """Reads as replica ``server_id`` from after the GTID set ``gtids`` when given (the
        server sends what it has not), else from ``file`` at ``pos``."""
        reader = require_replication()
        settings: dict[str, Any] = {
            key: parameters[key]
            for key in (
                "host",
                "port",
                "user",
                "password",
                "ssl",
                "ssl_verify_cert",
                "ssl_verify_identity",
                "charset",
            )
            if key in parameters
        }
        settings["connect_timeout"] = max(1, int(timeout_s))
        settings["read_timeout"] = max(1, int(timeout_s))
        position: dict[str, Any]
        if gtids:
            position = {"auto_position": gtids, "is_mariadb": mariadb}
        else:  # a file and position: the library reads them only on its MySQL path
            position = {"log_file": file, "log_pos": pos, "is_mariadb": False}
        self._sessions = 0
        self._reader = reader(
            connection_settings=settings,
            pymysql_wrapper=self._connect,
            server_id=server_id,
            resume_stream=True,
            blocking=True,
            only_events=list(EVENTS),
            slave_heartbeat=HEARTBEAT_S,
            enable_logging=False,  # its settings at INFO with every session
            annotate_rows_event=annotate and mariadb,
            **position,
        )
        self._events: Iterator[Any] = iter(self._reader)

    def _connect(self, **settings: Any) -> Any:
        """PyMySQL's connection for the reader: its control connection, and its session's
        once. A second session would be the library reconnecting by itself from where the
        first began (replaying it); it fails instead, and the task resumes from its own
        position."""
        pymysql = require_pymysql()
        if "cursorclass" not in settings:  # the session's, not the control connection's
            self._sessions += 1
            if self._sessions > 1:
                raise pymysql.err.OperationalError(_LOST, "The binlog session was lost")
        return pymysql.connect(**settings)

    def read(self, deadline: float) -> Iterator[Any]:
        """The events the server sends until ``deadline`` (``time.monotonic()``), or until
        the log is idle after some were sent (the server's heartbeat: the reader has caught
        up, so what it read is handed on at once); heartbeat events are not yielded. Raises
        PyMySQL's errors on a failed connection (:data:`FATAL` among them: no retry helps)."""
        sent = False
        while time.monotonic() < deadline:
            event = next(self._events, None)
            if event is None:  # the server ended the session
                raise require_pymysql().err.OperationalError(_LOST, "The binlog stream ended")
            if isinstance(event, HeartbeatLogEvent):
                if sent:
                    return
                continue
            sent = True
            yield event

    def close(self) -> None:
        self._reader.close()
