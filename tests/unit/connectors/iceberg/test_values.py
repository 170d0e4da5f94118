"""Records to Arrow for Iceberg, after Apache's TestRecordConverter; a round trip through a
real SqlCatalog table."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import gc
import json
import uuid

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

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
from airflow_provider_connect.connectors.iceberg.schemas import iceberg_schema
from airflow_provider_connect.connectors.iceberg.values import HeldRows, RowConverter, converter_of

UTC = dt.timezone.utc
SCHEMA = IcebergSchema(
    NestedField(20, "i", IntegerType(), required=True),
    NestedField(21, "l", LongType(), required=True),
    NestedField(22, "d", DateType(), required=True),
    NestedField(23, "t", TimeType(), required=True),
    NestedField(24, "ts", TimestampType(), required=True),
    NestedField(25, "tsz", TimestamptzType(), required=True),
    NestedField(26, "fl", FloatType(), required=True),
    NestedField(27, "do", DoubleType(), required=True),
    NestedField(28, "dec", DecimalType(9, 2), required=True),
    NestedField(29, "s", StringType(), required=True),
    NestedField(30, "b", BooleanType(), required=True),
    NestedField(31, "u", UUIDType(), required=True),
    NestedField(32, "f", FixedType(3), required=True),
    NestedField(33, "bi", BinaryType(), required=True),
    NestedField(34, "li", ListType(35, StringType(), element_required=True), required=True),
    NestedField(
        36, "ma", MapType(37, StringType(), 38, StringType(), value_required=True), required=True
    ),
    NestedField(39, "extra", StringType(), required=False),
)
NESTED_SCHEMA = IcebergSchema(
    NestedField(1, "ii", IntegerType(), required=True),
    NestedField(2, "st", SCHEMA.as_struct(), required=True),
)
SIMPLE_SCHEMA = IcebergSchema(
    NestedField(1, "ii", IntegerType(), required=True),
    NestedField(2, "st", StringType(), required=True),
)

CONNECT_SCHEMA = (
    SchemaBuilder.struct()
    .field("i", Schema.INT32_SCHEMA)
    .field("l", Schema.INT64_SCHEMA)
    .field("d", Date.SCHEMA)
    .field("t", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("tsz", Timestamp.SCHEMA)
    .field("fl", Schema.FLOAT32_SCHEMA)
    .field("do", Schema.FLOAT64_SCHEMA)
    .field("dec", Decimal.schema(2))
    .field("s", Schema.STRING_SCHEMA)
    .field("b", Schema.BOOLEAN_SCHEMA)
    .field("u", Schema.STRING_SCHEMA)
    .field("f", Schema.BYTES_SCHEMA)
    .field("bi", Schema.BYTES_SCHEMA)
    .field("li", SchemaBuilder.array(Schema.STRING_SCHEMA))
    .field("ma", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA))
    .build()
)
CONNECT_NESTED_SCHEMA = (
    SchemaBuilder.struct().field("ii", Schema.INT32_SCHEMA).field("st", CONNECT_SCHEMA).build()
)

DATE_VAL = dt.date(2023, 5, 18)
TIME_VAL = dt.time(7, 14, 21)
TS_VAL = dt.datetime(2023, 5, 18, 7, 14, 21)
TSZ_VAL = dt.datetime(2023, 5, 18, 7, 14, 21, tzinfo=UTC)
DEC_VAL = decimal.Decimal("12.34")
UUID_VAL = uuid.uuid4()
BYTES_VAL = bytes([1, 2, 3])
LIST_VAL = ["hello", "world"]
MAP_VAL = {"one": "1", "two": "2"}
MAPPED_CNT = len(SCHEMA.fields) - 1


def map_data() -> dict:
    return {
        "i": 1,
        "l": 2,
        "d": DATE_VAL.isoformat(),
        "t": TIME_VAL.isoformat(),
        "ts": TS_VAL.isoformat(),
        "tsz": TSZ_VAL.isoformat(),
        "fl": 1.1,
        "do": 2.2,
        "dec": str(DEC_VAL),
        "s": "foobar",
        "b": True,
        "u": str(UUID_VAL),
        "f": base64.b64encode(BYTES_VAL).decode(),
        "bi": base64.b64encode(BYTES_VAL).decode(),
        "li": LIST_VAL,
        "ma": MAP_VAL,
    }


def struct_data() -> Struct:
    return Struct.of(
        CONNECT_SCHEMA,
        {
            "i": 1,
            "l": 2,
            "d": DATE_VAL,
            "t": TIME_VAL,
            "ts": TS_VAL,
            "tsz": TSZ_VAL,
            "fl": 1.1,
            "do": 2.2,
            "dec": DEC_VAL,
            "s": "foobar",
            "b": True,
            "u": str(UUID_VAL),
            "f": BYTES_VAL,
            "bi": BYTES_VAL,
            "li": LIST_VAL,
            "ma": MAP_VAL,
        },
    )


def assert_record_values(row: dict) -> None:
    assert row["i"] == 1
    assert row["l"] == 2
    assert row["d"] == DATE_VAL
    assert row["t"] == TIME_VAL
    assert row["ts"] == TS_VAL
    assert row["tsz"] == TSZ_VAL
    assert row["fl"] == pytest.approx(1.1)
    assert row["do"] == 2.2
    assert row["dec"] == DEC_VAL
    assert row["s"] == "foobar"
    assert row["b"] is True
    assert row["u"] == UUID_VAL
    assert row["f"] == BYTES_VAL
    assert row["bi"] == BYTES_VAL
    assert row["li"] == LIST_VAL
    assert dict(row["ma"]) == MAP_VAL
    assert row["extra"] is None


def convert(schema: IcebergSchema, *values, case_insensitive: bool = False) -> list[dict]:
    table = RowConverter(schema, case_insensitive).to_arrow(list(values))
    assert table.schema.equals(RowConverter(schema).arrow_schema)
    return table.to_pylist()


def test_map_convert() -> None:
    assert_record_values(convert(SCHEMA, map_data())[0])


def test_struct_convert() -> None:
    assert_record_values(convert(SCHEMA, struct_data())[0])


def test_nested_map_and_struct_convert() -> None:
    for value in (
        {"ii": 11, "st": map_data()},
        Struct.of(CONNECT_NESTED_SCHEMA, {"ii": 11, "st": struct_data()}),
    ):
        row = convert(NESTED_SCHEMA, value)[0]
        assert row["ii"] == 11
        assert_record_values(row["st"])


def test_empty_list_and_map_convert() -> None:
    row = convert(SCHEMA, {**map_data(), "li": [], "ma": {}})[0]
    assert (row["li"], row["ma"]) == ([], [])


def test_map_and_struct_to_string() -> None:
    for value in (
        {"ii": 11, "st": map_data()},
        Struct.of(CONNECT_NESTED_SCHEMA, {"ii": 11, "st": struct_data()}),
    ):
        assert len(json.loads(convert(SIMPLE_SCHEMA, value)[0]["st"])) == MAPPED_CNT


def test_structs_in_lists_and_maps() -> None:
    in_list = IcebergSchema(
        NestedField(100, "stli", ListType(101, NESTED_SCHEMA.as_struct()), required=True)
    )
    in_map = IcebergSchema(
        NestedField(
            100, "stma", MapType(101, StringType(), 102, NESTED_SCHEMA.as_struct()), required=True
        )
    )
    nested_map = {"ii": 11, "st": map_data()}
    nested_struct = Struct.of(CONNECT_NESTED_SCHEMA, {"ii": 11, "st": struct_data()})
    list_schema = (
        SchemaBuilder.struct().field("stli", SchemaBuilder.array(CONNECT_NESTED_SCHEMA)).build()
    )
    map_schema = (
        SchemaBuilder.struct()
        .field("stma", SchemaBuilder.map(Schema.STRING_SCHEMA, CONNECT_NESTED_SCHEMA))
        .build()
    )
    for listed, mapped in (
        (
            {"stli": [nested_map] * 2},
            {"stma": {"key1": nested_map, "key2": nested_map}},
        ),
        (
            Struct.of(list_schema, {"stli": [nested_struct] * 2}),
            Struct.of(map_schema, {"stma": {"key1": nested_struct, "key2": nested_struct}}),
        ),
    ):
        assert_record_values(convert(in_list, listed)[0]["stli"][0]["st"])
        assert_record_values(dict(convert(in_map, mapped)[0]["stma"])["key1"]["st"])


@pytest.mark.parametrize("case_insensitive", [False, True])
def test_case_sensitivity(case_insensitive: bool) -> None:
    schema = IcebergSchema(NestedField(1, "ii", IntegerType(), required=False))
    struct = Struct.of(SchemaBuilder.struct().field("II", Schema.INT32_SCHEMA).build(), {"II": 123})
    rows = convert(schema, {"II": 123}, struct, case_insensitive=case_insensitive)
    expected = 123 if case_insensitive else None
    assert [r["ii"] for r in rows] == [expected, expected]


def test_output_follows_the_table_order_not_the_record_order() -> None:
    schema = IcebergSchema(
        NestedField(1, "a", LongType(), required=True),
        NestedField(2, "b", LongType(), required=True),
    )
    connect = (
        SchemaBuilder.struct()
        .field("b", Schema.INT64_SCHEMA)
        .field("a", Schema.INT64_SCHEMA)
        .build()
    )
    table = RowConverter(schema).to_arrow([Struct.of(connect, {"b": 200, "a": 100})])
    assert table.column_names == ["a", "b"]
    assert table.to_pylist() == [{"a": 100, "b": 200}]


def test_rows_held_are_the_rows_given_and_the_collector_does_not_walk_them() -> None:
    """Structs of two schemas (one with a default, read as ``Struct.get`` reads it) and maps,
    held, give the table the same values give; the held structs of scalars are tuples the
    garbage collector no longer tracks once it has seen them."""
    schema = IcebergSchema(
        NestedField(1, "a", LongType(), required=True),
        NestedField(2, "b", StringType(), required=False),
    )
    plain = SchemaBuilder.struct().field("a", Schema.INT64_SCHEMA).build()
    with_default = (
        SchemaBuilder.struct()
        .field("a", Schema.INT64_SCHEMA)
        .field("b", SchemaBuilder.string().optional().default_value("b!").build())
        .build()
    )
    values = [
        Struct.of(plain, {"a": 1}),
        Struct.of(plain, {"a": 2}),
        Struct.of(with_default, {"a": 3}),
        {"a": 4, "b": "map"},
        Struct.of(plain, {"a": 5}),
    ]
    held = HeldRows.of(values)
    converter = RowConverter(schema)

    assert [(s, len(run)) for s, run in held.runs] == [
        (plain, 2),
        (with_default, 1),
        (None, 1),
        (plain, 1),
    ]
    assert converter.to_arrow(held).to_pylist() == converter.to_arrow(values).to_pylist()
    assert converter.to_arrow(held).to_pylist() == [
        {"a": 1, "b": None},
        {"a": 2, "b": None},
        {"a": 3, "b": "b!"},
        {"a": 4, "b": "map"},
        {"a": 5, "b": None},
    ]
    gc.collect()
    assert not any(gc.is_tracked(row) for row in held.runs[0][1])


def conv(iceberg_type):
    return converter_of(iceberg_type, "c", False)


def test_number_conversions() -> None:
    for value in ("123", 123.0, 123):
        assert conv(IntegerType())(value) == 123
        assert conv(LongType())(value) == 123
        assert conv(FloatType())(value) == 123.0
        assert conv(DoubleType())(value) == 123.0
    with pytest.raises(TypeError):
        conv(IntegerType())(True)


def test_decimal_conversion() -> None:
    for value in ("123.45", 123.45, decimal.Decimal("123.45")):
        assert conv(DecimalType(10, 2))(value) == decimal.Decimal("123.45")
    for value in ("123", 123, decimal.Decimal(123), 123.0):
        assert conv(DecimalType(10, 0))(value) == decimal.Decimal(123)
    assert conv(DecimalType(10, 1))(decimal.Decimal("1.25")) == decimal.Decimal("1.3")  # half up


def test_boolean_and_string_conversions() -> None:
    assert conv(BooleanType())("TRUE") is True
    assert conv(BooleanType())("yes") is False
    assert conv(StringType())(True) == "true"
    assert conv(StringType())(12) == "12"
    assert conv(StringType())({"a": [1]}) == '{"a":[1]}'


def test_date_conversion() -> None:
    expected = dt.date(2023, 11, 15)
    days = (expected - dt.date(1970, 1, 1)).days
    for value in ("2023-11-15", days, expected, dt.datetime(2023, 11, 15, 3, tzinfo=UTC)):
        assert conv(DateType())(value) == expected


def test_time_conversion() -> None:
    expected = dt.time(7, 51, 30, 888_000)
    millis = ((7 * 60 + 51) * 60 + 30) * 1000 + 888
    aware = dt.time(8, 51, 30, 888_000, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    for value in ("07:51:30.888", millis, expected, aware):
        assert conv(TimeType())(value) == expected


TS_STRINGS = [
    "2023-05-18T11:22:33Z",
    "2023-05-18 11:22:33Z",
    "2023-05-18T11:22:33+00",
    "2023-05-18 11:22:33+00",
    "2023-05-18T11:22:33+00:00",
    "2023-05-18 11:22:33+00:00",
    "2023-05-18T11:22:33+0000",
    "2023-05-18 11:22:33+0000",
    "2023-05-18T11:22:33",
    "2023-05-18 11:22:33",
]
OFFSET_STRINGS = [
    "2023-05-18T03:22:33-08",
    "2023-05-18 03:22:33-08",
    "2023-05-18T03:22:33-08:00",
    "2023-05-18 03:22:33-08:00",
    "2023-05-18T03:22:33-0800",
    "2023-05-18 03:22:33-0800",
]


def test_timestamp_with_zone_conversion() -> None:
    expected = dt.datetime(2023, 5, 18, 11, 22, 33, tzinfo=UTC)
    millis = int(expected.timestamp() * 1000)
    arrow_type = pa.timestamp("us", tz="UTC")
    for value in [*TS_STRINGS, *OFFSET_STRINGS, millis, expected, expected.replace(tzinfo=None)]:
        # a naive datetime is passed on as it is: pyarrow reads it as UTC, as Connect does
        assert pa.scalar(conv(TimestamptzType())(value), arrow_type).as_py() == expected
    fractional = dt.datetime(2026, 3, 31, 3, 17, 37, 260514, tzinfo=UTC)
    for value in (
        "2026-03-31T03:17:37.260514+00:00",
        "2026-03-31 03:17:37.260514+0000",
        "2026-03-31T03:17:37.260514Z",
    ):
        assert conv(TimestamptzType())(value) == fractional


def test_timestamp_without_zone_conversion() -> None:
    expected = dt.datetime(2023, 5, 18, 11, 22, 33)
    millis = int(expected.replace(tzinfo=UTC).timestamp() * 1000)
    for value in [*TS_STRINGS, millis, expected, expected.replace(tzinfo=UTC)]:
        assert conv(TimestampType())(value) == expected
    # the zone of a string is ignored
    for value in OFFSET_STRINGS:
        assert conv(TimestampType())(value) == dt.datetime(2023, 5, 18, 3, 22, 33)


def test_uuid_and_binary_conversions() -> None:
    assert conv(UUIDType())(str(UUID_VAL)) == UUID_VAL.bytes
    assert conv(UUIDType())(UUID_VAL) == UUID_VAL.bytes
    assert conv(BinaryType())(base64.b64encode(b"ab").decode()) == b"ab"
    assert conv(BinaryType())(bytearray(b"ab")) == b"ab"


def test_required_column_null_is_named() -> None:
    with pytest.raises(DataException, match=r"Record 1 of the batch: Required column 'l' is null"):
        RowConverter(SCHEMA).to_arrow([map_data(), {**map_data(), "l": None}])
    nested = {"ii": 1, "st": {**map_data(), "d": None}}
    with pytest.raises(DataException, match=r"Required column 'st\.d' is null"):
        RowConverter(NESTED_SCHEMA).to_arrow([nested])
    with pytest.raises(DataException, match=r"Required column 'li\.element' is null"):
        RowConverter(SCHEMA).to_arrow([{**map_data(), "li": ["a", None]}])


def test_unconvertible_values_are_named() -> None:
    with pytest.raises(DataException, match=r"Record 0 of the batch: Cannot convert column 'i'"):
        RowConverter(SCHEMA).to_arrow([{**map_data(), "i": "one"}])
    with pytest.raises(DataException, match=r"Cannot convert column 'i'"):
        RowConverter(SCHEMA).to_arrow([{**map_data(), "i": 2**40}])
    with pytest.raises(DataException, match="Cannot convert a record"):
        RowConverter(SCHEMA).to_arrow(["not a record"])


def test_empty_batch() -> None:
    table = RowConverter(SCHEMA).to_arrow([])
    assert table.num_rows == 0 and table.schema.names == [f.name for f in SCHEMA.fields]


def test_round_trip_through_a_sql_catalog(tmp_path) -> None:
    catalog = SqlCatalog(
        "rt", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse"
    )
    catalog.create_namespace("db")
    connect = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("small", Schema.INT16_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("price", Decimal.builder(2).optional().build())
        .field("day", Date.builder().optional().build())
        .field("at", Time.builder().optional().build())
        .field("ts", Timestamp.builder().optional().build())
        .field("u", SchemaBuilder.string().name("uuid").optional().build())
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
        .field(
            "attrs",
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA)
            .optional()
            .build(),
        )
        .field("inner", SchemaBuilder.struct().optional().field("x", Schema.FLOAT64_SCHEMA).build())
        .build()
    )
    inner_schema = connect.field("inner").schema
    table = catalog.create_table("db.t", iceberg_schema(connect, force_optional=False))
    structs = [
        Struct.of(
            connect,
            {
                "id": 1,
                "small": 7,
                "name": "a",
                "price": decimal.Decimal("9.99"),
                "day": DATE_VAL,
                "at": TIME_VAL,
                "ts": TSZ_VAL,
                "u": str(UUID_VAL),
                "tags": ["x", "y"],
                "attrs": {"k": 1, "n": None},
                "inner": Struct.of(inner_schema, {"x": 0.5}),
            },
        ),
        Struct.of(connect, {"id": 2, "small": -1}),
    ]
    schemaless = {
        "id": "3",
        "small": 4,
        "price": "1.005",
        "ts": "2023-05-18 07:14:21Z",
        "inner": {"x": 1},
    }
    arrow = RowConverter(table.schema()).to_arrow([*structs, schemaless])
    table.append(arrow)
    back = table.scan().to_arrow().sort_by("id")
    assert back.to_pylist() == arrow.to_pylist()
    rows = back.to_pylist()
    assert rows[0]["price"] == decimal.Decimal("9.99") and rows[0]["ts"] == TSZ_VAL
    assert rows[0]["inner"] == {"x": 0.5} and dict(rows[0]["attrs"]) == {"k": 1, "n": None}
    assert rows[1]["name"] is None and rows[1]["tags"] is None
    assert (
        rows[2]["id"] == 3
        and rows[2]["price"] == decimal.Decimal("1.01")
        and rows[2]["inner"] == {"x": 1.0}
    )
