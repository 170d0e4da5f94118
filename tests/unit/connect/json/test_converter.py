"""JsonConverter against Kafka Connect's Java JsonConverter: published wire examples,
byte-exact output, error paths, and round-trips of every schema type."""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import math

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connect.json import converter as converter_module
from airflow_provider_connect.connect.json.java_numbers import (
    format_double,
    format_float,
    to_float32,
)
from tests.unit.strategies import schema_and_value, schema_and_values, struct_and_value

UTC = dt.timezone.utc


def converter(**configs: object) -> JsonConverter:
    c = JsonConverter()
    c.configure({k.replace("_", "."): v for k, v in configs.items()}, False)
    return c


@pytest.fixture
def json() -> JsonConverter:
    return converter()


# -- reading: the examples of Kafka's JsonConverterTest ------------------------------------
@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (b'{ "schema": { "type": "boolean" }, "payload": true }', (Schema.BOOLEAN_SCHEMA, True)),
        (b'{ "schema": { "type": "int8" }, "payload": 12 }', (Schema.INT8_SCHEMA, 12)),
        (b'{ "schema": { "type": "int16" }, "payload": 12 }', (Schema.INT16_SCHEMA, 12)),
        (b'{ "schema": { "type": "int32" }, "payload": 12 }', (Schema.INT32_SCHEMA, 12)),
        (b'{ "schema": { "type": "int64" }, "payload": 12 }', (Schema.INT64_SCHEMA, 12)),
        (
            b'{ "schema": { "type": "float" }, "payload": 12.34 }',
            (Schema.FLOAT32_SCHEMA, to_float32(12.34)),
        ),
        (b'{ "schema": { "type": "double" }, "payload": 12.34 }', (Schema.FLOAT64_SCHEMA, 12.34)),
        (
            b'{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }',
            (Schema.BYTES_SCHEMA, b"test-string"),
        ),
        (
            b'{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }',
            (Schema.STRING_SCHEMA, "foo-bar-baz"),
        ),
        (
            b'{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }',
            (SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2, 3]),
        ),
        (
            b'{ "schema": { "type": "map", "keys": { "type" : "string" }, "values": { "type" : "int32" } },'
            b' "payload": { "key1": 12, "key2": 15} }',
            (
                SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
                {"key1": 12, "key2": 15},
            ),
        ),
        (
            b'{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" } },'
            b' "payload": [ [1, 12], [2, 15] ] }',
            (SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build(), {1: 12, 2: 15}),
        ),
        (b'{ "schema": null, "payload": null }', (None, None)),
    ],
)
def test_reads_kafka_examples(
    json: JsonConverter, wire: bytes, expected: tuple[object, object]
) -> None:
    assert json.to_connect_data("topic", wire) == SchemaAndValue(*expected)


def test_reads_struct_example(json: JsonConverter) -> None:
    wire = (
        b'{ "schema": { "type": "struct", "fields": [{ "field": "field1", "type": "boolean" },'
        b' { "field": "field2", "type": "string" }] }, "payload": { "field1": true, "field2": "string" } }'
    )
    schema = (
        SchemaBuilder.struct()
        .field("field1", Schema.BOOLEAN_SCHEMA)
        .field("field2", Schema.STRING_SCHEMA)
        .build()
    )
    assert json.to_connect_data("topic", wire) == (
        schema,
        Struct(schema).put("field1", True).put("field2", "string"),
    )


def test_reads_struct_with_missing_optional_field(json: JsonConverter) -> None:
    wire = (
        b'{ "schema": { "type": "struct", "fields": [{ "field":"optional", "type": "string", "optional": true },'
        b' {  "field": "required", "type": "string" }] }, "payload": { "required": "required" } }'
    )
    result = json.to_connect_data("topic", wire)
    assert result.value.get("optional") is None
    assert result.value.get("required") == "required"


@pytest.mark.parametrize(
    ("wire", "schema", "value"),
    [
        (
            b'{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,'
            b' "parameters": { "scale": "2" } }, "payload": "AJw=" }',
            Decimal.schema(2),
            decimal.Decimal("1.56"),
        ),
        (
            b'{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,'
            b' "parameters": { "scale": "2" } }, "payload": 1.56 }',
            Decimal.schema(2),
            decimal.Decimal("1.56"),
        ),
        (
            b'{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1 },'
            b' "payload": 10000 }',
            Date.SCHEMA,
            dt.date(1997, 5, 19),
        ),
        (
            b'{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1 },'
            b' "payload": 14400000 }',
            Time.SCHEMA,
            dt.time(4, 0),
        ),
        (
            b'{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1 },'
            b' "payload": 4000000000 }',
            Timestamp.SCHEMA,
            dt.datetime(1970, 2, 16, 7, 6, 40, tzinfo=UTC),
        ),
    ],
)
def test_reads_logical_type_examples(
    json: JsonConverter, wire: bytes, schema: Schema, value: object
) -> None:
    assert json.to_connect_data("topic", wire) == (schema, value)


def test_numeric_decimal_keeps_every_digit(json: JsonConverter) -> None:
    """A float cannot hold these digits; the converter re-reads such messages exactly."""
    digits = "12345678901234567890.123456789012345678"
    wire = (
        b'{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,'
        b'"parameters":{"scale":"18"}},"payload":' + digits.encode() + b"}"
    )
    assert json.to_connect_data("t", wire).value == decimal.Decimal(digits)


