"""The record shapes of Debezium's PostgreSQL connector: schemas and the Structs built on them.

What it holds, each as Debezium's current code builds it (schema names, versions, field
order, optionality, the ``io.debezium.data.Enum`` of ``snapshot`` with its allowed values and
default); the Java class each comes from is named where it is defined:

* the ``source`` block, :data:`SOURCE_SCHEMA` (``io.debezium.connector.postgresql.Source``)
  and :func:`source_struct`, with :func:`source_sequence` for its ``sequence`` and
  :class:`StreamedSource` for the blocks of streamed events;
* the change event envelope, :func:`envelope_schema` (``<topic>.Envelope`` over the row
  schema ``<topic>.Value``) and :func:`envelope_value`, and the op codes ``OP_*``;
* the ``transaction`` block of change events, :data:`TRANSACTION_BLOCK_SCHEMA`
  (``event.block``) and :func:`transaction_block`, with PostgreSQL's ``<xid>:<lsn>``
  transaction ids (:func:`transaction_id`);
* the records of the transaction metadata topic (:func:`transaction_topic`):
  :data:`TRANSACTION_KEY_SCHEMA`, :data:`TRANSACTION_VALUE_SCHEMA`,
  :func:`transaction_begin` and :func:`transaction_end`;
* heartbeats: :data:`HEARTBEAT_KEY_SCHEMA`, :data:`HEARTBEAT_VALUE_SCHEMA`,
  :func:`heartbeat_topic` and :func:`heartbeat`;
* data change topic names, :func:`data_topic` (Debezium's default
  ``SchemaTopicNamingStrategy``: ``<topic.prefix>.<schema>.<table>``, sanitized).

Schema names are those of ``schema.name.adjustment.mode=none``, Debezium's default.

Deliberate differences from Debezium:

* ``source.version`` is whatever the caller passes, meant to be this project's version
  (``airflow_provider_connect.__version__``), not a Debezium release.
* :func:`envelope_schema` leaves the ``transaction`` field out when asked to
  (``transaction=False``). Debezium's envelope builder always has it (``SchemaFactory
  .datatypeEnvelopeSchema`` adds the block when ``TableSchemaBuilder`` has not), whether or
  not ``provide.transaction.metadata`` is set; only its value stays null. Pass
  ``transaction=True`` for schemas identical to Debezium's.
* The ``source`` block is checked as it is built (:meth:`Struct.of`); an event takes its
  parts as built and checks their schemas. A value of the wrong type, a ``snapshot``
  outside the Enum's allowed values or an unknown op raises :class:`DataException` where
  Debezium would write it.
"""

from __future__ import annotations

from collections.abc import Mapping

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct, Type
from airflow_provider_connect.connect.errors import DataException

__all__ = [
    "CONNECTOR",
    "ENVELOPE_SCHEMA_VERSION",
    "HEARTBEAT_KEY_SCHEMA",
    "HEARTBEAT_VALUE_SCHEMA",
    "OP_CREATE",
    "OP_DELETE",
    "OP_MESSAGE",
    "OP_READ",
    "OP_TRUNCATE",
    "OP_UPDATE",
    "SNAPSHOT_SCHEMA",
    "SNAPSHOT_VALUES",
    "SOURCE_SCHEMA",
    "TRANSACTION_BLOCK_SCHEMA",
    "TRANSACTION_EVENT_COUNT_SCHEMA",
    "TRANSACTION_KEY_SCHEMA",
    "TRANSACTION_VALUE_SCHEMA",
    "StreamedSource",
    "data_topic",
    "envelope_schema",
    "envelope_value",
    "heartbeat",
    "heartbeat_topic",
    "source_sequence",
    "source_struct",
    "transaction_begin",
    "transaction_block",
    "transaction_end",
    "transaction_id",
    "transaction_topic",
]

# The value of source.connector (PostgresConnector's Module.name()).
CONNECTOR = "postgresql"

