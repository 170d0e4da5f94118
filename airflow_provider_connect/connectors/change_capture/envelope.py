"""Debezium's change event envelope and its vocabulary, whatever the database
(``io.debezium.data.Envelope``, ``SchemaFactory``, ``AbstractSourceInfo``): the op codes,
the envelope's field names and schema-name suffixes, the ``source.snapshot`` markers and
their Enum schema, the fields every ``source`` block starts with, and the envelope's schema
and values. A database's connector adds the rest of its ``source`` block (PostgreSQL's:
``connectors/postgres/envelope.py``); ``ExtractNewRecordState`` reads events by these names.

Schema names are those of ``schema.name.adjustment.mode=none``, Debezium's default.

Deliberate differences from Debezium:

* :func:`envelope_schema` leaves the ``transaction`` field out when asked to
  (``transaction=False``). Debezium's envelope builder always has it (``SchemaFactory
  .datatypeEnvelopeSchema`` adds the block when ``TableSchemaBuilder`` has not), whether or
  not ``provide.transaction.metadata`` is set; only its value stays null. Pass
  ``transaction=True`` for schemas identical to Debezium's.
* An event takes its parts as built and checks their schemas: a part of another schema, a
  ``snapshot`` outside the Enum's allowed values or an unknown op raises
  :class:`DataException` where Debezium would write it.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct, Type
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.change_capture.transactions import (
    TRANSACTION_BLOCK_SCHEMA,
)

# -- op codes: io.debezium.data.Envelope.Operation -------------------------------------------
OP_READ = "r"
OP_CREATE = "c"
OP_UPDATE = "u"
OP_DELETE = "d"
OP_TRUNCATE = "t"
OP_MESSAGE = "m"
OPS = frozenset((OP_READ, OP_CREATE, OP_UPDATE, OP_DELETE, OP_TRUNCATE, OP_MESSAGE))

# -- the envelope's fields (Envelope.FieldName) and schema names -----------------------------
BEFORE = "before"
AFTER = "after"
SOURCE = "source"
TRANSACTION = "transaction"
OPERATION = "op"
TIMESTAMP = "ts_ms"
TIMESTAMP_US = "ts_us"
TIMESTAMP_NS = "ts_ns"
TIMESTAMPS = (TIMESTAMP, TIMESTAMP_US, TIMESTAMP_NS)
ENVELOPE_SUFFIX = ".Envelope"
KEY_SUFFIX = ".Key"
VALUE_SUFFIX = ".Value"

FIELDS_WITH_TRANSACTION = 8
"""How many fields an envelope with the ``transaction`` block has (:func:`envelope_schema`)."""

# io.debezium.data.Envelope.SCHEMA_VERSION
ENVELOPE_SCHEMA_VERSION = 2

# -- source.snapshot: io.debezium.connector.SnapshotRecord, lowercased, in declaration order ---
SNAPSHOT_TRUE = "true"
SNAPSHOT_FIRST = "first"
SNAPSHOT_FIRST_IN_DATA_COLLECTION = "first_in_data_collection"
SNAPSHOT_LAST_IN_DATA_COLLECTION = "last_in_data_collection"
SNAPSHOT_LAST = "last"
SNAPSHOT_FALSE = "false"
SNAPSHOT_INCREMENTAL = "incremental"
SNAPSHOT_VALUES: tuple[str, ...] = (
    SNAPSHOT_TRUE,
    SNAPSHOT_FIRST,
    SNAPSHOT_FIRST_IN_DATA_COLLECTION,
    SNAPSHOT_LAST_IN_DATA_COLLECTION,
    SNAPSHOT_LAST,
    SNAPSHOT_FALSE,
    SNAPSHOT_INCREMENTAL,
)
_SNAPSHOT_SET = frozenset(SNAPSHOT_VALUES)

# io.debezium.data.Enum: a string named so, version 1, allowed values in parameter "allowed"
# joined by "," (EnumeratedValues.toCommaSeparatedString; none of these needs escaping).
_ENUM_LOGICAL_NAME = "io.debezium.data.Enum"
_ENUM_VALUES_PARAMETER = "allowed"

# SchemaFactory.snapshotRecordSchema(): Enum.builder(values).version(1).defaultValue("false")
# .optional(). (Debezium sets version 1 twice, through Enum and SNAPSHOT_RECORD_SCHEMA_VERSION.)
SNAPSHOT_SCHEMA: Schema = (
    SchemaBuilder.string()
    .name(_ENUM_LOGICAL_NAME)
    .version(1)
    .parameter(_ENUM_VALUES_PARAMETER, ",".join(SNAPSHOT_VALUES))
    .default_value(SNAPSHOT_FALSE)
    .optional()
    .build()
)


# -- source ------------------------------------------------------------------------------------
# The fields every source block starts with (AbstractSourceInfo), in order.
SOURCE_VERSION = "version"
SOURCE_CONNECTOR = "connector"
SOURCE_NAME = "name"
SOURCE_SNAPSHOT = "snapshot"
SOURCE_DB = "db"
SOURCE_SEQUENCE = "sequence"


def source_schema_builder(name: str) -> SchemaBuilder:
    """The ``source`` block's schema named ``name`` (``io.debezium.connector.<db>.Source``)
    with the fields every database's block starts with, in order
    (``SchemaFactory.sourceInfoSchemaBuilder`` and ``AbstractSourceInfoStructMaker``):
    ``version``, ``connector``, ``name``, ``ts_ms``, ``snapshot``, ``db``, ``sequence``,
    ``ts_us``, ``ts_ns``. The database's own fields follow."""
    return (
        SchemaBuilder.struct()
        .name(name)
        .version(1)  # SchemaFactory.SOURCE_INFO_DEFAULT_SCHEMA_VERSION
        .field(SOURCE_VERSION, Schema.STRING_SCHEMA)
        .field(SOURCE_CONNECTOR, Schema.STRING_SCHEMA)
        .field(SOURCE_NAME, Schema.STRING_SCHEMA)
        .field(TIMESTAMP, Schema.INT64_SCHEMA)
        .field(SOURCE_SNAPSHOT, SNAPSHOT_SCHEMA)
        .field(SOURCE_DB, Schema.STRING_SCHEMA)
        .field(SOURCE_SEQUENCE, Schema.OPTIONAL_STRING_SCHEMA)
        .field(TIMESTAMP_US, Schema.OPTIONAL_INT64_SCHEMA)
        .field(TIMESTAMP_NS, Schema.OPTIONAL_INT64_SCHEMA)
    )