def test_envelopes_of_a_numeric_decimal_schema_in_a_row(json: JsonConverter) -> None:
    """After the first, such envelopes are read exactly at once; broken ones still fail."""
    prefix = (
        b'{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,'
        b'"parameters":{"scale":"2"}},"payload":'
    )
    for digits in ("1.25", "12345678901234567890.12", "-0.10", "7"):
        value = json.to_connect_data("t", prefix + digits.encode() + b"}").value
        assert value == decimal.Decimal(digits)
    with pytest.raises(DataException, match="serialization error"):
        json.to_connect_data("t", prefix + b"1.2x}")
    with pytest.raises(DataException, match="may not contain additional fields"):
        json.to_connect_data("t", prefix + b'1.2,"extra":1}')


@pytest.mark.parametrize("optional", ["false", "true"])
def test_reads_default_for_null_decimal(json: JsonConverter, optional: str) -> None:
    wire = (
        b'{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,'
        b' "optional": '
        + optional.encode()
        + b', "default": "AJw=", "parameters": { "scale": "2" } }, "payload": null }'
    )
    assert json.to_connect_data("topic", wire).value == decimal.Decimal("1.56")


def test_replace_null_with_default_controls_reading_and_writing() -> None:
    schema = SchemaBuilder.string().optional().default_value("default").build()
    wire_null = b'{"schema":{"type":"string","optional":true,"default":"default"},"payload":null}'
    wire_default = (
        b'{"schema":{"type":"string","optional":true,"default":"default"},"payload":"default"}'
    )
    replacing = converter()
    assert replacing.to_connect_data("t", wire_null).value == "default"
    assert replacing.from_connect_data("t", schema, None) == wire_default
    keeping = converter(replace_null_with_default=False)
    assert keeping.to_connect_data("t", wire_null).value is None
    assert keeping.from_connect_data("t", schema, None) == wire_null


def test_schemaless_reading() -> None:
    plain = converter(schemas_enable="false")
    assert plain.to_connect_data("t", b"true") == (None, True)
    assert plain.to_connect_data("t", b"12") == (None, 12)
    assert plain.to_connect_data("t", b"12.34") == (None, 12.34)
    assert plain.to_connect_data("t", b'{"a": [1, "x"]}') == (None, {"a": [1, "x"]})
    assert plain.to_connect_data("t", b"") == SchemaAndValue.NULL
    assert plain.to_connect_data("t", None) == SchemaAndValue.NULL


def test_tombstone_reads_as_null(json: JsonConverter) -> None:
    assert json.to_connect_data("t", None) == SchemaAndValue.NULL


# -- writing: byte-exact output --------------------------------------------------------------
def test_writes_quickstart_string_exactly(json: JsonConverter) -> None:
    """Kafka's quickstart shows the file source's lines as exactly these bytes."""
    assert (
        json.from_connect_data("t", Schema.STRING_SCHEMA, "foo")
        == b'{"schema":{"type":"string","optional":false},"payload":"foo"}'
    )


def test_writes_struct_exactly_as_java(json: JsonConverter) -> None:
    """The envelope a Java worker writes for this struct (as published for ksql.users)."""
    schema = (
        SchemaBuilder.struct()
        .name("ksql.users")
        .field("registertime", Schema.INT64_SCHEMA)
        .field("userid", Schema.STRING_SCHEMA)
        .field("regionid", Schema.STRING_SCHEMA)
        .field("gender", Schema.STRING_SCHEMA)
        .build()
    )
    value = (
        Struct(schema)
        .put("registertime", 1493819497170)
        .put("userid", "User_1")
        .put("regionid", "Region_5")
        .put("gender", "MALE")
    )
    assert json.from_connect_data("t", schema, value) == (
        b'{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"registertime"},'
        b'{"type":"string","optional":false,"field":"userid"},{"type":"string","optional":false,"field":"regionid"},'
        b'{"type":"string","optional":false,"field":"gender"}],"optional":false,"name":"ksql.users"},'
        b'"payload":{"registertime":1493819497170,"userid":"User_1","regionid":"Region_5","gender":"MALE"}}'
    )


def test_writes_schema_keys_in_java_order(json: JsonConverter) -> None:
    schema = (
        SchemaBuilder.map(Schema.INT32_SCHEMA, SchemaBuilder.array(Schema.OPTIONAL_FLOAT64_SCHEMA))
        .optional()
        .name("m")
        .version(3)
        .doc("docs")
        .parameter("p", "v")
        .default_value({1: [2.5, None]})
        .build()
    )
    assert json.from_connect_data("t", schema, {7: [1e20]}) == (
        b'{"schema":{"type":"map","keys":{"type":"int32","optional":false},'
        b'"values":{"type":"array","items":{"type":"double","optional":true},"optional":false},'
        b'"optional":true,"name":"m","version":3,"doc":"docs","parameters":{"p":"v"},"default":[[1,[2.5,null]]]},'
        b'"payload":[[7,[1.0E20]]]}'
    )


