"""The binlog as the task reads it: ``mysql-replication``'s ``BinLogStreamReader`` opened at
a position (a GTID set, or a file and position), read event by event until a deadline.
Chosen as the binlog client: maintained, pure Python, it decodes every rows event with the
FULL row metadata and gives each event's position.

The reader waits for events (``blocking``) and asks the server for a heartbeat event every
``HEARTBEAT_S`` seconds while the log is idle, so a read returns by its deadline without a
thread of its own, and a connection that stopped answering fails its read after
``read_timeout`` instead of waiting forever. The library's own reconnection is never used: a
failed read raises, and the task's coordinator opens the stream again from the last position
returned (:mod:`~airflow_provider_connect.connectors.change_capture.coordinator`).

Each row event follows a TABLE_MAP event, and the library parses every one of them (its
column types, names, charsets: about half of its CPU per change event on a table of five
columns). The task's reader keeps what it parsed of each TABLE_MAP body (:class:`ParsedTables`)
and gives a TABLE_MAP whose bytes were seen before that parse again: the same event, the same
attributes, without the work. Only readers whose table map is a :class:`ParsedTables` reuse;
every other reader of the process parses as the library does."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.mysql.database import require_pymysql

try:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import (
        BinLogEvent,
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


class ParsedTables(dict[int, Any]):
    """A reader's table map (table id → the library's ``Table``), with what the reader parsed
    of each TABLE_MAP body it read: a TABLE_MAP whose bytes (table id, names, column types
    and metadata) are those of one parsed before is that one again. Only bodies that carry
    their column names (``binlog_row_metadata=FULL``) are kept, so that everything the parse
    gives is in the bytes. At most :attr:`LIMIT` bodies are kept (then all are forgotten and
    parsed again)."""

    LIMIT = 4096

    def __init__(self, tables: dict[int, Any] | None = None) -> None:
        super().__init__(tables or {})
        self.parsed: dict[bytes, dict[str, Any]] = {}

    def remember(self, body: bytes, event: Any) -> None:
        """Keeps what ``event`` (the TABLE_MAP of ``body``, parsed) holds of the table."""
        if not event._processed or not event.optional_metadata.column_name_list:
            return
        if len(self.parsed) >= self.LIMIT:
            self.parsed.clear()
        self.parsed[body] = {k: v for k, v in vars(event).items() if k not in _PER_EVENT}


_BODY = 20
"""Where an event's body starts in its packet: after the OK byte and the 19 bytes of the event
header (its time and position among them); the checksum, when there is one, follows the body's
``event_size`` bytes."""

_PER_EVENT = frozenset(("packet", "table_map", "_ctl_connection", "timestamp", "event_size"))
"""What a TABLE_MAP event holds of its own reading rather than of its table (set again by
``BinLogEvent.__init__`` for each event)."""


def _table_map_event_init(
    self: Any, from_packet: Any, event_size: int, table_map: Any, ctl_connection: Any, **kwargs: Any
) -> None:
    """``TableMapEvent.__init__``, reusing the parse of a body seen before when ``table_map``
    is a :class:`ParsedTables`."""
    if type(table_map) is not ParsedTables:
        _parse_table_map_event(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        return
    body = bytes(from_packet.packet.get_all_data()[_BODY : _BODY + event_size])
    parsed = table_map.parsed.get(body)
    if parsed is None:
        _parse_table_map_event(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        table_map.remember(body, self)
        return
    BinLogEvent.__init__(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
    own = vars(self)
    for key, value in parsed.items():
        own.setdefault(key, value)
    table_map[self.table_id] = self.table_obj


if BinLogStreamReader is not None:
    _parse_table_map_event = TableMapEvent.__init__
    TableMapEvent.__init__ = _table_map_event_init


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
                "write_timeout",
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
        self._reader.table_map = ParsedTables()
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
            if isinstance(event, RotateEvent) and type(self._reader.table_map) is not ParsedTables:
                self._reader.table_map = ParsedTables(self._reader.table_map)  # it starts anew
            sent = True
            yield event

    def close(self) -> None:
        self._reader.close()
