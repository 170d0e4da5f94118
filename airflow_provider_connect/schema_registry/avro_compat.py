"""Whether one Avro schema can read data written with another (Avro's schema resolution),
as ``latest.compatibility.strict`` checks the subject's latest version against the schema
of the data before writing with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow_provider_connect.schema_registry.avro_names import (
    NAMED,
    PRIMITIVES,
    AvroNames,
    full_name,
    kind_of,
)

_PROMOTIONS = {
    "int": {"int", "long", "float", "double"},
    "long": {"long", "float", "double"},
    "float": {"float", "double"},
    "double": {"double"},
    "string": {"string", "bytes"},
    "bytes": {"bytes", "string"},
}


def resolution_errors(reader: Any, writer: Any, reader_references: list[Any]) -> list[str]:
    """Why ``reader`` (with the schemas it references) cannot read every datum written with
    ``writer`` (empty when it can): fields the reader adds without a default, types that
    neither match nor promote, enum symbols the reader lacks without a default, fixed sizes
    that differ."""
    checker = _Checker(AvroNames(*reader_references, reader), AvroNames(writer))
    checker.check(reader, writer, None, None, "")
    return checker.errors


class _Checker:
    def __init__(self, readers: AvroNames, writers: AvroNames) -> None:
        self.readers = readers
        self.writers = writers
        self.errors: list[str] = []
        self.seen: set[tuple[int, int]] = set()

    def check(
        self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        """Adds to ``errors`` why ``reader`` (met in ``r_ns``) cannot read what ``writer``
        (met in ``w_ns``) writes at ``path``: unions branch by branch, primitives by
        promotion, other kinds by their own check (``_KIND_CHECKS``), a pair of named
        types once."""
        reader = self.readers.resolve(reader, r_ns)
        writer = self.writers.resolve(writer, w_ns)
        r_kind, w_kind = kind_of(reader), kind_of(writer)
        if w_kind == "union":
            for branch in writer:
                self.check(reader, branch, r_ns, w_ns, path)
            return
        if r_kind == "union":
            self._check_union(reader, writer, r_ns, w_ns, path)
            return
        if r_kind in PRIMITIVES or w_kind in PRIMITIVES or r_kind != w_kind:
            if r_kind not in _PROMOTIONS.get(w_kind, {w_kind}):
                self.errors.append(f"{path or '/'}: {w_kind} cannot be read as {r_kind}")
            return
        if r_kind in NAMED:
            pair = (id(reader), id(writer))
            if pair in self.seen:
                return
            self.seen.add(pair)
            r_ns = full_name(reader, r_ns).rpartition(".")[0] or None
            w_ns = full_name(writer, w_ns).rpartition(".")[0] or None
        check_kind = _KIND_CHECKS.get(r_kind)
        if check_kind is not None:
            check_kind(self, reader, writer, r_ns, w_ns, path)

    def _check_union(
        self, reader: list[Any], writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        """The first branch of the reader's union that matches the writer's type reads it."""
        branch = next((b for b in reader if self._matches(b, writer, r_ns, w_ns)), None)
        if branch is None:
            self.errors.append(
                f"{path or '/'}: no branch of the reader's union reads {kind_of(writer)}"
            )
        else:
            self.check(branch, writer, r_ns, w_ns, path)

    def _check_record(
        self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        """Each reader's field reads the writer's of its name or an alias, else has a
        default."""
        written = {f["name"]: f for f in writer["fields"]}
        for f in reader["fields"]:
            source = written.get(f["name"]) or next(
                (written[a] for a in f.get("aliases", []) if a in written), None
            )
            if source is None:
                if "default" not in f:
                    self.errors.append(
                        f"{path}/{f['name']}: the reader's field has no default and the "
                        "writer does not write it"
                    )
                continue
            self.check(f["type"], source["type"], r_ns, w_ns, f"{path}/{f['name']}")

    def _check_enum(
        self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
        if missing and reader.get("default") is None:
            self.errors.append(f"{path or '/'}: the reader's enum lacks {missing}")

    def _check_fixed(
        self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        if reader["size"] != writer["size"]:
            self.errors.append(
                f"{path or '/'}: fixed size {writer['size']} is not {reader['size']}"
            )

    def _check_array(
        self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        self.check(reader["items"], writer["items"], r_ns, w_ns, f"{path}[]")

    def _check_map(
        self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        self.check(reader["values"], writer["values"], r_ns, w_ns, f"{path}{{}}")

    def _matches(self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None) -> bool:
        reader = self.readers.resolve(reader, r_ns)
        r_kind, w_kind = kind_of(reader), kind_of(writer)
        if r_kind in NAMED and r_kind == w_kind:
            return str(reader["name"]).rpartition(".")[2] == str(writer["name"]).rpartition(".")[2]
        if r_kind in PRIMITIVES and w_kind in PRIMITIVES:
            return r_kind in _PROMOTIONS.get(w_kind, {w_kind})
        return r_kind == w_kind


_KIND_CHECKS: dict[str, Callable[[_Checker, Any, Any, str | None, str | None, str], None]] = {
    "record": _Checker._check_record,
    "enum": _Checker._check_enum,
    "fixed": _Checker._check_fixed,
    "array": _Checker._check_array,
    "map": _Checker._check_map,
}
"""The check of each kind of node that is neither a union nor a primitive, given a reader
and a writer of that kind."""
