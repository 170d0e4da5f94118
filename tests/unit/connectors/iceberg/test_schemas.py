"""Connect -> Iceberg schemas, inference and evolution, after Apache's TestSchemaUtils and
TestRecordConverter's detection cases; evolution applied to a real SqlCatalog table."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
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
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.iceberg import schemas
from airflow_provider_connect.connectors.iceberg.schemas import (
    AddColumn,
    MakeOptional,
    UpdateType,
    apply_updates,
    iceberg_schema,
    iceberg_type,
    infer_schema,
    infer_type,
    schema_updates,
    widened_type,
)


@pytest.mark.parametrize("force_optional", [False, True])
def test_to_iceberg_type(force_optional: bool) -> None:
    def of(schema: Schema) -> object:
        return iceberg_type(schema, force_optional)

    assert of(Schema.BOOLEAN_SCHEMA) == BooleanType()
    assert of(Schema.BYTES_SCHEMA) == BinaryType()
    assert of(Schema.INT8_SCHEMA) == IntegerType()
    assert of(Schema.INT16_SCHEMA) == IntegerType()
    assert of(Schema.INT32_SCHEMA) == IntegerType()
    assert of(Schema.INT64_SCHEMA) == LongType()
    assert of(Schema.FLOAT32_SCHEMA) == FloatType()
    assert of(Schema.FLOAT64_SCHEMA) == DoubleType()
    assert of(Schema.STRING_SCHEMA) == StringType()
    assert of(Date.SCHEMA) == DateType()
    assert of(Time.SCHEMA) == TimeType()
    assert of(Timestamp.SCHEMA) == TimestamptzType()
    assert of(Decimal.schema(4)) == DecimalType(38, 4)
    assert of(SchemaBuilder.string().name("uuid").build()) == UUIDType()

    list_type = of(SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    assert isinstance(list_type, ListType)
    assert list_type.element_type == StringType()
    assert list_type.element_required is not force_optional

    map_type = of(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    assert isinstance(map_type, MapType)
    assert (map_type.key_type, map_type.value_type) == (StringType(), StringType())
    assert map_type.value_required is not force_optional

    struct_type = of(SchemaBuilder.struct().field("i", Schema.INT32_SCHEMA).build())
    assert isinstance(struct_type, StructType)
    assert struct_type.field_by_name("i").field_type == IntegerType()
    assert struct_type.field_by_name("i").required is not force_optional


def test_iceberg_schema_has_unique_ids_and_optionality() -> None:
    connect = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA))
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA))
        .field("inner", SchemaBuilder.struct().field("x", Schema.FLOAT64_SCHEMA))
        .build()
    )
    schema = iceberg_schema(connect, force_optional=False)
    ids = [f.field_id for f in schema._lazy_id_to_field.values()]  # every nested field too
    assert len(ids) == len(set(ids)) == 9
    assert [(f.name, f.required) for f in schema.fields] == [
        ("id", True),
        ("name", False),
        ("tags", True),
        ("attrs", True),
        ("inner", True),
    ]
    assert all(not f.required for f in iceberg_schema(connect, force_optional=True).fields)
    with pytest.raises(DataException):
        iceberg_schema(Schema.INT32_SCHEMA, force_optional=False)


def test_infer_type() -> None:
    assert infer_type(1) == LongType()
    assert infer_type(1.1) == DoubleType()
    assert infer_type("foobar") == StringType()
    assert infer_type(True) == BooleanType()
    assert infer_type(dt.date.today()) == DateType()
    assert infer_type(dt.time(7, 14)) == TimeType()
    assert infer_type(dt.datetime.now(dt.timezone.utc)) == TimestamptzType()
    assert infer_type(dt.datetime.now()) == TimestampType()
    assert infer_type(decimal.Decimal("12.345")) == DecimalType(5, 3)
    assert infer_type(["foobar"]) == ListType(1, StringType(), element_required=False)
    struct = infer_type({"foo": "bar"})
    assert isinstance(struct, StructType)
    assert not struct.field_by_name("foo").required


def test_infer_type_empty() -> None:
    assert infer_type(None) is None
    assert infer_type([]) is None
    assert infer_type([None]) is None
    assert infer_type([{}]) is None
    assert infer_type({}) is None
    assert infer_type({"col": None}) is None
    assert infer_type({"nested": {}}) is None
    with pytest.raises(DataException):
        infer_schema({"col": None})


def test_infer_small_and_out_of_range_decimals() -> None:
    assert infer_type(decimal.Decimal("0.001")) == DecimalType(3, 3)
    assert infer_type(decimal.Decimal("1E+2")) == DecimalType(3, 0)
    assert infer_type(decimal.Decimal("1E+37")) == DecimalType(38, 0)
    assert infer_type(decimal.Decimal("1E-38")) == DecimalType(38, 38)
    assert infer_type(decimal.Decimal("1E+38")) is None
    assert infer_type(decimal.Decimal("1E-39")) is None
    assert infer_type(decimal.Decimal("NaN")) is None


def test_infer_schema_of_a_record() -> None:
    schema = infer_schema({"i": 1, "s": "x", "n": None, "st": {"a": [1.5]}})
    assert [f.name for f in schema.fields] == ["i", "s", "st"]
    assert all(not f.required for f in schema.fields)
    st = schema.find_field("st").field_type
    assert isinstance(st, StructType)
    a = st.field_by_name("a").field_type
    assert isinstance(a, ListType) and a.element_type == DoubleType() and not a.element_required


def test_needs_data_type_update() -> None:
    assert widened_type(FloatType(), Schema.FLOAT64_SCHEMA) == DoubleType()
    assert widened_type(IntegerType(), Schema.INT64_SCHEMA) == LongType()
    assert widened_type(IntegerType(), Schema.STRING_SCHEMA) is None
    assert widened_type(FloatType(), Schema.STRING_SCHEMA) is None
    assert widened_type(StringType(), Schema.INT64_SCHEMA) is None


ID_SCHEMA = IcebergSchema(NestedField(1, "ii", IntegerType(), required=True))


def test_missing_columns_of_a_struct_record() -> None:
    connect = (
        SchemaBuilder.struct()
        .field("ii", Schema.INT32_SCHEMA)
        .field("d", Date.SCHEMA)
        .field("st", SchemaBuilder.struct().field("x", Schema.STRING_SCHEMA))
        .build()
    )
    updates = schema_updates(ID_SCHEMA, connect, case_insensitive=False)
    assert [(u.parent, u.name) for u in updates if isinstance(u, AddColumn)] == [
        ((), "d"),
        ((), "st"),
    ]
    assert updates[0].type == DateType()
    assert schema_updates(ID_SCHEMA, connect, False, force_optional=True)[1].type == StructType(
        NestedField(1, "x", StringType(), required=False)
    )


def test_evolve_type_detection_nested() -> None:
    table = IcebergSchema(
        NestedField(3, "i", IntegerType(), required=True),
        NestedField(
            4,
            "st",
            StructType(
                NestedField(1, "ii", IntegerType(), required=True),
                NestedField(2, "ff", FloatType(), required=True),
            ),
            required=True,
        ),
    )
    st = SchemaBuilder.struct().field("ii", Schema.INT64_SCHEMA).field("ff", Schema.FLOAT64_SCHEMA)
    connect = SchemaBuilder.struct().field("i", Schema.INT32_SCHEMA).field("st", st).build()
    assert schema_updates(table, connect, False) == [
        UpdateType(("st", "ii"), LongType()),
        UpdateType(("st", "ff"), DoubleType()),
    ]


def test_nested_evolution_through_lists_maps_and_optional_structs() -> None:
    table = IcebergSchema(
        NestedField(
            1,
            "items",
            ListType(
                2,
                StructType(
                    NestedField(3, "product_id", IntegerType(), required=True),
                    NestedField(
                        4,
                        "details",
                        StructType(NestedField(5, "name", StringType())),
                        required=False,
                    ),
                ),
                element_required=True,
            ),
            required=True,
        ),
        NestedField(
            6,
            "metadata",
            MapType(
                7, StringType(), 8, StructType(NestedField(9, "key", StringType(), required=True))
            ),
            required=False,
        ),
        NestedField(
            10,
            "nested",
            StructType(NestedField(11, "a", IntegerType(), required=True)),
            required=True,
        ),
    )
    details = (
        SchemaBuilder.struct()
        .optional()
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("price", Schema.OPTIONAL_FLOAT64_SCHEMA)
    )
    item = SchemaBuilder.struct().field("product_id", Schema.INT32_SCHEMA).field("details", details)
    value = (
        SchemaBuilder.struct()
        .field("key", Schema.STRING_SCHEMA)
        .field("info", Schema.OPTIONAL_STRING_SCHEMA)
    )
    nested = SchemaBuilder.struct().optional().field("a", Schema.OPTIONAL_INT32_SCHEMA)
    connect = (
        SchemaBuilder.struct()
        .field("items", SchemaBuilder.array(item))
        .field("metadata", SchemaBuilder.map(Schema.STRING_SCHEMA, value))
        .field("nested", nested)
        .build()
    )
    updates = schema_updates(table, connect, False)
    assert AddColumn(("items", "element", "details"), "price", DoubleType()) in updates
    assert AddColumn(("metadata", "value"), "info", StringType()) in updates
    assert MakeOptional(("nested",)) in updates
    assert MakeOptional(("nested", "a")) in updates
    # the nested name field is optional already on both sides: nothing else
    assert len(updates) == 4


def test_case_insensitive_lookup() -> None:
    connect = SchemaBuilder.struct().field("II", Schema.INT64_SCHEMA).build()
    assert schema_updates(ID_SCHEMA, connect, case_insensitive=True) == [
        UpdateType(("ii",), LongType())
    ]
    assert schema_updates(ID_SCHEMA, connect, case_insensitive=False) == [
        AddColumn((), "II", LongType())
    ]


def test_missing_columns_of_schemaless_records() -> None:
    table = IcebergSchema(
        NestedField(1, "ii", IntegerType(), required=True),
        NestedField(
            2, "stli", ListType(3, StructType(NestedField(4, "ii", IntegerType()))), required=False
        ),
        NestedField(
            5, "stma", MapType(6, StringType(), 7, StructType(NestedField(8, "ii", IntegerType())))
        ),
    )
    record = {
        "ii": 1,
        "null": None,
        "new": "x",
        "stli": [{"ii": 1, "st": {"s": "a"}}],
        "stma": {"k": {"ii": 2, "extra": True}},
    }
    updates = schema_updates(table, infer_schema(record), case_insensitive=False)
    by_path = {u.path: u for u in updates}
    assert set(by_path) == {("new",), ("stli", "element", "st"), ("stma", "value", "extra")}
    assert by_path[("new",)].type == StringType()
    assert by_path[("stma", "value", "extra")].type == BooleanType()
    # a schemaless record neither widens nor relaxes: its int is a long, and optional
    assert schema_updates(ID_SCHEMA, infer_schema({"ii": 2**40}), False) == []


@pytest.fixture
def catalog(tmp_path) -> SqlCatalog:
    catalog = SqlCatalog(
        "test",
        uri=f"sqlite:///{tmp_path}/catalog.db",
        warehouse=f"file://{tmp_path}/warehouse",
    )
    catalog.create_namespace("db")
    return catalog


def test_apply_updates_to_a_table(catalog: SqlCatalog) -> None:
    table = catalog.create_table(
        "db.t",
        IcebergSchema(
            NestedField(1, "i", IntegerType(), required=True),
            NestedField(2, "f", FloatType(), required=True),
            NestedField(
                3,
                "st",
                StructType(NestedField(4, "x", IntegerType(), required=True)),
                required=True,
            ),
            NestedField(
                5, "li", ListType(6, StructType(NestedField(7, "y", IntegerType()))), required=False
            ),
        ),
    )
    updates = [
        AddColumn((), "i", IntegerType()),  # already there: skipped
        UpdateType(("i",), IntegerType()),  # already that type: skipped
        MakeOptional(("i",)),
        UpdateType(("f",), DoubleType()),
        AddColumn((), "s", StringType()),
        AddColumn(("st",), "z", StructType(NestedField(1, "q", StringType(), required=True))),
        AddColumn(("li", "element"), "w", LongType()),
        UpdateType(("st", "x"), LongType()),
    ]
    assert apply_updates(table, updates) is True
    schema = catalog.load_table("db.t").schema()
    assert schema.find_field("i").optional
    assert schema.find_field("f").field_type == DoubleType()
    assert schema.find_field("s").optional and schema.find_field("s").field_type == StringType()
    assert schema.find_field("st.z.q").required
    assert schema.find_field("li.element.w").field_type == LongType()
    assert schema.find_field("st.x").field_type == LongType()
    ids = [f.field_id for f in schema._lazy_id_to_field.values()]
    assert len(ids) == len(set(ids))
    # a second writer with the same updates finds them applied
    stale = catalog.load_table("db.t")
    assert apply_updates(stale, updates) is False
    assert apply_updates(stale, []) is False
    assert catalog.load_table("db.t").schema().schema_id == schema.schema_id


def test_apply_updates_to_an_unknown_column_is_refused(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", ID_SCHEMA)
    with pytest.raises(DataException, match="Invalid column: nope"):
        apply_updates(table, [MakeOptional(("nope",))])


def test_apply_updates_retries_a_lost_race(catalog: SqlCatalog, monkeypatch) -> None:
    table = catalog.create_table("db.t", ID_SCHEMA)
    other = catalog.load_table("db.t")
    monkeypatch.setattr(schemas, "_RETRY_BACKOFF_S", 0.0)
    original_refresh = type(table).refresh
    refreshes = []

    def refresh_then_race(self):
        result = original_refresh(self)
        if not refreshes:
            # another writer commits between our reload and our commit: the CAS fails
            with other.update_schema() as update:
                update.add_column("other", StringType())
        refreshes.append(1)
        return result

    monkeypatch.setattr(type(table), "refresh", refresh_then_race)
    assert apply_updates(table, [AddColumn((), "mine", LongType())]) is True
    assert len(refreshes) == 2
    names = [f.name for f in catalog.load_table("db.t").schema().fields]
    assert names == ["ii", "other", "mine"]


def test_apply_updates_gives_up_after_the_retries(catalog: SqlCatalog, monkeypatch) -> None:
    table = catalog.create_table("db.t", ID_SCHEMA)
    monkeypatch.setattr(schemas, "_RETRY_BACKOFF_S", 0.0)
    attempts = []

    def refuse(self, *args, **kwargs):
        attempts.append(1)
        raise CommitFailedException("refused")

    monkeypatch.setattr(type(table), "_do_commit", refuse)
    with pytest.raises(CommitFailedException):
        apply_updates(table, [AddColumn((), "mine", LongType())])
    assert len(attempts) == schemas.SCHEMA_UPDATE_RETRIES + 1