def source_values(
    *,
    version: str,
    connector: str,
    name: str,
    ts_ms: int,
    snapshot: str,
    db: str,
    sequence: str | None,
    ts_us: int | None,
    ts_ns: int | None,
) -> dict[str, Any]:
    """The values of the fields every ``source`` block starts with
    (:func:`source_schema_builder`), as ``AbstractSourceInfoStructMaker.commonStruct`` sets
    them: ``snapshot`` checked and left unset for ``"false"`` (:func:`check_snapshot`),
    ``ts_us`` and ``ts_ns`` derived when left out (:func:`instants`). The database adds its
    own fields' values."""
    ts_us, ts_ns = instants(ts_ms, ts_us, ts_ns)
    return {
        SOURCE_VERSION: version,
        SOURCE_CONNECTOR: connector,
        SOURCE_NAME: name,
        TIMESTAMP: ts_ms,
        SOURCE_SNAPSHOT: check_snapshot(snapshot),
        SOURCE_DB: db,
        SOURCE_SEQUENCE: sequence,
        TIMESTAMP_US: ts_us,
        TIMESTAMP_NS: ts_ns,
    }


# The positions of the per-event common fields in every source block.
_COMMON = {f.name: f.index for f in source_schema_builder("common").build().fields or ()}
_TS_MS, _SEQUENCE, _TS_US, _TS_NS = (
    _COMMON[name] for name in (TIMESTAMP, SOURCE_SEQUENCE, TIMESTAMP_US, TIMESTAMP_NS)
)


