"""JSON Schema payloads: the JSON of :mod:`.json_schema_data`'s values, written with orjson
(as confluent-kafka's ``JSONSerializer`` with its ``json-fast`` extra) and validated with
``jsonschema`` (as its serializers validate) when ``json.fail.invalid.schema`` asks."""

from __future__ import annotations

import decimal
import io
import json
from typing import Any

import jsonschema
import orjson
from confluent_kafka.schema_registry import RegisteredSchema
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry.serde import SchemaId

from airflow_provider_connect.connect.data.schema import Schema
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.schema_registry.json_schema_data import Convert, JsonSchemaData
from airflow_provider_connect.schema_registry.serde import Codec, Encoder, ReadPlan, WritePlan

JSON = "JSON"


def _validator(schema: Any) -> Any:
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def _check(validator: Any, instance: Any) -> None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "/"
        raise DataException(f"The value does not match its JSON Schema at {where}: {error.message}")


def _encoder(encode: Convert, validator: Any | None) -> Encoder:
    def encode_all(values: list[Any], prefix: bytes) -> list[bytes | None]:
        payloads: list[bytes | None] = []
        for value in values:
            if value is None:
                payloads.append(None)
                continue
            document = encode(value)
            if validator is not None:
                _check(validator, document)
            payloads.append(prefix + orjson.dumps(document, default=_json_number))
        return payloads

    return encode_all


def _json_number(value: Any) -> orjson.Fragment:
    """A Decimal (``decimal.format=NUMERIC``) as a JSON number with its digits; orjson
    calls this for what it cannot write itself."""
    if isinstance(value, decimal.Decimal):
        return orjson.Fragment(str(value))
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class JsonSchemaCodec(Codec):
    schema_type = JSON

    def __init__(self, data: JsonSchemaData, validate: bool) -> None:
        self.data = data
        self.validate = validate

    def write_plan(self, schema: Schema) -> WritePlan:
        writer = self.data.writer(schema)
        text = json.dumps(writer.schema, separators=(",", ":"), ensure_ascii=False)
        validator = _validator(writer.schema) if self.validate else None
        return WritePlan(
            RegistrySchema(text, JSON), writer.title, _encoder(writer.encode, validator)
        )

    def latest_plan(
        self, schema: Schema, plan: WritePlan, latest: RegisteredSchema, strict: bool
    ) -> WritePlan:
        document = json.loads(latest.schema.schema_str or "{}")
        validator = _validator(document) if strict or self.validate else None
        writer = self.data.writer(schema)
        return WritePlan(latest.schema, plan.record_name, _encoder(writer.encode, validator))

    def read_plan(
        self,
        writer: RegistrySchema,
        schema_id: SchemaId,
        version: int | None,
        reader: RegistrySchema | None,
    ) -> ReadPlan:
        if writer.references:
            raise DataException("JSON Schemas with references are not supported here")
        document = json.loads((reader or writer).schema_str or "{}")
        connect = self.data.reader(document, version)
        validator = _validator(document) if self.validate else None
        decode_value = connect.decode
        exact = connect.exact_decimals

        def decode(payload: io.BytesIO) -> Any:
            data = payload.read()
            value = json.loads(data, parse_float=decimal.Decimal) if exact else orjson.loads(data)
            if validator is not None:
                _check(validator, value)
            return None if value is None else decode_value(value)

        return ReadPlan(connect.schema, decode)

    def record_name(self, schema: RegistrySchema, schema_id: SchemaId) -> str | None:
        document = json.loads(schema.schema_str or "{}")
        title = document.get("title") if isinstance(document, dict) else None
        return title if isinstance(title, str) else None
