"""A captured MySQL or MariaDB table as its change events carry it: the topic, the key, row
and envelope schemas, and the conversion of a row (a snapshot query's tuple from PyMySQL, or a
row event's dict from pymysqlreplication) into the row's struct. Built once per table and
again when its shape changes (a DDL on it, or a TABLE_MAP whose columns differ).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping as MappingType
from collections.abc import Sequence
from typing import Any

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connectors.change_capture.config import Filters
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    KEY_SUFFIX,
    VALUE_SUFFIX,
    envelope_schema,
)
from airflow_provider_connect.connectors.change_capture.topics import data_topic
from airflow_provider_connect.connectors.mysql.types import (
    Column,
    Convert,
    TypeModes,
    UnsupportedType,
    column_mapping,
)

log = logging.getLogger(__name__)

EMPTY_SET = "empty set"
"""pymysqlreplication's ``none_sources`` reason for a SET value with no member (its value is
None; Debezium's is ``""``)."""


class CapturedTable:
    """One captured table of database ``db``. ``columns`` are all the table's columns in
    their order (a snapshot row has a value for each); the row struct has those the column
    filters keep, the key struct the ``key_columns`` (in that order; none: no key).

    ``source_schema`` is the ``source`` block's schema of the connector's flavor
    (``envelope.source_schema``). A column of a type with no mapping is left out of the
    events, with a warning (a key column of such a type raises :class:`UnsupportedType`)."""

    def __init__(
        self,
        db: str,
        table: str,
        columns: Sequence[Column],
        key_columns: Sequence[str],
        topic_prefix: str,
        filters: Filters,
        modes: TypeModes,
        transaction: bool,
        source_schema: Schema,
    ) -> None:
        self.db = db
        self.table = table
        self.columns = tuple(columns)
        self.key_columns = tuple(key_columns)
        self.name = f"{topic_prefix}.{db}.{table}"
        self.topic = data_topic(topic_prefix, db, table)
        positions = {column.name: i for i, column in enumerate(self.columns)}
        row = SchemaBuilder.struct().name(self.name + VALUE_SUFFIX).optional()
        # (position, name, snapshot conversion, binlog conversion, absent value)
        self._row: list[tuple[int, str, Convert, Convert, Any]] = []
        for index, column in enumerate(self.columns):
            if not filters.column(db, table, column.name):
                continue
            try:
                mapping = column_mapping(column, modes)
            except UnsupportedType as e:
                log.warning("%s.%s.%s is not captured: %s", db, table, column.name, e)
                continue
            row.field(column.name, mapping.schema)
            self._row.append(
                (index, column.name, mapping.from_snapshot, mapping.from_binlog, mapping.absent)
            )
        key = SchemaBuilder.struct().name(self.name + KEY_SUFFIX)
        self._key: list[tuple[int, str, Convert, Convert, Any]] = []
        for name in self.key_columns:
            index = positions[name]
            mapping = column_mapping(self.columns[index], modes)
            key.field(name, mapping.schema)
            self._key.append(
                (index, name, mapping.from_snapshot, mapping.from_binlog, mapping.absent)
            )
        self.envelope = envelope_schema(self.name, row.build(), source_schema, transaction)
        self.row_schema: Schema = self.envelope.field(AFTER).schema  # type: ignore[union-attr]
        self.key_schema: Schema | None = key.build() if self._key else None

    def snapshot_row(self, values: tuple[Any, ...]) -> Struct:
        """The row struct of a snapshot query's row (PyMySQL's values of every column, in
        the columns' order). Each value comes from its column's conversion, whose results
        are of the column's schema by construction (types.py's tests check them), so the
        struct is built without checking each value again."""
        row: list[Any] = []
        append = row.append
        for index, _, convert, _, absent in self._row:
            value = values[index]
            if value is not None:
                value = convert(value)
            append(absent if value is None else value)
        return Struct._trusted(self.row_schema, row)

    def snapshot_key(self, values: tuple[Any, ...]) -> Struct | None:
        """The key struct of a snapshot row (None when the table has no key)."""
        if self.key_schema is None:
            return None
        key = []
        for index, _, convert, _, absent in self._key:
            value = values[index]
            if value is not None:
                value = convert(value)
            key.append(absent if value is None else value)
        return Struct._trusted(self.key_schema, key)

    def binlog_row(
        self, values: MappingType[str, Any], none_sources: MappingType[str, str] | None = None
    ) -> Struct:
        """The row struct of a row event's image (``row["values"]``, or an update's
        ``before_values`` / ``after_values``). ``none_sources`` (the image's
        ``none_sources``) tells an empty SET (``""``) from NULL; without it an empty SET of
        a nullable column is null."""
        row: list[Any] = []
        append = row.append
        for _, name, _, convert, absent in self._row:
            value = values.get(name)
            if value is not None:
                value = convert(value)
            elif none_sources and none_sources.get(name) == EMPTY_SET:
                value = ""
            append(absent if value is None else value)
        return Struct._trusted(self.row_schema, row)

    def binlog_key(self, values: MappingType[str, Any]) -> Struct | None:
        """The key struct of a row event's image (None when the table has no key)."""
        if self.key_schema is None:
            return None
        key = []
        for _, name, _, convert, absent in self._key:
            value = values.get(name)
            if value is not None:
                value = convert(value)
            key.append(absent if value is None else value)
        return Struct._trusted(self.key_schema, key)

    def same_key(self, before: MappingType[str, Any], after: MappingType[str, Any]) -> bool:
        """Whether an update's images (pymysqlreplication's dicts) have the same key."""
        return all(before.get(name) == after.get(name) for _, name, _, _, _ in self._key)
