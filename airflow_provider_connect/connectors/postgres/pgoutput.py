"""A decoder of PostgreSQL's ``pgoutput`` logical replication messages, protocol version 1
(https://www.postgresql.org/docs/15/protocol-logicalrep-message-formats.html).

Each message of the replication stream's ``XLogData`` is one of the classes below, as
:func:`decode` returns it. Protocol 1 streams only committed transactions, whole and in
commit order: ``Begin``, the transaction's changes (each preceded, the first time a
relation appears in the session or after it changed, by its ``Relation``), ``Commit``.
Tuple values are in PostgreSQL's text output format (``None`` for SQL NULL,
:data:`UNCHANGED_TOAST` for a TOASTed value the change left as it was).
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

POSTGRES_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
POSTGRES_EPOCH_US = int(POSTGRES_EPOCH.timestamp()) * 1_000_000
"""PostgreSQL timestamps count microseconds from 2000-01-01 UTC; add this for Unix µs."""

UNCHANGED_TOAST: Any = type("UnchangedToast", (), {"__repr__": lambda self: "UNCHANGED_TOAST"})()
"""A TOASTed column an update did not change: the stream does not carry its value."""

_BEGIN = struct.Struct("!QqI")
_COMMIT = struct.Struct("!BQQq")
_INT64 = struct.Struct("!Q")
_INT32 = struct.Struct("!I")
_INT16 = struct.Struct("!H")
_COLUMN = struct.Struct("!BII")
_TRUNCATE = struct.Struct("!IB")
_MESSAGE = struct.Struct("!BQ")


class Begin(NamedTuple):
    """A transaction starts. ``final_lsn`` is its commit record's LSN."""

    final_lsn: int
    commit_time_us: int
    """Commit time, microseconds since the Unix epoch."""
    xid: int


class Commit(NamedTuple):
    """A transaction ends: ``commit_lsn`` is its commit record's LSN, ``end_lsn`` the end of
    that record (a slot confirmed up to ``end_lsn`` never sends this transaction again)."""

    commit_lsn: int
    end_lsn: int
    commit_time_us: int


@dataclass(frozen=True)
class Column:
    name: str
    type_oid: int
    modifier: int
    """``atttypmod``; -1 when the type has none."""
    key: bool
    """Part of the relation's replica identity (its primary key by default)."""


@dataclass(frozen=True)
class Relation:
    """A table's shape as the changes that follow carry it (dropped and generated columns
    are not in it)."""

    oid: int
    namespace: str
    name: str
    replica_identity: str
    """``d`` default (primary key), ``n`` nothing, ``f`` full, ``i`` an index."""
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class TypeInfo:
    """A non built-in type's name, sent before the first relation that uses it."""

    oid: int
    namespace: str
    name: str


class Insert(NamedTuple):
    relation: int
    new: tuple[Any, ...]


class Update(NamedTuple):
    relation: int
    old: tuple[Any, ...] | None
    """The old key (``old_is_key``), or the whole old row with ``REPLICA IDENTITY FULL``, or
    None when the key did not change and identity is not full."""
    old_is_key: bool
    new: tuple[Any, ...]


class Delete(NamedTuple):
    relation: int
    old: tuple[Any, ...]
    old_is_key: bool


@dataclass(frozen=True)
class Truncate:
    relations: tuple[int, ...]
    cascade: bool
    restart_identity: bool


@dataclass(frozen=True)
class Origin:
    lsn: int
    name: str


@dataclass(frozen=True)
class LogicalMessage:
    """``pg_logical_emit_message`` output (only with the ``messages`` option)."""

    transactional: bool
    lsn: int
    prefix: str
    content: bytes


Message = (
    Begin
    | Commit
    | Relation
    | TypeInfo
    | Insert
    | Update
    | Delete
    | Truncate
    | Origin
    | LogicalMessage
)


class DecodeError(ValueError):
    """Bytes that are not a protocol 1 ``pgoutput`` message."""


def decode(data: bytes) -> Message:
    """The message ``data`` holds; raises :class:`DecodeError` for anything else."""
    try:
        return _DECODERS[data[0]](data)
    except (KeyError, IndexError):
        raise DecodeError(f"Not a pgoutput message: {data[:16]!r}") from None
    except struct.error as e:
        raise DecodeError(f"Truncated pgoutput message {chr(data[0])!r}: {e}") from None


def _string(data: bytes, at: int) -> tuple[str, int]:
    end = data.index(0, at)
    return str(data[at:end], "utf-8"), end + 1


BEGIN = ord("B")
COMMIT = ord("C")


