"""The record shapes of Debezium's MySQL and MariaDB connectors over the change-capture core's
envelope (:mod:`~airflow_provider_connect.connectors.change_capture.envelope`): the binlog
``source`` block (:func:`source_schema`, :func:`source_struct`, :class:`StreamedSource`),
transaction ids (:func:`transaction_id`), and the events of the schema-change topic
``<topic.prefix>``: their key and value schemas and structs (:func:`schema_change_key_schema`,
:func:`schema_change_value_schema`, :func:`schema_change_key`, :func:`schema_change_value`)
and their ``tableChanges`` (:func:`table_change`, the structs
``io.debezium.connector.schema.Change``/``Table``/``Column``).

Both flavors share every shape; only the names differ (``io.debezium.connector.mysql.Source``
or ``io.debezium.connector.mariadb.Source``, and so on), so each schema is built from the
flavor's names and cached per name. Each is built as Debezium's current code builds it
(schema names, versions, field order, optionality); the Java class each comes from is named
where it is defined.

Deliberate differences from Debezium:

* ``source.version`` is whatever the caller passes, meant to be this project's version.
* Structs are checked as they are built (:meth:`Struct.of`): a value of the wrong type or an
  unknown ``snapshot`` marker raises :class:`DataException` where Debezium would write it.
* ``tableChanges`` are built from the catalog (``information_schema``) when the DDL is
  processed, not from Debezium's parse of the DDL text: a column's ``typeName``, ``length``
  and ``scale`` come from its ``COLUMN_TYPE`` (what ``SHOW CREATE TABLE`` prints, the text
  Debezium parses in a snapshot), its ``enumValues`` are its ENUM/SET values quoted as
  ``SHOW CREATE TABLE`` quotes them. ``generated`` is ``autoIncremented`` (Debezium sets both
  for AUTO_INCREMENT columns, and also for ``ON UPDATE CURRENT_TIMESTAMP`` ones, which the
  column model does not tell apart).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Protocol

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.change_capture.envelope import (
    SNAPSHOT_FALSE,
    SourceTemplate,
    source_schema_builder,
    source_values,
)

# -- source: BinlogSourceInfoStructMaker (after AbstractSourceInfoStructMaker's fields) ---------
SOURCE_TABLE = "table"
SOURCE_SERVER_ID = "server_id"
SOURCE_GTID = "gtid"
SOURCE_FILE = "file"
SOURCE_POS = "pos"
SOURCE_ROW = "row"
SOURCE_THREAD = "thread"
SOURCE_QUERY = "query"


@functools.cache
def source_schema(name: str) -> Schema:
    """The ``source`` block's schema named ``name`` (``io.debezium.connector.mysql.Source`` or
    ``io.debezium.connector.mariadb.Source``), version 1, as ``BinlogSourceInfoStructMaker``
    builds it: the common fields (``version``, ``connector``, ``name``, ``ts_ms``,
    ``snapshot``, ``db``, ``sequence``, ``ts_us``, ``ts_ns``) then ``table`` (optional string),
    ``server_id`` (int64), ``gtid`` (optional string), ``file`` (string), ``pos`` (int64),
    ``row`` (int32), ``thread`` (optional int64), ``query`` (optional string). One schema
    object per name (cached), so blocks of one flavor share it."""
    return (
        source_schema_builder(name)
        .field(SOURCE_TABLE, Schema.OPTIONAL_STRING_SCHEMA)
        .field(SOURCE_SERVER_ID, Schema.INT64_SCHEMA)
        .field(SOURCE_GTID, Schema.OPTIONAL_STRING_SCHEMA)
        .field(SOURCE_FILE, Schema.STRING_SCHEMA)
        .field(SOURCE_POS, Schema.INT64_SCHEMA)
        .field(SOURCE_ROW, Schema.INT32_SCHEMA)
        .field(SOURCE_THREAD, Schema.OPTIONAL_INT64_SCHEMA)
        .field(SOURCE_QUERY, Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )


def source_struct(
    schema: Schema,
    *,
    version: str,
    connector: str,
    name: str,
    ts_ms: int,
    snapshot: str,
    db: str,
    table: str | None,
    server_id: int,
    gtid: str | None,
    file: str,
    pos: int,
    row: int,
    thread: int | None,
    query: str | None,
    ts_us: int | None = None,
    ts_ns: int | None = None,
) -> Struct:
    """The ``source`` block of one event, of ``schema`` (:func:`source_schema`), as
    ``BinlogSourceInfoStructMaker.struct`` fills it.

    * ``connector``: ``"mysql"`` or ``"mariadb"``; ``name``: ``topic.prefix``; ``db``: the
      database (``""`` when unknown, as Debezium writes it).
    * ``ts_ms`` (``ts_us``, ``ts_ns`` derived when left out, as the core's
      :func:`~airflow_provider_connect.connectors.change_capture.envelope.instants`): the
      binlog event's time while streaming, the read time in a snapshot.
    * ``snapshot``: one of the core's ``SNAPSHOT_VALUES``; ``"false"`` (streaming) is left
      unset, read back as the schema's default, as ``SnapshotRecord.toSource`` does.
    * ``table``: the table; for a schema-change event the names of the tables it touches
      joined by ``,``, None for a database-level one.
    * ``server_id``, ``file``, ``pos``, ``row``: the origin server id of the event (0 in a
      snapshot), the binlog file, the **start** position of the event (the snapshot's binlog
      position in a snapshot) and the 0-based row in the rows event (0 in a snapshot).
    * ``gtid``: the current GTID (None without GTIDs and in a snapshot); ``thread``: the
      thread id of the transaction's ``BEGIN`` (None outside one, always None on MariaDB;
      Debezium's -1); ``query``: the row event's SQL with ``include.query`` (else None).

    Raises :class:`DataException` on a value of the wrong type or an unknown ``snapshot``.
    """
    values = source_values(
        version=version,
        connector=connector,
        name=name,
        ts_ms=ts_ms,
        snapshot=snapshot,
        db=db,
        sequence=None,  # never set by the binlog connectors
        ts_us=ts_us,
        ts_ns=ts_ns,
    )
    return Struct.of(
        schema,
        {
            **values,
            SOURCE_TABLE: table,
            SOURCE_SERVER_ID: server_id,
            SOURCE_GTID: gtid,
            SOURCE_FILE: file,
            SOURCE_POS: pos,
            SOURCE_ROW: row,
            SOURCE_THREAD: thread,
            SOURCE_QUERY: query,
        },
    )


class StreamedSource(SourceTemplate):
    """The ``source`` blocks of one table's streamed events (``snapshot`` ``"false"``), as
    :func:`source_struct` builds them, from the core's template: the table's shared block is
    built and checked once, each event's block is a copy with its instant and binlog
    coordinates set."""

    __slots__ = ("_index",)

    def __init__(
        self, schema: Schema, *, version: str, connector: str, name: str, db: str, table: str
    ) -> None:
        shared = source_struct(
            schema,
            version=version,
            connector=connector,
            name=name,
            ts_ms=0,
            snapshot=SNAPSHOT_FALSE,
            db=db,
            table=table,
            server_id=0,
            gtid=None,
            file="",
            pos=0,
            row=0,
            thread=None,
            query=None,
        )
        super().__init__(shared)
        self._index = _indexes(schema)

    def block(
        self,
        ts_us: int,
        server_id: int,
        gtid: str | None,
        file: str,
        pos: int,
        row: int,
        thread: int | None,
        query: str | None,
    ) -> Struct:
        """The block of an event at ``ts_us`` (µs since the epoch; ``ts_ms`` and ``ts_ns``
        derived) from server ``server_id``, in transaction ``gtid``, starting at ``pos`` of
        binlog ``file``, row ``row`` of its rows event, with ``thread`` and ``query`` as
        :func:`source_struct` describes them. The values are the binlog reader's, of the
        fields' types (not checked again)."""
        server_id_at, gtid_at, file_at, pos_at, row_at, thread_at, query_at = self._index
        values = self.values(ts_us, None)
        values[server_id_at] = server_id
        values[gtid_at] = gtid
        values[file_at] = file
        values[pos_at] = pos
        values[row_at] = row
        values[thread_at] = thread
        values[query_at] = query
        return self.block_of(values)


