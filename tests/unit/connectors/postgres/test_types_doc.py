"""docs/postgres-cdc.md's table of column types against connectors/postgres/types.py, both
ways: every type the table names maps to the schema it states, in the default modes and in
each mode it names (and no other mode changes it), and every type the connector maps is in
the table."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connectors.postgres.types import (
    MAPPED_TYPES,
    MODES,
    PgType,
    TypeModes,
    UnsupportedType,
    column_mapping,
)

DOC = Path(__file__).resolve().parents[4] / "docs" / "postgres-cdc.md"
HEADER = "| PostgreSQL | Connect schema (default modes) | other modes |"
DEFAULT = TypeModes()

TOKEN = re.compile(r"`([^`]+)`")
SPAN = re.compile(r"`(\w+)\((\d+)\)`…`\1\((\d+)\)`")
"""``time(0)``…``time(3)``: each precision of the span."""
SPELLING = re.compile(r'("?)(\w+)\1(?:\(([^)]*)\))?')
LABEL = re.compile(r"[A-Z][A-Z0-9]*(<.*>)?|[a-z]+(\.[a-z]+)*\.[A-Z]\w*|…[A-Z]\w*|[A-Z][a-z]\w*")
"""A schema as the table writes it: a Connect type (``INT64``, ``MAP<…>``), a full schema
name, ``…Xml`` (the previous name's package), or a name's last part (``Decimal``)."""
CONNECT = "org.apache.kafka.connect.data."
EXAMPLE = {"n": 5, "p": 3, "s": 2}
"""A value for each letter the table writes as a modifier (``char(n)``, ``numeric(p, s)``)."""


def rows() -> list[list[str]]:
    lines = DOC.read_text().splitlines()
    start = lines.index(HEADER) + 2
    found = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        found.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return found


def without_parentheses(text: str) -> str:
    while (shorter := re.sub(r"\([^()]*\)", "", text)) != text:
        text = shorter
    return text


def pg_type(spelling: str) -> PgType:
    """A type as the table spells it: its typname (``"char"`` quoted; ``char(n)`` is
    ``bpchar``), with the modifier its arguments give."""
    match = SPELLING.fullmatch(spelling)
    assert match is not None, spelling
    quoted, name, arguments = match.groups()
    if arguments is None:
        return PgType(name)
    values = [EXAMPLE.get(a.strip()) or int(a) for a in arguments.split(",")]
    if name == "char" and not quoted:
        name = "bpchar"
    if name == "numeric":
        return PgType(name, ((values[0] << 16) | values[1]) + 4)
    return PgType(name, values[0] + 4 if name in ("bpchar", "varchar") else values[0])


def documented_types(cell: str) -> list[list[PgType]]:
    """The ``;``-separated groups of types of a row's first cell."""
    spans = SPAN.sub(
        lambda m: ", ".join(f"`{m[1]}({p})`" for p in range(int(m[2]), int(m[3]) + 1)), cell
    )
    return [[pg_type(t) for t in TOKEN.findall(group)] for group in spans.split(";")]


def full_names() -> set[str]:
    return {
        token
        for row in rows()
        for cell in row[1:]
        for token in TOKEN.findall(cell)
        if LABEL.fullmatch(token) and "." in token and not token.startswith("…")
    }


def labels(text: str, names: set[str], previous: str = "") -> list[str]:
    """The schemas a part of a cell states, each as :func:`label` gives a schema's
    (``previous``: the last full name before it in the cell)."""
    text = re.sub(r"Connect's `(\w+)`", lambda m: f"`{CONNECT}{m[1]}`", text)
    text = re.sub(r"`[A-Z0-9]+` named ", "", text)
    found: list[str] = []
    for token in TOKEN.findall(text):
        if not LABEL.fullmatch(token):
            continue
        if token.startswith("…"):
            token = f"{previous.rpartition('.')[0]}.{token[1:]}"
        elif token[1:2].islower() and "." not in token:  # a name's last part
            (token,) = (n for n in names if n.endswith(f".{token}"))
        elif "." not in token:
            token = token.partition("<")[0]  # MAP<STRING, optional STRING>: a MAP
        previous = token if "." in token else previous
        found.append(token)
    return found


def label(schema: Schema) -> str:
    return schema.name or schema.type.name


def stated(cell: str, names: set[str]) -> list[list[str]]:
    """The ``;``-separated groups of schemas of a row's second cell (groups stating none,
    such as a remark on ``varbit``, left out)."""
    groups: list[list[str]] = []
    previous = ""
    for group in without_parentheses(cell).split(";"):
        found = labels(group, names, previous)
        previous = next((n for n in reversed(found) if "." in n), previous)
        groups += [found] if found else []
    return groups


def other_modes(cell: str, names: set[str], above: dict[str, str] | None) -> dict[str, str] | None:
    """The third cell: each mode it names with the schema it states; None for "every mode"
    (no mode changes the type's schema), the row above's for "as above"."""
    text = without_parentheses(cell).strip()
    if text == "every mode":
        return None
    if text == "as above":
        assert above is not None
        return above
    modes: dict[str, str] = {}
    for group in filter(None, (g.strip() for g in text.split(";"))):
        head, _, tail = group.partition(":")
        (schema,) = labels(tail, names)
        modes.update(dict.fromkeys(TOKEN.findall(head), schema))
    return modes


def mode_changes(t: PgType) -> dict[str, set[str]]:
    """Each mode value other than a default, with the schemas ``t`` maps to with it (the
    table names a mode by its value alone: ``string`` is a ``decimal.handling.mode`` and an
    ``interval.handling.mode``)."""
    changes: dict[str, set[str]] = {}
    for attribute, (_key, allowed) in MODES.items():
        for value in allowed[1:]:
            modes = replace(DEFAULT, **{attribute: value})
            changes.setdefault(value, set()).add(label(column_mapping(t, False, modes).schema))
    return changes


def pair(types: list[list[PgType]], schemas: list[list[str]]) -> Iterator[tuple[PgType, str]]:
    """Each type beside its stated schema: group by group (or every group beside a single
    one), then in order within a group (or every type beside a group's single schema)."""
    if len(schemas) == 1:
        types = [[t for g in types for t in g]]
    assert len(types) == len(schemas), (types, schemas)
    for group, stated_schemas in zip(types, schemas, strict=True):
        if len(stated_schemas) == 1:
            stated_schemas = stated_schemas * len(group)
        yield from zip(group, stated_schemas, strict=True)


def check_enum(cell: str) -> None:
    t = PgType("mood", kind="e", enum_values=("sad", "ok"))
    schema = column_mapping(t, False, DEFAULT).schema
    assert label(schema) == "io.debezium.data.Enum"
    assert schema.parameters == {"allowed": "sad,ok"}


def check_domain(cell: str) -> None:
    for base in (PgType("int4"), PgType("numeric", ((8 << 16) | 2) + 4)):
        domain = PgType("d", kind="d", base=base)
        assert column_mapping(domain, False, DEFAULT).schema == (
            column_mapping(base, False, DEFAULT).schema
        )


def check_arrays(cell: str) -> None:
    for name in sorted(MAPPED_TYPES):
        element = PgType(name)
        schema = column_mapping(PgType(f"_{name}", element=element), False, DEFAULT).schema
        assert label(schema) == "ARRAY"
        assert schema.value_schema == column_mapping(element, True, DEFAULT).schema
    enum = PgType("mood", kind="e", enum_values=("a",))
    array = column_mapping(PgType("_mood", element=enum), False, DEFAULT).schema
    assert not array.value_schema.optional  # an enum array's elements are required


def check_left_out(cell: str) -> None:
    named = [pg_type(t) for t in TOKEN.findall(cell)]
    assert named
    for t in [*named, PgType("c", kind="c"), PgType("r", kind="r")]:
        with pytest.raises(UnsupportedType):
            column_mapping(t, True, DEFAULT)


SPECIAL: dict[str, Callable[[str], None]] = {
    "an enum": check_enum,
    "a domain": check_domain,
    "arrays of the above": check_arrays,
    "composite types, other ranges": check_left_out,
}
"""The rows that name kinds of types rather than types, and the types left out, by the start
of their first cell, each with its check (given that cell)."""


def test_every_documented_type_maps_as_documented_and_every_mapped_type_is_documented() -> None:
    names = full_names()
    documented: set[str] = set()
    above: dict[str, str] | None = None
    checked_special = set()
    for first, default, others in rows():
        special = next((k for k in SPECIAL if first.startswith(k)), None)
        if special is not None:
            SPECIAL[special](first)
            checked_special.add(special)
            continue
        modes = other_modes(others, names, above)
        above = modes
        for t, schema in pair(documented_types(first), stated(default, names)):
            documented.add(t.name)
            assert label(column_mapping(t, False, DEFAULT).schema) == schema, (first, t)
            for value, mapped in mode_changes(t).items():
                if modes is None or value not in modes:
                    assert mapped == {schema}, (f"{value} is not documented", t)
                else:
                    assert modes[value] in mapped <= {modes[value], schema}, (value, t)
    assert checked_special == set(SPECIAL)
    assert documented == MAPPED_TYPES