def begin_fields(data: bytes) -> tuple[int, int, int]:
    """The fields of the Begin ``data`` holds (its first byte is :data:`BEGIN`), as
    :class:`Begin` has them, with no Begin made: ``(final_lsn, commit_time_us, xid)``."""
    try:
        final_lsn, time_us, xid = _BEGIN.unpack_from(data, 1)
    except struct.error as e:
        raise DecodeError(f"Truncated pgoutput message 'B': {e}") from None
    return final_lsn, time_us + POSTGRES_EPOCH_US, xid


def commit_lsn(data: bytes) -> int:
    """The ``commit_lsn`` of the Commit ``data`` holds (its first byte is :data:`COMMIT`),
    with no Commit made."""
    try:
        return int(_INT64.unpack_from(data, 2)[0])
    except struct.error as e:
        raise DecodeError(f"Truncated pgoutput message 'C': {e}") from None


def _begin(data: bytes) -> Begin:
    return Begin(*begin_fields(data))


def _commit(data: bytes) -> Commit:
    _, commit_lsn, end_lsn, time_us = _COMMIT.unpack_from(data, 1)
    return Commit(commit_lsn, end_lsn, time_us + POSTGRES_EPOCH_US)


def _relation(data: bytes) -> Relation:
    (oid,) = _INT32.unpack_from(data, 1)
    namespace, at = _string(data, 5)
    name, at = _string(data, at)
    identity = chr(data[at])
    (count,) = _INT16.unpack_from(data, at + 1)
    at += 3
    columns = []
    for _ in range(count):
        flags = data[at]
        column, at = _string(data, at + 1)
        type_oid, modifier = struct.unpack_from("!Ii", data, at)
        at += 8
        columns.append(Column(column, type_oid, modifier, bool(flags & 1)))
    return Relation(oid, namespace, name, identity, tuple(columns))


def _type(data: bytes) -> TypeInfo:
    (oid,) = _INT32.unpack_from(data, 1)
    namespace, at = _string(data, 5)
    name, _ = _string(data, at)
    return TypeInfo(oid, namespace, name)


def _tuple(data: bytes, at: int) -> tuple[tuple[Any, ...], int]:
    """TupleData at ``at``: the values and where the next part starts."""
    (count,) = _INT16.unpack_from(data, at)
    at += 2
    values: list[Any] = []
    append, size_at = values.append, _INT32.unpack_from
    for _ in range(count):
        kind = data[at]
        if kind == 0x74:  # 't': text
            (size,) = size_at(data, at + 1)
            start = at + 5
            at = start + size
            append(data[start:at].decode())
        elif kind == 0x6E:  # 'n': null
            append(None)
            at += 1
        elif kind == 0x75:  # 'u': unchanged TOAST
            append(UNCHANGED_TOAST)
            at += 1
        else:  # 'b' (binary) is only sent when asked for; this decoder never asks
            raise DecodeError(f"Unexpected tuple value kind {chr(kind)!r}")
    return tuple(values), at


ColumnConversion = tuple[Callable[[str], Any], Any, Any]
"""How a :func:`tuple_reader` converts one column: the parse of its text, the value of a
NULL, the value of an unchanged TOASTed value."""


def tuple_reader(
    columns: Sequence[ColumnConversion | None], key: Sequence[int] = ()
) -> Callable[[bytes, int], tuple[list[Any], list[Any]]]:
    """A decoder of the TupleData of one relation's rows (``columns``: one per column of
    the relation, in its order), straight into converted values: the values of the columns
    that have a conversion, in order (those with None are skipped), and those of the
    columns at the indexes ``key`` (each with a conversion), in that order: the same
    objects. It decodes what :func:`decode` would, with no tuple of texts in between.
    Raises :class:`DecodeError` on a tuple of another width or an unexpected value kind.

    The decoder is a function generated for ``columns`` (once per relation), with no loop:
    each column's value read in turn by its own lines, its conversions variables of the
    code (``p<i>`` its parse, ``n<i>`` its NULL, ``u<i>`` its unchanged TOAST); a parse
    that is ``str`` or ``int`` is applied to the bytes (``bytes.decode``, ``int`` of the
    ASCII digits) rather than called on their text: the same values."""
    if any(columns[i] is None for i in key):
        raise ValueError(f"A key column without a conversion: {list(key)}")
    namespace: dict[str, Any] = {
        "size_at": _INT32.unpack_from,
        "count_at": _INT16.unpack_from,
        "struct_error": struct.error,
        "DecodeError": DecodeError,
    }
    lines = [
        "def read(data, at):",
        "    try:",
        f"        if count_at(data, at)[0] != {len(columns)}:",
        "            raise DecodeError(",
        f"                f'A tuple of {{count_at(data, at)[0]}} columns where the relation has {len(columns)}'",
        "            )",
        "        at += 2",
    ]
    values = []
    for i, column in enumerate(columns):
        lines += _column_lines(i, column, namespace)
        if column is not None:
            values.append(f"v{i}")
    lines += [
        "    except (struct_error, IndexError) as e:",
        "        raise DecodeError(f'Truncated pgoutput tuple: {e}') from None",
        "    if at > len(data):",
        "        raise DecodeError('Truncated pgoutput tuple: its last value is cut')",
        f"    return [{', '.join(values)}], [{', '.join(f'v{i}' for i in key)}]",
    ]
    exec("\n".join(lines), namespace)  # no relation text in the code: variables v0, p0, ...
    read: Callable[[bytes, int], tuple[list[Any], list[Any]]] = namespace["read"]
    return read


