"""Field paths of KIP-821: ``field.syntax.version`` V1 names a top-level field; V2 reaches
nested ones with dots, backticks wrapping a name that has dots (``\\`` escapes a backtick)."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type, ValidString
from airflow_provider_connect.connect.data import Field, Schema, Struct
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.transforms.util import require_map, require_struct

FIELD_SYNTAX_VERSION = "field.syntax.version"
V1, V2 = "V1", "V2"
_DOC = (
    "Defines the version of the syntax to access fields. If set to `V1`, then the field paths "
    "are limited to access the elements at the root level of the struct or map. If set to "
    "`V2`, the syntax will support accessing nested elements. To access nested elements, "
    "dotted notation is used. If dots are already included in the field name, then backtick "
    "pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` "
    'from a field named "foo.bar" in a struct/map the following format can be used to access '
    'its elements: "`foo.bar`.baz".'
)


def with_syntax_version(definition: ConfigDef) -> ConfigDef:
    """``definition`` with ``field.syntax.version`` (for transformations of nested fields)."""
    return definition.define(
        FIELD_SYNTAX_VERSION,
        Type.STRING,
        V1,
        ValidString(V1, V2, case_sensitive=False),
        Importance.HIGH,
        _DOC,
    )


class SingleFieldPath:
    """One or more steps into a struct or map."""

    def __init__(self, path: str, version: str) -> None:
        self.steps = [path] if version.upper() == V1 else _steps_v2(path)

    def field_from(self, schema: Schema | None) -> Field | None:
        """The field at the path in ``schema``; None when there is none."""
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step) if current.fields is not None else None
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1]) if current.fields is not None else None

    def value_from_struct(self, struct: Struct | None, with_default: bool = True) -> Any:
        """The value at the path; None when a step is missing or null."""
        current = struct
        for step in self.steps[:-1]:
            if current is None or current.schema.field(step) is None:
                return None
            sub = current.get(step)
            current = None if sub is None else require_struct(sub, "nested field access")
        if current is None or current.schema.field(self.steps[-1]) is None:
            return None
        last = self.steps[-1]
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, value: dict[str, Any] | None) -> Any:
        current = value
        for step in self.steps[:-1]:
            if current is None:
                return None
            sub = current.get(step)
            current = None if sub is None else require_map(sub, "nested field access")
        return None if current is None else current.get(self.steps[-1])

    def __repr__(self) -> str:
        return f"SingleFieldPath{{path={'.'.join(self.steps)}}}"


def _steps_v2(path: str) -> list[str]:
    """Kafka's ``buildFieldPathV2``, step by step."""
    steps: list[str] = []
    i = 0
    while 0 <= i < len(path):
        if path[i] != "`":
            dot = path.find(".", i)
            if dot >= 0:
                steps.append(path[i:dot])
                i = dot + 1
            else:
                steps.append(path[i:])
                i = len(path)
            continue
        backtick_at = i
        i += 1
        field: list[str] = []
        start = i
        while True:
            i = path.find("`", i)
            if i == -1:
                _incomplete(path, backtick_at)
            escaped = path[i - 1] == "\\"
            if i >= len(path) - 1:  # the path ends with this backtick
                if escaped:
                    _incomplete(path, backtick_at)
                field.append(path[start:i])
                steps.append("".join(field))
                i += 1
                break
            if path[i + 1] != ".":  # part of the name: look for one followed by a dot
                i += 1
                continue
            if escaped:  # an escaped backtick is part of the name
                field.append(path[start : i - 1] + "`")
                i += 1
                start = i
                continue
            field.append(path[start:i])
            steps.append("".join(field))
            i += 2  # the backtick and the dot after it
            break
    if path.endswith("."):
        steps.append("")
    return steps


def _incomplete(path: str, backtick_at: int) -> None:
    raise ConfigException(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
        f"backtick at position {backtick_at} to escape it"
    )
