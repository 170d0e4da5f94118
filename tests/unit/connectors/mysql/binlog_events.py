"""Real mysql-replication (``pymysqlreplication``) event objects, decoded by the library
from the bytes a MySQL 8 or MariaDB server sends (CRC32 checksums, FULL row metadata), at
consecutive positions of a binlog file: what the streaming source reads, recorded without a
server. Tables have INT columns only (their values need no charset)."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pymysql.protocol import MysqlPacket
from pymysqlreplication.event import (
    GtidEvent,
    MariadbAnnotateRowsEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XAPrepareEvent,
    XidEvent,
)
from pymysqlreplication.packet import BinLogPacketWrapper
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

QUERY_EVENT = 0x02
ROTATE_EVENT = 0x04
XID_EVENT = 0x10
TABLE_MAP_EVENT = 0x13
WRITE_ROWS_EVENT_V2 = 0x1E
UPDATE_ROWS_EVENT_V2 = 0x1F
DELETE_ROWS_EVENT_V2 = 0x20
GTID_LOG_EVENT = 0x21
XA_PREPARE_EVENT = 0x26
MARIADB_GTID_EVENT = 0xA2

FL_STANDALONE = 0x01
"""MariaDB's GTID event flag of an event group without BEGIN/COMMIT (a DDL)."""
FL_TRANSACTIONAL = 0x04
FL_DDL = 0x20

MYSQL_LONG = 3  # FIELD_TYPE.LONG (INT)

_ALLOWED = frozenset(
    {
        GtidEvent,
        MariadbGtidEvent,
        QueryEvent,
        RotateEvent,
        XidEvent,
        XAPrepareEvent,
        TableMapEvent,
        WriteRowsEvent,
        UpdateRowsEvent,
        DeleteRowsEvent,
        RowsQueryLogEvent,
        MariadbAnnotateRowsEvent,
    }
)


class _Control:
    """What the library asks of its control connection while decoding these events."""

    charset = "utf8mb4"

    def __init__(self, mariadb: bool) -> None:
        self._dbms = "mariadb" if mariadb else "mysql"

    def _get_dbms(self) -> str:
        return self._dbms


@dataclass(frozen=True)
class Table:
    """A table of INT columns as TABLE_MAP events describe it."""

    table_id: int
    db: str
    name: str
    columns: tuple[str, ...]
    nullable: tuple[bool, ...]
    key: tuple[int, ...]
    """Indexes of the primary key's columns."""


def _packed(value: int) -> bytes:
    """A length-coded integer."""
    if value < 251:
        return bytes([value])
    if value < 1 << 16:
        return b"\xfc" + struct.pack("<H", value)
    if value < 1 << 24:
        return b"\xfd" + struct.pack("<I", value)[:3]
    return b"\xfe" + struct.pack("<Q", value)


def _bitmap(bits: Sequence[bool]) -> bytes:
    """Bit i of byte i // 8 (row events' and TABLE_MAP's null bitmaps)."""
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def _tlv(kind: int, value: bytes) -> bytes:
    return bytes([kind]) + _packed(len(value)) + value


