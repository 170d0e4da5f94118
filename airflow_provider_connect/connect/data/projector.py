"""Schema projection for sinks, as Kafka Connect's ``SchemaProjector``.

A sink that writes to a fixed target schema reads records written with an older or newer
schema by projecting them: fields missing from the source take the target's default (or
stay null when optional), extra source fields are dropped, and numbers are promoted
(int8 → int16 → int32 → int64 → float32 → float64). Names and parameters must match.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.data.schema import Schema, Type
from airflow_provider_connect.connect.data.struct import Struct
from airflow_provider_connect.connect.errors import SchemaProjectorException

_NUMERIC_ORDER = [Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64]


def _promotable(source: Type, target: Type) -> bool:
    return (
        source in _NUMERIC_ORDER
        and target in _NUMERIC_ORDER
        and _NUMERIC_ORDER.index(source) < _NUMERIC_ORDER.index(target)
    )


class SchemaProjector:
    """Projects values between compatible schemas."""

    @staticmethod
    def check_compatible(source: Schema, target: Schema, path: str = "value") -> None:
        """Raises :class:`SchemaProjectorException` unless every value of ``source`` can be
        projected onto ``target``; the message names the first incompatible field path."""
        _check_maybe_compatible(source, target, path)
        if source.optional and not target.optional and target.default_value is None:
            raise SchemaProjectorException(
                f"{path}: writer schema is optional, however, target schema does not provide "
                "a default value."
            )
        if target.type is Type.STRUCT:
            assert target.fields is not None  # a struct schema has fields
            for target_field in target.fields:
                source_field = source.field(target_field.name)
                field_path = f"{path}.{target_field.name}"
                if source_field is not None:
                    SchemaProjector.check_compatible(
                        source_field.schema, target_field.schema, field_path
                    )
                else:
                    _check_missing_field(target_field.schema, field_path, source)
        elif target.type is Type.ARRAY:
            source_value, target_value = _value_schemas(source, target)
            SchemaProjector.check_compatible(source_value, target_value, path + "[]")
        elif target.type is Type.MAP:
            source_key, target_key = _key_schemas(source, target)
            source_value, target_value = _value_schemas(source, target)
            SchemaProjector.check_compatible(source_key, target_key, path + ".<key>")
            SchemaProjector.check_compatible(source_value, target_value, path + "[]")

    @staticmethod
    def is_compatible(source: Schema, target: Schema) -> bool:
        """Whether every value of ``source`` can be read as ``target``."""
        try:
            SchemaProjector.check_compatible(source, target)
        except SchemaProjectorException:
            return False
        return True

    @staticmethod
    def project(source: Schema, record: Any, target: Schema) -> Any:
        """``record`` (a value of ``source``) as a value of ``target``."""
        _check_maybe_compatible(source, target, "value")
        if record is None:
            if source.optional and not target.optional:
                if target.default_value is None:
                    raise SchemaProjectorException(
                        "Writer schema is optional, however, target schema does not provide "
                        "a default value."
                    )
                return target.default_value
            return None
        if target.type is Type.STRUCT:
            return _project_struct(source, record, target)
        if target.type is Type.ARRAY:
            source_value, target_value = _value_schemas(source, target)
            return [SchemaProjector.project(source_value, v, target_value) for v in record]
        if target.type is Type.MAP:
            source_key, target_key = _key_schemas(source, target)
            source_value, target_value = _value_schemas(source, target)
            return {
                SchemaProjector.project(source_key, k, target_key): SchemaProjector.project(
                    source_value, v, target_value
                )
                for k, v in record.items()
            }
        if source.type is not target.type and isinstance(record, (int, float)):
            return float(record) if target.type in (Type.FLOAT32, Type.FLOAT64) else int(record)
        return record


def _check_maybe_compatible(source: Schema, target: Schema, path: str) -> None:
    if source.type is not target.type and not _promotable(source.type, target.type):
        raise SchemaProjectorException(
            f"{path}: schema type mismatch. source type: {source.type.name} and target type: "
            f"{target.type.name}"
        )
    if source.name != target.name:
        raise SchemaProjectorException(
            f"{path}: schema name mismatch. source name: {source.name} and target name: {target.name}"
        )
    if source.parameters != target.parameters:
        raise SchemaProjectorException(
            f"{path}: schema parameters not equal. source parameters: {source.parameters} and "
            f"target parameters: {target.parameters}"
        )


def _check_missing_field(target_schema: Schema, path: str, source: Schema) -> None:
    if not target_schema.optional and target_schema.default_value is None:
        raise SchemaProjectorException(
            f"Required field `{path}` is missing from source schema: {source!r}"
        )


def _key_schemas(source: Schema, target: Schema) -> tuple[Schema, Schema]:
    """The key schemas of two map schemas (of the same type: checked before)."""
    assert source.key_schema is not None and target.key_schema is not None
    return source.key_schema, target.key_schema


def _value_schemas(source: Schema, target: Schema) -> tuple[Schema, Schema]:
    """The element schemas of two array or map schemas (of the same type: checked before)."""
    assert source.value_schema is not None and target.value_schema is not None
    return source.value_schema, target.value_schema


def _project_struct(source: Schema, record: Struct, target: Schema) -> Struct:
    result = Struct(target)
    assert target.fields is not None  # a struct schema has fields
    for target_field in target.fields:
        name = target_field.name
        source_field = source.field(name)
        if source_field is not None:
            try:
                value = SchemaProjector.project(
                    source_field.schema, record.get(name), target_field.schema
                )
            except SchemaProjectorException as e:
                raise SchemaProjectorException(f"Error projecting {name}: {e}") from e
            result.put(name, value)
        else:
            _check_missing_field(target_field.schema, name, source)
            result.put(name, target_field.schema.default_value)
    return result