# -- op codes: io.debezium.data.Envelope.Operation -------------------------------------------
OP_READ = "r"
OP_CREATE = "c"
OP_UPDATE = "u"
OP_DELETE = "d"
OP_TRUNCATE = "t"
OP_MESSAGE = "m"
_OPS = frozenset((OP_READ, OP_CREATE, OP_UPDATE, OP_DELETE, OP_TRUNCATE, OP_MESSAGE))

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

# -- source: SchemaFactory.sourceInfoSchemaBuilder() + PostgresSourceInfoStructMaker ---------
SOURCE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.postgresql.Source")
    .version(1)  # SchemaFactory.SOURCE_INFO_DEFAULT_SCHEMA_VERSION
    # AbstractSourceInfo's common fields
    .field("version", Schema.STRING_SCHEMA)
    .field("connector", Schema.STRING_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("ts_ms", Schema.INT64_SCHEMA)
    .field("snapshot", SNAPSHOT_SCHEMA)
    .field("db", Schema.STRING_SCHEMA)
    .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
    .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
    .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
    # PostgreSQL's own
    .field("schema", Schema.STRING_SCHEMA)
    .field("table", Schema.STRING_SCHEMA)
    .field("txId", Schema.OPTIONAL_INT64_SCHEMA)
    .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
    .field("xmin", Schema.OPTIONAL_INT64_SCHEMA)
    .field("origin", Schema.OPTIONAL_STRING_SCHEMA)
    .field("origin_lsn", Schema.OPTIONAL_INT64_SCHEMA)
    .build()
)

# -- transaction metadata: SchemaFactory + TransactionStructMaker ----------------------------
TRANSACTION_BLOCK_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .optional()
    .name("event.block")
    .version(1)
    .field("id", Schema.STRING_SCHEMA)
    .field("total_order", Schema.INT64_SCHEMA)
    .field("data_collection_order", Schema.INT64_SCHEMA)
    .build()
)

TRANSACTION_EVENT_COUNT_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .optional()
    .name("event.collection")
    .version(1)
    .field("data_collection", Schema.STRING_SCHEMA)
    .field("event_count", Schema.INT64_SCHEMA)
    .build()
)

TRANSACTION_KEY_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.TransactionMetadataKey")
    .version(1)
    .field("id", Schema.STRING_SCHEMA)
    .build()
)

TRANSACTION_VALUE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.TransactionMetadataValue")
    .version(1)
    .field("status", Schema.STRING_SCHEMA)
    .field("id", Schema.STRING_SCHEMA)
    .field("event_count", Schema.OPTIONAL_INT64_SCHEMA)
    .field("data_collections", SchemaBuilder.array(TRANSACTION_EVENT_COUNT_SCHEMA).optional())
    .field("ts_ms", Schema.INT64_SCHEMA)
    .build()
)

# -- heartbeats: SchemaFactory.heartbeatKeySchema/heartbeatValueSchema + HeartbeatImpl --------
HEARTBEAT_KEY_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.ServerNameKey")
    .version(1)
    .field("serverName", Schema.STRING_SCHEMA)
    .build()
)

HEARTBEAT_VALUE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.Heartbeat")
    .version(1)
    .field("ts_ms", Schema.INT64_SCHEMA)
    .build()
)

# io.debezium.data.Envelope.SCHEMA_VERSION
ENVELOPE_SCHEMA_VERSION = 2

# AbstractTopicNamingStrategy's defaults.
_DEFAULT_DELIMITER = "."
_DEFAULT_TRANSACTION_TOPIC = "transaction"
_DEFAULT_HEARTBEAT_PREFIX = "__debezium-heartbeat"
_MAX_TOPIC_LENGTH = 249  # TopicNamingStrategy.MAX_NAME_LENGTH