@pytest.mark.parametrize(
    ("schema", "value", "payload"),
    [
        (Decimal.schema(2), decimal.Decimal("1.56"), b'"AJw="'),
        (Decimal.schema(2), decimal.Decimal("-1.56"), b'"/2Q="'),
        (Date.SCHEMA, dt.date(1997, 5, 19), b"10000"),
        (Time.SCHEMA, dt.time(4, 0), b"14400000"),
        (Timestamp.SCHEMA, dt.datetime(1970, 2, 16, 7, 6, 40, tzinfo=UTC), b"4000000000"),
        (Schema.BYTES_SCHEMA, b"test-string", b'"dGVzdC1zdHJpbmc="'),
        (Schema.FLOAT32_SCHEMA, 12.34, b"12.34"),
        (Schema.FLOAT64_SCHEMA, 1e-5, b"1.0E-5"),
        (Schema.FLOAT64_SCHEMA, math.inf, b'"Infinity"'),
        (Schema.FLOAT64_SCHEMA, 3, b"3.0"),
        (
            Schema.STRING_SCHEMA,
            'a"\\\x01\x1f\x7f\u2028\n\t/é',
            b'"a\\"\\\\\\u0001\\u001F\x7f\xe2\x80\xa8\\n\\t/\xc3\xa9"',
        ),
        (Schema.STRING_SCHEMA, "\\u001f", b'"\\\\u001f"'),
    ],
)
def test_writes_values_as_java(
    json: JsonConverter, schema: Schema, value: object, payload: bytes
) -> None:
    out = json.from_connect_data("t", schema, value)
    assert out.endswith(b',"payload":' + payload + b"}")


def test_numeric_decimals_are_written_as_bigdecimal_tostring() -> None:
    numeric = converter(decimal_format="numeric")
    assert numeric.from_connect_data("t", Decimal.schema(2), decimal.Decimal("1.56")).endswith(
        b'"payload":1.56}'
    )
    assert numeric.from_connect_data("t", Decimal.schema(4), decimal.Decimal("1.5600")).endswith(
        b'"payload":1.5600}'
    )
    assert numeric.from_connect_data("t", Decimal.schema(2), decimal.Decimal("1.5")).endswith(
        b'"payload":1.50}'
    )
    assert numeric.from_connect_data("t", Decimal.schema(8), decimal.Decimal("1E-8")).endswith(
        b'"payload":1E-8}'
    )


def test_writes_schemaless_values(json: JsonConverter) -> None:
    assert (
        json.from_connect_data("t", None, [1, "string", True])
        == b'{"schema":null,"payload":[1,"string",true]}'
    )
    assert json.from_connect_data("t", None, {"string": 12, 52: "string", False: True}) == (
        b'{"schema":null,"payload":[["string",12],[52,"string"],[false,true]]}'
    )
    plain = converter(schemas_enable=False)
    assert plain.from_connect_data("t", None, {"a": 1.5, "b": b"hi"}) == b'{"a":1.5,"b":"aGk="}'
    assert plain.from_connect_data("t", None, None) is None


@pytest.mark.parametrize("schemas_enable", [True, False])
@pytest.mark.parametrize("schema", [Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA, None])
def test_values_converted_together_are_the_values_converted_one_by_one(
    schemas_enable: bool, schema: Schema | None
) -> None:
    values: list[object] = ["plain", "ctrl \x1f \x0b", 'quoted "\\u001f"', "é ☃", ""]
    if schema is not Schema.STRING_SCHEMA:
        values.append(None)
    if schema is None:
        values += [12, {"a": [1.5]}]
    c = converter(schemas_enable=schemas_enable)
    together = c.from_connect_values("t", schema, values)
    assert together == [c.from_connect_data("t", schema, v) for v in values]
    assert together[1] is not None and b"\\u001F \\u000B" in together[1]  # as Java writes


def test_values_converted_together_fail_as_one_by_one(json: JsonConverter) -> None:
    with pytest.raises(DataException, match="Converting Kafka Connect data to byte"):
        json.from_connect_values("t", Schema.STRING_SCHEMA, ["fine", 12])
    with pytest.raises(DataException, match="Converting Kafka Connect data to byte"):
        json.from_connect_values("t", Schema.INT32_SCHEMA, [1, "not an int"])
    for schema in (Schema.STRING_SCHEMA, None):  # a lone surrogate, which orjson refuses
        with pytest.raises(DataException, match="Converting Kafka Connect data to byte"):
            json.from_connect_values("t", schema, ["fine", "lone \ud800"])


@settings(max_examples=200, deadline=None)
@given(st.lists(schema_and_value(), min_size=1, max_size=4), st.booleans())
def test_data_read_together_is_the_data_read_one_by_one(
    cases: list[tuple[Schema, object]], schemas_enable: bool
) -> None:
    """Envelopes of several schemas, nulls and the first again, read together: the same
    values as read one by one, whichever schema was read last."""
    c = converter(schemas_enable=schemas_enable)
    datas = [c.from_connect_data("t", schema, value) for schema, value in cases]
    datas += [None, datas[0], datas[0]]
    for _ in range(2):  # the second time, the last schema read is the last of the first
        one_by_one = [c.to_connect_data("t", d) for d in datas]
        assert c.to_connect_values("t", datas) == one_by_one


def test_data_read_together_fails_as_one_by_one(json: JsonConverter) -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    good = json.from_connect_data("t", schema, Struct(schema).put("id", 1))
    assert good is not None
    assert json.to_connect_values("t", [good, good]) == [(schema, Struct(schema).put("id", 1))] * 2
    bad = good.replace(b'"payload":{"id":1}', b'"payload":{"id":"one"}')
    for data in (bad, b"not json", good.replace(b'"payload":{"id":1}', b'"payload":null')):
        with pytest.raises(DataException) as one:
            json.to_connect_data("t", data)
        with pytest.raises(DataException) as together:
            json.to_connect_values("t", [good, data, good])
        assert str(together.value) == str(one.value)


