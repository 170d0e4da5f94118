"""Partition specs from ``partition-by`` terms, as Apache Iceberg's
``SchemaUtils.createPartitionSpec``: ``col`` (identity), ``year(col)``/``years(col)``,
``month``/``months``, ``day``/``days``, ``hour``/``hours``, ``bucket(col, n)`` and
``truncate(col, w)``; nested columns named with dots. Fields are named and checked as
Iceberg's ``PartitionSpec.Builder`` names and checks them (``ts_day``, ``id_bucket``,
``s_trunc``; no two time transforms on one column; a source column of a type the transform
takes, reached through structs only).

Deliberate differences from Apache's: a term's syntax is checked without a schema
(:func:`parse_partition_field`, used by config validation), so an unknown transform, a bad
argument count, a width or bucket count that is not a positive integer, and an empty term
are refused before any table is created; spaces around a time transform's column are
trimmed (Apache's builder looks the column up untrimmed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_provider_connect.connect.errors import ConnectException

if TYPE_CHECKING:  # pyiceberg is imported to build a spec: not to validate a config
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import Transform

TRANSFORM_REGEX = re.compile(r"(\w+)\((.+)\)")
"""Apache's ``SchemaUtils.TRANSFORM_REGEX``: ``name(arguments)``, matched on the whole term."""

_TIME = {
    "year": "year",
    "years": "year",
    "month": "month",
    "months": "month",
    "day": "day",
    "days": "day",
    "hour": "hour",
    "hours": "hour",
}
"""Each time transform's names (Apache takes both forms) to its canonical one."""
_WITH_ARGUMENT = ("bucket", "truncate")


class PartitionFieldError(ConnectException):
    """A partition-by term that cannot be a partition field: its syntax, or (with a schema)
    its column or the column's type."""


@dataclass(frozen=True)
class PartitionTerm:
    """One parsed partition-by term: ``transform`` is ``identity``, ``year``, ``month``,
    ``day``, ``hour``, ``bucket`` or ``truncate``; ``argument`` is the bucket count or
    truncation width (None for the others)."""

    transform: str
    column: str
    argument: int | None = None


def parse_partition_field(text: str) -> PartitionTerm:
    """The term ``text`` (trimmed) as Apache's ``createPartitionSpec`` reads it: a whole
    ``name(arguments)`` is a transform, anything else an identity column. Raises
    :class:`PartitionFieldError` for an empty term, an unknown transform, or a
    bucket/truncate whose arguments are not a column and a positive integer."""
    term = text.strip()
    if not term:
        raise PartitionFieldError("Empty partition field")
    match = TRANSFORM_REGEX.fullmatch(term)
    if match is None:
        return PartitionTerm("identity", term)
    name, arguments = match.group(1), match.group(2)
    if name in _TIME:
        return PartitionTerm(_TIME[name], arguments.strip())
    if name not in _WITH_ARGUMENT:
        raise PartitionFieldError(f"Unsupported transform: {name}")
    parts = arguments.split(",")
    if len(parts) != 2:
        raise PartitionFieldError(f"Invalid argument {arguments}, should have 2 parts")
    column, number = parts[0].strip(), parts[1].strip()
    try:
        argument = int(number)
    except ValueError:
        raise PartitionFieldError(
            f"Invalid argument {arguments}: {number} is not an integer"
        ) from None
    if argument <= 0:
        what = "number of buckets" if name == "bucket" else "truncate width"
        raise PartitionFieldError(f"Invalid {what}: {argument} (must be > 0)")
    return PartitionTerm(name, column, argument)


def _transform(term: PartitionTerm) -> tuple[Transform[Any, Any], str]:
    """The term's transform and the suffix Iceberg's builder names its field with."""
    from pyiceberg.transforms import (
        BucketTransform,
        DayTransform,
        HourTransform,
        IdentityTransform,
        MonthTransform,
        TruncateTransform,
        YearTransform,
    )

    if term.transform == "bucket":
        assert term.argument is not None
        return BucketTransform(term.argument), "_bucket"
    if term.transform == "truncate":
        assert term.argument is not None
        return TruncateTransform(term.argument), "_trunc"
    simple: dict[str, Transform[Any, Any]] = {
        "identity": IdentityTransform(),
        "year": YearTransform(),
        "month": MonthTransform(),
        "day": DayTransform(),
        "hour": HourTransform(),
    }
    return simple[term.transform], "" if term.transform == "identity" else f"_{term.transform}"


def partition_spec(schema: Schema, fields: list[str]) -> PartitionSpec:
    """The spec of ``fields`` (partition-by terms) over ``schema``, field ids from 1000;
    unpartitioned when ``fields`` is empty. Raises :class:`PartitionFieldError` naming the
    term for a term :func:`parse_partition_field` refuses, a column the schema lacks (or
    reached through a list or map), a type the transform cannot take, a redundant time
    transform, or a field name used twice or taken by another column."""
    from pyiceberg.partitioning import PARTITION_FIELD_ID_START, PartitionField, PartitionSpec

    built: list[PartitionField] = []
    dedup: dict[tuple[int, str], str] = {}
    for text in fields:
        term = parse_partition_field(text)
        try:
            source = schema.find_field(term.column)
            schema.accessor_for_field(source.field_id)  # reached through structs alone
        except ValueError:
            raise PartitionFieldError(f"Cannot find source column: {term.column}") from None
        transform, suffix = _transform(term)
        if not transform.can_transform(source.field_type):
            raise PartitionFieldError(
                f"Invalid source type {source.field_type} for transform: {transform}"
            )
        key = (source.field_id, "time" if term.transform in _TIME.values() else str(transform))
        if key in dedup:
            raise PartitionFieldError(
                f"Cannot add redundant partition: {text.strip()} conflicts with {dedup[key]}"
            )
        dedup[key] = text.strip()
        name = term.column + suffix
        if any(f.name == name for f in built):
            raise PartitionFieldError(f"Cannot use partition name more than once: {name}")
        if term.transform != "identity" and _names_column(schema, name):
            raise PartitionFieldError(
                f"Cannot create partition from name that exists in schema: {name}"
            )
        built.append(
            PartitionField(source.field_id, PARTITION_FIELD_ID_START + len(built), transform, name)
        )
    return PartitionSpec(*built)


def _names_column(schema: Schema, name: str) -> bool:
    try:
        schema.find_field(name)
    except ValueError:
        return False
    return True