# -- source ------------------------------------------------------------------------------------
def source_sequence(last_commit_lsn: int | None, lsn: int | None) -> str:
    """The ``source.sequence`` of PostgreSQL events, as ``SourceInfo.sequence()`` writes it:
    a JSON array of two strings, the LSN of the last committed transaction and the LSN of
    the event, each the decimal of the LSN as a 64-bit integer or null when unknown
    (``["22910216","22910504"]``, ``[null,"22910504"]``; Jackson's compact output)."""
    first = "null" if last_commit_lsn is None else f'"{last_commit_lsn}"'
    second = "null" if lsn is None else f'"{lsn}"'
    return f"[{first},{second}]"  # digits only: no escaping (json.dumps costs 10 µs)


def source_struct(
    *,
    version: str,
    name: str,
    ts_ms: int,
    snapshot: str,
    db: str,
    schema: str,
    table: str,
    tx_id: int | None,
    lsn: int | None,
    sequence: str | None = None,
    xmin: int | None = None,
    ts_us: int | None = None,
    ts_ns: int | None = None,
    origin: str | None = None,
    origin_lsn: int | None = None,
) -> Struct:
    """The ``source`` block of one event, of :data:`SOURCE_SCHEMA` (as
    ``PostgresSourceInfoStructMaker.struct``); ``connector`` is ``"postgresql"``.

    * ``version``: this project's version; ``name``: ``topic.prefix`` (the logical name);
      ``db``: the database name (Debezium writes ``""`` when it has none).
    * ``ts_ms``, ``ts_us``, ``ts_ns``: one instant, the commit time of the event's
      transaction while streaming (the read time in a snapshot), in milli-, micro- and
      nanoseconds since the epoch. Debezium derives all three from one ``Instant``:
      ``ts_ms = ts_us // 1000``, ``ts_ns = ts_us * 1000`` for PostgreSQL's microsecond
      commit times. Left out, ``ts_us`` comes from ``ts_ns // 1000`` or else
      ``ts_ms * 1000``, and ``ts_ns`` from ``ts_us * 1000``: both are always set, as in
      Debezium.
    * ``snapshot``: one of :data:`SNAPSHOT_VALUES` (``"true"``, ``"first"``, ``"last"``, …
      in a snapshot, ``"false"`` while streaming, ``"incremental"`` in an incremental
      snapshot). As Debezium (``SnapshotRecord.toSource``), ``"false"`` is left unset:
      :meth:`Struct.get` and the converters read the schema's default ``"false"``.
    * ``sequence``: for PostgreSQL a JSON array of two LSN strings, the last committed LSN
      and the event's LSN: see :func:`source_sequence`.
    * ``tx_id``, ``lsn``, ``xmin``: the transaction id (xid), the event's LSN as a 64-bit
      integer and the slot's xmin; left out, as in Debezium, for ``"incremental"`` events.
    * ``origin``, ``origin_lsn``: the replication origin of the transaction and its LSN
      there, when the transaction came from another server (Debezium's newest fields).

    Raises :class:`DataException` on a value of the wrong type or an unknown ``snapshot``.
    """
    if snapshot not in _SNAPSHOT_SET:
        raise DataException(
            f'Invalid value {snapshot!r} for field "snapshot": not one of {",".join(SNAPSHOT_VALUES)}'
        )
    if ts_us is None:
        ts_us = ts_ms * 1000 if ts_ns is None else ts_ns // 1000
    if ts_ns is None:
        ts_ns = ts_us * 1000
    if snapshot == SNAPSHOT_INCREMENTAL:
        tx_id = lsn = xmin = None
    return Struct.of(
        SOURCE_SCHEMA,
        {
            "version": version,
            "connector": CONNECTOR,
            "name": name,
            "ts_ms": ts_ms,
            "snapshot": None if snapshot == SNAPSHOT_FALSE else snapshot,
            "db": db,
            "sequence": sequence,
            "ts_us": ts_us,
            "ts_ns": ts_ns,
            "schema": schema,
            "table": table,
            "txId": tx_id,
            "lsn": lsn,
            "xmin": xmin,
            "origin": origin,
            "origin_lsn": origin_lsn,
        },
    )


