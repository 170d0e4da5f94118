"""The named types (records, enums, fixed) of Avro schemas in their JSON form, found by
full name as Avro resolves names: a name without a dot is in the namespace of the type that
encloses it, unless a ``namespace`` says otherwise."""

from __future__ import annotations

from typing import Any

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = frozenset({"record", "enum", "fixed"})
_DEFINITIONS = PRIMITIVES | NAMED | {"array", "map"}
"""The ``type`` values of a node that defines its type (rather than naming or holding one)."""


def full_name(node: dict[str, Any], namespace: str | None) -> str:
    """The full name of the named type ``node`` met in ``namespace``."""
    name = str(node["name"])
    if "." in name:
        return name
    space = node.get("namespace", namespace)
    return f"{space}.{name}" if space else name


def kind_of(node: Any) -> str:
    """The type of a schema node: a primitive's name or a named type's (for a reference),
    ``record``, ``enum``, ``fixed``, ``array``, ``map``, or ``union``."""
    if isinstance(node, list):
        return "union"
    if isinstance(node, str):
        return node
    kind = node.get("type")
    return kind if isinstance(kind, str) else kind_of(kind)


class AvroNames:
    """The named types of ``schemas`` (a schema and the ones it references), by full name;
    ``named_unions`` says whether a union of two or more named types is among them."""

    def __init__(self, *schemas: Any) -> None:
        self.types: dict[str, dict[str, Any]] = {}
        self.named_unions = False
        for schema in schemas:
            self._collect(schema, None)

    def _collect(self, node: Any, namespace: str | None) -> None:
        if isinstance(node, list):
            named = sum(
                (isinstance(b, str) and b not in PRIMITIVES)
                or (isinstance(b, dict) and b.get("type") in NAMED)
                for b in node
            )
            self.named_unions = self.named_unions or named > 1
            for branch in node:
                self._collect(branch, namespace)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if isinstance(kind, (dict, list)):
            self._collect(kind, namespace)
            return
        if kind in NAMED:
            full = full_name(node, namespace)
            self.types[full] = node
            namespace = full.rpartition(".")[0] or None
        if kind == "record":
            for f in node["fields"]:
                self._collect(f["type"], namespace)
        elif kind == "array":
            self._collect(node["items"], namespace)
        elif kind == "map":
            self._collect(node["values"], namespace)

    def resolve(self, node: Any, namespace: str | None) -> Any:
        """``node`` as a definition: a type name resolved (KeyError when unknown),
        ``{"type": X}`` for a primitive name, a nested ``{"type": {...}}`` unwrapped."""
        if isinstance(node, str):
            if node in PRIMITIVES:
                return {"type": node}
            if namespace and f"{namespace}.{node}" in self.types:
                return self.types[f"{namespace}.{node}"]
            return self.types[node]
        if isinstance(node, dict) and node["type"] not in _DEFINITIONS:
            return self.resolve(node["type"], namespace)  # {"type": {...}} or {"type": "a.B"}
        return node