@pytest.mark.parametrize("schemas_enable", [True, False])
def test_structs_converted_together_are_the_structs_converted_one_by_one(
    schemas_enable: bool,
) -> None:
    row = (
        SchemaBuilder.struct()
        .name("row")
        .doc("a doc with a control character \x1f")
        .optional()
        .field("id", Schema.INT32_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .field("flag", SchemaBuilder.bool().optional().default_value(True).build())
        .field("amount", Decimal.builder(2).optional().build())
        .build()
    )
    values: list[object] = [
        Struct(row).put("id", 1).put("note", "ctrl \x1f").put("amount", decimal.Decimal("1.5")),
        Struct(row).put("id", 2),
        None,
    ]
    c = converter(schemas_enable=schemas_enable)
    together = c.from_connect_values("t", row, values)
    assert together == [c.from_connect_data("t", row, v) for v in values]
    assert together[0] is not None and b"ctrl \\u001F" in together[0]  # as Java writes
    assert b'"flag":true' in together[1]  # type: ignore[operator]  # null written as default
    if schemas_enable:
        assert b"character \\u001F" in together[0]  # the schema's doc, escaped alike


@pytest.mark.parametrize(
    "amount",
    [
        0.0,
        -0.0,
        1e-3,
        -1e-3,
        9.99e-4,
        1.25,
        9999999.5,
        -9999999.5,
        1e7,
        -1e7,
        1e300,
        math.nan,
        -math.inf,
    ],
)
def test_a_double_in_a_struct_is_written_as_the_double_alone(amount: float) -> None:
    row = SchemaBuilder.struct().field("amount", Schema.FLOAT64_SCHEMA).build()
    c = converter(schemas_enable=False)
    alone = c.from_connect_data("t", Schema.FLOAT64_SCHEMA, amount)
    assert alone is not None
    expected = b'{"amount":' + alone + b"}"
    value = Struct(row).put("amount", amount)
    assert c.from_connect_values("t", row, [value]) == [expected]
    assert c.from_connect_data("t", row, value) == expected


def test_structs_converted_together_fail_as_one_by_one(json: JsonConverter) -> None:
    row = SchemaBuilder.struct().field("amount", Decimal.builder(2).build()).build()
    fine = Struct(row).put("amount", decimal.Decimal("1.25"))
    unfit = Struct(row).put("amount", decimal.Decimal("1.255"))
    with pytest.raises(DataException, match="mismatching scale") as together:
        json.from_connect_values("t", row, [fine, unfit])
    with pytest.raises(DataException) as alone:
        json.from_connect_data("t", row, unfit)
    assert str(together.value) == str(alone.value)


@settings(max_examples=100, deadline=None)
@given(schema_and_value(), st.booleans())
def test_values_of_any_schema_converted_together(
    case: tuple[Schema, object], schemas_enable: bool
) -> None:
    schema, value = case
    c = converter(schemas_enable=schemas_enable)
    expected = c.from_connect_data("t", schema, value)
    assert c.from_connect_values("t", schema, [value, value]) == [expected, expected]


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(),
    st.text(),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(alphabet="abcé_", max_size=4), SCALARS, max_size=5))
@example({"int64 max": 2**63 - 1, "past it": 2**63})
@example({"int64 min": -(2**63), "past it": -(2**63) - 1})
@example({"a": 1e-3, "b": 1e-4, "c": -1e7, "d": 1e7, "e": 9999999.5, "f": -0.0})
@example({"nan": math.nan, "inf": -math.inf, "ctrl": "\x1f", "bool": True, "null": None})
def test_a_flat_map_is_written_as_its_values_one_by_one(value: dict[str, object]) -> None:
    """A schemaless map of scalars goes to orjson untouched when orjson writes it as Java
    would: the result must be each value as the converter writes it alone (doubles in
    Java's form, int64 bounds, escapes)."""
    c = converter(schemas_enable=False)
    try:
        parts = [c.from_connect_data("t", None, [v])[1:-1] for v in value.values()]  # type: ignore[index]
    except DataException:
        with pytest.raises(DataException):
            c.from_connect_data("t", None, value)
        return
    expected = (
        b"{"
        + b",".join(orjson.dumps(k) + b":" + p for k, p in zip(value, parts, strict=True))
        + b"}"
    )
    assert c.from_connect_data("t", None, value) == expected
    assert c.from_connect_values("t", None, [value, "s"]) == [expected, b'"s"']