@functools.cache
def _indexes(schema: Schema) -> tuple[int, int, int, int, int, int, int]:
    """The positions of the per-event binlog fields in ``schema``."""
    fields = {f.name: f.index for f in schema.fields or ()}
    server_id, gtid, file, pos, row, thread, query = (
        fields[n]
        for n in (
            SOURCE_SERVER_ID,
            SOURCE_GTID,
            SOURCE_FILE,
            SOURCE_POS,
            SOURCE_ROW,
            SOURCE_THREAD,
            SOURCE_QUERY,
        )
    )
    return server_id, gtid, file, pos, row, thread, query


# -- transaction metadata: BinlogOffsetContext.setTransactionId --------------------------------
def transaction_id(gtid: str | None, file: str, pos: int) -> str:
    """A transaction's id in the transaction metadata: its GTID when known
    (``3E11FA47-71CA-11E1-9E33-C80AA9429562:23``, MariaDB ``0-1-42``), else
    ``file=<binlog file>,pos=<position of its BEGIN>``."""
    return gtid if gtid is not None else f"file={file},pos={pos}"


# -- schema-change events: SchemaFactory.schemaHistory*Schema, ConnectTableChangeSerializer -----
SCHEMA_CHANGE_DATABASE_NAME = "databaseName"
SCHEMA_CHANGE_SOURCE = "source"
SCHEMA_CHANGE_TIMESTAMP = "ts_ms"
SCHEMA_CHANGE_SCHEMA_NAME = "schemaName"
SCHEMA_CHANGE_DDL = "ddl"
SCHEMA_CHANGE_TABLE_CHANGES = "tableChanges"

