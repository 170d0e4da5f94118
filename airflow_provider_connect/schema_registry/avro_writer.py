"""Avro's binary encoding of Connect values, compiled once per schema.

A writer is built from a Connect schema and the Avro schema :class:`~.avro_data.AvroData`
made of it (their shapes match by construction): per field, per branch, a function that
appends a value's bytes to a ``bytearray``, with what the Avro schema fixes (union
branches, enum symbols, fixed sizes) resolved up front. The bytes are Avro's (zig-zag
varints, length-prefixed strings and bytes, little-endian IEEE 754 floats, blocks for
arrays and maps): the same bytes fastavro writes from the same data, without its generic
walk of the schema per value, and without a dict per struct. Values it cannot write raise
``TypeError``, ``ValueError``, ``KeyError`` or ``DataException``; the converter reports
them as data errors.
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from typing import Any

from airflow_provider_connect.connect.data.logical import LOGICAL_TYPES, from_logical_of
from airflow_provider_connect.connect.data.schema import Schema, Type
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.schema_registry.avro_data import (
    AVRO_TYPE_UNION,
    accepted_schemas,
    field_default,
    fixed_encoder,
)
from airflow_provider_connect.schema_registry.avro_names import AvroNames

Write = Callable[[bytearray, Any], None]
"""Appends the Avro bytes of a non-null value (None for a union's null branch)."""

_FLOAT = _struct.Struct("<f").pack
_DOUBLE = _struct.Struct("<d").pack


def write_long(out: bytearray, value: int) -> None:
    """An int or long: zig-zag, then a varint of 7-bit groups, low first."""
    n = (value << 1) ^ (value >> 63)
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _write_string(out: bytearray, value: str) -> None:
    data = value.encode()
    n = len(data) << 1
    if n > 0x7F:
        write_long(out, len(data))
    else:
        out.append(n)
    out += data


def _write_bytes(out: bytearray, value: bytes) -> None:
    write_long(out, len(value))
    out += value


def _write_boolean(out: bytearray, value: bool) -> None:
    if value is not True and value is not False:
        raise TypeError(f"a boolean, not {type(value).__name__}")
    out.append(1 if value else 0)


def _write_float(out: bytearray, value: float) -> None:
    out += _FLOAT(value)


def _write_double(out: bytearray, value: float) -> None:
    out += _DOUBLE(value)


def _write_int(out: bytearray, value: int) -> None:
    if type(value) is not int:
        raise TypeError(f"an int, not {type(value).__name__}")
    write_long(out, value)


_BASIC: dict[str, Write] = {
    "boolean": _write_boolean,
    "int": _write_int,
    "long": _write_int,
    "float": _write_float,
    "double": _write_double,
    "bytes": _write_bytes,
    "string": _write_string,
}


def compile_writer(schema: Schema, avro: Any, ignore_default_for_nullables: bool) -> Write:
    """The writer of values of ``schema`` in the Avro schema ``avro`` (AvroData's)."""
    return _Compiler(AvroNames(avro), ignore_default_for_nullables).writer(schema, avro)


class _Compiler:
    def __init__(self, types: AvroNames, ignore_default_for_nullables: bool) -> None:
        self.types = types
        self.ignore_defaults = ignore_default_for_nullables

    def writer(self, schema: Schema, avro: Any) -> Write:
        node = self.types.resolve(avro, None)
        if isinstance(node, list):
            return self._union(schema, node)
        kind = node["type"]
        logical = from_logical_of(schema)
        if kind == "record":
            write = self._record(schema, node)
        elif kind == "enum":
            index = {symbol: i for i, symbol in enumerate(node["symbols"])}
            write = lambda out, v: write_long(out, index[v])  # noqa: E731
        elif kind == "fixed":
            to_bytes = fixed_encoder(schema, node["size"])  # its logical conversion included
            return lambda out, v: out.extend(to_bytes(v))
        elif kind == "array" and schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            entry = self.types.resolve(node["items"], None)
            fields = {f["name"]: f["type"] for f in entry["fields"]}
            write = _entries(
                self.writer(schema.key_schema, fields["key"]),
                self.writer(schema.value_schema, fields["value"]),
            )
        elif kind == "array":
            assert schema.value_schema is not None
            write = _array(self.writer(schema.value_schema, node["items"]))
        elif kind == "map":
            assert schema.value_schema is not None
            write = _entries(_write_string, self.writer(schema.value_schema, node["values"]))
        else:
            write = _BASIC[kind]
        if logical is None:
            return write
        base = write
        return lambda out, v: base(out, logical(v))

    def _record(self, schema: Schema, node: dict[str, Any]) -> Write:
        """A struct's writer, its code generated for the schema: a field of a primitive type
        (or an optional one) is written in line, any other through its own writer, in field
        order; a null field takes its schema's default, as ``Struct.get`` reads it. (One
        function per struct schema, without a call or a lookup per field: the per-record cost
        that matters most on the source path.)"""
        assert schema.fields is not None
        namespace: dict[str, Any] = {
            "accepted": accepted_schemas(schema),
            "DataException": DataException,
            "DOUBLE": _DOUBLE,
            "FLOAT": _FLOAT,
        }
        names = "".join(f"v{f.index}, " for f in schema.fields)
        lines = [
            "def write(out, value):",
            "    if value.schema not in accepted:",
            "        raise DataException('Mismatching struct schema')",
            f"    ({names}) = value._values",
            "    append = out.append",
        ]
        for f, avro_field in zip(schema.fields, node["fields"], strict=True):
            value = f"v{f.index}"
            default = field_default(f.schema, self.ignore_defaults)
            if default is not None:
                namespace[f"default{f.index}"] = default
                lines.append(f"    if {value} is None: {value} = default{f.index}")
            code = self._inline(f.schema, avro_field["type"], value, f"write{f.index}", namespace)
            lines += ["    " + line for line in code]
        exec("\n".join(lines), namespace)  # no schema text in the code: variables v0, v1, ...
        write: Write = namespace["write"]
        return write

    def _inline(
        self, schema: Schema, avro: Any, value: str, name: str, namespace: dict[str, Any]
    ) -> list[str]:
        """The lines writing ``value`` (a variable) of ``schema``: in line for a primitive
        or an optional one, else a call of its writer, put in ``namespace`` as ``name``."""
        node = self.types.resolve(avro, None)
        logical = (schema.name or "") in LOGICAL_TYPES
        kind = node.get("type") if isinstance(node, dict) else None
        if not logical and kind in _INLINE:
            return _INLINE[kind](value)
        if not logical and isinstance(node, list) and len(node) == 2 and "null" in node:
            index = 1 - node.index("null")
            other = self.types.resolve(node[index], None)
            if isinstance(other, dict) and other.get("type") in _INLINE:
                return [
                    f"if {value} is None:",
                    f"    append({node.index('null') << 1})",
                    "else:",
                    f"    append({index << 1})",
                    *("    " + line for line in _INLINE[other["type"]](value)),
                ]
        namespace[name] = self.writer(schema, avro)
        return [f"{name}(out, {value})"]

    def _union(self, schema: Schema, branches: list[Any]) -> Write:
        nulls = [i for i, b in enumerate(branches) if b == "null"]
        null = nulls[0] << 1 if nulls else None
        if schema.type is Type.STRUCT and schema.name == AVRO_TYPE_UNION:
            members = [b for b in enumerate(branches) if b[1] != "null"]
            assert schema.fields is not None
            choices = [
                (f.index, index << 1, self.writer(f.schema, branch))
                for f, (index, branch) in zip(schema.fields, members, strict=True)
            ]

            def write_union(out: bytearray, value: Any) -> None:
                if value is not None:
                    for field_index, code, branch_write in choices:
                        member = value._values[field_index]
                        if member is not None:
                            out.append(code)
                            branch_write(out, member)
                            return
                if null is None:
                    raise DataException("A union without a null branch got no value")
                out.append(null)

            return write_union
        index, branch = next((i, b) for i, b in enumerate(branches) if b != "null")
        code = index << 1
        inner = self.writer(schema, branch)

        def write_optional(out: bytearray, value: Any) -> None:
            if value is None:
                if null is None:
                    raise DataException("null for a union without a null branch")
                out.append(null)
            else:
                out.append(code)
                inner(out, value)

        return write_optional


def _varint(n: str) -> list[str]:
    return [f"while {n} > 127:", f"    append(({n} & 127) | 128)", f"    {n} >>= 7", f"append({n})"]


def _inline_int(value: str) -> list[str]:
    return [
        f"if type({value}) is not int: raise TypeError('an int, not ' + type({value}).__name__)",
        f"n = ({value} << 1) ^ ({value} >> 63)",
        *_varint("n"),
    ]


_INLINE: dict[str, Callable[[str], list[str]]] = {
    "int": _inline_int,
    "long": _inline_int,
    "string": lambda v: [f"b = {v}.encode()", "n = len(b) << 1", *_varint("n"), "out += b"],
    "bytes": lambda v: [f"n = len({v}) << 1", *_varint("n"), f"out += {v}"],
    "double": lambda v: [f"out += DOUBLE({v})"],
    "float": lambda v: [f"out += FLOAT({v})"],
    "boolean": lambda v: [
        f"if {v} is True: append(1)",
        f"elif {v} is False: append(0)",
        f"else: raise TypeError('a boolean, not ' + type({v}).__name__)",
    ],
}
"""The Avro types a struct's generated writer writes in line, as code of a value's
variable name (the same bytes as :data:`_BASIC`'s writers)."""


def _array(item: Write) -> Write:
    def write(out: bytearray, values: Any) -> None:
        if values:
            write_long(out, len(values))
            for v in values:
                item(out, v)
        out.append(0)

    return write


def _entries(key_write: Write, value_write: Write) -> Write:
    def write(out: bytearray, values: Any) -> None:
        if values:
            write_long(out, len(values))
            for k, v in values.items():
                key_write(out, k)
                value_write(out, v)
        out.append(0)

    return write
