"""The data model: schemas, builders, structs, logical types and projection."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SchemaProjector,
    Struct,
    Time,
    Timestamp,
    Type,
)
from airflow_provider_connect.connect.data.schema import INTEGER_RANGES
from airflow_provider_connect.connect.errors import (
    DataException,
    SchemaBuilderException,
    SchemaProjectorException,
)
from tests.unit.strategies import struct_and_value

UTC = dt.timezone.utc
ADDRESS = SchemaBuilder.struct().name("address").field("zip", Schema.INT32_SCHEMA).build()
USER = (
    SchemaBuilder.struct()
    .name("user")
    .field("id", Schema.INT64_SCHEMA)
    .field("nick", SchemaBuilder.string().optional().default_value("anon"))
    .field("address", ADDRESS)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional())
    .build()
)


# -- schemas ---------------------------------------------------------------------------------
def test_constants_cover_every_primitive_type() -> None:
    for t in Type:
        if t.is_primitive:
            assert getattr(Schema, f"{t.name}_SCHEMA") == Schema(t)
            assert getattr(Schema, f"OPTIONAL_{t.name}_SCHEMA").optional


def test_builder_sets_every_property() -> None:
    schema = (
        SchemaBuilder.int32()
        .name("n")
        .version(2)
        .doc("d")
        .parameter("a", "1")
        .optional()
        .default_value(5)
        .build()
    )
    assert (schema.type, schema.name, schema.version, schema.doc) == (Type.INT32, "n", 2, "d")
    assert schema.parameters == {"a": "1"}
    assert schema.optional and schema.default_value == 5


@pytest.mark.parametrize(
    "call",
    [
        lambda b: b.name("a").name("b"),
        lambda b: b.optional().required(),
        lambda b: b.version(1).version(2),
        lambda b: b.doc("a").doc("b"),
        lambda b: b.default_value(1).default_value(2),
    ],
)
def test_builder_properties_are_set_once(call) -> None:
    with pytest.raises(SchemaBuilderException, match="has already been set"):
        call(SchemaBuilder.int32())


def test_builder_rejects_bad_fields_and_defaults() -> None:
    with pytest.raises(SchemaBuilderException, match="duplication"):
        SchemaBuilder.struct().field("a", Schema.INT8_SCHEMA).field("a", Schema.INT8_SCHEMA)
    with pytest.raises(SchemaBuilderException, match="Cannot create fields on type INT32"):
        SchemaBuilder.int32().field("a", Schema.INT8_SCHEMA)
    with pytest.raises(SchemaBuilderException, match="Invalid default value"):
        SchemaBuilder.int8().default_value(1000).build()
    with pytest.raises(SchemaBuilderException, match="Invalid default value"):
        SchemaBuilder.string().default_value(5).build()


def test_schemas_compare_and_hash_by_value() -> None:
    twin = (
        SchemaBuilder.struct()
        .name("user")
        .field("id", Schema.INT64_SCHEMA)
        .field("nick", SchemaBuilder.string().optional().default_value("anon"))
        .field("address", SchemaBuilder.struct().name("address").field("zip", Schema.INT32_SCHEMA))
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional())
        .build()
    )
    assert twin == USER and hash(twin) == hash(USER)
    assert SchemaBuilder.struct().name("user").build() != USER
    assert {USER: 1}[twin] == 1


def test_field_lookup() -> None:
    assert USER.field("nick").index == 1
    assert USER.field("missing") is None
    with pytest.raises(DataException, match="non-struct"):
        Schema.INT32_SCHEMA.field("a")


def test_schema_and_value_null() -> None:
    assert SchemaAndValue(None, None) == SchemaAndValue.NULL


# -- structs ---------------------------------------------------------------------------------
def full_user() -> Struct:
    return Struct(USER).put("id", 1).put("address", Struct(ADDRESS).put("zip", 12345))


def test_struct_get_and_defaults() -> None:
    user = full_user()
    assert user.get("nick") == "anon"
    assert user.get_without_default("nick") is None
    assert user.get(USER.field("id")) == 1
    assert user.items() == [(f.name, user.get(f.name)) for f in USER.fields]
    user.validate()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("id", "1", 'field "id": schema type INT64 takes int, got str'),
        ("id", True, 'field "id": schema type INT64 takes int, got bool'),
        ("id", 2**63, 'for field "id": out of range for INT64'),
        ("id", None, 'null used for required field: "id"'),
        ("tags", ["a", 1], r'field "tags\[1\]": schema type STRING takes str'),
        ("address", "x", 'field "address": schema type STRUCT takes Struct'),
        ("missing", 1, "missing is not a valid field name"),
    ],
)
def test_struct_put_validates_and_names_the_field(field: str, value: object, message: str) -> None:
    with pytest.raises(DataException, match=message):
        Struct(USER).put(field, value)


def test_struct_validate_names_missing_required_fields() -> None:
    with pytest.raises(DataException, match='required field: "address", schema type: STRUCT'):
        Struct(USER).put("id", 1).validate()
    with pytest.raises(DataException, match='required field: "address.zip"'):
        Struct(USER).put("address", Struct(ADDRESS))  # a nested struct is validated on put


def test_struct_rejects_another_schema() -> None:
    other = SchemaBuilder.struct().name("other").field("zip", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="Struct schemas do not match"):
        Struct(USER).put("address", Struct(other).put("zip", 1))


def test_struct_equality_is_by_value() -> None:
    assert full_user() == full_user()
    assert full_user() != full_user().put("id", 2)
    with pytest.raises(DataException, match="Not a struct schema"):
        Struct(Schema.INT32_SCHEMA)


def test_floats_accept_ints_and_bytes_accept_bytearray() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("f", Schema.FLOAT64_SCHEMA)
        .field("b", Schema.BYTES_SCHEMA)
        .build()
    )
    value = Struct(schema).put("f", 3).put("b", bytearray(b"x"))
    assert value == Struct(schema).put("f", 3.0).put("b", b"x")


# -- logical types ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "scale", "wire"),
    [
        ("1.56", 2, b"\x00\x9c"),
        ("-1.56", 2, b"\xff\x64"),
        ("0", 2, b"\x00"),
        ("1.27", 2, b"\x7f"),
        ("1.28", 2, b"\x00\x80"),
        ("-1.28", 2, b"\x80"),
        ("-1.29", 2, b"\xff\x7f"),
        ("1.5", 2, b"\x00\x96"),
        ("12300", -2, b"\x7b"),
    ],
)
def test_decimal_bytes_match_biginteger_to_byte_array(value: str, scale: int, wire: bytes) -> None:
    schema = Decimal.schema(scale)
    assert Decimal.from_logical(schema, decimal.Decimal(value)) == wire
    assert Decimal.to_logical(schema, wire) == decimal.Decimal(value)


def test_decimal_keeps_precision_beyond_the_decimal_context() -> None:
    big = decimal.Decimal("123456789012345678901234567890123456789.123456789")
    schema = Decimal.schema(9)
    assert Decimal.to_logical(schema, Decimal.from_logical(schema, big)) == big


def test_decimal_errors() -> None:
    with pytest.raises(DataException, match="mismatching scale"):
        Decimal.from_logical(Decimal.schema(1), decimal.Decimal("1.25"))
    with pytest.raises(DataException, match="scale parameter not found"):
        Decimal.scale(SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).build())
    with pytest.raises(DataException, match="schema does not match"):
        Decimal.from_logical(Schema.BYTES_SCHEMA, decimal.Decimal(1))
    with pytest.raises(DataException, match="not finite"):
        Decimal.from_logical(Decimal.schema(1), decimal.Decimal("NaN"))


def test_date_time_timestamp_conversions() -> None:
    assert Date.from_logical(Date.SCHEMA, dt.date(1997, 5, 19)) == 10000
    assert Date.to_logical(Date.SCHEMA, -1) == dt.date(1969, 12, 31)
    assert Time.from_logical(Time.SCHEMA, dt.time(4, 0, 0, 999_999)) == 14_400_999
    assert Time.to_logical(Time.SCHEMA, 14_400_000) == dt.time(4, 0)
    assert (
        Time.from_logical(Time.SCHEMA, dt.time(1, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))))
        == 23 * 3_600_000
    )
    moment = dt.datetime(1970, 2, 16, 7, 6, 40, tzinfo=UTC)
    assert Timestamp.from_logical(Timestamp.SCHEMA, moment) == 4_000_000_000
    assert Timestamp.from_logical(Timestamp.SCHEMA, moment.replace(tzinfo=None)) == 4_000_000_000
    assert (
        Timestamp.from_logical(
            Timestamp.SCHEMA, dt.datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=UTC)
        )
        == -1
    )
    assert Timestamp.to_logical(Timestamp.SCHEMA, 4_000_000_000) == moment


def test_logical_type_errors() -> None:
    with pytest.raises(DataException, match="takes a datetime.date"):
        Date.from_logical(Date.SCHEMA, dt.datetime(2020, 1, 1))
    with pytest.raises(DataException, match="less than 86400000"):
        Time.to_logical(Time.SCHEMA, 86_400_000)
    with pytest.raises(DataException, match="takes datetime.date"):
        Struct(SchemaBuilder.struct().field("d", Date.SCHEMA).build()).put(
            "d", dt.datetime(2020, 1, 1)
        )
    with pytest.raises(DataException, match="takes decimal.Decimal"):
        Struct(SchemaBuilder.struct().field("d", Decimal.schema(2)).build()).put("d", 1.5)


# -- projection ------------------------------------------------------------------------------
V1 = (
    SchemaBuilder.struct()
    .name("r")
    .field("id", Schema.INT32_SCHEMA)
    .field("extra", Schema.STRING_SCHEMA)
    .build()
)
V2 = (
    SchemaBuilder.struct()
    .name("r")
    .field("id", Schema.INT64_SCHEMA)
    .field("score", SchemaBuilder.float64().default_value(0.5))
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


def test_projects_struct_with_promotion_defaults_and_dropped_fields() -> None:
    projected = SchemaProjector.project(V1, Struct(V1).put("id", 7).put("extra", "x"), V2)
    assert projected == Struct(V2).put("id", 7).put("score", 0.5)
    assert SchemaProjector.is_compatible(V1, V2)


def test_projection_promotes_numbers_and_nests() -> None:
    assert SchemaProjector.project(Schema.INT8_SCHEMA, 3, Schema.FLOAT64_SCHEMA) == 3.0
    source = SchemaBuilder.map(
        Schema.STRING_SCHEMA, SchemaBuilder.array(Schema.INT16_SCHEMA)
    ).build()
    target = SchemaBuilder.map(
        Schema.STRING_SCHEMA, SchemaBuilder.array(Schema.INT64_SCHEMA)
    ).build()
    assert SchemaProjector.project(source, {"a": [1, 2]}, target) == {"a": [1, 2]}
    optional_default = SchemaBuilder.int32().default_value(9).build()
    assert SchemaProjector.project(Schema.OPTIONAL_INT32_SCHEMA, None, optional_default) == 9


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        (Schema.INT64_SCHEMA, Schema.INT32_SCHEMA, "type mismatch"),
        (Schema.STRING_SCHEMA, Schema.INT32_SCHEMA, "type mismatch"),
        (Decimal.schema(2), Decimal.schema(3), "parameters not equal"),
        (Date.SCHEMA, Schema.INT32_SCHEMA, "name mismatch"),
        (Schema.OPTIONAL_INT32_SCHEMA, Schema.INT32_SCHEMA, "does not provide a default"),
        (
            V2,
            SchemaBuilder.struct()
            .name("r")
            .field("id", Schema.INT64_SCHEMA)
            .field("extra", Schema.STRING_SCHEMA)
            .build(),
            "Required field `value.extra` is missing",
        ),
        (
            SchemaBuilder.struct().name("r").field("id", Schema.STRING_SCHEMA).build(),
            V2,
            r"value\.id: schema type mismatch",
        ),
    ],
)
def test_incompatible_schemas_are_named(source: Schema, target: Schema, message: str) -> None:
    with pytest.raises(SchemaProjectorException, match=message):
        SchemaProjector.check_compatible(source, target)
    assert not SchemaProjector.is_compatible(source, target)


def test_projecting_a_null_into_a_required_field_without_default_fails() -> None:
    with pytest.raises(SchemaProjectorException, match="does not provide a default"):
        SchemaProjector.project(Schema.OPTIONAL_INT32_SCHEMA, None, Schema.INT32_SCHEMA)


def test_struct_of_builds_what_puts_build_and_names_the_first_bad_field() -> None:
    user = Struct.of(USER, {"id": 7, "address": Struct.of(ADDRESS, {"zip": 1234})})
    assert user == Struct(USER).put("id", 7).put("address", Struct(ADDRESS).put("zip", 1234))
    assert user.get("nick") == "anon"  # unset: read as its default
    with pytest.raises(DataException, match="id"):
        Struct.of(USER, {"id": "7", "address": Struct(ADDRESS).put("zip", 1)})
    with pytest.raises(DataException, match="address"):  # a required field lacking
        Struct.of(USER, {"id": 7})
    with pytest.raises(DataException, match="age is not a valid field name"):
        Struct.of(USER, {"id": 7, "age": 3})


_ODD_VALUES = [None, True, 0, -129, 2**31, 2**63, 1.5, "s", b"b", [], {}, decimal.Decimal(1)]


def _integer_edges(schema: Schema) -> list[int]:
    """For an integer type, its bounds and the integers just past them."""
    if schema.type not in INTEGER_RANGES:
        return []
    low, high = INTEGER_RANGES[schema.type]
    return [low - 1, low, high, high + 1]


def _odd_values(schema: Schema) -> st.SearchStrategy[Any]:
    """Values of other types than ``schema``'s, and :func:`_integer_edges`."""
    return st.sampled_from(_ODD_VALUES + _integer_edges(schema))


