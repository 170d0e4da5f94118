"""Debezium's MySQL and MariaDB record shapes (connectors/mysql/envelope.py) against Debezium's
code: the binlog source block (debezium-connector-binlog/.../BinlogSourceInfoStructMaker.java),
the schema-change topic (debezium-connector-common/.../schema/SchemaFactory.java
schemaHistory*Schema, pipeline/EventDispatcher.java SchemaChangeEventReceiver) and its
tableChanges (relational/history/ConnectTableChangeSerializer.java).

The expected schemas are written out here field by field from the Java sources, not derived
from the module under test.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct, Type
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.change_capture import envelope as core
from airflow_provider_connect.connectors.mysql import envelope as env

MYSQL_SOURCE = "io.debezium.connector.mysql.Source"
MARIADB_SOURCE = "io.debezium.connector.mariadb.Source"

# One instant: 2024-01-02T03:04:05Z, the binlog's second resolution.
TS_MS = 1_704_164_645_000
TS_US = TS_MS * 1000
TS_NS = TS_US * 1000


def fields(schema: Schema) -> list[tuple[str, Type, bool]]:
    assert schema.fields is not None
    return [(f.name, f.schema.type, f.schema.optional) for f in schema.fields]


def source(schema_name: str = MYSQL_SOURCE, **overrides: object) -> Struct:
    args: dict[str, object] = {
        "version": "0.1.0",
        "connector": "mysql",
        "name": "server1",
        "ts_ms": TS_MS,
        "snapshot": "false",
        "db": "inventory",
        "table": "customers",
        "server_id": 223344,
        "gtid": "3E11FA47-71CA-11E1-9E33-C80AA9429562:23",
        "file": "mysql-bin.000003",
        "pos": 1532,
        "row": 1,
        "thread": 7,
        "query": None,
    }
    args.update(overrides)
    return env.source_struct(env.source_schema(schema_name), **args)  # type: ignore[arg-type]


# -- source schema -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", [MYSQL_SOURCE, MARIADB_SOURCE])
def test_source_schema_is_debeziums(name: str) -> None:
    # AbstractSourceInfoStructMaker.commonSchemaBuilder() then BinlogSourceInfoStructMaker.init().
    expected = (
        SchemaBuilder.struct()
        .name(name)
        .version(1)
        .field("version", Schema.STRING_SCHEMA)
        .field("connector", Schema.STRING_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("ts_ms", Schema.INT64_SCHEMA)
        .field("snapshot", core.SNAPSHOT_SCHEMA)
        .field("db", Schema.STRING_SCHEMA)
        .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
        .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
        .field("table", Schema.OPTIONAL_STRING_SCHEMA)
        .field("server_id", Schema.INT64_SCHEMA)
        .field("gtid", Schema.OPTIONAL_STRING_SCHEMA)
        .field("file", Schema.STRING_SCHEMA)
        .field("pos", Schema.INT64_SCHEMA)
        .field("row", Schema.INT32_SCHEMA)
        .field("thread", Schema.OPTIONAL_INT64_SCHEMA)
        .field("query", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    schema = env.source_schema(name)
    assert schema == expected
    assert schema is env.source_schema(name)  # cached: one object per flavor
    assert not schema.optional
    assert fields(schema) == [
        ("version", Type.STRING, False),
        ("connector", Type.STRING, False),
        ("name", Type.STRING, False),
        ("ts_ms", Type.INT64, False),
        ("snapshot", Type.STRING, True),
        ("db", Type.STRING, False),
        ("sequence", Type.STRING, True),
        ("ts_us", Type.INT64, True),
        ("ts_ns", Type.INT64, True),
        ("table", Type.STRING, True),
        ("server_id", Type.INT64, False),
        ("gtid", Type.STRING, True),
        ("file", Type.STRING, False),
        ("pos", Type.INT64, False),
        ("row", Type.INT32, False),
        ("thread", Type.INT64, True),
        ("query", Type.STRING, True),
    ]


def test_flavors_have_their_own_source_schema() -> None:
    assert env.source_schema(MYSQL_SOURCE) != env.source_schema(MARIADB_SOURCE)
    assert env.source_schema(MARIADB_SOURCE).name == MARIADB_SOURCE


# -- source values -----------------------------------------------------------------------------
def test_source_struct_streaming() -> None:
    s = source()
    assert s.schema is env.source_schema(MYSQL_SOURCE)
    assert s.items() == [
        ("version", "0.1.0"),
        ("connector", "mysql"),
        ("name", "server1"),
        ("ts_ms", TS_MS),
        ("snapshot", "false"),
        ("db", "inventory"),
        ("sequence", None),
        ("ts_us", TS_US),
        ("ts_ns", TS_NS),
        ("table", "customers"),
        ("server_id", 223344),
        ("gtid", "3E11FA47-71CA-11E1-9E33-C80AA9429562:23"),
        ("file", "mysql-bin.000003"),
        ("pos", 1532),
        ("row", 1),
        ("thread", 7),
        ("query", None),
    ]
    # SnapshotRecord.toSource leaves FALSE unset: the default is read back.
    assert s.get_without_default("snapshot") is None
    s.validate()


def test_source_struct_mariadb() -> None:
    # MariaDB: domain-server-seq GTIDs, never a thread (no BEGIN query event).
    s = source(MARIADB_SOURCE, connector="mariadb", gtid="0-1-42", thread=None)
    assert s.schema is env.source_schema(MARIADB_SOURCE)
    assert s.get("connector") == "mariadb"
    assert s.get("gtid") == "0-1-42"
    assert s.get("thread") is None
    s.validate()


@pytest.mark.parametrize(
    "marker",
    ["true", "first", "first_in_data_collection", "last_in_data_collection", "last"],
)
def test_source_struct_snapshot_markers(marker: str) -> None:
    # A snapshot read: server_id 0, row 0, no GTID/thread/query, file/pos of the snapshot.
    s = source(snapshot=marker, server_id=0, gtid=None, row=0, thread=None)
    assert s.get_without_default("snapshot") == marker
    assert (s.get("server_id"), s.get("row"), s.get("gtid"), s.get("thread")) == (0, 0, None, None)
    s.validate()


def test_source_struct_incremental_marker() -> None:
    s = source(snapshot="incremental")
    assert s.get("snapshot") == "incremental"


def test_source_struct_refuses_unknown_marker_and_wrong_types() -> None:
    with pytest.raises(DataException, match="snapshot"):
        source(snapshot="initial")
    with pytest.raises(DataException):
        source(pos="1532")
    with pytest.raises(DataException):
        source(file=None)  # required


def test_source_struct_schema_change_block() -> None:
    # A database-level DDL: no table; a table DDL: the tables' names joined by ",".
    assert source(table=None).get("table") is None
    assert source(table="a,b").get("table") == "a,b"


def test_source_struct_instants() -> None:
    s = source(ts_ms=TS_MS, ts_us=TS_US + 123)
    assert (s.get("ts_ms"), s.get("ts_us"), s.get("ts_ns")) == (
        TS_MS,
        TS_US + 123,
        (TS_US + 123) * 1000,
    )


@pytest.mark.parametrize("flavor", [(MYSQL_SOURCE, "mysql"), (MARIADB_SOURCE, "mariadb")])
@pytest.mark.parametrize(
    ("gtid", "thread", "query"),
    [("uuid:5", 7, "INSERT INTO customers VALUES (1)"), (None, None, None)],
)
def test_streamed_source_blocks_are_source_structs(
    flavor: tuple[str, str], gtid: str | None, thread: int | None, query: str | None
) -> None:
    name, connector = flavor
    schema = env.source_schema(name)
    blocks = env.StreamedSource(
        schema,
        version="0.1.0",
        connector=connector,
        name="server1",
        db="inventory",
        table="customers",
    )
    block = blocks.block(TS_US, 223344, gtid, "mysql-bin.000003", 1532, 1, thread, query)
    expected = source(name, connector=connector, gtid=gtid, thread=thread, query=query)
    assert block == expected
    assert block.schema is schema
    assert block.get_without_default("snapshot") is None
    block.validate()
    # Each block is a copy: a second one leaves the first as it was.
    blocks.block(TS_US + 1, 1, None, "mysql-bin.000004", 4, 0, None, None)
    assert block == expected


# -- transaction ids ---------------------------------------------------------------------------
def test_transaction_id() -> None:
    # BinlogOffsetContext.setTransactionId: the GTID, else file=%s,pos=%s.
    assert env.transaction_id("3E11FA47-71CA-11E1-9E33-C80AA9429562:23", "f", 4) == (
        "3E11FA47-71CA-11E1-9E33-C80AA9429562:23"
    )
    assert env.transaction_id("0-1-42", "f", 4) == "0-1-42"
    assert env.transaction_id(None, "mysql-bin.000003", 1532) == "file=mysql-bin.000003,pos=1532"


# -- schema-change topic -----------------------------------------------------------------------
COLUMN_EXPECTED = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Column")
    .version(1)
    .field("name", Schema.STRING_SCHEMA)
    .field("jdbcType", Schema.INT32_SCHEMA)
    .field("nativeType", Schema.OPTIONAL_INT32_SCHEMA)
    .field("typeName", Schema.STRING_SCHEMA)
    .field("typeExpression", Schema.OPTIONAL_STRING_SCHEMA)
    .field("charsetName", Schema.OPTIONAL_STRING_SCHEMA)
    .field("length", Schema.OPTIONAL_INT32_SCHEMA)
    .field("scale", Schema.OPTIONAL_INT32_SCHEMA)
    .field("position", Schema.INT32_SCHEMA)
    .field("optional", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("autoIncremented", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("generated", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("comment", Schema.OPTIONAL_STRING_SCHEMA)
    .field("defaultValueExpression", Schema.OPTIONAL_STRING_SCHEMA)
    .field("enumValues", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
    .build()
)
TABLE_EXPECTED = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Table")
    .version(1)
    .field("defaultCharsetName", Schema.OPTIONAL_STRING_SCHEMA)
    .field("primaryKeyColumnNames", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
    .field("columns", SchemaBuilder.array(COLUMN_EXPECTED).build())
    .field("comment", Schema.OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
CHANGE_EXPECTED = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Change")
    .version(1)
    .field("type", Schema.STRING_SCHEMA)
    .field("id", Schema.STRING_SCHEMA)
    .field("table", TABLE_EXPECTED)
    .build()
)


def test_table_change_schemas_are_debeziums() -> None:
    assert env.COLUMN_SCHEMA == COLUMN_EXPECTED
    assert env.TABLE_SCHEMA == TABLE_EXPECTED
    assert env.CHANGE_SCHEMA == CHANGE_EXPECTED


@pytest.mark.parametrize("flavor", ["mysql", "mariadb"])
def test_schema_change_key_and_value_schemas_are_debeziums(flavor: str) -> None:
    key_name = f"io.debezium.connector.{flavor}.SchemaChangeKey"
    value_name = f"io.debezium.connector.{flavor}.SchemaChangeValue"
    source_name = f"io.debezium.connector.{flavor}.Source"
    key = env.schema_change_key_schema(key_name)
    assert key == (
        SchemaBuilder.struct()
        .name(key_name)
        .version(1)
        .field("databaseName", Schema.STRING_SCHEMA)
        .build()
    )
    value = env.schema_change_value_schema(value_name, source_name)
    assert value == (
        SchemaBuilder.struct()
        .name(value_name)
        .version(1)
        .field("source", env.source_schema(source_name))
        .field("ts_ms", Schema.INT64_SCHEMA)
        .field("databaseName", Schema.OPTIONAL_STRING_SCHEMA)
        .field("schemaName", Schema.OPTIONAL_STRING_SCHEMA)
        .field("ddl", Schema.OPTIONAL_STRING_SCHEMA)
        .field("tableChanges", SchemaBuilder.array(CHANGE_EXPECTED).build())
        .build()
    )
    assert value is env.schema_change_value_schema(value_name, source_name)
    field = value.field("source")
    assert field is not None and field.schema is env.source_schema(source_name)


@dataclass(frozen=True)
class Col:
    """The fields of the column model table_change reads (types.Column has them)."""

    name: str
    data_type: str
    column_type: str
    optional: bool = True
    enum_values: tuple[str, ...] = ()
    charset: str | None = None
    default: str | None = None
    auto_increment: bool = False
    comment: str | None = None


CUSTOMERS = (
    Col("id", "int", "int(11)", optional=False, auto_increment=True),
    Col("first_name", "varchar", "varchar(255)", optional=False, charset="utf8mb4"),
    Col(
        "size",
        "enum",
        "enum('S','M','it''s')",
        enum_values=("S", "M", "it's"),
        charset="utf8mb4",
        default="M",
    ),
    Col("price", "decimal", "decimal(10,2) unsigned zerofill", default="0.00"),
    Col("tags", "set", "set('a','b','c')", enum_values=("a", "b", "c"), charset="latin1"),
    Col(
        "at",
        "timestamp",
        "timestamp(3)",
        optional=False,
        default="1970-01-01 00:00:00",
        comment="when",
    ),
    Col("doc", "json", "json"),
)


def test_table_change_create() -> None:
    change = env.table_change(
        "CREATE", "inventory", "customers", CUSTOMERS, ["id"], "utf8mb4", None
    )
    assert change.schema is env.CHANGE_SCHEMA
    change.validate()
    assert change.get("type") == "CREATE"
    assert change.get("id") == '"inventory"."customers"'
    table = change.get("table")
    assert table.get("defaultCharsetName") == "utf8mb4"
    assert table.get("primaryKeyColumnNames") == ["id"]
    assert table.get("comment") is None
    columns = table.get("columns")
    assert [c.get("position") for c in columns] == [1, 2, 3, 4, 5, 6, 7]
    rows = [
        (
            c.get("name"),
            c.get("jdbcType"),
            c.get("nativeType"),
            c.get("typeName"),
            c.get("typeExpression"),
            c.get("charsetName"),
            c.get("length"),
            c.get("scale"),
            c.get("optional"),
            c.get("autoIncremented"),
            c.get("generated"),
            c.get("comment"),
            c.get("defaultValueExpression"),
            c.get("enumValues"),
        )
        for c in columns
    ]
    assert rows == [
        ("id", 4, None, "INT", "INT", None, 11, None, False, True, True, None, None, None),
        ("first_name", 12, None, "VARCHAR", "VARCHAR", "utf8mb4", 255, None, False, False, False, None, None, None),
        ("size", 1, None, "ENUM", "ENUM", "utf8mb4", 1, None, True, False, False, None, "M", ["'S'", "'M'", "'it''s'"]),
        (
            "price", 3, None, "DECIMAL UNSIGNED ZEROFILL", "DECIMAL UNSIGNED ZEROFILL",
            None, 10, 2, True, False, False, None, "0.00", None,
        ),
        ("tags", 1, None, "SET", "SET", "latin1", 5, None, True, False, False, None, None, ["'a'", "'b'", "'c'"]),
        (
            "at", 2014, None, "TIMESTAMP", "TIMESTAMP", None, 3, None, False, False, False,
            "when", "1970-01-01 00:00:00", None,
        ),
        ("doc", 1111, None, "JSON", "JSON", None, None, None, True, False, False, None, None, None),
    ]  # fmt: skip


def test_table_change_alter_without_key_and_drop() -> None:
    alter = env.table_change("ALTER", "inventory", "t", CUSTOMERS[1:2], [], None, "a table")
    assert alter.get("type") == "ALTER"
    assert alter.get("table").get("primaryKeyColumnNames") == []  # Table.primaryKeyColumnNames()
    assert alter.get("table").get("comment") == "a table"
    # TableChanges.drop(TableId): the change has no table.
    drop = env.table_change("DROP", "inventory", "t", CUSTOMERS, ["id"], "utf8mb4", None)
    assert drop.items() == [("type", "DROP"), ("id", '"inventory"."t"'), ("table", None)]
    drop.validate()
    with pytest.raises(DataException, match="RENAME"):
        env.table_change("RENAME", "inventory", "t", CUSTOMERS, [], None, None)


@pytest.mark.parametrize(
    ("db", "table", "expected"),
    [
        ("inventory", "customers", '"inventory"."customers"'),
        ("db", "t-1", '"db"."t-1"'),
        ("db", "t.2", '"db"."t.2"'),
        ("db", 'a"b', '"db"."a""b"'),  # TableId.quote doubles the quote
        ("", "t", '"t"'),  # no catalog: the table alone
    ],
)
def test_double_quoted_id(db: str, table: str, expected: str) -> None:
    assert env.double_quoted_id(db, table) == expected


@pytest.mark.parametrize(
    ("column_type", "expected"),
    [
        ("tinyint(1)", ("TINYINT", 1, None)),
        ("int", ("INT", None, None)),  # MySQL 8.0.19+: no display width
        ("bigint(20) unsigned", ("BIGINT UNSIGNED", 20, None)),
        ("int(10) unsigned zerofill", ("INT UNSIGNED ZEROFILL", 10, None)),
        ("float(7,4)", ("FLOAT", 7, 4)),
        ("double", ("DOUBLE", None, None)),
        ("decimal(65,30)", ("DECIMAL", 65, 30)),
        ("char(10)", ("CHAR", 10, None)),
        ("varbinary(16)", ("VARBINARY", 16, None)),
        ("bit(8)", ("BIT", 8, None)),
        ("datetime(6)", ("DATETIME", 6, None)),
        ("time", ("TIME", None, None)),
        ("year(4)", ("YEAR", 4, None)),
        ("longtext", ("LONGTEXT", None, None)),
        ("enum('a(b','c,d')", ("ENUM", 1, None)),  # parentheses and commas inside values
        ("set('x')", ("SET", 1, None)),
        ("set('a','b','c','d')", ("SET", 7, None)),
    ],
)
def test_type_name_and_size(column_type: str, expected: tuple[str, int | None, int | None]) -> None:
    assert env.type_name_and_size(column_type) == expected


@pytest.mark.parametrize(
    ("data_type", "code"),
    [
        ("tinyint", -6), ("smallint", 5), ("mediumint", 4), ("int", 4), ("year", 4), ("bigint", -5),
        ("float", 6), ("double", 8), ("decimal", 3), ("bit", -7), ("char", 1), ("enum", 1),
        ("set", 1), ("varchar", 12), ("text", 12), ("longtext", 12), ("binary", -2),
        ("varbinary", -3), ("blob", 2004), ("longblob", 2004), ("date", 91), ("time", 92),
        ("datetime", 93), ("timestamp", 2014), ("json", 1111), ("geometry", 1111),
        ("point", 1111), ("uuid", 1111), ("INT", 4),
    ],
)  # fmt: skip
def test_jdbc_type(data_type: str, code: int) -> None:
    # MySqlAntlrDdlParser.initializeDataTypeResolver: java.sql.Types per data type.
    assert env.jdbc_type(data_type) == code


@pytest.mark.parametrize(
    ("value", "quoted"),
    [("a", "'a'"), ("it's", "'it''s'"), ("a\\b", "'a\\\\b'"), ("", "''"), ("l\nm", "'l\\nm'")],
)
def test_quoted_value(value: str, quoted: str) -> None:
    assert env.quoted_value(value) == quoted


def test_schema_change_key_and_value() -> None:
    key_schema = env.schema_change_key_schema("io.debezium.connector.mysql.SchemaChangeKey")
    value_schema = env.schema_change_value_schema(
        "io.debezium.connector.mysql.SchemaChangeValue", MYSQL_SOURCE
    )
    key = env.schema_change_key(key_schema, "inventory")
    assert key.items() == [("databaseName", "inventory")]
    block = source(table="customers", gtid=None, thread=None, row=0)
    change = env.table_change("ALTER", "inventory", "customers", CUSTOMERS, ["id"], "utf8mb4", None)
    value = env.schema_change_value(
        value_schema,
        source=block,
        ts_ms=TS_MS + 5,
        database="inventory",
        ddl="ALTER TABLE customers ADD doc json",
        table_changes=[change],
    )
    value.validate()
    assert value.items() == [
        ("source", block),
        ("ts_ms", TS_MS + 5),
        ("databaseName", "inventory"),
        ("schemaName", None),
        ("ddl", "ALTER TABLE customers ADD doc json"),
        ("tableChanges", [change]),
    ]
    # A database-level statement: no table changes; the key's database may be "".
    empty = env.schema_change_value(
        value_schema,
        source=source(table=None),
        ts_ms=TS_MS,
        database="",
        ddl="CREATE EVENT e",
        table_changes=[],
    )
    assert empty.get("tableChanges") == []
    assert env.schema_change_key(key_schema, "").get("databaseName") == ""


def test_schema_change_value_refuses_another_flavors_source() -> None:
    value_schema = env.schema_change_value_schema(
        "io.debezium.connector.mysql.SchemaChangeValue", MYSQL_SOURCE
    )
    with pytest.raises(DataException):
        env.schema_change_value(
            value_schema,
            source=source(MARIADB_SOURCE, connector="mariadb"),
            ts_ms=TS_MS,
            database="inventory",
            ddl="CREATE DATABASE inventory",
            table_changes=[],
        )