class SourceTemplate:
    """The ``source`` blocks of one table's streamed events (``snapshot`` ``"false"``) at a
    fraction of the cost of building each: the block every event of the table shares is
    built and checked once, and each event's block is a copy of its values with the
    instant and ``sequence`` set (:meth:`values`), then the database's own per-event
    fields, made into a block by :meth:`block_of`."""

    __slots__ = ("_schema", "_template")

    def __init__(self, shared: Struct) -> None:
        """``shared``: a streamed event's block of the table (a schema from
        :func:`source_schema_builder`, ``snapshot`` unset)."""
        self._schema = shared.schema
        self._template: list[object] = shared._values

    def values(self, ts_us: int, sequence: str | None) -> list[object]:
        """A new copy of the shared block's values with the instant ``ts_us`` (µs since the
        epoch; ``ts_ms`` and ``ts_ns`` derived as :func:`instants` does) and
        ``sequence``."""
        values = self._template.copy()
        values[_TS_MS] = ts_us // 1000
        values[_TS_US] = ts_us
        values[_TS_NS] = ts_us * 1000
        values[_SEQUENCE] = sequence
        return values

    def block_of(self, values: list[object]) -> Struct:
        """The block of ``values`` (from :meth:`values`, with the database's per-event
        fields set to values of their schemas)."""
        return Struct._trusted(self._schema, values)


def check_snapshot(snapshot: str) -> str | None:
    """The value of ``source.snapshot`` for the marker ``snapshot`` (one of
    :data:`SNAPSHOT_VALUES`): None for ``"false"``, left unset as Debezium does
    (``SnapshotRecord.toSource``; readers take the schema's default). Raises
    :class:`DataException` on any other marker."""
    if snapshot not in _SNAPSHOT_SET:
        raise DataException(
            f'Invalid value {snapshot!r} for field "snapshot": not one of {",".join(SNAPSHOT_VALUES)}'
        )
    return None if snapshot == SNAPSHOT_FALSE else snapshot


def instants(ts_ms: int, ts_us: int | None, ts_ns: int | None) -> tuple[int, int]:
    """``ts_us`` and ``ts_ns`` of one instant, as Debezium derives them: left out, ``ts_us``
    comes from ``ts_ns // 1000`` or else ``ts_ms * 1000``, and ``ts_ns`` from
    ``ts_us * 1000``."""
    if ts_us is None:
        ts_us = ts_ms * 1000 if ts_ns is None else ts_ns // 1000
    if ts_ns is None:
        ts_ns = ts_us * 1000
    return ts_us, ts_ns