_SOURCE_INDEX = {f.name: f.index for f in SOURCE_SCHEMA.fields or ()}


class StreamedSource:
    """The ``source`` blocks of one table's streamed events (``snapshot`` ``"false"``), as
    :func:`source_struct` builds them, at a fraction of its cost: what every block of the
    table shares is checked once, here, and each event's block is a copy of that with its
    instant, transaction, LSN and sequence set."""

    __slots__ = ("_template",)

    def __init__(self, *, version: str, name: str, db: str, schema: str, table: str) -> None:
        shared = source_struct(
            version=version,
            name=name,
            ts_ms=0,
            snapshot=SNAPSHOT_FALSE,
            db=db,
            schema=schema,
            table=table,
            tx_id=0,
            lsn=0,
        )
        self._template: list[object] = shared._values

    def block(self, ts_us: int, tx_id: int, lsn: int, last_commit_lsn: int | None) -> Struct:
        """The block of an event at ``lsn`` in transaction ``tx_id`` committed at ``ts_us``
        (µs since the epoch): ``ts_ms``, ``ts_us`` and ``ts_ns`` as :func:`source_struct`
        derives them, ``sequence`` from :func:`source_sequence`. The arguments are the
        decoder's unsigned integers, within the int64 fields' range."""
        values = self._template.copy()
        values[_TS_MS] = ts_us // 1000
        values[_TS_US] = ts_us
        values[_TS_NS] = ts_us * 1000
        values[_TX_ID] = tx_id
        values[_LSN] = lsn
        values[_SEQUENCE] = source_sequence(last_commit_lsn, lsn)
        return Struct._trusted(SOURCE_SCHEMA, values)


_TS_MS, _TS_US, _TS_NS, _TX_ID, _LSN, _SEQUENCE = (
    _SOURCE_INDEX[name] for name in ("ts_ms", "ts_us", "ts_ns", "txId", "lsn", "sequence")
)


