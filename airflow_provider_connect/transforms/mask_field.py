"""``MaskField``: replaces fields of the key or the value with a valid null value of their
type (0, false, "", an empty list…) or with a custom replacement (Kafka's ``MaskField$Key``
and ``MaskField$Value``)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any

from airflow_provider_connect.connect.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    LambdaValidator,
    Type,
)
from airflow_provider_connect.connect.data import Date, Decimal, Schema, Struct, Time, Timestamp
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    PartTransformation,
    R,
    SchemaCache,
    distinct_list,
    require_map,
    require_struct,
    type_name,
    with_replace_null_with_default,
)

FIELDS = "fields"
REPLACEMENT = "replacement"
PURPOSE = "mask fields"


def _not_empty(name: str, value: Any) -> None:
    """Kafka's NonEmptyString: unset is fine, an empty string is not."""
    if value == "":
        raise ConfigException.invalid(name, value, "String must be non-empty")


CONFIG_DEF = with_replace_null_with_default(
    ConfigDef()
    .define(
        FIELDS,
        Type.LIST,
        NO_DEFAULT,
        distinct_list(empty_allowed=False),
        Importance.HIGH,
        "Names of fields to mask.",
    )
    .define(
        REPLACEMENT,
        Type.STRING,
        None,
        LambdaValidator(_not_empty, "non-empty string"),
        Importance.LOW,
        "Custom value replacement, that will be applied to all 'fields' values (numeric or "
        "non-empty string values only).",
    )
)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
Mask = Callable[[Any], Any]


def _number(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(replacement: str) -> Any:
        try:
            return convert(replacement)
        except (ValueError, decimal.InvalidOperation) as e:
            raise DataException(f"Unable to convert {replacement} (str) to number") from e

    return parse


_INTEGER = _number(int)
_FLOAT = _number(float)
_DECIMAL = _number(decimal.Decimal)
# By schema: the null value of each masked type, and how a custom replacement becomes one.
_NULLS_BY_SCHEMA: dict[str | SchemaType, Callable[[], Any]] = {
    SchemaType.BOOLEAN: lambda: False,
    SchemaType.INT8: lambda: 0,
    SchemaType.INT16: lambda: 0,
    SchemaType.INT32: lambda: 0,
    SchemaType.INT64: lambda: 0,
    SchemaType.FLOAT32: lambda: 0.0,
    SchemaType.FLOAT64: lambda: 0.0,
    SchemaType.STRING: lambda: "",
    SchemaType.ARRAY: list,
    SchemaType.MAP: dict,
    Decimal.LOGICAL_NAME: lambda: decimal.Decimal(0),
    Date.LOGICAL_NAME: lambda: _EPOCH.date(),
    Time.LOGICAL_NAME: lambda: dt.time(0),
    Timestamp.LOGICAL_NAME: lambda: _EPOCH,
}
_REPLACEMENTS_BY_SCHEMA: dict[str | SchemaType, Callable[[str], Any]] = {
    SchemaType.INT8: _INTEGER,
    SchemaType.INT16: _INTEGER,
    SchemaType.INT32: _INTEGER,
    SchemaType.INT64: _INTEGER,
    SchemaType.FLOAT32: _FLOAT,
    SchemaType.FLOAT64: _FLOAT,
    SchemaType.STRING: str,
    Decimal.LOGICAL_NAME: _DECIMAL,
}
# Without a schema, by the value's own type (bool before int: a bool is an int in Python).
_NULLS_BY_TYPE: list[tuple[type, Callable[[], Any]]] = [
    (bool, lambda: False),
    (int, lambda: 0),
    (float, lambda: 0.0),
    (decimal.Decimal, lambda: decimal.Decimal(0)),
    (str, lambda: ""),
    (dt.datetime, lambda: _EPOCH),
    (dt.date, lambda: _EPOCH.date()),
    (dt.time, lambda: dt.time(0)),
    (list, list),
    (dict, dict),
]
_REPLACEMENTS_BY_TYPE: list[tuple[type, Callable[[str], Any]]] = [
    (int, _INTEGER),
    (float, _FLOAT),
    (decimal.Decimal, _DECIMAL),
    (str, str),
]


class MaskField(PartTransformation[R]):
    """Mask specified fields with a valid null value for the field type (i.e. 0, false,
    empty string, and so on); for numeric and string fields, an optional replacement value
    can be specified that is converted to the correct type. Use :class:`MaskFieldKey` or
    :class:`MaskFieldValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.masked = set(config[FIELDS])
        self.replacement: str | None = config[REPLACEMENT]
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        self.plans: SchemaCache[Schema, list[tuple[int, Mask]]] = SchemaCache()

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        if self.operating_schema(record) is None:
            updated = dict(require_map(value, PURPOSE))
            for name in self.masked:
                updated[name] = self._mask_schemaless(updated.get(name))
            return self.new_record(record, self.operating_schema(record), updated)
        struct = require_struct(value, PURPOSE)
        fields = struct.schema.fields or ()
        values = (
            [
                f.schema.default_value if v is None else v
                for f, v in zip(fields, struct._values, strict=True)
            ]
            if self.replace_null_with_default
            else list(struct._values)
        )
        for index, mask in self.plans.get(struct.schema, self._plan):
            if values[index] is not None:
                values[index] = mask(values[index])
        # Masks are valid values of their field's schema: no need to check them again.
        return self.new_record(record, struct.schema, Struct._trusted(struct.schema, values))

    def _plan(self, schema: Schema) -> list[tuple[int, Mask]]:
        """Each masked field of ``schema`` and how to mask it."""
        return [
            (field.index, self._mask_for(field.schema))
            for field in schema.fields or ()
            if field.name in self.masked
        ]

    def _mask_for(self, schema: Schema) -> Mask:
        kind = schema.name if schema.name in _NULLS_BY_SCHEMA else schema.type
        if self.replacement is None:
            make = _NULLS_BY_SCHEMA.get(kind)
            if make is None:
                return _cannot(f"Cannot mask value of type: {kind}")
            return lambda _value: make()
        convert = _REPLACEMENTS_BY_SCHEMA.get(kind)
        if convert is None:
            return _cannot(f"Cannot mask value of type {kind} with custom replacement.")
        replacement = self.replacement
        return lambda _value: convert(replacement)

    def _mask_schemaless(self, value: Any) -> Any:
        if value is None:
            return None
        if self.replacement is None:
            for kind, make in _NULLS_BY_TYPE:
                if isinstance(value, kind):
                    return make()
            raise DataException(f"Cannot mask value of type: {type_name(value)}")
        if not isinstance(value, bool):  # a bool is an int in Python, not in Kafka's masks
            for kind, convert in _REPLACEMENTS_BY_TYPE:
                if isinstance(value, kind):
                    return convert(self.replacement)
        raise DataException(
            f"Cannot mask value of type {type_name(value)} with custom replacement."
        )


def _cannot(message: str) -> Mask:
    def fail(_value: Any) -> Any:
        raise DataException(message)

    return fail


class MaskFieldKey(MaskField[R]):
    """Kafka's ``MaskField$Key``."""

    KEY = True


class MaskFieldValue(MaskField[R]):
    """Kafka's ``MaskField$Value``."""

    KEY = False
