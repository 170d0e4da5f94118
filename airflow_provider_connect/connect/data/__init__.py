"""Connect's data model: schemas, structs, logical types and schema projection.

The names of ``org.apache.kafka.connect.data``: :class:`Schema`, :class:`SchemaBuilder`,
:class:`Struct`, :class:`Field`, :class:`SchemaAndValue`, the logical types
:class:`Decimal`, :class:`Date`, :class:`Time`, :class:`Timestamp`, and
:class:`SchemaProjector`.
"""

from airflow_provider_connect.connect.data.logical import Date, Decimal, Time, Timestamp
from airflow_provider_connect.connect.data.projector import SchemaProjector
from airflow_provider_connect.connect.data.schema import (
    Field,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Type,
)
from airflow_provider_connect.connect.data.struct import Struct, validate_value

__all__ = [
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaProjector",
    "Struct",
    "Time",
    "Timestamp",
    "Type",
    "validate_value",
]