def test_writes_headers_like_values(json: JsonConverter) -> None:
    out = json.from_connect_header("t", "h", Schema.STRING_SCHEMA, "test-string")
    assert out == b'{"schema":{"type":"string","optional":false},"payload":"test-string"}'
    assert json.to_connect_header("t", "h", out) == (Schema.STRING_SCHEMA, "test-string")


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (b"{}", 'requires "schema" and "payload" fields'),
        (b'{"schema": null, "payload": 1, "extra": 2}', 'requires "schema" and "payload" fields'),
        (b"not json", "serialization error"),
        (b"", 'requires "schema" and "payload" fields'),
        (b'{"schema": {"type": "nope"}, "payload": 1}', "Unknown schema type: nope"),
        (b'{"schema": {}, "payload": 1}', "Schema must contain 'type' field"),
        (
            b'{"schema": {"type": "array"}, "payload": []}',
            "Array schema did not specify the element type",
        ),
        (
            b'{"schema": {"type": "map", "keys": {"type": "string"}}, "payload": {}}',
            "Map schema did not specify the value type",
        ),
        (
            b'{"schema": {"type": "struct", "fields": [{"type": "int8"}]}, "payload": {}}',
            "field name not specified properly",
        ),
        (b'{"schema": {"type": "struct"}, "payload": {}}', '"fields" argument is not an array'),
        (
            b'{"schema": {"type": "int8", "parameters": {"a": 1}}, "payload": 1}',
            "parameters must have string values",
        ),
        (
            b'{"schema": {"type": "int32"}, "payload": null}',
            "Invalid null value for required INT32 field",
        ),
        (b'{"schema": {"type": "int32"}, "payload": "12"}', "Invalid value for INT32"),
        (b'{"schema": {"type": "int8"}, "payload": 300}', "Invalid value for INT8"),
        (b'{"schema": {"type": "bytes"}, "payload": "***"}', "Invalid bytes field"),
        (b'{"schema": {"type": "boolean"}, "payload": 1}', "Invalid value for BOOLEAN"),
        (
            b'{"schema": {"type": "array", "items": {"type": "int32"}}, "payload": {}}',
            "Arrays should be encoded as JSON arrays",
        ),
        (
            b'{"schema": {"type": "map", "keys": {"type": "int32"}, "values": {"type": "int32"}}, "payload": [[1]]}',
            "Found invalid map entry",
        ),
    ],
)
def test_read_errors_are_data_exceptions(json: JsonConverter, wire: bytes, message: str) -> None:
    with pytest.raises(DataException, match=message.replace("(", r"\(")):
        json.to_connect_data("t", wire)


def test_read_error_names_the_nested_field(json: JsonConverter) -> None:
    wire = (
        b'{"schema":{"type":"struct","fields":[{"type":"struct","field":"address","fields":'
        b'[{"type":"int32","field":"zip"}]}]},"payload":{"address":{"zip":"abc"}}}'
    )
    with pytest.raises(DataException, match=r'field "address\.zip"'):
        json.to_connect_data("t", wire)


def test_write_errors_are_data_exceptions(json: JsonConverter) -> None:
    with pytest.raises(DataException, match="takes float"):
        json.from_connect_data("t", Schema.FLOAT64_SCHEMA, True)
    with pytest.raises(DataException, match="null value for field that is required"):
        json.from_connect_data("t", Schema.INT32_SCHEMA, None)
    with pytest.raises(DataException, match="does not have corresponding schema type"):
        json.from_connect_data("t", None, decimal.Decimal("1.56"))
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match='required.*field "a"'):
        json.from_connect_data("t", schema, Struct(schema))
    other = SchemaBuilder.struct().field("b", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="Mismatching schema"):
        json.from_connect_data("t", schema, Struct(other).put("b", 1))
    with pytest.raises(DataException, match="mismatching scale"):
        json.from_connect_data("t", Decimal.schema(1), decimal.Decimal("1.56"))


def test_invalid_configuration_names_the_key() -> None:
    with pytest.raises(ConfigException, match="decimal.format") as e:
        converter(decimal_format="HEX")
    assert e.value.name == "decimal.format"
    with pytest.raises(ConfigException, match="schemas.enable"):
        converter(schemas_enable="maybe")


# -- caches ---------------------------------------------------------------------------------
def test_schema_caches_are_bounded() -> None:
    small = converter(schemas_cache_size=2)
    for i in range(5):
        schema = SchemaBuilder.int32().name(f"s{i}").build()
        wire = small.from_connect_data("t", schema, i)
        assert small.to_connect_data("t", wire) == (schema, i)
    assert len(small._schema_bytes) <= 2
    assert len(small._schemas_by_json) <= 2


# -- properties -----------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(schema_and_value())
def test_round_trip_with_schemas(case: tuple[Schema, object]) -> None:
    schema, value = case
    c = converter()
    assert c.to_connect_data("t", c.from_connect_data("t", schema, value)) == (schema, value)


@settings(max_examples=200, deadline=None)
@given(schema_and_value())
def test_round_trip_numeric_decimals(case: tuple[Schema, object]) -> None:
    schema, value = case
    c = converter(decimal_format="NUMERIC")
    assert c.to_connect_data("t", c.from_connect_data("t", schema, value)) == (schema, value)


_ANY_JSON = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64) + 1, max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
_MISSING = object()


def _decoded(decode: object, node: object) -> object:
    """What ``decode`` gives for ``node``: the value, or the failure's type, reason and path
    (a DataException, or the signal that the message must be read again with exact numbers)."""
    try:
        return decode(node)  # type: ignore[operator]
    except Exception as e:
        return type(e), str(e), getattr(e, "path", None)


@settings(max_examples=400, deadline=None)
@given(struct_and_value(), st.data(), st.sampled_from(["BASE64", "NUMERIC"]), st.booleans())
def test_a_struct_read_in_one_pass_is_the_struct_read_field_by_field(
    case: tuple[Schema, Struct], data: st.DataObject, decimals: str, replace_null: bool
) -> None:
    """The decoder generated per struct schema gives what the field-by-field one gives, for
    the object the converter writes and for that object with fields changed to other JSON
    values, nulls or left out: the same struct, or the same error naming the same field."""
    schema, value = case
    c = converter(decimal_format=decimals, replace_null_with_default=replace_null)
    payload = orjson.loads(c.from_connect_data("t", schema, value))["payload"]
    changed = dict(payload)
    for field in schema.fields or ():
        replacement = data.draw(
            st.one_of(st.just(payload[field.name]), st.just(_MISSING), _ANY_JSON)
        )
        if replacement is _MISSING:
            changed.pop(field.name, None)
        else:
            changed[field.name] = replacement
    one_pass, field_by_field = c._decoder(schema), c._field_by_field_decoder(schema)
    for node in (payload, changed, [], "text", None):
        assert _decoded(one_pass, node) == _decoded(field_by_field, node)


