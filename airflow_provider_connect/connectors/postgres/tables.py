"""A captured table as its change events carry it: the topic, the key, row and envelope
schemas, and the conversion of a row's text values (from the stream or a snapshot) into
the row's struct. Built once per table and again when the stream says its shape changed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.logical import to_logical_of
from airflow_provider_connect.connect.data.schema import Type
from airflow_provider_connect.connectors.change_capture.config import Filters
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    KEY_SUFFIX,
    VALUE_SUFFIX,
)
from airflow_provider_connect.connectors.change_capture.topics import data_topic
from airflow_provider_connect.connectors.postgres.database import TableInfo
from airflow_provider_connect.connectors.postgres.envelope import StreamedSource, envelope_schema
from airflow_provider_connect.connectors.postgres.pgoutput import (
    UNCHANGED_TOAST,
    ColumnConversion,
    tuple_reader,
)
from airflow_provider_connect.connectors.postgres.types import (
    TypeModes,
    UnsupportedType,
    column_mapping,
)

log = logging.getLogger(__name__)

_ZEROS: dict[Type, Any] = {
    Type.INT8: 0,
    Type.INT16: 0,
    Type.INT32: 0,
    Type.INT64: 0,
    Type.FLOAT32: 0.0,
    Type.FLOAT64: 0.0,
    Type.BOOLEAN: False,
    Type.STRING: "",
    Type.BYTES: b"",
}


def fallback(schema: Schema) -> Any:
    """What a column absent from an image holds (a delete's image carries only the key
    unless the table's replica identity is full): None when optional, else its default or
    the zero of its type, as Debezium fills such columns."""
    if schema.optional:
        return None
    if schema.default_value is not None:
        return schema.default_value
    if schema.type is Type.STRUCT:
        return Struct.of(schema, {f.name: fallback(f.schema) for f in schema.fields or ()})
    if schema.type is Type.ARRAY:
        return []
    if schema.type is Type.MAP:
        return {}
    to_logical = to_logical_of(schema)
    if to_logical is None:
        return _ZEROS[schema.type]
    return to_logical(b"\x00" if schema.type is Type.BYTES else _ZEROS[schema.type])


class CapturedTable:
    """One captured table. ``row`` and ``key`` take the values of a stream tuple or a
    snapshot row: every column of :class:`TableInfo`, in its order, as text or None (and
    ``UNCHANGED_TOAST`` from the stream); ``source`` makes the ``source`` blocks of its
    streamed events (``version``: the connector's; ``db``: the database's name)."""

    def __init__(
        self,
        info: TableInfo,
        topic_prefix: str,
        filters: Filters,
        modes: TypeModes,
        transaction: bool,
        placeholder: str,
        version: str,
        db: str,
    ) -> None:
        self.info = info
        self.name = f"{topic_prefix}.{info.schema}.{info.name}"
        self.topic = data_topic(topic_prefix, info.schema, info.name)
        self.source = StreamedSource(
            version=version, name=topic_prefix, db=db, schema=info.schema, table=info.name
        )
        row = SchemaBuilder.struct().name(self.name + VALUE_SUFFIX).optional()
        key = SchemaBuilder.struct().name(self.name + KEY_SUFFIX)
        self._row: list[tuple[int, Callable[[str], Any], Any, Any]] = []
        self._key: list[tuple[int, str, Callable[[str], Any]]] = []
        for index, column in enumerate(info.columns):
            wanted = filters.column(info.schema, info.name, column.name)
            if not (wanted or column.key):
                continue
            try:
                mapping = column_mapping(column.type, column.optional, modes)
            except UnsupportedType as e:
                log.warning("%s.%s is not captured: %s", info.full_name, column.name, e)
                continue
            if column.key:
                key.field(column.name, mapping.schema)
                self._key.append((index, column.name, mapping.parse))
            if wanted:
                row.field(column.name, mapping.schema)
                absent = fallback(mapping.schema)
                self._row.append(
                    (index, mapping.parse, absent, _unavailable(mapping.schema, placeholder))
                )
        self.envelope = envelope_schema(self.name, row.build(), transaction)
        self.row_schema: Schema = self.envelope.field(AFTER).schema  # type: ignore[union-attr]
        self.key_schema: Schema | None = key.build() if self._key else None
        self.full_name = info.full_name
        """``<schema>.<table>``, as transaction metadata and incremental snapshots name it."""
        in_row = [i for i, *_ in self._row]
        self._key_in_row: list[int] | None = (
            [in_row.index(i) for i, _, _ in self._key]
            if all(i in in_row for i, _, _ in self._key)
            else None
        )
        """Where each key column's value is in a row's values, when every key column is
        in the row (its value parsed once, by the same mapping); None otherwise."""
        self.reader: Callable[[bytes, int], tuple[Struct, Struct | None]] | None = None
        """Decodes a stream tuple (``pgoutput`` TupleData at an offset of a message) into
        ``(row, key)`` as :meth:`row_and_key` makes them from its texts; None when a key
        column is not in the row."""
        if self._key_in_row is not None:
            self.reader = self._reader()

    def row(self, values: tuple[Any, ...]) -> Struct:
        """The row's struct. Each value comes from its column's parser, whose results are
        of the column's schema by construction (``types.py`` checks them against it in its
        tests), so the struct is built without checking each value again."""
        return Struct._trusted(self.row_schema, self._row_values(values))

    def row_and_key(self, values: tuple[Any, ...]) -> tuple[Struct, Struct | None]:
        """``(row(values), key(values))``, each key value taken from the row's values when
        every key column is in the row, so that it is parsed once (a key column is never
        NULL; one the stream sends as an unchanged TOASTed value, which :meth:`key` cannot
        parse, gets the row's placeholder)."""
        row = self._row_values(values)
        positions = self._key_in_row
        if positions is None or self.key_schema is None:
            return Struct._trusted(self.row_schema, row), self.key(values)
        key = Struct._trusted(self.key_schema, [row[i] for i in positions])
        return Struct._trusted(self.row_schema, row), key

    def _row_values(self, values: tuple[Any, ...]) -> list[Any]:
        """The row's values, in the row schema's field order."""
        row: list[Any] = []
        append = row.append
        for index, parse, absent, unavailable in self._row:
            value = values[index]
            if value is None:
                append(absent)
            elif value is UNCHANGED_TOAST:
                append(unavailable)
            else:
                append(parse(value))
        return row

    def _reader(self) -> Callable[[bytes, int], tuple[Struct, Struct | None]]:
        """See :attr:`reader`."""
        conversions: list[ColumnConversion | None] = [None] * len(self.info.columns)
        for index, parse, absent, unavailable in self._row:
            conversions[index] = (parse, absent, unavailable)
        read = tuple_reader(conversions, [index for index, _, _ in self._key])
        row_schema, key_schema, trusted = self.row_schema, self.key_schema, Struct._trusted

        def reader(data: bytes, at: int) -> tuple[Struct, Struct | None]:
            row, key_values = read(data, at)
            key = None if key_schema is None else trusted(key_schema, key_values)
            return trusted(row_schema, row), key

        return reader

    def key(self, values: tuple[Any, ...]) -> Struct | None:
        if self.key_schema is None:
            return None
        return Struct._trusted(self.key_schema, [parse(values[i]) for i, _, parse in self._key])

    def key_text(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """The key's values as the stream and snapshots carry them (text)."""
        return tuple(values[i] for i, _, _ in self._key)

    def same_key(self, old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
        """Whether an update kept the row's key."""
        return all(old[i] == new[i] for i, _, _ in self._key)


def _unavailable(schema: Schema, placeholder: str) -> Any:
    """The value of an unchanged TOASTed column: Debezium's placeholder where the type can
    hold it, else what an absent value holds."""
    if schema.type is Type.STRING and schema.name is None:
        return placeholder
    if schema.type is Type.BYTES and schema.name is None:
        return placeholder.encode()
    if schema.type is Type.ARRAY and schema.value_schema.type is Type.STRING:  # type: ignore[union-attr]
        return [placeholder]
    return fallback(schema)
