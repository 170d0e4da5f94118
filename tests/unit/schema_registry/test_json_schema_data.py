"""The Connect ↔ JSON Schema mapping against Confluent's ``JsonSchemaData`` (its
``testComplex`` types, optional fields, maps, logical types) and JSON Schemas written by
others (no ``connect.*`` annotations), with values through JSON and back."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

import orjson
import pytest

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.schema_registry.json_schema_data import (
    JSON_TYPE_ONE_OF,
    JsonSchemaData,
    JsonSchemaDataConfig,
)

DATA = JsonSchemaData(JsonSchemaDataConfig())


def through_json(connect: Schema, value: Any, data: JsonSchemaData = DATA) -> tuple[Schema, Any]:
    writer = data.writer(connect)
    document = orjson.loads(orjson.dumps(writer.encode(value)))
    reader = data.reader(json.loads(json.dumps(writer.schema)))
    return reader.schema, reader.decode(document)


def test_the_complex_struct_of_confluents_test() -> None:
    connect = (
        SchemaBuilder.struct()
        .field("int8", Schema.INT8_SCHEMA)
        .field("int16", Schema.INT16_SCHEMA)
        .field("int32", Schema.INT32_SCHEMA)
        .field("int64", Schema.INT64_SCHEMA)
        .field("float32", Schema.FLOAT32_SCHEMA)
        .field("float64", Schema.FLOAT64_SCHEMA)
        .field("boolean", Schema.BOOLEAN_SCHEMA)
        .field("string", Schema.STRING_SCHEMA)
        .field("bytes", Schema.BYTES_SCHEMA)
        .field("array", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .build()
    )
    properties = DATA.writer(connect).schema["properties"]
    assert properties == {
        "int8": {"type": "integer", "connect.type": "int8", "connect.index": 0},
        "int16": {"type": "integer", "connect.type": "int16", "connect.index": 1},
        "int32": {"type": "integer", "connect.type": "int32", "connect.index": 2},
        "int64": {"type": "integer", "connect.type": "int64", "connect.index": 3},
        "float32": {"type": "number", "connect.type": "float32", "connect.index": 4},
        "float64": {"type": "number", "connect.type": "float64", "connect.index": 5},
        "boolean": {"type": "boolean", "connect.index": 6},
        "string": {"type": "string", "connect.index": 7},
        "bytes": {"type": "string", "connect.type": "bytes", "connect.index": 8},
        "array": {"type": "array", "items": {"type": "string"}, "connect.index": 9},
        "map": {
            "type": "object",
            "connect.type": "map",
            "additionalProperties": {"type": "integer", "connect.type": "int32"},
            "connect.index": 10,
        },
    }
    value = (
        Struct(connect)
        .put("int8", 12)
        .put("int16", 12)
        .put("int32", 12)
        .put("int64", 12)
        .put("float32", 12.5)
        .put("float64", 12.2)
        .put("boolean", True)
        .put("string", "foo")
        .put("bytes", b"foo")
        .put("array", ["a", "b"])
        .put("map", {"field": 1})
    )
    assert DATA.writer(connect).encode(value)["bytes"] == "Zm9v"  # base64
    assert through_json(connect, value) == (connect, value)


def test_optional_fields_logical_types_and_maps_round_trip() -> None:
    address = (
        SchemaBuilder.struct()
        .name("Address")
        .field("street", Schema.STRING_SCHEMA)
        .optional()
        .build()
    )
    connect = (
        SchemaBuilder.struct()
        .name("Record")
        .doc("a record")
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("address", address)
        .field("amount", Decimal.schema(2))
        .field("birthday", Date.SCHEMA)
        .field("wakeup", Time.SCHEMA)
        .field("created", Timestamp.SCHEMA)
        .field("counts", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA))
        .build()
    )
    written = DATA.writer(connect).schema
    assert written["title"] == "Record" and written["description"] == "a record"
    assert written["properties"]["name"] == {
        "connect.index": 0,
        "oneOf": [{"type": "null"}, {"type": "string"}],
    }
    assert written["properties"]["amount"]["title"] == Decimal.LOGICAL_NAME
    assert written["properties"]["counts"]["type"] == "array"
    value = (
        Struct(connect)
        .put("address", Struct(address).put("street", "Main"))
        .put("amount", decimal.Decimal("1.56"))
        .put("birthday", dt.date(2020, 2, 29))
        .put("wakeup", dt.time(7, 30))
        .put("created", dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
        .put("counts", {1: "one", 2: None})
    )
    document = DATA.writer(connect).encode(value)
    assert document["amount"] == "AJw=" and document["birthday"] == 18321  # base64, days
    assert document["name"] is None  # an optional null is written, a required null left out
    assert through_json(connect, value) == (connect, value)


def test_numeric_decimals_are_numbers_with_their_digits() -> None:
    numeric = JsonSchemaData(JsonSchemaDataConfig(decimal_numeric=True))
    connect = SchemaBuilder.struct().field("amount", Decimal.schema(3)).build()
    writer = numeric.writer(connect)
    assert writer.schema["properties"]["amount"]["type"] == "number"
    reader = numeric.reader(writer.schema)
    assert reader.exact_decimals  # read with decimal.Decimal, not float
    value = reader.decode(json.loads('{"amount": 12345678901234.125}', parse_float=decimal.Decimal))
    assert value.get("amount") == decimal.Decimal("12345678901234.125")


def test_schemas_written_by_others() -> None:
    schema = {
        "title": "User",
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "who"},
            "age": {"type": ["integer", "null"]},
            "score": {"type": "number"},
            "kind": {"enum": ["A", "B"]},
            "either": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "home": {"$ref": "#/$defs/Place"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name"],
        "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    reader = DATA.reader(schema, version=4)
    connect = reader.schema
    assert connect.name == "User" and connect.version == 4
    fields = {f.name: f.schema for f in connect.fields or ()}
    assert list(fields) == ["name", "age", "score", "kind", "either", "home", "tags"]
    assert fields["name"].type.value == "string" and not fields["name"].optional
    assert fields["name"].doc == "who"
    assert fields["age"].type.value == "int64" and fields["age"].optional
    assert fields["score"].type.value == "float64"
    assert fields["kind"].parameters == {
        "io.confluent.connect.json.Enum": "",
        "io.confluent.connect.json.Enum.A": "A",
        "io.confluent.connect.json.Enum.B": "B",
    }
    assert fields["either"].name == JSON_TYPE_ONE_OF
    value = reader.decode(
        {"name": "Ada", "score": 3, "kind": "A", "either": "x", "home": {"city": "Oslo"}}
    )
    assert value.get("either").get(f"{JSON_TYPE_ONE_OF}.field.1") == "x"
    assert value.get("home").get("city") == "Oslo" and value.get("tags") is None
    with pytest.raises(DataException, match="Expected a string"):
        reader.decode({"name": 5})
    optional = JsonSchemaData(JsonSchemaDataConfig(use_optional_for_nonrequired=True))
    loose = {f.name: f.schema for f in optional.reader(schema).schema.fields or ()}
    assert not loose["name"].optional and loose["score"].optional  # "required" now counts


def test_defaults_are_written_as_their_values_json() -> None:
    """A field's default is its value as the encoder writes it (a date as days, bytes as
    base64, a map as an object), read back as the field's default; an unset field takes it."""
    connect = (
        SchemaBuilder.struct()
        .name("com.example.Defaults")
        .field("count", SchemaBuilder.int32().default_value(5).build())
        .field("day", Date.builder().default_value(dt.date(1970, 1, 3)).build())
        .field("blob", SchemaBuilder.bytes().default_value(b"\x01").build())
        .field(
            "attrs",
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA)
            .default_value({"a": 1})
            .build(),
        )
        .build()
    )
    properties = DATA.writer(connect).schema["properties"]
    assert [properties[n]["default"] for n in ("count", "day", "blob", "attrs")] == [
        5,
        2,
        "AQ==",
        {"a": 1},
    ]
    schema, value = through_json(connect, Struct(connect))
    assert [f.schema.default_value for f in schema.fields] == [
        5,
        dt.date(1970, 1, 3),
        b"\x01",
        {"a": 1},
    ]
    assert value.get("count") == 5 and value.get("attrs") == {"a": 1}


