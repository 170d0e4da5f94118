"""The record shapes of Debezium's PostgreSQL connector over the change-capture core's
envelope (:mod:`~airflow_provider_connect.connectors.change_capture.envelope`): its ``source``
block, :data:`SOURCE_SCHEMA` (``io.debezium.connector.postgresql.Source``) and
:func:`source_struct`, with :func:`source_sequence` for its ``sequence`` and
:class:`StreamedSource` for the blocks of streamed events; :func:`envelope_schema` over that
block; PostgreSQL's ``<xid>:<lsn>`` transaction ids (:func:`transaction_id`); the key and
value schemas of logical decoding messages (:data:`MESSAGE_KEY_SCHEMA`,
:func:`message_value_schema`).

Each is built as Debezium's current code builds it (schema names, versions, field order,
optionality); the Java class each comes from is named where it is defined.

Deliberate differences from Debezium:

* ``source.version`` is whatever the caller passes, meant to be this project's version
  (``airflow_provider_connect.__version__``), not a Debezium release.
* The ``source`` block is checked as it is built (:meth:`Struct.of`): a value of the wrong
  type or a ``snapshot`` outside the Enum's allowed values raises :class:`DataException`
  where Debezium would write it.
"""

from __future__ import annotations

from collections.abc import Callable

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connectors.change_capture import envelope as core
from airflow_provider_connect.connectors.change_capture.envelope import (
    SNAPSHOT_FALSE,
    SNAPSHOT_INCREMENTAL,
    source_schema_builder,
    source_values,
)
from airflow_provider_connect.connectors.change_capture.transactions import (
    TRANSACTION_BLOCK_SCHEMA,
)

# The value of source.connector (PostgresConnector's Module.name()).
CONNECTOR = "postgresql"