# -- envelope ----------------------------------------------------------------------------------
def envelope_schema(
    name: str, row_schema: Schema, source_schema: Schema, transaction: bool
) -> Schema:
    """The value schema of the change events of one table, as ``TableSchemaBuilder.create``
    and ``Envelope.defineSchema()`` build it.

    ``name`` is the table's topic (:func:`~.topics.data_topic`). The result is the struct
    ``<name>.Envelope``, version 2, with the fields ``before`` and ``after`` (the row
    schema, optional, named ``<name>.Value``), ``source`` (``source_schema``, the database's
    block), ``transaction`` (:data:`~.transactions.TRANSACTION_BLOCK_SCHEMA`, optional; only
    when ``transaction`` is true, see the module's notes), ``op`` (string, required), and
    ``ts_ms``, ``ts_us``, ``ts_ns`` (optional int64, the time the connector processed the
    event).

    ``row_schema`` must be a struct; when it is not already optional and named
    ``<name>.Value`` a copy is made that is, so build row values against
    ``result.field("after").schema``. (The key schema, not made here, is ``<name>.Key``.)
    """
    if row_schema.type is not Type.STRUCT:
        raise DataException(f"The row schema of {name} must be a struct: {row_schema!r}")
    value_name = name + VALUE_SUFFIX
    if not row_schema.optional or row_schema.name != value_name:
        row_schema = row_schema.replace(optional=True, name=value_name)
    builder = (
        SchemaBuilder.struct()
        .name(name + ENVELOPE_SUFFIX)
        .version(ENVELOPE_SCHEMA_VERSION)
        .field(BEFORE, row_schema)
        .field(AFTER, row_schema)
        .field(SOURCE, source_schema)
    )
    if transaction:
        builder.field(TRANSACTION, TRANSACTION_BLOCK_SCHEMA)
    return (
        builder.field(OPERATION, Schema.STRING_SCHEMA)  # Envelope.OPERATION_REQUIRED
        .field(TIMESTAMP, Schema.OPTIONAL_INT64_SCHEMA)
        .field(TIMESTAMP_US, Schema.OPTIONAL_INT64_SCHEMA)
        .field(TIMESTAMP_NS, Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )


def envelope_value(
    envelope: Schema,
    *,
    op: str,
    source: Struct,
    ts_ms: int,
    before: Struct | None = None,
    after: Struct | None = None,
    transaction: Struct | None = None,
    ts_us: int | None = None,
    ts_ns: int | None = None,
) -> Struct:
    """One change event of ``envelope`` (from :func:`envelope_schema`), as
    ``Envelope.read/create/update/delete/truncate`` fill it: ``r`` and ``c`` have ``after``,
    ``u`` ``before`` (null unless the table's replica identity gives it) and ``after``, ``d``
    ``before``, ``t`` neither. ``ts_ms`` is when the connector processed the event;
    ``ts_us`` and ``ts_ns`` default to ``ts_ms * 1000`` and ``ts_us * 1000``.
    ``transaction`` (:func:`~.transactions.transaction_block`) needs an envelope that has
    the field. Raises :class:`DataException` on an unknown op or a value that does not fit."""
    if op not in OPS:
        raise DataException(f'Invalid value {op!r} for field "op": not a Debezium operation')
    ts_us, ts_ns = instants(ts_ms, ts_us, ts_ns)
    # The parts are structs checked when they were built: only their schemas are checked
    # here (checking each deeply again would double the cost of an event).
    fields = envelope.fields or []
    row = fields[0].schema if fields else None
    source_schema = fields[2].schema if len(fields) > 2 else None
    if (
        source is None
        or source.schema is not source_schema
        or (before is not None and before.schema is not row)
        or (after is not None and after.schema is not row)
        or (transaction is not None and transaction.schema is not TRANSACTION_BLOCK_SCHEMA)
    ):
        raise _misfit(row, source_schema, before, after, source, transaction)
    if len(fields) == FIELDS_WITH_TRANSACTION:
        return Struct._trusted(
            envelope, [before, after, source, transaction, op, ts_ms, ts_us, ts_ns]
        )
    if transaction is not None:
        raise DataException(f"{TRANSACTION} is not a valid field name")
    return Struct._trusted(envelope, [before, after, source, op, ts_ms, ts_us, ts_ns])


def _misfit(
    row: Schema | None,
    source_schema: Schema | None,
    before: Struct | None,
    after: Struct | None,
    source: Struct | None,
    transaction: Struct | None,
) -> DataException:
    """What is wrong with the parts of an event :func:`envelope_value` refused."""
    if source is None:
        return DataException(f'Invalid value null used for required field: "{SOURCE}"')
    parts = (
        (BEFORE, before, row),
        (AFTER, after, row),
        (SOURCE, source, source_schema),
        (TRANSACTION, transaction, TRANSACTION_BLOCK_SCHEMA),
    )
    name = next(n for n, part, schema in parts if part is not None and part.schema is not schema)
    return DataException(f'Invalid value for field "{name}": a struct of another schema')
