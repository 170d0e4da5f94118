"""Transaction metadata (``provide.transaction.metadata``), as Debezium's core writes it
(``TransactionMonitor``, ``TransactionContext``, ``TransactionStructMaker``,
``SchemaFactory``): the ``transaction`` block of each change event, and a BEGIN record
before a transaction's first emitted event and an END record after its last one on the
transaction topic (:func:`~.topics.transaction_topic`). A transaction none of whose changes
is emitted has neither record, as in Debezium."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.source import SourceRecord

# The fields of the transaction block, as ExtractNewRecordState's add.fields reads them.
TRANSACTION_ID = "id"
TOTAL_ORDER = "total_order"
DATA_COLLECTION_ORDER = "data_collection_order"
BLOCK_FIELDS = (TRANSACTION_ID, TOTAL_ORDER, DATA_COLLECTION_ORDER)

STATUS_BEGIN = "BEGIN"
STATUS_END = "END"

TRANSACTION_BLOCK_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .optional()
    .name("event.block")
    .version(1)
    .field(TRANSACTION_ID, Schema.STRING_SCHEMA)
    .field(TOTAL_ORDER, Schema.INT64_SCHEMA)
    .field(DATA_COLLECTION_ORDER, Schema.INT64_SCHEMA)
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
    .field(TRANSACTION_ID, Schema.STRING_SCHEMA)
    .build()
)

TRANSACTION_VALUE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.TransactionMetadataValue")
    .version(1)
    .field("status", Schema.STRING_SCHEMA)
    .field(TRANSACTION_ID, Schema.STRING_SCHEMA)
    .field("event_count", Schema.OPTIONAL_INT64_SCHEMA)
    .field("data_collections", SchemaBuilder.array(TRANSACTION_EVENT_COUNT_SCHEMA).optional())
    .field("ts_ms", Schema.INT64_SCHEMA)
    .build()
)


def transaction_block(tx_id: str, total_order: int, data_collection_order: int) -> Struct:
    """The ``transaction`` block of a change event: the transaction's id, the event's
    position among all the events of the transaction and among those of its table, both
    from 1."""
    return Struct.of(
        TRANSACTION_BLOCK_SCHEMA,
        {
            TRANSACTION_ID: tx_id,
            TOTAL_ORDER: total_order,
            DATA_COLLECTION_ORDER: data_collection_order,
        },
    )


def transaction_begin(tx_id: str, ts_ms: int) -> tuple[Struct, Struct]:
    """Key and value of the BEGIN record of a transaction on the transaction topic; its
    ``event_count`` and ``data_collections`` are null."""
    key = Struct.of(TRANSACTION_KEY_SCHEMA, {TRANSACTION_ID: tx_id})
    value = Struct.of(
        TRANSACTION_VALUE_SCHEMA, {"status": STATUS_BEGIN, TRANSACTION_ID: tx_id, "ts_ms": ts_ms}
    )
    return key, value


def transaction_end(
    tx_id: str, ts_ms: int, event_count: int, counts: Mapping[str, int]
) -> tuple[Struct, Struct]:
    """Key and value of the END record of a transaction on the transaction topic:
    ``event_count`` events in all, ``counts`` by table (``"<schema>.<table>"``, as
    ``TableId`` names them), written as ``data_collections`` in ``counts``' order."""
    key = Struct.of(TRANSACTION_KEY_SCHEMA, {TRANSACTION_ID: tx_id})
    collections = [
        Struct.of(TRANSACTION_EVENT_COUNT_SCHEMA, {"data_collection": table, "event_count": count})
        for table, count in counts.items()
    ]
    value = Struct.of(
        TRANSACTION_VALUE_SCHEMA,
        {
            "status": STATUS_END,
            TRANSACTION_ID: tx_id,
            "event_count": event_count,
            "data_collections": collections,
            "ts_ms": ts_ms,
        },
    )
    return key, value


class TransactionContext:
    """The metadata of one transaction while its events are emitted (Debezium's
    ``TransactionContext``)."""

    __slots__ = ("begun", "counts", "emitted", "id", "ts_ms")

    def __init__(self, tx_id: str, ts_ms: int, begun: bool) -> None:
        self.id = tx_id
        self.ts_ms = ts_ms
        """The transaction's commit time, the ``ts_ms`` of its BEGIN record."""
        self.begun = begun
        """Its BEGIN record was emitted (before its first event; true from the start for a
        transaction resumed after its first events were stored)."""
        self.emitted = 0
        self.counts: dict[str, int] = {}


class TransactionMonitor:
    """Writes transaction metadata when ``enabled`` (Debezium's ``TransactionMonitor``):
    :meth:`event` before each emitted change event, :meth:`end` at the commit. Disabled, it
    writes nothing and events get no ``transaction`` block."""

    def __init__(self, enabled: bool, topic: str, partition: dict[str, Any]) -> None:
        self.enabled = enabled
        self.topic = topic
        self.partition = partition

    def event(
        self,
        transaction: TransactionContext,
        data_collection: str,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> Struct | None:
        """The ``transaction`` block of the next event of ``transaction`` in
        ``data_collection`` (None when disabled), after appending the transaction's BEGIN
        record (at ``offset``, the event's) to ``records`` when it is the first."""
        if not self.enabled:
            return None
        if not transaction.begun:
            transaction.begun = True
            key, value = transaction_begin(transaction.id, transaction.ts_ms)
            records.append(self._record(key, value, offset))
        transaction.emitted += 1
        counts = transaction.counts
        counts[data_collection] = order = counts.get(data_collection, 0) + 1
        return transaction_block(transaction.id, transaction.emitted, order)

    def end(
        self,
        transaction: TransactionContext,
        ts_ms: int,
        offset: dict[str, Any],
        records: list[SourceRecord],
    ) -> None:
        """Appends the END record of ``transaction`` (committed at ``ts_ms``) at ``offset``
        when its BEGIN was written."""
        if self.enabled and transaction.begun:
            key, value = transaction_end(
                transaction.id, ts_ms, transaction.emitted, transaction.counts
            )
            records.append(self._record(key, value, offset))

    def _record(self, key: Struct, value: Struct, offset: dict[str, Any]) -> SourceRecord:
        return SourceRecord(
            self.partition,
            offset,
            self.topic,
            key_schema=TRANSACTION_KEY_SCHEMA,
            key=key,
            value_schema=TRANSACTION_VALUE_SCHEMA,
            value=value,
        )
