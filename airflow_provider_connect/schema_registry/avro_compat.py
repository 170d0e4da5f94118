"""Whether one Avro schema can read data written with another (Avro's schema resolution),
as ``latest.compatibility.strict`` checks the subject's latest version against the schema
of the data before writing with it."""

from __future__ import annotations

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

    def check(  # noqa: C901  one branch per Avro type
        self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None, path: str
    ) -> None:
        reader = self.readers.resolve(reader, r_ns)
        writer = self.writers.resolve(writer, w_ns)
        r_kind, w_kind = kind_of(reader), kind_of(writer)
        if w_kind == "union":
            for branch in writer:
                self.check(reader, branch, r_ns, w_ns, path)
            return
        if r_kind == "union":
            branch = next((b for b in reader if self._matches(b, writer, r_ns, w_ns)), None)
            if branch is None:
                self.errors.append(f"{path or '/'}: no branch of the reader's union reads {w_kind}")
            else:
                self.check(branch, writer, r_ns, w_ns, path)
            return
        if r_kind in PRIMITIVES or w_kind in PRIMITIVES:
            if r_kind not in _PROMOTIONS.get(w_kind, {w_kind}):
                self.errors.append(f"{path or '/'}: {w_kind} cannot be read as {r_kind}")
            return
        if r_kind != w_kind:
            self.errors.append(f"{path or '/'}: {w_kind} cannot be read as {r_kind}")
            return
        if r_kind in NAMED:
            pair = (id(reader), id(writer))
            if pair in self.seen:
                return
            self.seen.add(pair)
            r_ns = full_name(reader, r_ns).rpartition(".")[0] or None
            w_ns = full_name(writer, w_ns).rpartition(".")[0] or None
        if r_kind == "record":
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
        elif r_kind == "enum":
            missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if missing and reader.get("default") is None:
                self.errors.append(f"{path or '/'}: the reader's enum lacks {missing}")
        elif r_kind == "fixed":
            if reader["size"] != writer["size"]:
                self.errors.append(
                    f"{path or '/'}: fixed size {writer['size']} is not {reader['size']}"
                )
        elif r_kind == "array":
            self.check(reader["items"], writer["items"], r_ns, w_ns, f"{path}[]")
        elif r_kind == "map":
            self.check(reader["values"], writer["values"], r_ns, w_ns, f"{path}{{}}")

    def _matches(self, reader: Any, writer: Any, r_ns: str | None, w_ns: str | None) -> bool:
        reader = self.readers.resolve(reader, r_ns)
        r_kind, w_kind = kind_of(reader), kind_of(writer)
        if r_kind in NAMED and r_kind == w_kind:
            return str(reader["name"]).rpartition(".")[2] == str(writer["name"]).rpartition(".")[2]
        if r_kind in PRIMITIVES and w_kind in PRIMITIVES:
            return r_kind in _PROMOTIONS.get(w_kind, {w_kind})
        return r_kind == w_kind
