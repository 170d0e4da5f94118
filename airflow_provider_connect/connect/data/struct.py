"""Struct values and the validation of values against schemas."""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.data.schema import (
    INTEGER_RANGES,
    LOGICAL_VALUE_TYPES,
    Field,
    Schema,
    Type,
    _values_equal,
)
from airflow_provider_connect.connect.errors import DataException


class Struct:
    """A value of a struct schema, as Kafka Connect's ``Struct``.

    Every :meth:`put` validates the value against its field's schema and raises
    :class:`DataException` naming the field. A struct may be incomplete while it is being
    filled; :meth:`validate` checks that every required field is set. Structs compare by
    schema and values.
    """

    __slots__ = ("_values", "schema")

    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataException("Not a struct schema: " + repr(schema))
        self.schema = schema
        self._values: list[Any] = [None] * len(self._fields)

    @property
    def _fields(self) -> list[Field]:
        fields = self.schema.fields
        assert fields is not None  # a struct schema has fields
        return fields

    @classmethod
    def of(cls, schema: Schema, values: Mapping[str, Any]) -> Struct:
        """A struct of ``schema`` with ``values`` by field name, each checked as :meth:`put`
        checks it, a field ``values`` lacks as ``put(None)``: the struct it returns passes
        :meth:`validate`. The fast way for a connector to build its records (the checks of
        the primitive fields run in one pass, planned once per schema). Raises
        :class:`DataException` naming the first invalid field (a required one lacking among
        them), or a name the schema lacks."""
        plan = _plan_of(schema)
        if not values.keys() <= plan.names:
            unknown = next(k for k in values if k not in plan.names)
            raise DataException(f"{unknown} is not a valid field name")
        ordered = plan.usual(values)
        if ordered is None:  # a value of an unusual type, or out of range: each field's verdict
            ordered = list(map(values.get, plan.order))
            plan.check_each(ordered)
        else:
            for index in plan.others:
                field = plan.fields[index]
                validate_value(field.schema, ordered[index], field.name)
        return cls._trusted(schema, ordered)

    @classmethod
    def _trusted(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct over ``values`` that the caller has already validated (converters)."""
        struct = cls.__new__(cls)
        struct.schema = schema
        struct._values = values
        return struct

    def _lookup(self, field: str | Field) -> Field:
        if isinstance(field, Field):
            return field
        found = self.schema.field(field)
        if found is None:
            raise DataException(f"{field} is not a valid field name")
        return found

    def put(self, field: str | Field, value: Any) -> Struct:
        """Sets ``field`` (a name or a :class:`Field`) after validating ``value``; returns self.

        None is accepted for optional fields and for fields with a default (read back by
        :meth:`get` as the default).
        """
        f = self._lookup(field)
        validate_value(f.schema, value, f.name)
        self._values[f.index] = value
        return self

    def get(self, field: str | Field) -> Any:
        """The field's value, or its schema default when the value is unset."""
        f = self._lookup(field)
        value = self._values[f.index]
        return f.schema.default_value if value is None else value

    def items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` of every field in schema order, each value as :meth:`get`
        reads it (one pass, no lookups by name)."""
        return [
            (f.name, f.schema.default_value if v is None else v)
            for f, v in zip(self._fields, self._values, strict=True)
        ]

    def values_as_set(self) -> list[Any]:
        """Every field's value as set (None when unset: no default applied), in schema order.
        The struct's own list, for readers of many structs at once (a sink building columns):
        read it, never change it."""
        return self._values

    def get_without_default(self, field: str | Field) -> Any:
        """The field's value as set, None when unset."""
        return self._values[self._lookup(field).index]

    def validate(self, path: str | None = None) -> None:
        """Raises :class:`DataException` naming the first field whose value is invalid."""
        for f in self._fields:
            validate_value(f.schema, self._values[f.index], f"{path}.{f.name}" if path else f.name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Struct):
            return NotImplemented
        return self.schema == other.schema and all(
            _values_equal(a, b) for a, b in zip(self._values, other._values, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable: mutable, compared by value

    def __repr__(self) -> str:
        body = ", ".join(f"{f.name}={v!r}" for f, v in zip(self._fields, self._values, strict=True))
        return f"Struct{{{body}}}"


_PRIMITIVE_TYPES: dict[Type, type] = {
    Type.INT8: int,
    Type.INT16: int,
    Type.INT32: int,
    Type.INT64: int,
    Type.FLOAT32: float,
    Type.FLOAT64: float,
    Type.BOOLEAN: bool,
    Type.STRING: str,
    Type.BYTES: bytes,
}


@dataclass(frozen=True)
class _Plan:
    """How :meth:`Struct.of` checks the values of one struct schema: ``usual`` gives the
    values in field order when every primitive field's value has its usual type (None
    where null is allowed) and range, else None (then :func:`validate_value` gives each
    its verdict); ``others`` are the fields of other types (logical, structs, arrays,
    maps), each checked by it."""

    fields: list[Field]
    order: tuple[str, ...]
    names: frozenset[str]
    usual: Callable[[Mapping[str, Any]], list[Any] | None]
    others: tuple[int, ...]

    def check_each(self, values: list[Any]) -> None:
        """Checks every field's value as :meth:`Struct.put` does."""
        for field, value in zip(self.fields, values, strict=True):
            validate_value(field.schema, value, field.name)


@functools.lru_cache(maxsize=1024)
def _plan_of(schema: Schema) -> _Plan:
    if schema.type is not Type.STRUCT:
        raise DataException("Not a struct schema: " + repr(schema))
    fields = list(schema.fields or ())
    others = tuple(
        f.index
        for f in fields
        if f.schema.type not in _PRIMITIVE_TYPES or (f.schema.name or "") in LOGICAL_VALUE_TYPES
    )
    return _Plan(
        fields,
        tuple(f.name for f in fields),
        frozenset(f.name for f in fields),
        _usual_values(fields, others),
        others,
    )


def _usual_values(
    fields: list[Field], others: tuple[int, ...]
) -> Callable[[Mapping[str, Any]], list[Any] | None]:
    """A function generated for the fields: their values from a mapping in one list when
    each primitive one has its usual type and range (one expression, no loop), else None.
    The code holds the field names as literals (``repr``) and nothing else of the schema."""
    checks = []
    for f in fields:
        if f.index in others:
            continue
        value = f"v{f.index}"
        check = f"type({value}) is {_PRIMITIVE_TYPES[f.schema.type].__name__}"
        if f.schema.type in INTEGER_RANGES:
            low, high = INTEGER_RANGES[f.schema.type]
            check = f"{check} and {low} <= {value} <= {high}"
        if f.schema.optional or f.schema.default_value is not None:
            check = f"{value} is None or ({check})"
        checks.append(f"({check})")
    lines = [
        "def usual(values):",
        "    get = values.get",
        *(f"    v{f.index} = get({f.name!r})" for f in fields),
        f"    if {' and '.join(checks) or 'True'}:",
        f"        return [{', '.join(f'v{f.index}' for f in fields)}]",
        "    return None",
    ]
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), namespace)
    usual: Callable[[Mapping[str, Any]], list[Any] | None] = namespace["usual"]
    return usual


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_value(schema: Schema, value: Any, path: str) -> None:
    """Checks that ``value`` is a valid value of ``schema``; ``path`` names it in errors.

    Raises :class:`DataException` naming the field path (``address.zip``) and the problem.
    """
    if value is None:
        if schema.optional or schema.default_value is not None:
            return
        raise DataException(
            f'Invalid value: null used for required field: "{path}", schema type: {schema.type.name}'
        )
    if schema.name is not None:
        logical = LOGICAL_VALUE_TYPES.get(schema.name)
        if logical is not None:
            _validate_logical(schema, logical, value, path)
            return
    _CHECKS[schema.type](schema, value, path)


# One check per schema type: ``(schema, value, path)``, ``value`` not None and ``schema`` not
# a logical type; raises :class:`DataException` when ``value`` does not fit.
_Check = Callable[[Schema, Any, str], None]


def _integer_check(t: Type) -> _Check:
    """The check of an integer type (INT8 to INT64): an int, not a bool, within its range."""
    low, high = INTEGER_RANGES[t]

    def check(schema: Schema, value: Any, path: str) -> None:
        if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
            raise _type_error(schema, value, path, "int")
        if not low <= value <= high:
            raise DataException(
                f'Invalid value {value} for field "{path}": out of range for {t.name} [{low}, {high}]'
            )

    return check


def _check_float(schema: Schema, value: Any, path: str) -> None:
    if type(value) is not float and (
        isinstance(value, bool) or not isinstance(value, (int, float))
    ):
        raise _type_error(schema, value, path, "float")


def _instance_check(kinds: type | tuple[type, ...], expected: str) -> _Check:
    """The check of a type whose values are instances of ``kinds``, ``expected`` in errors."""

    def check(schema: Schema, value: Any, path: str) -> None:
        if not isinstance(value, kinds):
            raise _type_error(schema, value, path, expected)

    return check


def _check_array(schema: Schema, value: Any, path: str) -> None:
    if not isinstance(value, (list, tuple)):
        raise _type_error(schema, value, path, "list")
    element = schema.value_schema
    assert element is not None  # an array schema has one
    for i, item in enumerate(value):
        validate_value(element, item, f"{path}[{i}]")


def _check_map(schema: Schema, value: Any, path: str) -> None:
    if not isinstance(value, Mapping):
        raise _type_error(schema, value, path, "dict")
    key_schema, value_schema = schema.key_schema, schema.value_schema
    assert key_schema is not None and value_schema is not None  # a map schema has both
    for k, v in value.items():
        validate_value(key_schema, k, f"{path}.<key>")
        validate_value(value_schema, v, f"{path}[{k!r}]")


def _check_struct(schema: Schema, value: Any, path: str) -> None:
    if not isinstance(value, Struct):
        raise _type_error(schema, value, path, "Struct")
    if value.schema != schema:
        raise DataException(f'Struct schemas do not match for field "{path}"')
    value.validate(path)


_CHECKS: dict[Type, _Check] = {
    Type.INT8: _integer_check(Type.INT8),
    Type.INT16: _integer_check(Type.INT16),
    Type.INT32: _integer_check(Type.INT32),
    Type.INT64: _integer_check(Type.INT64),
    Type.FLOAT32: _check_float,
    Type.FLOAT64: _check_float,
    Type.BOOLEAN: _instance_check(bool, "bool"),
    Type.STRING: _instance_check(str, "str"),
    Type.BYTES: _instance_check((bytes, bytearray), "bytes"),
    Type.ARRAY: _check_array,
    Type.MAP: _check_map,
    Type.STRUCT: _check_struct,
}


def _validate_logical(schema: Schema, expected: type, value: Any, path: str) -> None:
    ok = isinstance(value, expected)
    if expected is _dt.date:
        ok = ok and not isinstance(value, _dt.datetime)
    if not ok:
        raise DataException(
            f'Invalid value for field "{path}": logical type {schema.name} takes '
            f"{expected.__module__}.{expected.__name__}, got {type(value).__name__} {_describe(value)}"
        )


def _type_error(schema: Schema, value: Any, path: str, expected: str) -> DataException:
    return DataException(
        f'Invalid value for field "{path}": schema type {schema.type.name} takes {expected}, '
        f"got {type(value).__name__} {_describe(value)}"
    )