@pytest.mark.parametrize(
    ("node", "value", "connect", "decoded"),
    [
        ({"type": "integer", "connect.type": "int8"}, 3, Schema.INT8_SCHEMA, 3),
        ({"type": "integer", "connect.type": "float32"}, 1, Schema.FLOAT32_SCHEMA, 1.0),
        ({"type": "number", "connect.type": "int16"}, 3, Schema.INT16_SCHEMA, 3),
        ({"type": "number", "connect.type": "bytes"}, "AQI=", Schema.BYTES_SCHEMA, "AQI="),
        ({"type": "number"}, 2, Schema.FLOAT64_SCHEMA, 2.0),
        ({"type": "string", "connect.type": "bytes"}, "AQI=", Schema.BYTES_SCHEMA, b"\x01\x02"),
        (
            {"type": "string", "title": "com.x.Name", "default": "d"},
            "s",
            SchemaBuilder.string().name("com.x.Name").default_value("d").build(),
            "s",
        ),
        (
            {"type": "object", "connect.type": "map", "additionalProperties": {"type": "integer"}},
            {"a": 1},
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build(),
            {"a": 1},
        ),
        (
            {
                "type": "array",
                "connect.type": "map",
                "items": {
                    "type": "object",
                    "properties": {"key": {"type": "integer"}, "value": {"type": "string"}},
                },
            },
            [{"key": 1, "value": "v"}],
            SchemaBuilder.map(Schema.INT64_SCHEMA, Schema.STRING_SCHEMA).build(),
            {1: "v"},
        ),
        (
            {"type": "object", "enum": ["a", None, 1]},
            "a",
            SchemaBuilder.string()
            .parameter("io.confluent.connect.json.Enum", "")
            .parameter("io.confluent.connect.json.Enum.a", "a")
            .parameter("io.confluent.connect.json.Enum.<NULL>", "<NULL>")
            .parameter("io.confluent.connect.json.Enum.1", "1")
            .build(),
            "a",
        ),
        (
            {"const": "a"},
            "a",
            SchemaBuilder.string()
            .parameter("io.confluent.connect.json.Enum", "")
            .parameter("io.confluent.connect.json.Enum.a", "a")
            .build(),
            "a",
        ),
    ],
)
def test_each_json_schema_type_reads_as_its_connect_type(
    node: Any, value: Any, connect: Schema, decoded: Any
) -> None:
    reader = DATA.reader(node)
    assert reader.schema == connect
    result = reader.decode(value)
    assert result == decoded and type(result) is type(decoded)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (True, "Schemaless JSON (an empty schema) is not supported here"),
        ({}, "Schemaless JSON (an empty schema) is not supported here"),
        (5, "Unsupported JSON Schema: 5"),
        ({"type": "foo"}, "Unsupported JSON Schema type: 'foo'"),
        ({"type": None}, "Unsupported JSON Schema type: None"),
        ({"type": {"a": 1}}, "Unsupported JSON Schema type: {'a': 1}"),
        ({"type": "array"}, "Array schema did not specify the items type"),
        ({"type": "array", "items": True}, "Array schema did not specify the items type"),
        (
            {
                "type": "array",
                "connect.type": "map",
                "items": {"type": "object", "properties": {"key": {"type": "string"}}},
            },
            "A map encoded as an array needs key and value items",
        ),
    ],
)
def test_json_schemas_connect_cannot_read_are_refused(node: Any, message: str) -> None:
    with pytest.raises(DataException) as raised:
        DATA.reader(node)
    assert str(raised.value) == message


def test_values_of_the_wrong_json_type_are_refused() -> None:
    with pytest.raises(DataException, match="Expected a string, got int 1"):
        DATA.reader({"enum": ["a"]}).decode(1)
    with pytest.raises(DataException, match="Expected a boolean, got int 1"):
        DATA.reader({"type": "boolean"}).decode(1)