@settings(max_examples=400, deadline=None)
@given(struct_and_value(), st.data(), st.sampled_from(["BASE64", "NUMERIC"]), st.booleans())
def test_a_struct_written_in_one_pass_is_the_struct_written_field_by_field(
    case: tuple[Schema, Struct], data: st.DataObject, decimals: str, replace_null: bool
) -> None:
    """The encoder generated per struct schema gives what the field-by-field one gives, for
    the struct and for that struct with fields changed to nulls or to values of any type
    (as a struct filled without checks holds them), for a struct of an equal schema and for
    what is no struct: the same dict, or the same error naming the same field."""
    schema, value = case
    c = converter(decimal_format=decimals, replace_null_with_default=replace_null)
    changed = Struct._trusted(
        schema,
        [
            data.draw(st.one_of(st.just(x), st.none(), _ANY_JSON, st.decimals(places=2)))
            for x in value._values
        ],
    )
    equal = Struct._trusted(copy.deepcopy(schema), list(value._values))
    one_pass, field_by_field = c._encoder(schema), c._field_by_field_encoder(schema)
    for struct in (value, changed, equal, {}, "text"):
        assert _encoded(one_pass, struct) == _encoded(field_by_field, struct)


def _encoded(encode: object, value: object) -> object:
    """What ``encode`` gives for ``value``, as orjson writes it (``Fragment`` objects
    compare by identity), or the failure's type, reason and path."""
    try:
        return orjson.dumps(encode(value))  # type: ignore[operator]
    except Exception as e:
        return type(e), str(e), getattr(e, "path", None)


@settings(max_examples=200, deadline=None)
@given(schema_and_values.map(lambda pair: pair[0]))
def test_schema_json_round_trip(schema: Schema) -> None:
    c = converter()
    assert c.as_connect_schema(orjson.loads(orjson.dumps(c.as_json_schema(schema)))) == schema


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_text_reads_back_and_matches_the_fast_path(x: float) -> None:
    text = format_double(x)
    assert float(text) == x
    assert ("E" in text) == (x != 0 and not 1e-3 <= abs(x) < 1e7)
    if 1e-3 <= abs(x) < 1e7:
        assert orjson.dumps(x).decode() == text  # the converter hands these to orjson


@pytest.mark.parametrize(
    ("x", "java"),
    [
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (1e-4, "1.0E-4"),
        (123456789.0, "1.23456789E8"),
        (-1.5e-10, "-1.5E-10"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (5e-324, "4.9E-324"),
        (-0.0, "-0.0"),
        (math.nan, '"NaN"'),
    ],
)
def test_double_text_matches_java(x: float, java: str) -> None:
    assert format_double(x) == java


@pytest.mark.parametrize(
    ("x", "java"),
    [
        (0.1, "0.1"),
        (12.34, "12.34"),
        (1e10, "1.0E10"),
        (16777216.0, "1.6777216E7"),
        (3.4028234663852886e38, "3.4028235E38"),
        (1.401298464324817e-45, "1.4E-45"),
        (1e39, '"Infinity"'),
    ],
)
def test_float_text_matches_java(x: float, java: str) -> None:
    assert format_float(x) == java


def test_non_finite_floats_round_trip(json: JsonConverter) -> None:
    for x in (math.inf, -math.inf):
        assert (
            json.to_connect_data("t", json.from_connect_data("t", Schema.FLOAT64_SCHEMA, x)).value
            == x
        )
    assert math.isnan(
        json.to_connect_data(
            "t", json.from_connect_data("t", Schema.FLOAT64_SCHEMA, math.nan)
        ).value
    )


# -- the same-schema fast path ---------------------------------------------------------------
def test_messages_after_a_cached_schema_are_read_by_their_own_schema(json: JsonConverter) -> None:
    first = json.from_connect_data("t", Schema.INT32_SCHEMA, 1)
    assert json.to_connect_data("t", first) == (Schema.INT32_SCHEMA, 1)
    assert json.to_connect_data("t", first) == (Schema.INT32_SCHEMA, 1)  # via the cached prefix
    other = json.from_connect_data("t", Schema.STRING_SCHEMA, "x")
    assert json.to_connect_data("t", other) == (Schema.STRING_SCHEMA, "x")
    spaced = b'{ "schema": {"type":"int32","optional":false}, "payload": 5 }'
    assert json.to_connect_data("t", spaced) == (Schema.INT32_SCHEMA, 5)


@pytest.mark.parametrize(
    "tail",
    [b',"extra":1}', b',"schema":{"type":"string","optional":false}}'],
)
def test_envelopes_that_only_start_like_a_cached_one_are_checked_in_full(
    json: JsonConverter, tail: bytes
) -> None:
    json.to_connect_data("t", json.from_connect_data("t", Schema.INT32_SCHEMA, 1))
    odd = b'{"schema":{"type":"int32","optional":false},"payload":1' + tail
    if b'"extra"' in tail:
        with pytest.raises(DataException, match='requires "schema" and "payload"'):
            json.to_connect_data("t", odd)
    else:  # a repeated key: the last one wins, as a full parse says
        with pytest.raises(DataException, match="Invalid value for STRING"):
            json.to_connect_data("t", odd)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"007", 7),
        (b"-007", -7),
        (b"00.5", 0.5),
        (b'[01, 2, {"a": 0010}]', [1, 2, {"a": 10}]),
        (b'{"s": "007", "n": 007}', {"s": "007", "n": 7}),  # strings keep their zeros
    ],
)
def test_reads_numbers_with_leading_zeros_as_kafka_does(data: bytes, expected: object) -> None:
    """Kafka's converter reads with Jackson's ALLOW_LEADING_ZEROS_FOR_NUMBERS."""
    schemaless = JsonConverter()
    schemaless.configure({"schemas.enable": "false"}, False)
    assert schemaless.to_connect_data("t", data).value == expected
    enveloped = JsonConverter()
    enveloped.configure({}, False)
    envelope = b'{"schema":{"type":"int32","optional":false},"payload":042}'
    assert enveloped.to_connect_data("t", envelope).value == 42


