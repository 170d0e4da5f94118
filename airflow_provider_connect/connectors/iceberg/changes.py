"""What a record does to an upsert table: a change stream's event read as an upsert, a delete
or a truncate of rows identified by the table's id columns.

Read alike from the shapes a Debezium-compatible stream takes on its way here:

- the raw envelope (a struct named ``….Envelope`` with ``op``, ``before`` and ``after``):
  ``c``, ``r`` and ``u`` upsert ``after``; ``d`` deletes ``before`` (else the key); ``t``
  truncates; ``m`` (a logical decoding message) changes no row;
- after ``ExtractNewRecordState``: the row itself, deleted when it carries ``__deleted`` =
  ``"true"`` (``delete.handling.mode=rewrite``), or the tombstone (a null value) that follows
  a delete, whose key names the row;
- Tabular's ``iceberg.tables.cdc-field``: a field of the row (dotted for a nested one) whose
  value starts with ``D`` or ``d`` for a delete (Tabular's ``I``/``U``/``D``, and Debezium's
  ``c``/``r``/``u``/``d`` of ``add.fields=op``), anything else an upsert.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    BEFORE,
    ENVELOPE_SUFFIX,
    OP_DELETE,
    OP_MESSAGE,
    OP_TRUNCATE,
    OPERATION,
)

DELETED_FIELD = "__deleted"
"""The field ``ExtractNewRecordState`` adds with ``delete.handling.mode=rewrite``."""


class Op(Enum):
    UPSERT = "upsert"
    DELETE = "delete"
    TRUNCATE = "truncate"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Change:
    """``row`` is the value whose id columns name the row (and, for an upsert, its new
    content); None for a truncate or a change of no row."""

    op: Op
    row: Any


def is_envelope(value: Any) -> bool:
    """Whether ``value`` is a Debezium change event's envelope."""
    if not isinstance(value, Struct):
        return False
    name = value.schema.name or ""
    return name.endswith(ENVELOPE_SUFFIX) and value.schema.field(OPERATION) is not None


def field_value(value: Any, path: str) -> Any:
    """The value at the dotted ``path`` of a Struct or a dict; None when a part is absent."""
    for part in path.split("."):
        if value is None:
            return None
        if isinstance(value, Struct):
            value = value.get(part) if value.schema.field(part) is not None else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def change_of(record: SinkRecord, cdc_field: str | None) -> Change:
    """The change ``record`` makes; see the module docstring."""
    value = record.value
    if value is None:
        return Change(Op.DELETE, record.key) if record.key is not None else Change(Op.NONE, None)
    if is_envelope(value):
        op = value.get(OPERATION)
        if op == OP_DELETE:
            before = value.get(BEFORE)
            return Change(Op.DELETE, before if before is not None else record.key)
        if op == OP_TRUNCATE:
            return Change(Op.TRUNCATE, None)
        if op == OP_MESSAGE:
            return Change(Op.NONE, None)
        return Change(Op.UPSERT, value.get(AFTER))
    if cdc_field:
        op = field_value(value, cdc_field)
        if isinstance(op, str) and op[:1] in ("D", "d"):
            return Change(Op.DELETE, value)
        return Change(Op.UPSERT, value)
    if str(field_value(value, DELETED_FIELD)).lower() == "true":
        return Change(Op.DELETE, value)
    return Change(Op.UPSERT, value)