class Binlog:
    """The events of one server's binlog, each decoded by mysql-replication as its stream
    reader decodes them (the same table map), at the position the previous one ends."""

    def __init__(
        self,
        file: str = "mysql-bin.000003",
        pos: int = 4,
        *,
        server_id: int = 223344,
        timestamp: int = 1_700_000_000,
        mariadb: bool = False,
    ) -> None:
        self.file = file
        self.pos = pos
        self.server_id = server_id
        self.timestamp = timestamp
        self.mariadb = mariadb
        self.table_map: dict[int, Any] = {}
        self._control = _Control(mariadb)

    # -- the wire -------------------------------------------------------------------------
    def _event(self, event_type: int, body: bytes, *, fake: bool = False) -> Any:
        size = 19 + len(body) + 4
        next_pos = 0 if fake else self.pos + size
        header = struct.pack(
            "<IBIIIH",
            0 if fake else self.timestamp,
            event_type,
            self.server_id,
            size,
            next_pos,
            0x20 if fake else 0,  # LOG_EVENT_ARTIFICIAL_F
        )
        packet = MysqlPacket(b"\x00" + header + body + b"\x00\x00\x00\x00", "utf8")
        wrapper = BinLogPacketWrapper(
            packet,
            self.table_map,
            self._control,
            (10, 11, 0) if self.mariadb else (8, 0, 36),
            True,  # CRC32 checksums (not verified)
            _ALLOWED,
            None,
            None,
            None,
            None,
            False,
            False,
            False,
            True,  # binlog_row_metadata=FULL
            False,
        )
        event = wrapper.event
        assert event is not None, f"event type {event_type:#x} was not decoded"
        if isinstance(event, TableMapEvent):  # as BinLogStreamReader.fetchone keeps it
            self.table_map[event.table_id] = event.get_table()
        if not fake:
            self.pos = next_pos
        return event

    # -- transaction boundaries -----------------------------------------------------------
    def gtid(self, server_uuid: str, gno: int) -> GtidEvent:
        """MySQL's GTID event (``uuid:gno``) opening the next transaction or DDL."""
        body = (
            b"\x00"
            + uuid.UUID(server_uuid).bytes
            + struct.pack("<Q", gno)
            + b"\x02"
            + struct.pack("<QQ", 0, 1)
        )
        return self._event(GTID_LOG_EVENT, body)

    def mariadb_gtid(self, domain: int, seq: int, flags: int = FL_TRANSACTIONAL) -> Any:
        """MariaDB's GTID event (``domain-<header server id>-seq``): with ``FL_STANDALONE``
        a DDL follows, else it is the transaction's BEGIN."""
        body = struct.pack("<QIB", seq, domain, flags) + b"\x00" * 6
        return self._event(MARIADB_GTID_EVENT, body)

    def query(self, sql: str, *, schema: str = "", thread: int = 0) -> QueryEvent:
        """A QUERY event (``BEGIN``, ``COMMIT``, a DDL, ``XA ...``) of connection ``thread``
        with default database ``schema``."""
        schema_bytes = schema.encode()
        body = (
            struct.pack("<IIBHH", thread, 0, len(schema_bytes), 0, 0)
            + schema_bytes
            + b"\x00"
            + sql.encode()
        )
        return self._event(QUERY_EVENT, body)

    def begin(self, thread: int = 0) -> QueryEvent:
        return self.query("BEGIN", thread=thread)

    def xid(self, xid: int = 1) -> XidEvent:
        return self._event(XID_EVENT, struct.pack("<Q", xid))

    def xa_prepare(self, xid: bytes = b"x1") -> XAPrepareEvent:
        body = b"\x00" + struct.pack("<III", 1, len(xid), 0) + xid
        return self._event(XA_PREPARE_EVENT, body)

    def rotate(self, next_file: str) -> RotateEvent:
        """The ROTATE event ending this file; the next events are in ``next_file`` from 4."""
        event = self._event(ROTATE_EVENT, struct.pack("<Q", 4) + next_file.encode())
        self.file, self.pos = next_file, 4
        return event

    def fake_rotate(self, position: int | None = None) -> RotateEvent:
        """The artificial ROTATE a server sends first on each connection (timestamp 0,
        header position 0): the file and position it reads from."""
        at = self.pos if position is None else position
        return self._event(ROTATE_EVENT, struct.pack("<Q", at) + self.file.encode(), fake=True)

    # -- rows -----------------------------------------------------------------------------
    def table_map_event(self, table: Table) -> TableMapEvent:
        names = b"".join(bytes([len(n)]) + n.encode() for n in table.columns)
        body = (
            struct.pack("<Q", table.table_id)[:6]
            + struct.pack("<H", 1)
            + bytes([len(table.db)])
            + table.db.encode()
            + b"\x00"
            + bytes([len(table.name)])
            + table.name.encode()
            + b"\x00"
            + _packed(len(table.columns))
            + bytes([MYSQL_LONG] * len(table.columns))
            + _packed(0)  # INT has no type metadata
            + _bitmap(table.nullable)
            + _tlv(1, bytes((len(table.columns) + 7) // 8))  # SIGNEDNESS: all signed
            + _tlv(4, names)  # COLUMN_NAME
            + _tlv(8, b"".join(_packed(i) for i in table.key))  # SIMPLE_PRIMARY_KEY
        )
        return self._event(TABLE_MAP_EVENT, body)

    def _image(self, table: Table, values: Sequence[int | None]) -> bytes:
        data = b"".join(struct.pack("<i", v) for v in values if v is not None)
        return _bitmap([v is None for v in values]) + data

    def _rows(self, event_type: int, table: Table, images: list[bytes], bitmaps: int) -> Any:
        present = _bitmap([True] * len(table.columns))
        body = (
            struct.pack("<Q", table.table_id)[:6]
            + struct.pack("<HH", 1, 2)  # STMT_END_F, no extra data
            + _packed(len(table.columns))
            + present * bitmaps
            + b"".join(images)
        )
        return self._event(event_type, body)

    def write(self, table: Table, *rows: Sequence[int | None]) -> WriteRowsEvent:
        images = [self._image(table, r) for r in rows]
        return self._rows(WRITE_ROWS_EVENT_V2, table, images, 1)

    def delete(self, table: Table, *rows: Sequence[int | None]) -> DeleteRowsEvent:
        images = [self._image(table, r) for r in rows]
        return self._rows(DELETE_ROWS_EVENT_V2, table, images, 1)

    def update(
        self, table: Table, *rows: tuple[Sequence[int | None], Sequence[int | None]]
    ) -> UpdateRowsEvent:
        images = [self._image(table, b) + self._image(table, a) for b, a in rows]
        return self._rows(UPDATE_ROWS_EVENT_V2, table, images, 2)
