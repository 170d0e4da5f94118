"""The records of a change-capture task's change events, whatever the database, and
Debezium's rules for which events a row change makes (``EventDispatcher`` and
``RelationalChangeRecordEmitter``): a change of a row's key is a delete, its tombstone and a
create; a delete is followed by a tombstone (a record with the key and no value, so
compaction can drop the row) with ``tombstones.on.delete``; the operations of
``skipped.operations`` make no event, and a skipped delete no tombstone either."""

from __future__ import annotations

import time
from typing import Any, Protocol

from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    FIELDS_WITH_TRANSACTION,
    OP_CREATE,
    OP_DELETE,
    OP_TRUNCATE,
    OP_UPDATE,
    envelope_value,
)

TOMBSTONE = "tombstone"
"""The tombstone that follows a delete, among :meth:`ChangeRecords.events`."""


class CapturedTable(Protocol):
    """A captured table as its records need it."""

    @property
    def topic(self) -> str: ...

    @property
    def key_schema(self) -> Schema | None: ...

    @property
    def envelope(self) -> Schema: ...


class ChangeRecords:
    """The records of one task's change events, under its source ``partition``."""

    def __init__(
        self,
        partition: dict[str, Any],
        skipped_operations: frozenset[str],
        tombstones_on_delete: bool,
    ) -> None:
        self.partition = partition
        self._events: dict[tuple[str, bool], tuple[str, ...]] = {}
        delete: tuple[str, ...] = () if OP_DELETE in skipped_operations else (OP_DELETE,)
        if delete and tombstones_on_delete:
            delete += (TOMBSTONE,)
        create = () if OP_CREATE in skipped_operations else (OP_CREATE,)
        for op, events in (
            (OP_CREATE, create),
            (OP_DELETE, delete),
            (OP_UPDATE, () if OP_UPDATE in skipped_operations else (OP_UPDATE,)),
            (OP_TRUNCATE, () if OP_TRUNCATE in skipped_operations else (OP_TRUNCATE,)),
        ):
            self._events[op, False] = events
        self._events[OP_UPDATE, True] = delete + create

    def events(self, op: str, key_changed: bool = False) -> tuple[str, ...]:
        """The events, in order, that a row change ``op`` (``c``, ``u``, ``d`` or ``t``)
        makes: op codes and :data:`TOMBSTONE`. ``key_changed``: an update that changed the
        row's key."""
        return self._events[op, key_changed]

    def record(
        self, table: CapturedTable, offset: dict[str, Any], key: Any, value: Any
    ) -> SourceRecord:
        """The record of one event of ``table``; one without a key (a truncate) has no key
        schema either, as Debezium sends it."""
        return SourceRecord(
            self.partition,
            offset,
            table.topic,
            key_schema=None if key is None else table.key_schema,
            key=key,
            value_schema=table.envelope,
            value=value,
        )

    def change(
        self,
        table: CapturedTable,
        offset: dict[str, Any],
        key: Any,
        op: str,
        source: Struct,
        *,
        before: Struct | None = None,
        after: Struct | None = None,
        transaction: Struct | None = None,
        ts_ms: int | None = None,
    ) -> SourceRecord:
        """The record of one change event of ``table``: its envelope (:func:`envelope_value`)
        of ``op`` with ``source``, the rows and the ``transaction`` block, made at ``ts_ms``
        (now when not given)."""
        value = envelope_value(
            table.envelope,
            op=op,
            source=source,
            ts_ms=int(time.time() * 1000) if ts_ms is None else ts_ms,
            before=before,
            after=after,
            transaction=transaction,
        )
        return self.record(table, offset, key, value)

    def streamed(
        self,
        table: CapturedTable,
        offset: dict[str, Any],
        key: Any,
        op: str,
        source: Struct,
        before: Struct | None,
        after: Struct | None,
        transaction: Struct | None,
        ts_ms: int,
    ) -> SourceRecord:
        """The record :meth:`change` makes of these parts at ``ts_ms``, for a streamed event
        whose parts the connector built itself from ``table``'s schemas: ``op`` one of the op
        codes, ``before`` and ``after`` of the envelope's row schema, ``source`` of its
        source schema, ``transaction`` a transaction block (None when the envelope has no
        ``transaction`` field). They are not checked again: a record of the same schemas
        and values as :meth:`change`'s, at a fraction of its cost."""
        envelope = table.envelope
        ts_us = ts_ms * 1000
        if len(envelope.fields or ()) == FIELDS_WITH_TRANSACTION:
            values = [before, after, source, transaction, op, ts_ms, ts_us, ts_us * 1000]
        else:
            values = [before, after, source, op, ts_ms, ts_us, ts_us * 1000]
        return self.record(table, offset, key, Struct._trusted(envelope, values))

    def tombstone(self, table: CapturedTable, offset: dict[str, Any], key: Any) -> SourceRecord:
        """The tombstone that follows a delete of the row ``key``."""
        return SourceRecord(
            self.partition, offset, table.topic, key_schema=table.key_schema, key=key
        )