def _column_lines(i: int, column: ColumnConversion | None, namespace: dict[str, Any]) -> list[str]:
    """The lines of :func:`tuple_reader`'s code that read column ``i`` (its value into
    ``v<i>`` when it has a conversion; its conversions put in ``namespace``)."""
    if column is None:
        text, null, toast = "pass", "pass", "pass"
    else:
        parse, namespace[f"n{i}"], namespace[f"u{i}"] = column
        value = "data[start:at]"
        if parse is str:
            text = f"v{i} = {value}.decode()"
        elif parse is int:
            text = f"v{i} = int({value})"
        else:
            namespace[f"p{i}"] = parse
            text = f"v{i} = p{i}({value}.decode())"
        null, toast = f"v{i} = n{i}", f"v{i} = u{i}"
    return [
        "        kind = data[at]",
        "        if kind == 0x74:  # 't': text",
        "            start = at + 5",
        "            at = start + size_at(data, at + 1)[0]",
        f"            {text}",
        "        elif kind == 0x6E:  # 'n': null",
        "            at += 1",
        f"            {null}",
        "        elif kind == 0x75:  # 'u': unchanged TOAST",
        "            at += 1",
        f"            {toast}",
        "        else:",
        "            raise DecodeError(f'Unexpected tuple value kind {chr(kind)!r}')",
    ]


INSERT = ord("I")
NEW_ROW_KINDS = frozenset(b"IU")
"""The first bytes of Insert and Update messages (see :func:`new_row_relation`)."""
NEW_TUPLE_AT = 6
"""Where the new tuple starts in the messages :func:`new_row_relation` takes."""


def new_row_relation(data: bytes) -> int | None:
    """The relation oid of an Insert, or of an Update that carries no old row or key: a
    message whose only tuple is the new one, at :data:`NEW_TUPLE_AT`; None for any other
    message."""
    kind = data[0]
    if kind == INSERT or (kind == 0x55 and data[5] == 0x4E):  # or 'U' with 'N' first
        return int(_INT32.unpack_from(data, 1)[0])
    return None


def _insert(data: bytes) -> Insert:
    (oid,) = _INT32.unpack_from(data, 1)
    new, _ = _tuple(data, 6)  # 'N'
    return Insert(oid, new)


def _update(data: bytes) -> Update:
    (oid,) = _INT32.unpack_from(data, 1)
    kind = data[5]
    old: tuple[Any, ...] | None = None
    at = 5
    if kind in (0x4B, 0x4F):  # 'K' key, 'O' old row
        old, at = _tuple(data, 6)
    new, _ = _tuple(data, at + 1)  # 'N'
    return Update(oid, old, kind == 0x4B, new)


def _delete(data: bytes) -> Delete:
    (oid,) = _INT32.unpack_from(data, 1)
    kind = data[5]
    old, _ = _tuple(data, 6)
    return Delete(oid, old, kind == 0x4B)


def _truncate(data: bytes) -> Truncate:
    count, options = _TRUNCATE.unpack_from(data, 1)
    oids = struct.unpack_from(f"!{count}I", data, 6)
    return Truncate(tuple(oids), bool(options & 1), bool(options & 2))


def _origin(data: bytes) -> Origin:
    (lsn,) = struct.unpack_from("!Q", data, 1)
    name, _ = _string(data, 9)
    return Origin(lsn, name)


def _message(data: bytes) -> LogicalMessage:
    flags, lsn = _MESSAGE.unpack_from(data, 1)
    prefix, at = _string(data, 10)
    (size,) = _INT32.unpack_from(data, at)
    return LogicalMessage(bool(flags & 1), lsn, prefix, data[at + 4 : at + 4 + size])


_DECODERS: dict[int, Callable[[bytes], Message]] = {
    ord("B"): _begin,
    ord("C"): _commit,
    ord("R"): _relation,
    ord("Y"): _type,
    ord("I"): _insert,
    ord("U"): _update,
    ord("D"): _delete,
    ord("T"): _truncate,
    ord("O"): _origin,
    ord("M"): _message,
}


def parse_lsn(text: str) -> int:
    """``16/B374D848`` as an integer."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)