# TableChanges.TableChangeType values a Change carries.
CHANGE_CREATE = "CREATE"
CHANGE_ALTER = "ALTER"
CHANGE_DROP = "DROP"
_CHANGE_TYPES = frozenset((CHANGE_CREATE, CHANGE_ALTER, CHANGE_DROP))

_STRINGS: Schema = SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build()

# SchemaFactory.schemaHistoryColumnSchema()
COLUMN_SCHEMA: Schema = (
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
    .field("enumValues", _STRINGS)
    .build()
)

# SchemaFactory.schemaHistoryTableSchema(): optional (a DROP's change has none)
TABLE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Table")
    .version(1)
    .field("defaultCharsetName", Schema.OPTIONAL_STRING_SCHEMA)
    .field("primaryKeyColumnNames", _STRINGS)
    .field("columns", SchemaBuilder.array(COLUMN_SCHEMA).build())
    .field("comment", Schema.OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)

# SchemaFactory.schemaHistoryChangeSchema()
CHANGE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Change")
    .version(1)
    .field("type", Schema.STRING_SCHEMA)
    .field("id", Schema.STRING_SCHEMA)
    .field("table", TABLE_SCHEMA)
    .build()
)


@functools.cache
def schema_change_key_schema(name: str) -> Schema:
    """The key schema of the schema-change topic, named ``name``
    (``io.debezium.connector.<mysql|mariadb>.SchemaChangeKey``), version 1, with the one
    required string ``databaseName`` (``SchemaFactory.schemaHistoryConnectorKeySchema``)."""
    return (
        SchemaBuilder.struct()
        .name(name)
        .version(1)
        .field(SCHEMA_CHANGE_DATABASE_NAME, Schema.STRING_SCHEMA)
        .build()
    )