# -- envelope ----------------------------------------------------------------------------------
def envelope_schema(name: str, row_schema: Schema, transaction: bool) -> Schema:
    """The value schema of the change events of one table, as ``TableSchemaBuilder.create``
    and ``Envelope.defineSchema()`` build it.

    ``name`` is the table's topic, ``<topic.prefix>.<schema>.<table>`` (:func:`data_topic`).
    The result is the struct ``<name>.Envelope``, version 2, with the fields ``before`` and
    ``after`` (the row schema, optional, named ``<name>.Value``), ``source``
    (:data:`SOURCE_SCHEMA`), ``transaction`` (:data:`TRANSACTION_BLOCK_SCHEMA`, optional;
    only when ``transaction`` is true, see the module's notes), ``op`` (string, required),
    and ``ts_ms``, ``ts_us``, ``ts_ns`` (optional int64, the time the connector processed
    the event).

    ``row_schema`` must be a struct; when it is not already optional and named
    ``<name>.Value`` a copy is made that is, so build row values against
    ``result.field("after").schema``. (The key schema, not made here, is ``<name>.Key``.)
    """
    if row_schema.type is not Type.STRUCT:
        raise DataException(f"The row schema of {name} must be a struct: {row_schema!r}")
    value_name = f"{name}.Value"
    if not row_schema.optional or row_schema.name != value_name:
        row_schema = row_schema.replace(optional=True, name=value_name)
    builder = (
        SchemaBuilder.struct()
        .name(f"{name}.Envelope")
        .version(ENVELOPE_SCHEMA_VERSION)
        .field("before", row_schema)
        .field("after", row_schema)
        .field("source", SOURCE_SCHEMA)
    )
    if transaction:
        builder.field("transaction", TRANSACTION_BLOCK_SCHEMA)
    return (
        builder.field("op", Schema.STRING_SCHEMA)  # Envelope.OPERATION_REQUIRED
        .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
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
    ``transaction`` (:func:`transaction_block`) needs an envelope that has the field.
    Raises :class:`DataException` on an unknown op or a value that does not fit."""
    if op not in _OPS:
        raise DataException(f'Invalid value {op!r} for field "op": not a Debezium operation')
    if ts_us is None:
        ts_us = ts_ms * 1000 if ts_ns is None else ts_ns // 1000
    if ts_ns is None:
        ts_ns = ts_us * 1000
    # The parts are structs checked when they were built: only their schemas are checked
    # here (checking each deeply again would double the cost of an event).
    fields = envelope.fields or []
    row = fields[0].schema if fields else None
    if (
        source is None
        or source.schema is not SOURCE_SCHEMA
        or (before is not None and before.schema is not row)
        or (after is not None and after.schema is not row)
        or (transaction is not None and transaction.schema is not TRANSACTION_BLOCK_SCHEMA)
    ):
        raise _misfit(row, before, after, source, transaction)
    if len(fields) == 8:  # with the transaction block
        return Struct._trusted(
            envelope, [before, after, source, transaction, op, ts_ms, ts_us, ts_ns]
        )
    if transaction is not None:
        raise DataException("transaction is not a valid field name")
    return Struct._trusted(envelope, [before, after, source, op, ts_ms, ts_us, ts_ns])


def _misfit(
    row: Schema | None,
    before: Struct | None,
    after: Struct | None,
    source: Struct | None,
    transaction: Struct | None,
) -> DataException:
    """What is wrong with the parts of an event :func:`envelope_value` refused."""
    if source is None:
        return DataException('Invalid value null used for required field: "source"')
    parts = (
        ("before", before, row),
        ("after", after, row),
        ("source", source, SOURCE_SCHEMA),
        ("transaction", transaction, TRANSACTION_BLOCK_SCHEMA),
    )
    name = next(n for n, part, schema in parts if part is not None and part.schema is not schema)
    return DataException(f'Invalid value for field "{name}": a struct of another schema')


# -- transaction metadata ----------------------------------------------------------------------
def transaction_id(xid: int, lsn: int) -> str:
    """A transaction's id in PostgreSQL's transaction metadata (``PostgresTransactionMonitor``):
    ``<xid>:<lsn>``, the LSN (as a 64-bit integer) being the last one the connector has seen
    when it writes the record (the offset's ``lsn``)."""
    return f"{xid}:{lsn}"


def transaction_block(tx_id: str, total_order: int, data_collection_order: int) -> Struct:
    """The ``transaction`` block of a change event: the transaction's id
    (:func:`transaction_id`), the event's position among all the events of the transaction
    and among those of its table, both from 1."""
    return Struct.of(
        TRANSACTION_BLOCK_SCHEMA,
        {"id": tx_id, "total_order": total_order, "data_collection_order": data_collection_order},
    )


def transaction_begin(tx_id: str, ts_ms: int) -> tuple[Struct, Struct]:
    """Key and value of the BEGIN record of a transaction on the transaction topic; its
    ``event_count`` and ``data_collections`` are null."""
    key = Struct.of(TRANSACTION_KEY_SCHEMA, {"id": tx_id})
    value = Struct.of(TRANSACTION_VALUE_SCHEMA, {"status": "BEGIN", "id": tx_id, "ts_ms": ts_ms})
    return key, value


def transaction_end(
    tx_id: str, ts_ms: int, event_count: int, counts: Mapping[str, int]
) -> tuple[Struct, Struct]:
    """Key and value of the END record of a transaction on the transaction topic:
    ``event_count`` events in all, ``counts`` by table (``"<schema>.<table>"``, as
    ``TableId`` names them), written as ``data_collections`` in ``counts``' order."""
    key = Struct.of(TRANSACTION_KEY_SCHEMA, {"id": tx_id})
    collections = [
        Struct.of(TRANSACTION_EVENT_COUNT_SCHEMA, {"data_collection": table, "event_count": count})
        for table, count in counts.items()
    ]
    value = Struct.of(
        TRANSACTION_VALUE_SCHEMA,
        {
            "status": "END",
            "id": tx_id,
            "event_count": event_count,
            "data_collections": collections,
            "ts_ms": ts_ms,
        },
    )
    return key, value


def transaction_topic(topic_prefix: str, config: Mapping[str, str]) -> str:
    """The transaction metadata topic: ``<topic.prefix><topic.delimiter><topic.transaction>``
    (``AbstractTopicNamingStrategy.transactionTopic``), by default ``<prefix>.transaction``;
    an empty setting counts as unset."""
    delimiter = config.get("topic.delimiter") or _DEFAULT_DELIMITER
    name = config.get("topic.transaction") or _DEFAULT_TRANSACTION_TOPIC
    return f"{topic_prefix}{delimiter}{name}"


# -- heartbeats --------------------------------------------------------------------------------
def heartbeat_topic(
    topic_prefix: str,
    heartbeat_topics_prefix: str = _DEFAULT_HEARTBEAT_PREFIX,
    *,
    delimiter: str = _DEFAULT_DELIMITER,
    heartbeat_topic_name: str | None = None,
) -> str:
    """The heartbeat topic (``AbstractTopicNamingStrategy.heartbeatTopic``):
    ``<topic.heartbeat.prefix>.<topic.prefix>``, by default ``__debezium-heartbeat.<prefix>``,
    unless ``topic.heartbeat.name`` (``heartbeat_topic_name``) names it outright."""
    if heartbeat_topic_name:
        return heartbeat_topic_name
    return f"{heartbeat_topics_prefix}{delimiter}{topic_prefix}"


def heartbeat(server_name: str, ts_ms: int) -> tuple[Struct, Struct]:
    """Key and value of a heartbeat record: ``{serverName}`` (the ``topic.prefix``) and
    ``{ts_ms}`` (when it was sent)."""
    return (
        Struct.of(HEARTBEAT_KEY_SCHEMA, {"serverName": server_name}),
        Struct.of(HEARTBEAT_VALUE_SCHEMA, {"ts_ms": ts_ms}),
    )


# -- data topics -------------------------------------------------------------------------------
def _valid_topic_char(c: str) -> bool:
    return c in "._-" or ("A" <= c <= "Z") or ("a" <= c <= "z") or ("0" <= c <= "9")


def _replacement(c: str) -> str:
    """``_`` for each UTF-16 unit of ``c`` (Java ``char``), as Debezium replaces them: two
    for a character outside the Basic Multilingual Plane."""
    return "__" if ord(c) > 0xFFFF else "_"


def _sanitized_topic_name(topic: str) -> str:
    """``AbstractTopicNamingStrategy.sanitizedTopicName``: every UTF-16 unit outside
    ``[a-zA-Z0-9._-]`` becomes ``_`` (so ``😀``, a surrogate pair, becomes ``__``), names are
    cut at 249 characters (of the sanitized name, which is ASCII: 249 UTF-16 units, as Java
    counts), ``.`` and ``..`` become ``_`` and ``__``."""
    if all(map(_valid_topic_char, topic)):
        sanitized = topic
    else:
        sanitized = "".join(c if _valid_topic_char(c) else _replacement(c) for c in topic)
    if len(sanitized) > _MAX_TOPIC_LENGTH:
        return sanitized[:_MAX_TOPIC_LENGTH]
    if sanitized in (".", ".."):
        return "_" * len(sanitized)
    return sanitized


def data_topic(topic_prefix: str, schema: str, table: str, *, delimiter: str = ".") -> str:
    """The topic of a table's change events, ``<prefix>.<schema>.<table>``, as Debezium's
    default ``SchemaTopicNamingStrategy`` names it: blank parts are left out, then
    characters Kafka does not allow become ``_`` and the name is cut at 249 characters. It
    is also the ``name`` of :func:`envelope_schema`."""
    parts = [part for part in (topic_prefix, schema, table) if part and not part.isspace()]
    return _sanitized_topic_name(delimiter.join(parts))
