"""Every MariaDB type Debezium maps, on a real server (tests_common/mariadb.py): rows written
once (typical values, NULLs, zero dates, negative and fractional TIMEs, the extremes of
signed and unsigned integers, multi-byte and latin1 strings, padded BINARY, two-digit years,
an invalid ENUM value, an empty SET), then read by a snapshot query (PyMySQL through
database.py, session time zone +00:00) and decoded from the binlog by pymysqlreplication.

For each mode set, the captured table built from information_schema and the one built from
the binlog's TABLE_MAP (FULL row metadata, with information_schema's columns as ``known``)
have the same row schema, and each row's structs from the two paths are equal and hold the
values Debezium documents (shared-mariadb-mysql.adoc "Data type mappings", BinlogUnsignedIntegerIT,
BinlogTimestampColumnIT, BinlogDefaultValueAllZeroTimeIT, BinlogFixedLengthBinaryColumnIT).
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Iterator
from decimal import Decimal as D
from typing import Any

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import TableMapEvent, WriteRowsEvent

from airflow_provider_connect.connect.data import Struct, validate_value
from airflow_provider_connect.connectors.change_capture.config import Filters
from airflow_provider_connect.connectors.change_capture.envelope import source_schema_builder
from airflow_provider_connect.connectors.mysql.database import Database
from airflow_provider_connect.connectors.mysql.tables import CapturedTable
from airflow_provider_connect.connectors.mysql.types import Column, TypeModes, nullable_columns
from tests_common.mariadb import MariaDbServer, mariadb_server_or_skip

SOURCE = source_schema_builder("io.debezium.connector.mariadb.Source").build()
NO_FILTERS = Filters(None, None, None, None, None, None, None, lambda db: False)

TABLE = """CREATE TABLE t.every (
    id INT PRIMARY KEY,
    ti TINYINT, tiu TINYINT UNSIGNED, flag BOOLEAN, si SMALLINT, siu SMALLINT UNSIGNED,
    mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
    f FLOAT, f2 FLOAT(7,4), d DOUBLE, dec1 DECIMAL(20,6), dec2 DECIMAL(5,0) UNSIGNED,
    c CHAR(4), vc VARCHAR(20), vl VARCHAR(300), tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
    latin VARCHAR(10) CHARACTER SET latin1,
    bn BINARY(4), vb VARBINARY(8), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
    b1 BIT(1), b10 BIT(10), b64 BIT(64),
    e ENUM('a','b,c','it''s'), s SET('x','y','z'),
    y YEAR, dt DATE, tm TIME, tm6 TIME(6), dtm DATETIME, dtm3 DATETIME(3), dtm6 DATETIME(6),
    ts TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL,
    j JSON, u UUID, p POINT, g GEOMETRY, ip INET6,
    nn_date DATE NOT NULL DEFAULT '2000-01-01',
    nn_ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    nn_set SET('p','q') NOT NULL DEFAULT 'q',
    nn_dtm DATETIME NOT NULL
)"""

ROWS = [
    # 1: typical values
    """INSERT INTO t.every (id, ti, tiu, flag, si, siu, mi, miu, i, iu, bi, biu, f, f2, d,
    dec1, dec2, c, vc, vl, tt, tx, mt, lt, latin, bn, vb, tb, bl, mb, lb, b1, b10, b64, e, s,
    y, dt, tm, tm6, dtm, dtm3, dtm6, ts, ts6, j, u, p, g, ip, nn_date, nn_ts, nn_set, nn_dtm)
    VALUES (1, 12, 200, TRUE, 1234, 50000, 123456, 9000000, 123456789, 3000000000,
    1234567890123, 10000000000000000000, 3.14, 3.14, 2.718281828459045, 1234.5, 99999,
    'ab', 'hello', 'world', 'tiny', 'text', 'medium', 'long', 'café', 'ab', x'0102',
    x'03', x'0405', x'06', x'07', b'1', b'101', b'1', 'b,c', 'z,x', 2024, '2018-06-20',
    '13:37:03', '13:37:03.120000', '2018-06-20 06:37:03', '2018-06-20 06:37:03.123',
    '2018-06-20 06:37:03.123456', '2018-06-20 13:37:03', '2018-06-20 13:37:03.000120',
    '{"a": [1, 2.5, null], "b": "é"}', '123e4567-e89b-12d3-a456-426655440000',
    ST_GeomFromText('POINT(1.5 -2)'), ST_GeomFromText('LINESTRING(0 0,1 1)', 4326), '::1',
    '2020-02-29', '2020-02-29 12:00:00', 'p', '2020-02-29 12:00:00')""",
    # 2: NULL in every nullable column; zero values in the NOT NULL ones
    """INSERT INTO t.every (id, nn_date, nn_ts, nn_set, nn_dtm)
    VALUES (2, '0000-00-00', '0000-00-00 00:00:00', '', '0000-00-00 00:00:00')""",
    # 3: extremes, negative TIMEs, multi-byte strings, padding
    """INSERT INTO t.every (id, ti, tiu, flag, si, siu, mi, miu, i, iu, bi, biu, f, d, dec1,
    dec2, c, vc, vl, latin, bn, vb, b1, b10, b64, e, s, y, dt, tm, tm6, dtm, dtm3, dtm6, ts,
    ts6, u, nn_date, nn_ts, nn_set, nn_dtm)
    VALUES (3, -128, 255, FALSE, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
    -9223372036854775808, 18446744073709551615, -3.4e38, -1.7976931348623157e308,
    -99999999999999.999999, 0, 'ä', '日本語😀', REPEAT('é', 300), 'ÿ', 'a', x'00ff00',
    b'0', b'1000000001', b'1111111111111111111111111111111111111111111111111111111111111111',
    'it''s', '', 2155, '1000-01-01', '-838:59:59', '-00:00:01.500000',
    '9999-12-31 23:59:59', '1000-01-01 00:00:00.001', '1969-12-31 23:59:59.999999',
    '2038-01-19 03:14:07', '1970-01-01 00:00:01.000001',
    'ffffffff-ffff-ffff-ffff-ffffffffff00', '1000-01-01', '2038-01-19 03:14:07', 'p,q',
    '1000-01-01 00:00:00')""",
    # 4: zero and invalid dates in nullable columns; YEAR 0000; an invalid ENUM value
    """INSERT INTO t.every (id, y, dt, dtm, dtm3, ts, e, nn_date, nn_ts, nn_set, nn_dtm)
    VALUES (4, 0, '0000-00-00', '0000-00-00 00:00:00', '2020-00-00 00:00:00',
    '0000-00-00 00:00:00', 'nope', '2020-01-01', '2020-01-01 00:00:00', 'q',
    '2020-01-01 00:00:00')""",
    # 5: two-digit years (enable.time.adjuster); TIME past 24 hours
    """INSERT INTO t.every (id, dt, dtm, tm, nn_date, nn_ts, nn_set, nn_dtm)
    VALUES (5, '0069-03-01', '0070-01-01 00:00:00', '100:00:00', '0099-12-31',
    '2020-01-01 00:00:00', 'q', '2020-01-01 00:00:00')""",
]


class Recorded:
    """What both libraries returned for the rows: PyMySQL's tuples and information_schema's
    columns; pymysqlreplication's row dicts and the TABLE_MAP's columns."""

    def __init__(
        self,
        known: list[Column],
        snapshot: list[tuple[Any, ...]],
        table_map: TableMapEvent,
        binlog: list[dict[str, Any]],
    ) -> None:
        self.known = known
        self.snapshot = snapshot
        nullable = nullable_columns(table_map.null_bitmask, table_map.column_count)
        by_name = {column.name: column for column in known}
        self.binlog_columns = [
            Column.of_binlog(column, by_name.get(column.name), optional)
            for column, optional in zip(table_map.columns, nullable, strict=True)
        ]
        self.binlog = binlog


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    with mariadb_server_or_skip() as server:
        yield _record(server)


def _record(server: MariaDbServer) -> Recorded:
    database = Database(
        {"host": server.host, "port": server.port, "user": server.user, "password": server.password}
    )
    try:
        start = database.position()
        database.execute("CREATE DATABASE t")
        database.execute(TABLE)
        database.execute("SET SESSION sql_mode = ''")  # zero dates, an invalid ENUM value
        for insert in ROWS:
            database.execute(insert)
        known = [Column.of_information_schema(row) for row in database.columns("t", "every")]
        snapshot = database.query("SELECT * FROM t.every ORDER BY id")
    finally:
        database.close()
    stream = BinLogStreamReader(
        connection_settings={
            "host": server.host,
            "port": server.port,
            "user": server.user,
            "password": server.password,
        },
        server_id=server.server_id + 1000,
        log_file=start.file,
        log_pos=start.pos,
        resume_stream=True,
        blocking=False,  # ends at the end of the binlog
        only_events=[TableMapEvent, WriteRowsEvent],
        only_schemas=["t"],
    )
    table_map: TableMapEvent | None = None
    rows: list[dict[str, Any]] = []
    try:
        for event in stream:
            if isinstance(event, TableMapEvent):
                table_map = event
            else:
                rows.extend(event.rows)
    finally:
        stream.close()
    assert table_map is not None
    assert len(rows) == len(ROWS) == len(snapshot)
    return Recorded(known, snapshot, table_map, rows)


def tables(recorded: Recorded, modes: TypeModes) -> tuple[CapturedTable, CapturedTable]:
    def captured(columns: list[Column]) -> CapturedTable:
        return CapturedTable("t", "every", columns, ["id"], "srv", NO_FILTERS, modes, True, SOURCE)

    return captured(recorded.known), captured(recorded.binlog_columns)


MODES = {
    "default": TypeModes(),
    "connect-string-precise-hex": TypeModes(
        decimal_handling="string",
        time_precision="connect",
        bigint_unsigned="precise",
        binary_handling="hex",
    ),
    "double-base64-no-adjuster": TypeModes(
        decimal_handling="double", binary_handling="base64", time_adjuster=False
    ),
    "base64-url-safe": TypeModes(binary_handling="base64-url-safe"),
}


@pytest.mark.parametrize("modes", MODES.values(), ids=MODES.keys())
def test_snapshot_and_binlog_agree(recorded: Recorded, modes: TypeModes) -> None:
    snapshot_table, binlog_table = tables(recorded, modes)
    assert snapshot_table.row_schema == binlog_table.row_schema
    assert snapshot_table.key_schema == binlog_table.key_schema
    assert snapshot_table.envelope == binlog_table.envelope
    for snapshot_values, binlog_row in zip(recorded.snapshot, recorded.binlog, strict=True):
        from_snapshot = snapshot_table.snapshot_row(snapshot_values)
        from_binlog = binlog_table.binlog_row(binlog_row["values"], binlog_row["none_sources"])
        validate_value(snapshot_table.row_schema, from_snapshot, "row")
        validate_value(binlog_table.row_schema, from_binlog, "row")
        for field in snapshot_table.row_schema.fields or ():
            assert from_snapshot.get(field.name) == from_binlog.get(field.name), (
                snapshot_values[0],
                field.name,
            )
        assert snapshot_table.snapshot_key(snapshot_values) == binlog_table.binlog_key(
            binlog_row["values"]
        )


def values(recorded: Recorded, modes: TypeModes, row: int) -> Struct:
    """Row ``row`` (its id) as the binlog gives it (equal to the snapshot's, tested above)."""
    _, binlog_table = tables(recorded, modes)
    image = recorded.binlog[row - 1]
    return binlog_table.binlog_row(image["values"], image["none_sources"])


def test_schemas(recorded: Recorded) -> None:
    snapshot_table, _ = tables(recorded, TypeModes())
    schema = snapshot_table.row_schema
    named = {f.name: (f.schema.type.name, f.schema.name) for f in schema.fields or ()}
    assert "ip" not in named  # INET6: no mapping, left out
    assert named["ti"] == ("INT8", None)
    assert named["flag"] == ("INT8", None)  # BOOLEAN is tinyint(1)
    assert named["tiu"] == ("INT16", None)
    assert named["siu"] == ("INT32", None)
    assert named["miu"] == ("INT32", None)
    assert named["iu"] == ("INT64", None)
    assert named["biu"] == ("INT64", None)
    assert named["f"] == ("FLOAT32", None)
    assert named["f2"] == ("FLOAT64", None)
    assert named["dec1"] == ("BYTES", "org.apache.kafka.connect.data.Decimal")
    assert named["b1"] == ("BOOLEAN", None)
    assert named["b10"] == ("BYTES", "io.debezium.data.Bits")
    assert named["e"] == ("STRING", "io.debezium.data.Enum")
    assert named["s"] == ("STRING", "io.debezium.data.EnumSet")
    assert named["y"] == ("INT32", "io.debezium.time.Year")
    assert named["dt"] == ("INT32", "io.debezium.time.Date")
    assert named["tm"] == ("INT64", "io.debezium.time.MicroTime")
    assert named["dtm"] == ("INT64", "io.debezium.time.Timestamp")
    assert named["dtm3"] == ("INT64", "io.debezium.time.Timestamp")
    assert named["dtm6"] == ("INT64", "io.debezium.time.MicroTimestamp")
    assert named["ts"] == ("STRING", "io.debezium.time.ZonedTimestamp")
    assert named["j"] == ("STRING", "io.debezium.data.Json")
    assert named["u"] == ("STRING", "io.debezium.data.Uuid")
    assert named["p"] == ("STRUCT", "io.debezium.data.geometry.Point")
    assert named["g"] == ("STRUCT", "io.debezium.data.geometry.Geometry")
    parameters = {f.name: f.schema.parameters for f in schema.fields or ()}
    assert parameters["dec1"] == {"scale": "6", "connect.decimal.precision": "20"}
    assert parameters["b10"] == {"length": "10"}
    assert parameters["e"] == {"allowed": "a,b\\,c,it's"}
    assert parameters["s"] == {"allowed": "x,y,z"}
    defaults = {f.name: f.schema.default_value for f in schema.fields or ()}
    assert defaults["nn_date"] == 10957  # 2000-01-01
    assert defaults["nn_ts"] == "1970-01-01T00:00:00Z"  # CURRENT_TIMESTAMP, NOT NULL
    assert defaults["nn_set"] == "q"
    optional = {f.name for f in schema.fields or () if f.schema.optional}
    assert optional == {f.name for f in schema.fields or ()} - {
        "id",
        "nn_date",
        "nn_ts",
        "nn_set",
        "nn_dtm",
    } | {"g"}  # Debezium's Geometry schema is optional whatever the column


def test_typical_values(recorded: Recorded) -> None:
    row = values(recorded, TypeModes(), 1)
    expected = {
        "ti": 12,
        "tiu": 200,
        "flag": 1,
        "iu": 3000000000,
        "biu": -8446744073709551616,  # 10^19 as Java's long
        "f": struct.unpack("<f", struct.pack("<f", 3.14))[0],
        "f2": struct.unpack("<f", struct.pack("<f", 3.14))[0],
        "dec1": D("1234.500000"),
        "dec2": D("99999"),
        "c": "ab",
        "latin": "café",
        "bn": b"ab\x00\x00",
        "vb": b"\x01\x02",
        "b1": True,
        "b10": b"\x05\x00",
        "b64": b"\x01" + b"\x00" * 7,
        "e": "b,c",
        "s": "x,z",
        "y": 2024,
        "dt": 17702,
        "tm": 49023000000,
        "tm6": 49023120000,
        "dtm": 1529476623000,
        "dtm3": 1529476623123,
        "dtm6": 1529476623123456,
        "ts": "2018-06-20T13:37:03Z",
        "ts6": "2018-06-20T13:37:03.000120Z",
        "j": '{"a": [1, 2.5, null], "b": "é"}',
        "u": "123e4567-e89b-12d3-a456-426655440000",
        "nn_set": "p",
    }
    assert {name: row.get(name) for name in expected} == expected
    point = row.get("p")
    assert (point.get("x"), point.get("y"), point.get("srid")) == (1.5, -2.0, None)
    geometry = row.get("g")
    assert geometry.get("srid") == 4326
    assert geometry.get("wkb")[:5] == b"\x01\x02\x00\x00\x00"  # a little-endian LINESTRING


def test_nulls_and_zero_values_of_not_null_columns(recorded: Recorded) -> None:
    row = values(recorded, TypeModes(), 2)
    nullable = [f.name for f in row.schema.fields or () if f.schema.optional]
    assert all(row.get(name) is None for name in nullable)
    # NOT NULL zero values: the field's default, else Debezium's fallback (the epoch)
    assert row.get("nn_date") == 10957
    assert row.get("nn_ts") == "1970-01-01T00:00:00Z"
    assert row.get("nn_set") == ""  # the empty SET, not the default
    assert row.get("nn_dtm") == 0


def test_extremes(recorded: Recorded) -> None:
    row = values(recorded, TypeModes(), 3)
    expected = {
        "ti": -128,
        "tiu": 255,
        "si": -32768,
        "siu": 65535,
        "mi": -8388608,
        "miu": 16777215,
        "i": -2147483648,
        "iu": 4294967295,
        "bi": -(2**63),
        "biu": -1,  # 2^64-1 in long mode
        "dec1": D("-99999999999999.999999"),
        "c": "ä",
        "vc": "日本語😀",
        "vl": "é" * 300,
        "latin": "ÿ",
        "bn": b"a\x00\x00\x00",
        "vb": b"\x00\xff\x00",
        "b1": False,
        "b10": b"\x01\x02",
        "b64": b"\xff" * 8,
        "e": "it's",
        "s": "",
        "y": 2155,
        "dt": -354285,
        "tm": -3020399000000,  # -838:59:59, Debezium's documented value
        "tm6": -1500000,
        "dtm": 253402300799000,
        "dtm3": -30610224000000 + 1,
        "dtm6": -1,
        "ts": "2038-01-19T03:14:07Z",
        "ts6": "1970-01-01T00:00:01.000001Z",
        "u": "ffffffff-ffff-ffff-ffff-ffffffffff00",
        "nn_date": -354285,
        "nn_set": "p,q",
    }
    assert {name: row.get(name) for name in expected} == expected
    precise = values(recorded, TypeModes(bigint_unsigned="precise"), 3)
    assert precise.get("biu") == D(2**64 - 1)


def test_zero_dates_and_invalid_values(recorded: Recorded) -> None:
    row = values(recorded, TypeModes(), 4)
    assert [row.get(name) for name in ("dt", "dtm", "dtm3", "ts")] == [None] * 4
    assert row.get("y") == 1900  # YEAR 0000
    assert row.get("e") == ""  # an invalid ENUM value is stored as index 0


def test_two_digit_years_and_long_times(recorded: Recorded) -> None:
    row = values(recorded, TypeModes(), 5)
    assert row.get("dt") == (dt.date(2069, 3, 1) - dt.date(1970, 1, 1)).days
    assert row.get("dtm") == 0  # 0070-01-01 is 1970-01-01
    assert row.get("nn_date") == (dt.date(1999, 12, 31) - dt.date(1970, 1, 1)).days
    assert row.get("tm") == 360_000_000_000  # 100 hours
    unadjusted = values(recorded, TypeModes(time_adjuster=False), 5)
    assert unadjusted.get("dt") == (dt.date(69, 3, 1) - dt.date(1970, 1, 1)).days
    connect = values(recorded, TypeModes(time_precision="connect"), 5)
    assert connect.get("dt") == dt.date(2069, 3, 1)
    assert connect.get("tm") is None  # past 24 h: no Connect Time


def test_other_modes(recorded: Recorded) -> None:
    row = values(recorded, MODES["connect-string-precise-hex"], 1)
    assert row.get("dec1") == "1234.500000"
    assert row.get("biu") == D(10**19)
    assert row.get("bn") == "61620000"
    assert row.get("dt") == dt.date(2018, 6, 20)
    assert row.get("tm6") == dt.time(13, 37, 3, 120000)
    assert row.get("dtm6") == dt.datetime(2018, 6, 20, 6, 37, 3, 123000, tzinfo=dt.timezone.utc)
    assert row.get("ts") == "2018-06-20T13:37:03Z"
    row = values(recorded, MODES["double-base64-no-adjuster"], 1)
    assert row.get("dec1") == 1234.5
    assert row.get("bn") == "YWIAAA=="