@functools.cache
def schema_change_value_schema(name: str, source_name: str) -> Schema:
    """The value schema of the schema-change topic, named ``name``
    (``io.debezium.connector.<mysql|mariadb>.SchemaChangeValue``), version 1
    (``SchemaFactory.schemaHistoryConnectorValueSchema``): ``source`` (the flavor's
    :func:`source_schema` named ``source_name``), ``ts_ms`` (int64), ``databaseName``,
    ``schemaName``, ``ddl`` (optional strings), ``tableChanges`` (a required array of
    :data:`CHANGE_SCHEMA`)."""
    return (
        SchemaBuilder.struct()
        .name(name)
        .version(1)
        .field(SCHEMA_CHANGE_SOURCE, source_schema(source_name))
        .field(SCHEMA_CHANGE_TIMESTAMP, Schema.INT64_SCHEMA)
        .field(SCHEMA_CHANGE_DATABASE_NAME, Schema.OPTIONAL_STRING_SCHEMA)
        .field(SCHEMA_CHANGE_SCHEMA_NAME, Schema.OPTIONAL_STRING_SCHEMA)
        .field(SCHEMA_CHANGE_DDL, Schema.OPTIONAL_STRING_SCHEMA)
        .field(SCHEMA_CHANGE_TABLE_CHANGES, SchemaBuilder.array(CHANGE_SCHEMA).build())
        .build()
    )


def schema_change_key(schema: Schema, database: str) -> Struct:
    """The key of a schema-change event about ``database`` (``""`` for a statement without
    one, as Debezium writes it), of ``schema`` (:func:`schema_change_key_schema`)."""
    return Struct.of(schema, {SCHEMA_CHANGE_DATABASE_NAME: database})


def schema_change_value(
    schema: Schema,
    *,
    source: Struct,
    ts_ms: int,
    database: str | None,
    ddl: str | None,
    table_changes: Sequence[Struct],
) -> Struct:
    """The value of a schema-change event, of ``schema`` (:func:`schema_change_value_schema`),
    as ``EventDispatcher.SchemaChangeEventReceiver`` fills it: ``source`` (the block at the
    DDL: its binlog position, ``table`` the tables' names joined by ``,``), ``ts_ms`` (when
    the connector processed it), ``databaseName``, ``ddl`` (the statement), ``tableChanges``
    (:func:`table_change`; empty for a database-level statement). ``schemaName`` is always
    null for the binlog connectors. Raises :class:`DataException` on a value that does not
    fit."""
    return Struct.of(
        schema,
        {
            SCHEMA_CHANGE_SOURCE: source,
            SCHEMA_CHANGE_TIMESTAMP: ts_ms,
            SCHEMA_CHANGE_DATABASE_NAME: database,
            SCHEMA_CHANGE_SCHEMA_NAME: None,
            SCHEMA_CHANGE_DDL: ddl,
            SCHEMA_CHANGE_TABLE_CHANGES: list(table_changes),
        },
    )


class ColumnLike(Protocol):
    """The fields of a column :func:`table_change` reads (the MySQL connector's ``Column``
    in ``types.py`` has them)."""

    @property
    def name(self) -> str:
        """The column's name."""
        ...

    @property
    def data_type(self) -> str:
        """``information_schema.COLUMNS.DATA_TYPE``, lower case (``int``, ``varchar``)."""
        ...

    @property
    def column_type(self) -> str:
        """``COLUMN_TYPE`` (``int(10) unsigned``, ``decimal(10,2)``, ``enum('a','b')``)."""
        ...

    @property
    def optional(self) -> bool:
        """Whether the column is nullable."""
        ...

    @property
    def enum_values(self) -> tuple[str, ...]:
        """The ENUM or SET values in definition order, unquoted (empty for other types)."""
        ...

    @property
    def charset(self) -> str | None:
        """The character set of a string column (None for others)."""
        ...

    @property
    def default(self) -> str | None:
        """The default as Debezium's ``defaultValueExpression`` holds it, None without one."""
        ...

    @property
    def auto_increment(self) -> bool:
        """Whether the column is AUTO_INCREMENT."""
        ...

    @property
    def comment(self) -> str | None:
        """The column's comment (None when comments are not included)."""
        ...


