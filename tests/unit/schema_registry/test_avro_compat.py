"""Avro's schema resolution as ``latest.compatibility.strict`` checks it: what a reader
schema cannot read of a writer's, one message per place (the field path, ``[]`` an
array's items, ``{}`` a map's values)."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.schema_registry.avro_compat import resolution_errors


def record(name: str, *fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields)}


ENUM_A = {"type": "enum", "name": "E", "symbols": ["A"]}
ENUM_AB = {"type": "enum", "name": "E", "symbols": ["A", "B"]}


@pytest.mark.parametrize(
    ("reader", "writer", "errors"),
    [
        ("long", "int", []),
        ("bytes", "string", []),
        ("int", "long", ["/: long cannot be read as int"]),
        ("string", "int", ["/: int cannot be read as string"]),
        (record("R"), {"type": "array", "items": "int"}, ["/: array cannot be read as record"]),
        ({"type": "array", "items": "int"}, record("R"), ["/: record cannot be read as array"]),
        (["null", "string"], "int", ["/: no branch of the reader's union reads int"]),
        (
            ["int", "string"],
            ["int", "boolean"],
            ["/: no branch of the reader's union reads boolean"],
        ),
        (["null", {**ENUM_AB, "name": "x.E"}], ENUM_AB, []),
        (ENUM_A, ENUM_AB, ["/: the reader's enum lacks ['B']"]),
        ({**ENUM_A, "default": "A"}, ENUM_AB, []),
        ({"type": "fixed", "name": "F", "size": 4}, {"type": "fixed", "name": "F", "size": 4}, []),
        (
            {"type": "fixed", "name": "F", "size": 4},
            {"type": "fixed", "name": "F", "size": 8},
            ["/: fixed size 8 is not 4"],
        ),
        ({"type": "map", "values": "long"}, {"type": "map", "values": "int"}, []),
        (
            {"type": "map", "values": "int"},
            {"type": "map", "values": "string"},
            ["{}: string cannot be read as int"],
        ),
        (
            {"type": "array", "items": "int"},
            {"type": "array", "items": "double"},
            ["[]: double cannot be read as int"],
        ),
        (
            record("R", {"name": "a", "type": "int"}, {"name": "n", "type": "int", "default": 0}),
            record("R", {"name": "b", "type": "int"}),
            ["/a: the reader's field has no default and the writer does not write it"],
        ),
        (
            record("R", {"name": "a", "type": "int", "aliases": ["b"]}),
            record("R", {"name": "b", "type": "string"}),
            ["/a: string cannot be read as int"],
        ),
        (  # a named type met twice is checked once
            record("R", {"name": "x", "type": ENUM_A}, {"name": "y", "type": "E"}),
            record("R", {"name": "x", "type": ENUM_AB}, {"name": "y", "type": "E"}),
            ["/x: the reader's enum lacks ['B']"],
        ),
    ],
)
def test_what_a_reader_cannot_read_of_a_writer(reader: Any, writer: Any, errors: list[str]) -> None:
    assert resolution_errors(reader, writer, []) == errors


def test_a_reader_reads_through_the_schemas_it_references() -> None:
    reader = record("R", {"name": "e", "type": "E"})
    writer = record("R", {"name": "e", "type": ENUM_AB})
    assert resolution_errors(reader, writer, [ENUM_A]) == ["/e: the reader's enum lacks ['B']"]