def _put_and_validate(schema: Schema, values: dict[str, Any]) -> Struct | type[DataException]:
    try:
        struct = Struct(schema)
        for name, value in values.items():
            struct.put(name, value)
        struct.validate()
    except DataException:
        return DataException
    return struct


@pytest.mark.parametrize("optional", [False, True])
@pytest.mark.parametrize("field_type", [t for t in Type if t.is_primitive])
def test_struct_of_judges_each_primitive_type_as_put_does(field_type: Type, optional: bool) -> None:
    """Every primitive type, required or optional, against values of every other type and
    an integer type's bounds and the integers just past them."""
    builder = SchemaBuilder(field_type)
    schema = SchemaBuilder.struct().field("f", builder.optional() if optional else builder).build()
    for value in [*_ODD_VALUES, *_integer_edges(schema.fields[0].schema), -1.5, bytearray(b"x")]:
        try:
            built: Struct | type[DataException] = Struct.of(schema, {"f": value})
        except DataException:
            built = DataException
        assert built == _put_and_validate(schema, {"f": value}), value


@given(
    pair=struct_and_value(),
    data=st.data(),
)
@settings(max_examples=500, deadline=None)
def test_struct_of_judges_values_as_put_and_validate_do(
    pair: tuple[Schema, Struct], data: Any
) -> None:
    """Whatever the values, Struct.of gives what a put per field and validate() give: the
    same struct, or a DataException (a value of another type or out of range, a required
    field lacking)."""
    schema, value = pair
    values = {f.name: value.get_without_default(f.name) for f in schema.fields}
    assert Struct.of(schema, values) == value
    field = data.draw(st.sampled_from(schema.fields))
    if data.draw(st.booleans()):
        del values[field.name]
    else:
        values[field.name] = data.draw(_odd_values(field.schema))
    try:
        built: Struct | type[DataException] = Struct.of(schema, values)
    except DataException:
        built = DataException
    assert built == _put_and_validate(schema, values)