# java.sql.Types of the MySQL/MariaDB DDL parsers' data types (MySqlAntlrDdlParser
# .initializeDataTypeResolver), by information_schema DATA_TYPE. Others: Types.OTHER.
_JDBC_TYPES: dict[str, int] = {
    "tinyint": -6,
    "smallint": 5,
    "mediumint": 4,
    "int": 4,
    "integer": 4,
    "year": 4,
    "bigint": -5,
    "real": 7,
    "float": 6,
    "double": 8,
    "decimal": 3,
    "numeric": 2,
    "bit": -7,
    "bool": 16,
    "boolean": 16,
    "char": 1,
    "enum": 1,
    "set": 1,
    "varchar": 12,
    "tinytext": 12,
    "text": 12,
    "mediumtext": 12,
    "longtext": 12,
    "binary": -2,
    "varbinary": -3,
    "tinyblob": 2004,
    "blob": 2004,
    "mediumblob": 2004,
    "longblob": 2004,
    "date": 91,
    "time": 92,
    "datetime": 93,
    "timestamp": 2014,  # TIMESTAMP_WITH_TIMEZONE
}
_JDBC_OTHER = 1111


def jdbc_type(data_type: str) -> int:
    """The ``java.sql.Types`` code Debezium's DDL parser gives the base type ``data_type``
    (``information_schema`` ``DATA_TYPE``): ``INT`` 4, ``VARCHAR`` 12, ``TIMESTAMP`` 2014
    (``TIMESTAMP_WITH_TIMEZONE``), ``JSON``, spatial types, ``UUID`` and anything else
    1111 (``OTHER``)."""
    return _JDBC_TYPES.get(data_type.lower(), _JDBC_OTHER)


def type_name_and_size(column_type: str) -> tuple[str, int | None, int | None]:
    """Debezium's ``typeName``, ``length`` and ``scale`` of a column of ``column_type``
    (``COLUMN_TYPE``, as ``SHOW CREATE TABLE`` prints it): the type's words upper case
    without the parenthesised part (``int(10) unsigned zerofill`` →
    ``INT UNSIGNED ZEROFILL``), the length and scale from that part (``decimal(10,2)`` →
    10, 2; ``varchar(255)`` → 255; ``datetime(3)`` → 3), none without one; ENUM has length
    1, SET the count of its values and of the commas between them
    (``ColumnDefinitionParserListener.resolveColumnDataType``)."""
    words: list[str] = []
    inside: list[str] = []
    depth = 0
    quote = ""
    word = ""
    for ch in column_type:
        if quote:
            inside.append(ch)
            if ch == quote:
                quote = ""
            continue
        if depth and ch in "'\"":
            quote = ch
            inside.append(ch)
        elif ch == "(":
            depth += 1
            if depth > 1:
                inside.append(ch)
        elif ch == ")":
            depth -= 1
            if depth:
                inside.append(ch)
        elif depth:
            inside.append(ch)
        elif ch.isspace():
            if word:
                words.append(word)
            word = ""
        else:
            word += ch
    if word:
        words.append(word)
    name = " ".join(words).upper()
    base = words[0].lower() if words else ""
    if base in ("enum", "set"):
        count = _count_values("".join(inside))
        return name, (1 if base == "enum" else max(0, 2 * count - 1)), None
    sizes = [part.strip() for part in "".join(inside).split(",")] if inside else []
    length = int(sizes[0]) if sizes and sizes[0].isdigit() else None
    scale = int(sizes[1]) if len(sizes) > 1 and sizes[1].isdigit() else None
    return name, length, scale


