"""Which tables a record goes to, as Apache Iceberg's ``SinkWriter.routeRecordStatically``
and ``routeRecordDynamically``, with the route field read as ``RecordUtils``'s
``extractFromRecordValue`` reads it.

- Static, no ``iceberg.tables.route-field``: every table of ``iceberg.tables``, whatever
  the record (a tombstone too).
- Static with a route field: the tables whose ``iceberg.table.<t>.route-regex`` matches the
  field's whole value; a table without a regex gets nothing.
- Dynamic: the one table the field's value names, lowercased. The table may not exist:
  Apache's writer then drops the record unless tables are auto-created (the writer's call).

A record whose value is null, or whose route value is null or missing, goes nowhere
(Apache skips it, no error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.iceberg.config import IcebergSinkConfig


def route(record: SinkRecord, config: IcebergSinkConfig) -> tuple[str, ...]:
    """The names of the tables ``record`` goes to (none: skip it). Raises
    :class:`DataException` when a route field is set and the value is neither a Struct nor
    a dict, or a dotted path crosses a value of another kind."""
    if config.dynamic_enabled:
        assert config.route_field is not None  # the config requires it with dynamic routing
        value = _route_value(record.value, config.route_field)
        return () if value is None else (value.lower(),)
    if config.route_field is None:
        return tuple(config.tables)
    value = _route_value(record.value, config.route_field)
    if value is None:
        return ()
    return tuple(
        table
        for table in config.tables
        if (regex := config.table_config(table).route_regex) is not None and regex.fullmatch(value)
    )


def _route_value(value: Any, field: str) -> str | None:
    """Apache's ``extractRouteValue``: the field's value as text (booleans as Java writes
    them), None for a null record value or a missing field."""
    if value is None:
        return None
    found = extract_from_record_value(value, field)
    if found is None:
        return None
    if isinstance(found, bool):
        return "true" if found else "false"
    return str(found)


def extract_from_record_value(value: Any, field: str) -> Any:
    """Apache's ``RecordUtils.extractFromRecordValue``: the value at the dotted path
    ``field`` in a Struct or a dict value, None where a field is missing or a parent is
    null. Raises :class:`DataException` for a value of another kind, or a parent that is
    not of the value's kind (a dict inside a Struct, or the reverse)."""
    path = field.split(".")
    if isinstance(value, Struct):
        struct = value
        for name in path[:-1]:
            inner = _struct_field(struct, name)
            if inner is None:
                return None
            if not isinstance(inner, Struct):
                raise DataException("Expected a struct type")
            struct = inner
        return _struct_field(struct, path[-1])
    if isinstance(value, Mapping):
        mapping: Mapping[str, Any] = value
        for name in path[:-1]:
            inner = mapping.get(name)
            if inner is None:
                return None
            if not isinstance(inner, Mapping):
                raise DataException("Expected a map type")
            mapping = inner
        return mapping.get(path[-1])
    raise DataException(f"Cannot extract value from type: {type(value).__name__}")


def _struct_field(struct: Struct, name: str) -> Any:
    """The field's value (its default when unset), None when the schema lacks it."""
    return None if struct.schema.field(name) is None else struct.get(name)