def test_still_refuses_what_is_not_json_with_leading_zeros() -> None:
    schemaless = JsonConverter()
    schemaless.configure({"schemas.enable": "false"}, False)
    for data in (b"01x", b".5", b"0x10"):
        with pytest.raises(DataException, match="serialization error"):
            schemaless.to_connect_data("t", data)


def test_an_envelope_of_the_last_schema_reads_and_fails_as_a_first_one(json: JsonConverter) -> None:
    """Envelopes of the schema read last are decoded through its decoder kept at hand: the
    values, and the error of a payload that does not fit, are those of a first read."""
    schema = b'{"type":"struct","fields":[{"field":"id","type":"int64","optional":false}]}'

    def envelope(payload: bytes) -> bytes:
        return b'{"schema":' + schema + b',"payload":' + payload + b"}"

    with pytest.raises(DataException) as first:
        converter().to_connect_data("t", envelope(b'{"id":"x"}'))
    assert json.to_connect_data("t", envelope(b'{"id":1}')).value.get("id") == 1
    assert json.to_connect_data("t", envelope(b'{"id":2}')).value.get("id") == 2
    with pytest.raises(DataException) as later:
        json.to_connect_data("t", envelope(b'{"id":"x"}'))
    assert str(later.value) == str(first.value)
    assert json.to_connect_data("t", envelope(b'{"id":3}')).value.get("id") == 3


# -- schema.content (KIP-1054): Kafka's JsonConverterTest cases, and more -------------------
ENVELOPE = b'{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }'


@pytest.mark.parametrize("content", [None, "", "null"])
def test_no_schema_content_reads_envelopes(content: str | None) -> None:
    c = converter(schema_content=content)
    assert c.to_connect_data("t", ENVELOPE) == (Schema.STRING_SCHEMA, "foo-bar-baz")


def test_schema_content_reads_payloads_alone() -> None:
    c = converter(schema_content='{ "type": "string" }')
    assert c.to_connect_data("t", b'"foo-bar-baz"') == (Schema.STRING_SCHEMA, "foo-bar-baz")


def test_schema_content_reads_an_envelope_as_a_payload() -> None:
    """As Kafka's testSchemaContentLooksLikeSchema: the schema in a message is not read."""
    c = converter(
        schema_content='{ "type": "struct", "fields": [{"field": "schema", "type": "struct",'
        '"fields": [{"field": "type", "type": "string" }]}, {"field": "payload", "type": "string"}]}'
    )
    value = c.to_connect_data("t", ENVELOPE).value
    assert isinstance(value, Struct) and value.get("payload") == "foo-bar-baz"
    with pytest.raises(DataException, match='required STRING field \\(field "payload"\\)'):
        converter(
            schema_content='{"type": "struct", "fields": [{"field": "payload", "type": "string"}]}'
        ).to_connect_data("t", b'{"schema": null}')


ORDER_CONTENT = (
    '{"type": "struct", "name": "order", "fields": ['
    '{"field": "id", "type": "int32"},'
    '{"field": "name", "type": "string", "optional": true, "default": "none"},'
    '{"field": "amount", "type": "bytes", "optional": true, "default": 1.50, '
    '"name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}},'
    '{"field": "at", "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"}]}'
)


def test_schema_content_reads_structs_with_defaults_and_logical_types() -> None:
    c = converter(schema_content=ORDER_CONTENT, decimal_format="NUMERIC")
    schema, value = c.to_connect_data("t", b'{"id": 7, "name": null, "at": 0, "amount": 2.25}')
    assert schema is not None and schema.name == "order"
    assert value == Struct(schema).put("id", 7).put("name", "none").put(
        "amount", decimal.Decimal("2.25")
    ).put("at", dt.datetime(1970, 1, 1, tzinfo=UTC))
    assert schema.field("amount").schema.default_value == decimal.Decimal("1.50")  # exact
    kept = converter(schema_content=ORDER_CONTENT, replace_null_with_default=False)
    read = kept.to_connect_data("t", b'{"id": 7, "name": null, "at": 0}').value
    assert read.get_without_default("name") is None


def test_schema_content_reads_nulls_and_tombstones_as_its_schema_says() -> None:
    optional = converter(schema_content='{"type": "int64", "optional": true}')
    assert optional.to_connect_data("t", b"null") == (Schema.OPTIONAL_INT64_SCHEMA, None)
    assert optional.to_connect_data("t", None) == (None, None)  # a tombstone, as in Kafka
    required = converter(schema_content='{"type": "int64"}')
    with pytest.raises(DataException, match="Invalid null value for required INT64 field"):
        required.to_connect_data("t", b"null")
    with pytest.raises(DataException, match="Invalid value for INT64"):
        required.to_connect_data("t", b'"twelve"')