# -- source: SchemaFactory.sourceInfoSchemaBuilder() + PostgresSourceInfoStructMaker ---------
SOURCE_SCHEMA: Schema = (
    source_schema_builder("io.debezium.connector.postgresql.Source")
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


# -- source ------------------------------------------------------------------------------------
def source_sequence(last_commit_lsn: int | None, lsn: int | None) -> str:
    """The ``source.sequence`` of PostgreSQL events, as ``SourceInfo.sequence()`` writes it:
    a JSON array of two strings, the LSN of the last committed transaction and the LSN of
    the event, each the decimal of the LSN as a 64-bit integer or null when unknown
    (``["22910216","22910504"]``, ``[null,"22910504"]``; Jackson's compact output)."""
    # digits only: no escaping (json.dumps costs 10 µs); one f-string in the usual case
    if last_commit_lsn is not None and lsn is not None:
        return f'["{last_commit_lsn}","{lsn}"]'
    first = "null" if last_commit_lsn is None else f'"{last_commit_lsn}"'
    second = "null" if lsn is None else f'"{lsn}"'
    return f"[{first},{second}]"


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
    * ``snapshot``: one of the core's ``SNAPSHOT_VALUES`` (``"true"``, ``"first"``,
      ``"last"``, … in a snapshot, ``"false"`` while streaming, ``"incremental"`` in an
      incremental snapshot). As Debezium (``SnapshotRecord.toSource``), ``"false"`` is left unset:
      :meth:`Struct.get` and the converters read the schema's default ``"false"``.
    * ``sequence``: for PostgreSQL a JSON array of two LSN strings, the last committed LSN
      and the event's LSN: see :func:`source_sequence`.
    * ``tx_id``, ``lsn``, ``xmin``: the transaction id (xid), the event's LSN as a 64-bit
      integer and the slot's xmin; left out, as in Debezium, for ``"incremental"`` events.
    * ``origin``, ``origin_lsn``: the replication origin of the transaction and its LSN
      there, when the transaction came from another server (Debezium's newest fields).

    Raises :class:`DataException` on a value of the wrong type or an unknown ``snapshot``.
    """
    values = source_values(
        version=version,
        connector=CONNECTOR,
        name=name,
        ts_ms=ts_ms,
        snapshot=snapshot,
        db=db,
        sequence=sequence,
        ts_us=ts_us,
        ts_ns=ts_ns,
    )
    if snapshot == SNAPSHOT_INCREMENTAL:
        tx_id = lsn = xmin = None
    return Struct.of(
        SOURCE_SCHEMA,
        {
            **values,
            "schema": schema,
            "table": table,
            "txId": tx_id,
            "lsn": lsn,
            "xmin": xmin,
            "origin": origin,
            "origin_lsn": origin_lsn,
        },
    )


_STREAMED_LAYOUT = (
    "version",
    "connector",
    "name",
    "ts_ms",
    "snapshot",
    "db",
    "sequence",
    "ts_us",
    "ts_ns",
    "schema",
    "table",
    "txId",
    "lsn",
    "xmin",
    "origin",
    "origin_lsn",
)
"""The fields of :data:`SOURCE_SCHEMA` in order, as :class:`StreamedSource` lays out its
blocks' values (checked against the schema when the module loads)."""
if tuple(f.name for f in SOURCE_SCHEMA.fields or ()) != _STREAMED_LAYOUT:
    raise AssertionError("SOURCE_SCHEMA's fields are not those StreamedSource lays out")


class StreamedSource:
    """The ``source`` blocks of one table's streamed events (``snapshot`` ``"false"``), as
    :func:`source_struct` builds them: what every event of the table shares is built and
    checked once, and :meth:`block` lays out each event's values in one list around it."""

    __slots__ = ("block",)

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
        self.block: Callable[[int, int, int, int | None], Struct] = _blocks(shared)
        """``block(ts_us, tx_id, lsn, last_commit_lsn)``: the block of an event at ``lsn``
        in transaction ``tx_id`` committed at ``ts_us`` (µs since the epoch): ``ts_ms``,
        ``ts_us`` and ``ts_ns`` as :func:`source_struct` derives them, ``sequence`` from
        :func:`source_sequence`. The arguments are the decoder's unsigned integers, within
        the int64 fields' range; each block is a new struct."""


def _blocks(shared: Struct) -> Callable[[int, int, int, int | None], Struct]:
    """See :attr:`StreamedSource.block`: ``shared``'s values around each event's."""
    get = shared.get_without_default
    version, connector, name, snapshot, db = (
        get(f) for f in ("version", "connector", "name", "snapshot", "db")
    )
    schema, table, xmin, origin, origin_lsn = (
        get(f) for f in ("schema", "table", "xmin", "origin", "origin_lsn")
    )
    source_schema, trusted = shared.schema, Struct._trusted

    def block(ts_us: int, tx_id: int, lsn: int, last_commit_lsn: int | None) -> Struct:
        return trusted(
            source_schema,
            [
                version,
                connector,
                name,
                ts_us // 1000,
                snapshot,
                db,
                source_sequence(last_commit_lsn, lsn),
                ts_us,
                ts_us * 1000,
                schema,
                table,
                tx_id,
                lsn,
                xmin,
                origin,
                origin_lsn,
            ],
        )

    return block


# -- envelope ----------------------------------------------------------------------------------
def envelope_schema(name: str, row_schema: Schema, transaction: bool) -> Schema:
    """The value schema of the change events of one table over PostgreSQL's ``source``
    block: :func:`~airflow_provider_connect.connectors.change_capture.envelope.envelope_schema`
    with :data:`SOURCE_SCHEMA`."""
    return core.envelope_schema(name, row_schema, SOURCE_SCHEMA, transaction)


# -- transaction metadata ----------------------------------------------------------------------
def transaction_id(xid: int, lsn: int) -> str:
    """A transaction's id in PostgreSQL's transaction metadata (``PostgresTransactionMonitor``):
    ``<xid>:<lsn>``, the LSN (as a 64-bit integer) being the last one the connector has seen
    when it writes the record (the offset's ``lsn``)."""
    return f"{xid}:{lsn}"


# -- logical decoding messages (pg_logical_emit_message) ----------------------------------------
# LogicalDecodingMessageMonitor and PostgresSchemaFactory: the records of messages go to
# <topic.prefix>.message, keyed by their prefix.
MESSAGE_TOPIC_SUFFIX = ".message"
MESSAGE = "message"
MESSAGE_PREFIX = "prefix"
MESSAGE_CONTENT = "content"
MESSAGE_DATA_COLLECTION = "LOGICAL_DECODING_MESSAGE"
"""The data collection of messages in transaction metadata (``LogicalDecodingMessageId``)."""
MESSAGE_VALUE_SCHEMA_NAME = "io.debezium.connector.postgresql.MessageValue"

MESSAGE_KEY_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.postgresql.MessageKey")
    .version(1)
    .field(MESSAGE_PREFIX, Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


def message_value_schema(content_schema: Schema) -> Schema:
    """The value schema of message records (``MessageValue``, version 1): ``op`` (``m``),
    ``ts_ms`` (when the connector processed the message), ``source``, ``transaction`` and
    ``message`` (the struct ``io.debezium.connector.postgresql.Message``: ``prefix`` and
    ``content`` of ``content_schema``, optional bytes or the ``binary.handling.mode``'s
    string)."""
    block = (
        SchemaBuilder.struct()
        .name("io.debezium.connector.postgresql.Message")
        .version(1)
        .field(MESSAGE_PREFIX, Schema.OPTIONAL_STRING_SCHEMA)
        .field(MESSAGE_CONTENT, content_schema)
        .build()
    )
    return (
        SchemaBuilder.struct()
        .name(MESSAGE_VALUE_SCHEMA_NAME)
        .version(1)
        .field(core.OPERATION, Schema.STRING_SCHEMA)
        .field(core.TIMESTAMP, Schema.OPTIONAL_INT64_SCHEMA)
        .field(core.SOURCE, SOURCE_SCHEMA)
        .field(core.TRANSACTION, TRANSACTION_BLOCK_SCHEMA)
        .field(MESSAGE, block)
        .build()
    )
