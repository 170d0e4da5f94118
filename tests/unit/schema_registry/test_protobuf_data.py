"""The Connect ↔ Protobuf mapping against Confluent's ``ProtobufData`` (its
``testFromConnectComplex`` shape: names, numbers, map entries, the int8/int16 field option,
the well-known types), and values through protobuf's own serialization and back."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

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
from airflow_provider_connect.schema_registry.protobuf_codec import unreadable_fields
from airflow_provider_connect.schema_registry.protobuf_data import (
    FIELD_META,
    ProtobufData,
    ProtobufDataConfig,
    new_pool,
)

DATA = ProtobufData(ProtobufDataConfig())
F = descriptor_pb2.FieldDescriptorProto


def fields(message: descriptor_pb2.DescriptorProto) -> dict[str, Any]:
    return {f.name: f for f in message.field}


def test_a_complex_struct_as_confluent_builds_it() -> None:
    status = (
        SchemaBuilder.string()
        .name("Status")
        .optional()
        .parameter("io.confluent.connect.protobuf.Enum", "Status")
        .parameter("io.confluent.connect.protobuf.Enum.ACTIVE", "0")
        .parameter("io.confluent.connect.protobuf.Enum.INACTIVE", "1")
        .build()
    )
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
        .field(
            "mapNonStringKeys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build()
        )
        .field("enum", status)
        .build()
    )
    writer = DATA.writer(connect)
    file = writer.file
    assert file.syntax == "proto3" and not file.package and list(file.dependency) == []
    (message,) = file.message_type
    assert message.name == "ConnectDefault1" and writer.full_name == "ConnectDefault1"
    by_name = fields(message)
    assert [f.number for f in message.field] == list(range(1, 14))
    assert by_name["int8"].type == F.TYPE_INT32
    assert by_name["int8"].options.Extensions[FIELD_META].params["connect.type"] == "int8"
    assert by_name["int64"].type == F.TYPE_INT64 and by_name["float32"].type == F.TYPE_FLOAT
    assert by_name["array"].label == F.LABEL_REPEATED and by_name["array"].type == F.TYPE_STRING
    assert by_name["map"].type_name == "ConnectDefault2Entry"
    assert by_name["mapNonStringKeys"].type_name == "ConnectDefault3Entry"
    assert by_name["enum"].type_name == "Status"
    assert [n.name for n in message.nested_type] == ["ConnectDefault2Entry", "ConnectDefault3Entry"]
    assert [(v.name, v.number) for v in message.enum_type[0].value] == [
        ("ACTIVE", 0),
        ("INACTIVE", 1),
    ]
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
        .put("array", ["a", "b", "c"])
        .put("map", {"field": 1})
        .put("mapNonStringKeys", {1: 1})
        .put("enum", "INACTIVE")
    )
    payload = writer.encode(value)
    pool = new_pool()
    file.name = "complex.proto"
    pool.Add(file)
    reader = DATA.reader(pool.FindMessageTypeByName("ConnectDefault1"), version=1)
    read = reader.decode(payload)
    assert reader.schema.name == "ConnectDefault1" and reader.schema.version == 1
    for f in connect.fields or ():
        assert read.get(f.name) == value.get(f.name), f.name
    tags = {
        f.name: (f.schema.parameters or {}).get("io.confluent.connect.protobuf.Tag")
        for f in reader.schema.fields or ()
    }
    assert tags["int8"] == "1" and tags["enum"] == "13"
    assert reader.schema.field("map").schema.name == "connect_default2"  # type: ignore[union-attr]
    assert reader.schema.field("int8").schema.type.value == "int8"  # type: ignore[union-attr]


def test_logical_types_are_the_well_known_messages() -> None:
    connect = (
        SchemaBuilder.struct()
        .name("com.example.Logical")
        .field("amount", Decimal.builder(3).parameter("connect.decimal.precision", "8").build())
        .field("day", Date.SCHEMA)
        .field("at", Time.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .field("other", Timestamp.SCHEMA)
        .build()
    )
    writer = DATA.writer(connect)
    assert writer.file.package == "com.example" and writer.full_name == "com.example.Logical"
    assert list(writer.file.dependency) == [
        "confluent/type/decimal.proto",
        "google/type/date.proto",
        "google/type/timeofday.proto",
        "google/protobuf/timestamp.proto",
    ]
    by_name = fields(writer.file.message_type[0])
    assert by_name["amount"].type_name == "confluent.type.Decimal"
    assert dict(by_name["amount"].options.Extensions[FIELD_META].params) == {
        "precision": "8",
        "scale": "3",
    }
    value = (
        Struct(connect)
        .put("amount", decimal.Decimal("-12345.678"))
        .put("day", dt.date(1999, 12, 31))
        .put("at", dt.time(23, 59, 59, 999000))
        .put("ts", dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc))
        .put("other", dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.timezone.utc))
    )
    pool = new_pool()
    writer.file.name = "logical.proto"
    pool.Add(writer.file)
    read = DATA.reader(pool.FindMessageTypeByName("com.example.Logical"), None).decode(
        writer.encode(value)
    )
    for name in ("amount", "day", "at", "ts", "other"):
        assert read.get(name) == value.get(name), name


def test_nested_structs_optional_fields_and_unions() -> None:
    inner = SchemaBuilder.struct().name("inner").field("id", Schema.INT32_SCHEMA).optional().build()
    union = (
        SchemaBuilder.struct()
        .name("io.confluent.connect.protobuf.Union.choice")
        .field(
            "text",
            SchemaBuilder.string()
            .optional()
            .parameter("io.confluent.connect.protobuf.Tag", "3")
            .build(),
        )
        .field(
            "code",
            SchemaBuilder.int32()
            .optional()
            .parameter("io.confluent.connect.protobuf.Tag", "4")
            .build(),
        )
        .optional()
        .build()
    )
    connect = (
        SchemaBuilder.struct()
        .name("Outer")
        .field("inner", inner)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .field("choice_0", union)
        .build()
    )
    writer = DATA.writer(connect)
    message = writer.file.message_type[0]
    assert fields(message)["inner"].type_name == "innerMessage"  # named as its field: suffixed
    assert [o.name for o in message.oneof_decl] == ["choice"]
    value = (
        Struct(connect)
        .put("inner", Struct(inner).put("id", 5))
        .put("choice_0", Struct(union).put("code", 7))
    )
    pool = new_pool()
    writer.file.name = "outer.proto"
    pool.Add(writer.file)
    reader = DATA.reader(pool.FindMessageTypeByName("Outer"), None)
    read = reader.decode(writer.encode(value))
    assert next(f.name for f in reader.schema.fields or ()) == "choice_0"
    assert read.get("choice_0").get("code") == 7 and read.get("inner").get("id") == 5
    assert read.get("note") == ""  # proto3: an unset string reads as empty, as in Confluent's
    optional = ProtobufData(ProtobufDataConfig(optional_for_nullables=True))
    nullable = optional.writer(connect)
    assert fields(nullable.file.message_type[0])["note"].proto3_optional
    pool = new_pool()
    nullable.file.name = "nullable.proto"
    pool.Add(nullable.file)
    assert (
        optional.reader(pool.FindMessageTypeByName("Outer"), None)
        .decode(nullable.encode(value))
        .get("note")
        is None
    )


def _message(schema: Schema) -> Any:
    """The descriptor of the message ProtobufData makes of ``schema``."""
    writer = DATA.writer(schema)
    file = descriptor_pb2.FileDescriptorProto()
    file.CopyFrom(writer.file)
    file.name = f"{writer.full_name}.proto"
    pool = new_pool()
    pool.Add(file)
    return pool.FindMessageTypeByName(writer.full_name)


def test_latest_compatibility_strict_compares_what_each_field_number_reads_as() -> None:
    """latest.compatibility.strict: the latest message reads the record's data field by field
    number, taking types of one wire kind for one another (Confluent's rules), skipping the
    fields it lacks; another kind or cardinality, nested too, is named."""

    def schema(id_: Schema, name: Schema, tags: Schema, x: Schema, extra: bool) -> Schema:
        nested = SchemaBuilder.struct().name("demo.Inner").field("x", x).build()
        builder = (
            SchemaBuilder.struct()
            .name("demo.Event")
            .field("id", id_)
            .field("name", name)
            .field("tags", tags)
            .field("inner", nested)
        )
        return (builder.field("extra", Schema.STRING_SCHEMA) if extra else builder).build()

    numbers = SchemaBuilder.array(Schema.INT64_SCHEMA).build()
    written = _message(
        schema(Schema.INT64_SCHEMA, Schema.STRING_SCHEMA, numbers, Schema.INT32_SCHEMA, True)
    )
    same_kinds = _message(
        schema(Schema.INT32_SCHEMA, Schema.BYTES_SCHEMA, numbers, Schema.INT64_SCHEMA, False)
    )
    assert unreadable_fields(written, same_kinds) == []
    other_kinds = _message(
        schema(
            Schema.FLOAT64_SCHEMA,
            SchemaBuilder.array(Schema.STRING_SCHEMA).build(),  # string or bytes may repeat
            Schema.INT64_SCHEMA,
            Schema.STRING_SCHEMA,
            False,
        )
    )
    assert unreadable_fields(written, other_kinds) == [
        "demo.Event.id (field 1) is int64, the latest's double",
        "demo.Event.tags (field 3) is repeated, the latest's single",
        "demo.Event.Inner.x (field 1) is int32, the latest's string",
    ]


def _file_message(syntax: str, fields: list[tuple[str, int, int, int | None]], oneofs: int) -> Any:
    """The descriptor of a message ``M`` of ``fields`` (name, number, label, oneof index),
    with ``oneofs`` oneofs ``o0``, ``o1``, …, all int64."""
    file = descriptor_pb2.FileDescriptorProto(name=f"m{id(fields)}.proto", syntax=syntax)
    message = file.message_type.add(name="M")
    for i in range(oneofs):
        message.oneof_decl.add(name=f"o{i}")
    for name, number, label, oneof in fields:
        field = message.field.add(name=name, number=number, label=label, type=F.TYPE_INT64)
        if oneof is not None:
            field.oneof_index = oneof
    pool = new_pool()
    pool.Add(file)
    return pool.FindMessageTypeByName("M")


def test_latest_compatibility_strict_refuses_fields_moved_into_oneofs_and_new_required_ones() -> (
    None
):
    """Confluent's rules on oneofs and proto2: a field moved into a oneof that existed, or
    two into one new oneof, and a required field the record lacks are refused; one field
    into a new oneof is not."""
    single, repeated, required = F.LABEL_OPTIONAL, F.LABEL_REPEATED, F.LABEL_REQUIRED
    written = _file_message(
        "proto3", [("a", 1, single, None), ("b", 2, single, None), ("c", 3, single, 0)], 1
    )
    one_into_new = _file_message(
        "proto3", [("a", 1, single, 1), ("b", 2, single, None), ("c", 3, single, 0)], 2
    )
    assert unreadable_fields(written, one_into_new) == []
    two_into_new = _file_message(
        "proto3", [("a", 1, single, 1), ("b", 2, single, 1), ("c", 3, single, 0)], 2
    )
    assert unreadable_fields(written, two_into_new) == ["M: a, b are in one oneof o1 in the latest"]
    into_existing = _file_message(
        "proto3", [("a", 1, single, 0), ("b", 2, single, None), ("c", 3, single, 0)], 1
    )
    assert unreadable_fields(written, into_existing) == [
        "M.a (field 1) is in the latest's oneof o0, which it was not in"
    ]
    old = _file_message("proto2", [("a", 1, single, None)], 0)
    new = _file_message("proto2", [("a", 1, repeated, None), ("d", 4, required, None)], 0)
    assert unreadable_fields(old, new) == [
        "M.a (field 1) is single, the latest's repeated",
        "M.d (field 4) is required in the latest, and not written",
    ]


def test_types_used_twice_are_defined_once_in_the_message_that_uses_them() -> None:
    point = SchemaBuilder.struct().name("com.x.Point").field("x", Schema.INT32_SCHEMA).build()
    color = (
        SchemaBuilder.string()
        .parameter("io.confluent.connect.protobuf.Enum", "Color")
        .parameter("io.confluent.connect.protobuf.Enum.RED", "0")
        .parameter("io.confluent.connect.protobuf.Enum.BLUE", "1")
        .build()
    )
    pairs = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).name("my_pairs").build()
    declared = SchemaBuilder.int32().parameter("io.confluent.connect.protobuf.Type", "sint32")
    connect = (
        SchemaBuilder.struct()
        .name("T")
        .field("a", point)
        .field("b", point)
        .field("c1", color)
        .field("c2", color)
        .field("m1", pairs)
        .field("m2", pairs)
        .field("amount", Decimal.schema(2).replace(parameters={}))
        .field("s", declared.build())
        .build()
    )
    file = DATA.writer(connect).file
    assert list(file.dependency) == ["confluent/type/decimal.proto"]
    message = file.message_type[0]
    assert [
        (f.name, f.number, f.label, f.type if f.HasField("type") else None, f.type_name)
        for f in message.field
    ] == [
        ("a", 1, F.LABEL_OPTIONAL, None, "Point"),
        ("b", 2, F.LABEL_OPTIONAL, None, "Point"),
        ("c1", 3, F.LABEL_OPTIONAL, None, "Color"),
        ("c2", 4, F.LABEL_OPTIONAL, None, "Color"),
        ("m1", 5, F.LABEL_REPEATED, None, "MyPairsEntry"),
        ("m2", 6, F.LABEL_REPEATED, None, "MyPairsEntry"),
        ("amount", 7, F.LABEL_OPTIONAL, None, "confluent.type.Decimal"),
        ("s", 8, F.LABEL_OPTIONAL, F.TYPE_SINT32, ""),
    ]
    assert not fields(message)["amount"].HasField("options")  # no precision, no scale
    assert [n.name for n in message.nested_type] == ["Point", "MyPairsEntry"]
    entry = fields(message.nested_type[1])
    assert (entry["key"].type, entry["value"].type) == (F.TYPE_INT32, F.TYPE_STRING)
    assert [(e.name, [(v.name, v.number) for v in e.value]) for e in message.enum_type] == [
        ("Color", [("RED", 0), ("BLUE", 1)])
    ]


def test_an_array_in_a_oneof_is_refused() -> None:
    union = (
        SchemaBuilder.struct()
        .name("io.confluent.connect.protobuf.Union.u")
        .field(
            "xs",
            SchemaBuilder.array(Schema.INT32_SCHEMA)
            .parameter("io.confluent.connect.protobuf.Tag", "1")
            .optional()
            .build(),
        )
        .optional()
        .build()
    )
    with pytest.raises(DataException, match="^Array cannot be nested$"):
        DATA.writer(SchemaBuilder.struct().field("u_0", union).build())