def test_schema_content_applies_only_with_schemas_enabled() -> None:
    c = converter(schema_content='{ "type": "string" }', schemas_enable=False)
    assert c.to_connect_data("t", b'"foo"') == (None, "foo")
    written = converter(schema_content='{ "type": "string" }').from_connect_data(
        "t", Schema.STRING_SCHEMA, "foo"
    )
    assert written == b'{"schema":{"type":"string","optional":false},"payload":"foo"}'


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{ "string" }', "Failed to parse schema in converter config due to serialization error"),
        ('{"type": "nope"}', "Unknown schema type: nope"),
        ("{}", "Schema must contain 'type' field"),
        ('{"type": "array"}', "Array schema did not specify the element type"),
    ],
)
def test_an_invalid_schema_content_is_a_config_error(content: str, reason: str) -> None:
    definition = JsonConverter().config()
    errors = definition.validate_all({"schema.content": content})["schema.content"].error_messages
    assert len(errors) == 1
    assert errors[0].startswith(f"Invalid value {content} for configuration schema.content: ")
    assert reason in errors[0]
    with pytest.raises(ConfigException, match=reason):
        converter(schema_content=content)


@settings(max_examples=200, deadline=None)
@given(st.lists(schema_and_value(), min_size=1, max_size=3))
def test_payloads_read_together_are_the_payloads_read_one_by_one(
    cases: list[tuple[Schema, object]],
) -> None:
    """Payloads alone of the first case's schema, read with it as ``schema.content``,
    together and one by one (with the others, which may not fit it, and a tombstone): the
    same values, or the same error."""
    schema = cases[0][0]
    content = orjson.dumps(JsonConverter().as_json_schema(schema)).decode()
    c = converter(schema_content=content, decimal_format="NUMERIC")
    bare = converter(schemas_enable=False, decimal_format="NUMERIC")
    datas = [bare.from_connect_data("t", s, v) for s, v in cases] + [None]
    datas += [datas[0]]
    try:
        one_by_one: object = [c.to_connect_data("t", d) for d in datas]
    except DataException as e:
        one_by_one = str(e)
    try:
        together: object = c.to_connect_values("t", datas)
    except DataException as e:
        together = str(e)
    assert together == one_by_one
    if cases[0][1] is not None:  # the first payload reads back as it was written
        assert c.to_connect_data("t", datas[0]).value == cases[0][1]


def _general(encode: object, value: object) -> object:
    """What an encoder gives, written, or its failure's type and reason."""
    try:
        return orjson.dumps(encode(value))  # type: ignore[operator]
    except Exception as e:
        return type(e), str(e)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.decimals(allow_nan=True, allow_infinity=True),
        st.decimals(places=2),
        st.sampled_from([decimal.Decimal("-0.00"), decimal.Decimal("-0"), decimal.Decimal("sNaN")]),
        # exponents where the text has no point or has one and an exponent
        st.builds(
            decimal.Decimal.scaleb,
            st.decimals(allow_nan=False, allow_infinity=False, places=0),
            st.integers(min_value=-12, max_value=3),
        ),
        st.integers(),
        st.floats(),
    ),
    st.integers(min_value=-3, max_value=10),
    st.sampled_from(["BASE64", "NUMERIC"]),
)
def test_a_decimal_written_at_once_is_the_decimal_written_by_the_general_path(
    value: object, scale: int, decimals: str
) -> None:
    """The decimal encoder's shortcut (a value that holds the schema's scale) gives what
    rescaling it gives, negative zeros, non-finite values and other types included: the
    same text or bytes, or the same error."""
    schema = Decimal.schema(scale)
    c = converter(decimal_format=decimals)
    if decimals == "NUMERIC":

        def general(v: object) -> object:
            return orjson.Fragment(str(converter_module._rescaled(schema, v, scale)))  # type: ignore[arg-type]
    else:

        def general(v: object) -> object:
            return converter_module._b64(Decimal.bytes_at(v, scale))  # type: ignore[arg-type]

    assert _general(c._encoder(schema), value) == _general(general, value)


@given(
    st.one_of(
        st.datetimes(timezones=st.timezones()),
        st.datetimes(),
        st.dates(),
        st.integers(),
    )
)
def test_a_timestamp_written_at_once_is_the_timestamp_written_by_the_general_path(
    value: object,
) -> None:
    """The timestamp encoder's shortcut (an aware datetime) gives what
    ``Timestamp.from_logical`` gives, for naive, aware and other values alike."""
    c = converter()
    schema = Timestamp.SCHEMA
    assert _general(c._encoder(schema), value) == _general(
        lambda v: Timestamp.from_logical(schema, v), value
    )


def test_a_struct_of_an_equal_schema_object_is_written_in_one_pass() -> None:
    """A connector that makes its schemas again (change capture at each new session) keeps
    the generated encoder: the equal schema object is remembered after one comparison."""
    c = converter()

    def order() -> Schema:
        return SchemaBuilder.struct().name("o").field("id", Schema.INT64_SCHEMA).build()

    first, again = order(), order()
    encode = c._encoder(first)
    assert c.from_connect_data("t", again, Struct(again).put("id", 7)) == c.from_connect_data(
        "t", first, Struct(first).put("id", 7)
    )
    assert c._encoder(again) is encode and encode.__globals__["equal"][0] is again