def _count_values(values: str) -> int:
    """How many quoted literals an ENUM/SET's parenthesised values hold (``'a','b'`` → 2):
    the commas outside quotes, plus one. A doubled quote inside a literal closes and reopens
    it, which changes no count."""
    if not values.strip():
        return 0
    commas = 0
    quote = ""
    for ch in values:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            commas += 1
    return commas + 1


# What SHOW CREATE TABLE escapes in an ENUM/SET value (sql_show.cc append_unescaped).
_ESCAPES = {"\\": "\\\\", "'": "''", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z"}


def quoted_value(value: str) -> str:
    """An ENUM/SET value as ``SHOW CREATE TABLE`` writes it and Debezium keeps it in
    ``enumValues``: single-quoted, ``'`` doubled, backslash and control characters escaped
    (``it's`` → ``'it''s'``)."""
    return "'" + "".join(_ESCAPES.get(ch, ch) for ch in value) + "'"


def _column_struct(column: ColumnLike, position: int) -> Struct:
    """One ``io.debezium.connector.schema.Column`` (``ConnectTableChangeSerializer``)."""
    type_name, length, scale = type_name_and_size(column.column_type)
    return Struct.of(
        COLUMN_SCHEMA,
        {
            "name": column.name,
            "jdbcType": jdbc_type(column.data_type),
            "typeName": type_name,
            "typeExpression": type_name,  # ColumnEditor.type(name) sets both
            "charsetName": column.charset,
            "length": length,
            "scale": scale,
            "position": position,
            "optional": column.optional,
            "autoIncremented": column.auto_increment,
            "generated": column.auto_increment,
            "comment": column.comment,
            "defaultValueExpression": column.default,
            "enumValues": [quoted_value(v) for v in column.enum_values] or None,
        },
    )


def double_quoted_id(db: str, table: str) -> str:
    """A table's id in a Change, as ``TableId.toDoubleQuotedString`` writes it
    (``"db"."table"``): each part in double quotes, ``"`` inside doubled, a part already
    starting or ending with ``"`` left as it is (as Debezium does), an empty database left
    out."""
    parts = [db, table] if db else [table]
    return ".".join(_double_quoted(part) for part in parts)


def _double_quoted(part: str) -> str:
    if not part:
        return '""'
    if part[0] != '"' and part[-1] != '"':
        return '"' + part.replace('"', '""') + '"'
    return part


def table_change(
    kind: str,
    db: str,
    table: str,
    columns: Sequence[ColumnLike],
    primary_key: Sequence[str],
    charset: str | None,
    comment: str | None,
) -> Struct:
    """One ``io.debezium.connector.schema.Change`` (``ConnectTableChangeSerializer.toStruct``):
    ``type`` ``kind`` (``CREATE``, ``ALTER`` or ``DROP``; a rename is an ``ALTER`` of the new
    name), ``id`` the table's :func:`double_quoted_id`, and, except for ``DROP`` (whose
    ``table`` is null; ``columns`` and the rest are not read), ``table``: its default
    ``charset``, ``primary_key`` column names (an empty list without one), ``columns`` in
    order (``position`` 1-based) and ``comment`` (pass comments, of the table and its
    columns, only with ``include.schema.comments``). Raises :class:`DataException` on an
    unknown ``kind``."""
    if kind not in _CHANGE_TYPES:
        raise DataException(f"Invalid table change type {kind!r}: not CREATE, ALTER or DROP")
    table_struct = None
    if kind != CHANGE_DROP:
        table_struct = Struct.of(
            TABLE_SCHEMA,
            {
                "defaultCharsetName": charset,
                "primaryKeyColumnNames": list(primary_key),
                "columns": [_column_struct(c, i) for i, c in enumerate(columns, 1)],
                "comment": comment,
            },
        )
    return Struct.of(
        CHANGE_SCHEMA,
        {"type": kind, "id": double_quoted_id(db, table), "table": table_struct},
    )
