"""The Schema Registry converters against a registry over HTTP (the test registry, or a real
one with ``SCHEMA_REGISTRY_URL``), judged by confluent-kafka's own serializers: what the
converters write, its ``AvroDeserializer``, ``ProtobufDeserializer`` and
``JSONDeserializer`` read; what its serializers write, the converters read. Then the
registry's subjects, auth, caching and failures as a Connect task sees them."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import (
    SchemaRegistryClient,
    header_schema_id_serializer,
    topic_subject_name_strategy,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.errors import (
    ConfigException,
    DataException,
    RetriableException,
)
from airflow_provider_connect.connect.header import Header, Headers
from airflow_provider_connect.connect.storage import Converter
from airflow_provider_connect.control.secrets import masked_config
from airflow_provider_connect.control.validation import error_lines, validate_connector_config
from airflow_provider_connect.runtime.executor.converters import task_converters
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.schema_registry.avro import AvroConverter
from airflow_provider_connect.schema_registry.json_schema import JsonSchemaConverter
from airflow_provider_connect.schema_registry.protobuf import ProtobufConverter
from tests_common.schema_registry import TestSchemaRegistry, schema_registry, skip_if_external

pytestmark = pytest.mark.integration

ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("small", Schema.INT8_SCHEMA)
    .field("qty", Schema.INT32_SCHEMA)
    .field("price", Schema.FLOAT64_SCHEMA)
    .field("paid", Schema.BOOLEAN_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .build()
)


def order(i: int) -> Struct:
    return (
        Struct(ORDER)
        .put("id", i)
        .put("small", i % 100)
        .put("qty", i * 3)
        .put("price", i / 4)
        .put("paid", i % 2 == 0)
        .put("amount", decimal.Decimal(i) / 4 if i % 3 else decimal.Decimal("-12.50"))
        .put("day", dt.date(2024, 1, 1) + dt.timedelta(days=i))
        .put("at", dt.time(12, 30, 15, 250000))
        .put("ts", dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.timezone.utc))
        .put("note", None if i % 2 else f"note {i}")
        .put("tags", [f"t{i}", "x"])
        .put("attrs", {"a": i})
    )


@pytest.fixture(scope="module")
def registry_url() -> Iterator[str]:
    with schema_registry() as url:
        yield url


def converter(cls: type[Converter], url: str, is_key: bool = False, **configs: str) -> Any:
    instance = cls()
    instance.configure({"schema.registry.url": url, **configs}, is_key)
    return instance


def topic() -> str:
    return f"orders-{uuid.uuid4().hex[:8]}"


def value_context(name: str, headers: Any = None) -> SerializationContext:
    return SerializationContext(name, MessageField.VALUE, headers)


# -- Avro ----------------------------------------------------------------------------------
def test_avro_the_project_writes_is_read_by_confluents_deserializer(registry_url: str) -> None:
    avro = converter(AvroConverter, registry_url)
    name = topic()
    values = [order(i) for i in range(1, 51)]
    data = avro.from_connect_values(name, ORDER, values)
    assert data[0] == avro.from_connect_data(name, ORDER, values[0])  # one path, two shapes
    client = SchemaRegistryClient({"url": registry_url})
    read = AvroDeserializer(client)
    for value, payload in zip(values, data, strict=True):
        datum = read(payload, value_context(name))
        assert datum["id"] == value.get("id") and datum["amount"] == value.get("amount")
        assert datum["day"] == value.get("day") and datum["ts"] == value.get("ts")
        assert datum["note"] == value.get("note") and datum["attrs"] == value.get("attrs")
    registered = client.get_latest_version(f"{name}-value")
    avro_schema = json.loads(registered.schema.schema_str)
    assert avro_schema["name"] == "Order" and avro_schema["namespace"] == "com.example"
    # and back through the project: the same Connect data, the registry's version on it
    back = avro.to_connect_data(name, data[3])
    assert back.value.items() == values[3].items()
    assert back.schema.version == registered.version  # the registry's, as Confluent's converter
    avro.close()


def test_avro_other_producers_write_is_read_by_the_project(registry_url: str) -> None:
    writer_schema = {
        "type": "record",
        "name": "Event",
        "namespace": "com.example.events",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "body", "type": ["null", "string", "int"], "default": None},
            {
                "name": "place",
                "type": {
                    "type": "record",
                    "name": "Place",
                    "fields": [{"name": "city", "type": "string"}],
                },
            },
            {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 2}},
            {
                "name": "price",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 3},
            },
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
            {"name": "extra", "type": "int", "default": 5},
        ],
    }
    client = SchemaRegistryClient({"url": registry_url})
    name = topic()
    write = AvroSerializer(
        client,
        json.dumps(writer_schema),
        conf={"subject.name.strategy": topic_subject_name_strategy},
    )
    at = dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)
    payload = write(
        {
            "id": 1,
            "kind": "B",
            "body": 7,
            "place": {"city": "Oslo"},
            "hash": b"ab",
            "price": decimal.Decimal("12.345"),
            "day": dt.date(2024, 2, 29),
            "at": at,
            "micros": at,
            "extra": 9,
        },
        value_context(name),
    )
    read = converter(AvroConverter, registry_url).to_connect_data(name, payload)
    value = read.value
    assert read.schema.name == "com.example.events.Event" and read.schema.version == 1
    assert value.get("kind") == "B" and value.get("body").get("int") == 7
    assert value.get("place").get("city") == "Oslo" and value.get("hash") == b"ab"
    assert value.get("price") == decimal.Decimal("12.345")
    assert value.get("day") == dt.date(2024, 2, 29) and value.get("at") == at
    assert value.get("micros") == 1_704_164_645_006_000  # a logical type Connect lacks: its long
    assert read.schema.field("extra").schema.default_value == 5  # type: ignore[union-attr]


def test_avro_subject_name_strategies(registry_url: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    name = topic()
    for strategy, subject in (
        ("io.confluent.kafka.serializers.subject.RecordNameStrategy", "com.example.Order"),
        ("TopicRecordNameStrategy", f"{name}-com.example.Order"),
    ):
        avro = converter(AvroConverter, registry_url, **{"value.subject.name.strategy": strategy})
        payload = avro.from_connect_data(name, ORDER, order(1))
        assert payload is not None
        assert client.get_latest_version(subject).schema_id == int.from_bytes(payload[1:5], "big")
    key = converter(
        AvroConverter,
        registry_url,
        is_key=True,
        **{"key.subject.name.strategy": "RecordNameStrategy"},
    )
    key_payload = key.from_connect_data(name, Schema.STRING_SCHEMA, "k")
    assert key_payload is not None
    named = client.get_latest_version("string")  # Avro names a primitive by its type
    assert named.schema_id == int.from_bytes(key_payload[1:5], "big")
    assert json.loads(named.schema.schema_str or "null") == "string"


def test_avro_without_auto_registration_and_with_the_latest_version(registry_url: str) -> None:
    name = topic()
    strict = converter(AvroConverter, registry_url, **{"auto.register.schemas": "false"})
    with pytest.raises(DataException, match="40401|40403|not found"):
        strict.from_connect_data(name, ORDER, order(1))
    evolved = json.loads(
        SchemaRegistryClient({"url": registry_url})
        .get_schema(
            int.from_bytes(
                converter(AvroConverter, registry_url).from_connect_data(name, ORDER, order(1))[
                    1:5
                ],
                "big",
            )
        )
        .schema_str
    )
    evolved["fields"].append({"name": "channel", "type": "string", "default": "web"})
    client = SchemaRegistryClient({"url": registry_url})
    from confluent_kafka.schema_registry import Schema as RegistrySchema

    client.register_schema(f"{name}-value", RegistrySchema(json.dumps(evolved), "AVRO"))
    latest = converter(
        AvroConverter,
        registry_url,
        **{"auto.register.schemas": "false", "use.latest.version": "true"},
    )
    payload = latest.from_connect_data(name, ORDER, order(2))
    datum = AvroDeserializer(client)(payload, value_context(name))
    assert datum["channel"] == "web" and datum["id"] == 2  # written with the latest schema
    # a latest version that cannot read what the record's schema writes is refused
    narrower = {**evolved, "fields": [*evolved["fields"], {"name": "must", "type": "int"}]}
    client.set_compatibility(f"{name}-value", "NONE")
    client.register_schema(f"{name}-value", RegistrySchema(json.dumps(narrower), "AVRO"))
    refusing = converter(
        AvroConverter,
        registry_url,
        **{"auto.register.schemas": "false", "use.latest.version": "true"},
    )
    with pytest.raises(DataException, match="not backward compatible.*must"):
        refusing.from_connect_data(name, ORDER, order(3))


def test_the_latest_version_is_looked_up_again_once_its_cache_expires(registry_url: str) -> None:
    """use.latest.version with latest.cache.ttl.sec: a version registered meanwhile is
    written with and read with once the TTL passed (0 here), and not before with the
    default of caching it for good. Reading resolves by name: a field added in the middle
    with a default, a bytes default among them, fills in for payloads written before."""
    client = SchemaRegistryClient({"url": registry_url})
    name = topic()
    subject = f"{name}-value"
    old = converter(AvroConverter, registry_url).from_connect_data(name, ORDER, order(1))
    latest = {"auto.register.schemas": "false", "use.latest.version": "true"}
    forever = converter(AvroConverter, registry_url, **latest)
    expiring = converter(AvroConverter, registry_url, **latest, **{"latest.cache.ttl.sec": "0"})
    reading = converter(AvroConverter, registry_url, **latest, **{"latest.cache.ttl.sec": "0"})
    v1 = client.get_latest_version(subject)
    assert forever.from_connect_data(name, ORDER, order(2))[1:5] == v1.schema_id.to_bytes(4, "big")
    assert expiring.from_connect_data(name, ORDER, order(2))[1:5] == v1.schema_id.to_bytes(4, "big")
    assert reading.to_connect_data(name, old).value.items() == order(1).items()

    evolved = json.loads(v1.schema.schema_str)
    evolved["fields"][1:1] = [
        {"name": "channel", "type": "string", "default": "web"},
        {"name": "mark", "type": "bytes", "default": "\u00ff\u0001"},
    ]
    from confluent_kafka.schema_registry import Schema as RegistrySchema

    v2 = client.register_schema(subject, RegistrySchema(json.dumps(evolved), "AVRO"))
    assert forever.from_connect_data(name, ORDER, order(3))[1:5] == v1.schema_id.to_bytes(4, "big")
    written = expiring.from_connect_data(name, ORDER, order(3))
    assert written[1:5] == v2.to_bytes(4, "big")
    datum = AvroDeserializer(client)(written, value_context(name))
    assert (datum["id"], datum["channel"], datum["mark"]) == (3, "web", b"\xff\x01")
    read = reading.to_connect_data(name, old).value  # the old payload, as the latest reads it
    assert [f.name for f in read.schema.fields][:4] == ["id", "channel", "mark", "small"]
    assert (read.get("id"), read.get("channel"), read.get("mark")) == (1, "web", b"\xff\x01")


def test_avro_a_top_level_union_of_referenced_records(registry_url: str) -> None:
    """A value schema that is a union of two records registered under their own subjects
    (``references``), as a producer of several event types in one topic registers it: its
    payloads are read as Confluent's union struct, and written with it as the latest
    version are read back by confluent-kafka's AvroDeserializer."""
    from confluent_kafka.schema_registry import Schema as RegistrySchema
    from confluent_kafka.schema_registry import SchemaReference

    client = SchemaRegistryClient({"url": registry_url})
    name = topic()
    created = {
        "type": "record",
        "name": "Created",
        "namespace": "com.example",
        "fields": [{"name": "id", "type": "long"}],
    }
    deleted = {
        "type": "record",
        "name": "Deleted",
        "namespace": "com.example",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "why", "type": "bytes", "default": "\u00ff"},
        ],
    }
    references = []
    for record in (created, deleted):
        subject = f"{name}-{record['name']}"
        client.register_schema(subject, RegistrySchema(json.dumps(record), "AVRO"))
        references.append(SchemaReference(f"com.example.{record['name']}", subject, 1))
    union = RegistrySchema(
        json.dumps(["com.example.Created", "com.example.Deleted"]), "AVRO", references
    )
    schema_id = client.register_schema(f"{name}-value", union)
    # branch 1 (Deleted), id 7, why b"gone": Avro's zig-zag varints and length-prefixed bytes
    body = b"\x02" + b"\x0e" + b"\x08gone"
    payload = b"\x00" + schema_id.to_bytes(4, "big") + body
    read = converter(AvroConverter, registry_url).to_connect_data(name, payload)
    assert read.schema.name == "io.confluent.connect.avro.Union"
    assert read.value.get("Created") is None
    assert read.value.get("Deleted").get("why") == b"gone"
    latest = converter(
        AvroConverter,
        registry_url,
        **{"auto.register.schemas": "false", "use.latest.version": "true"},
    )
    written = latest.from_connect_data(name, read.schema, read.value)
    assert written[1:5] == schema_id.to_bytes(4, "big")
    datum = AvroDeserializer(client)(written, value_context(name))
    assert datum == {"id": 7, "why": b"gone"}


def test_a_latest_version_of_another_format_is_a_data_error(registry_url: str) -> None:
    name = topic()
    converter(JsonSchemaConverter, registry_url).from_connect_data(name, ORDER, order(1))
    latest = converter(
        AvroConverter,
        registry_url,
        **{"auto.register.schemas": "false", "use.latest.version": "true"},
    )
    with pytest.raises(DataException, match=f"subject {name}-value is a JSON schema, not AVRO"):
        latest.from_connect_data(name, ORDER, order(2))


def test_an_incompatible_schema_and_bad_bytes_are_data_errors(registry_url: str) -> None:
    avro = converter(AvroConverter, registry_url)
    name = topic()
    avro.from_connect_data(name, ORDER, order(1))
    narrower = SchemaBuilder.struct().name("com.example.Order").field("id", Schema.STRING_SCHEMA)
    with pytest.raises(DataException, match="409"):
        avro.from_connect_data(name, narrower.build(), Struct(narrower.build()).put("id", "x"))
    with pytest.raises(DataException, match="wire format"):
        avro.to_connect_data(name, b'{"not": "avro"}')
    with pytest.raises(DataException, match="40403|not found"):
        avro.to_connect_data(name, b"\x00\x7f\xff\xff\xf0\x02")


def test_a_schema_id_in_a_header_is_read(registry_url: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    name = topic()
    headers: list[tuple[str, bytes]] = []
    write = AvroSerializer(
        client,
        '{"type":"record","name":"H","fields":[{"name":"a","type":"int"}]}',
        conf={
            "subject.name.strategy": topic_subject_name_strategy,
            "schema.id.serializer": header_schema_id_serializer,
        },
    )
    payload = write({"a": 41}, value_context(name, headers))
    assert headers and headers[0][0] == "__value_schema_id"  # the GUID form, in a header
    consumed = Headers([Header(k, None, v) for k, v in headers])
    read = converter(AvroConverter, registry_url).to_connect_data(name, payload, consumed)
    assert read.value.get("a") == 41


# -- Protobuf ------------------------------------------------------------------------------
def test_protobuf_the_project_writes_is_read_by_confluents_deserializer(
    registry_url: str,
) -> None:
    protobuf = converter(ProtobufConverter, registry_url)
    name = topic()
    payload = protobuf.from_connect_data(name, ORDER, order(4))
    assert payload is not None and payload[5] == 0  # message indexes [0]
    client = SchemaRegistryClient({"url": registry_url})
    registered = client.get_latest_version(f"{name}-value", fmt="serialized")
    pool = descriptor_pool.DescriptorPool()
    from confluent_kafka.schema_registry.common.protobuf import _init_pool, _str_to_proto

    _init_pool(pool)
    pool.Add(_str_to_proto("order.proto", registered.schema.schema_str))
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("com.example.Order"))
    message = ProtobufDeserializer(cls, {"use.deprecated.format": False})(
        payload, value_context(name)
    )
    assert message.id == 4 and message.small == 4 and list(message.tags) == ["t4", "x"]
    assert message.day.year == 2024 and message.ts.seconds == 1714979289
    assert message.amount.scale == 0 and message.amount.value == b"\x01"  # 4 / 4, as Java writes it
    assert message.note == "note 4"
    back = protobuf.to_connect_data(name, payload)
    assert back.schema.name == "Order" and back.schema.version == registered.version
    for field in ORDER.fields or ():
        assert back.value.get(field.name) == order(4).get(field.name), field.name


def test_protobuf_with_the_latest_version_checks_it_reads_the_data(registry_url: str) -> None:
    """use.latest.version with latest.compatibility.strict: a latest message that reads
    the record's fields as other kinds is refused, naming them; a compatible one (int32 for
    int64, a field more) is written with, its id in the payload."""
    name = topic()
    first = (
        SchemaBuilder.struct()
        .name("demo.Event")
        .field("id", Schema.INT32_SCHEMA)
        .field("extra", Schema.STRING_SCHEMA)
        .build()
    )
    converter(ProtobufConverter, registry_url).from_connect_data(
        name, first, Struct(first).put("id", 1).put("extra", "e")
    )
    record = SchemaBuilder.struct().name("demo.Event").field("id", Schema.INT64_SCHEMA).build()
    latest = {"auto.register.schemas": "false", "use.latest.version": "true"}
    payload = converter(ProtobufConverter, registry_url, **latest).from_connect_data(
        name, record, Struct(record).put("id", 5)
    )
    client = SchemaRegistryClient({"url": registry_url})
    assert payload[1:5] == client.get_latest_version(f"{name}-value").schema_id.to_bytes(4, "big")
    client.set_compatibility(f"{name}-value", "NONE")
    other = SchemaBuilder.struct().name("demo.Event").field("id", Schema.STRING_SCHEMA).build()
    converter(ProtobufConverter, registry_url).from_connect_data(
        name, other, Struct(other).put("id", "x")
    )
    with pytest.raises(DataException, match=r"demo.Event.id \(field 1\) is int64, the latest's"):
        converter(ProtobufConverter, registry_url, **latest).from_connect_data(
            name, record, Struct(record).put("id", 5)
        )


def _event_class() -> Any:
    """A message class built at run time (no protoc here): nested message, enum, oneof, map,
    a repeated field and a well-known type."""
    file = descriptor_pb2.FileDescriptorProto(
        name=f"events-{uuid.uuid4().hex}.proto",
        package="com.example.events",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    event = file.message_type.add(name="Event")
    f = descriptor_pb2.FieldDescriptorProto
    event.field.add(name="id", number=1, type=f.TYPE_INT64)
    event.field.add(name="kind", number=2, type=f.TYPE_ENUM, type_name=".com.example.events.Kind")
    event.field.add(name="text", number=3, type=f.TYPE_STRING, oneof_index=0)
    event.field.add(name="code", number=4, type=f.TYPE_INT32, oneof_index=0)
    event.oneof_decl.add(name="body")
    event.field.add(
        name="labels",
        number=5,
        type=f.TYPE_MESSAGE,
        label=f.LABEL_REPEATED,
        type_name=".com.example.events.Event.LabelsEntry",
    )
    entry = event.nested_type.add(name="LabelsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=f.TYPE_STRING)
    entry.field.add(name="value", number=2, type=f.TYPE_INT32)
    event.field.add(name="scores", number=6, type=f.TYPE_SINT32, label=f.LABEL_REPEATED)
    event.field.add(
        name="at", number=7, type=f.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp"
    )
    event.field.add(name="big", number=8, type=f.TYPE_UINT64)
    kind = file.enum_type.add(name="Kind")
    kind.value.add(name="UNKNOWN", number=0)
    kind.value.add(name="CLICK", number=1)
    pool = descriptor_pool.Default()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("com.example.events.Event"))


def test_protobuf_other_producers_write_is_read_by_the_project(registry_url: str) -> None:
    cls = _event_class()
    client = SchemaRegistryClient({"url": registry_url})
    name = topic()
    write = ProtobufSerializer(
        cls,
        client,
        {"use.deprecated.format": False, "subject.name.strategy": topic_subject_name_strategy},
    )
    message = cls(id=9, kind=1, code=404, labels={"x": 1}, scores=[-1, 2], big=2**64 - 1)
    message.at.FromMilliseconds(1_700_000_000_123)
    read = converter(ProtobufConverter, registry_url).to_connect_data(
        name, write(message, value_context(name))
    )
    value = read.value
    assert read.schema.name == "Event"
    assert next(f.name for f in read.schema.fields or ()) == "body_0"  # oneofs come first
    assert value.get("body_0").get("code") == 404 and value.get("body_0").get("text") is None
    assert value.get("kind") == "CLICK" and value.get("labels") == {"x": 1}
    assert value.get("scores") == [-1, 2] and value.get("big") == -1  # a uint64 as Java's long
    assert value.get("at") == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc)
    scores = read.schema.field("scores").schema  # type: ignore[union-attr]
    assert scores.value_schema.parameters == {"io.confluent.connect.protobuf.Type": "sint32"}  # type: ignore[union-attr]


# -- JSON Schema ---------------------------------------------------------------------------
def test_json_schema_the_project_writes_is_read_by_confluents_deserializer(
    registry_url: str,
) -> None:
    json_schema = converter(JsonSchemaConverter, registry_url)
    name = topic()
    payload = json_schema.from_connect_data(name, ORDER, order(6))
    client = SchemaRegistryClient({"url": registry_url})
    document = JSONDeserializer(None, schema_registry_client=client)(payload, value_context(name))
    assert document["id"] == 6 and document["amount"] == "+x4="  # base64 of the unscaled -1250
    assert document["ts"] == 1_714_979_289_123 and document["note"] == "note 6"
    back = json_schema.to_connect_data(name, payload)
    assert back.value.items() == order(6).items()


def test_json_schema_numeric_decimals_are_json_numbers_with_their_digits(
    registry_url: str,
) -> None:
    """decimal.format=NUMERIC: a Decimal is a JSON number of its digits, validated as one
    (json.fail.invalid.schema) and read back exactly."""
    numeric = converter(
        JsonSchemaConverter,
        registry_url,
        **{"decimal.format": "NUMERIC", "json.fail.invalid.schema": "true"},
    )
    name = topic()
    payload = numeric.from_connect_data(name, ORDER, order(6))
    assert b'"amount":-12.50' in payload
    client = SchemaRegistryClient({"url": registry_url})
    document = JSONDeserializer(None, schema_registry_client=client)(payload, value_context(name))
    assert document["amount"] == -12.5
    assert numeric.to_connect_data(name, payload).value.items() == order(6).items()


def test_json_schema_written_with_the_latest_version_is_validated_against_it(
    registry_url: str,
) -> None:
    """use.latest.version without latest.compatibility.strict: json.fail.invalid.schema
    still checks each value against the schema it is written with, the latest."""
    from confluent_kafka.schema_registry import Schema as RegistrySchema

    name = topic()
    latest = {"title": "Order", "type": "object", "properties": {"id": {"type": "string"}}}
    SchemaRegistryClient({"url": registry_url}).register_schema(
        f"{name}-value", RegistrySchema(json.dumps(latest), "JSON")
    )
    configs = {
        "auto.register.schemas": "false",
        "use.latest.version": "true",
        "latest.compatibility.strict": "false",
    }
    lenient = converter(JsonSchemaConverter, registry_url, **configs)
    assert lenient.from_connect_data(name, ORDER, order(1)) is not None
    checking = converter(
        JsonSchemaConverter, registry_url, **configs, **{"json.fail.invalid.schema": "true"}
    )
    with pytest.raises(DataException, match="does not match its JSON Schema at id"):
        checking.from_connect_data(name, ORDER, order(1))


def test_json_schema_other_producers_write_is_read_by_the_project(registry_url: str) -> None:
    schema = {
        "title": "User",
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "favorite_number": {"type": "number"},
            "age": {"type": ["integer", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "address": {"$ref": "#/definitions/Address"},
        },
        "required": ["name"],
        "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    client = SchemaRegistryClient({"url": registry_url})
    name = topic()
    write = JSONSerializer(
        json.dumps(schema), client, conf={"subject.name.strategy": topic_subject_name_strategy}
    )
    payload = write(
        {"name": "Ada", "favorite_number": 7, "tags": ["a"], "address": {"city": "Bergen"}},
        value_context(name),
    )
    read = converter(JsonSchemaConverter, registry_url).to_connect_data(name, payload)
    assert read.schema.name == "User"
    assert [f.name for f in read.schema.fields or ()] == [
        "name",
        "favorite_number",
        "age",
        "tags",
        "address",
    ]
    value = read.value
    assert value.get("name") == "Ada" and value.get("favorite_number") == 7.0
    assert value.get("age") is None and value.get("address").get("city") == "Bergen"
    bad = write({"name": "x"}, value_context(name))
    with pytest.raises(DataException, match="Expected a string"):
        converter(JsonSchemaConverter, registry_url).to_connect_data(name, bad[:5] + b'{"name": 5}')


# -- the registry as a task sees it --------------------------------------------------------
def test_an_unreachable_or_failing_registry_is_retriable_and_named() -> None:
    skip_if_external("stopping the registry")
    with TestSchemaRegistry() as registry:
        avro = converter(AvroConverter, registry.url, **{"max.retries": "0"})
        name = topic()
        payload = avro.from_connect_data(name, ORDER, order(1))
        fresh = converter(AvroConverter, registry.url, **{"max.retries": "0"})
        registry.down()
        with pytest.raises(RetriableException, match=f"Schema Registry at {registry.url}"):
            fresh.to_connect_data(name, payload)
        registry.up()
        with registry.failing(503), pytest.raises(RetriableException, match="503"):
            fresh.to_connect_data(name, payload)
        slow = converter(
            AvroConverter, registry.url, **{"max.retries": "0", "http.read.timeout.ms": "200"}
        )
        with registry.slow(1.0), pytest.raises(RetriableException, match="could not be reached"):
            slow.to_connect_data(name, payload)
        assert fresh.to_connect_data(name, payload).value.items() == order(1).items()


def test_schemas_are_fetched_once_per_id() -> None:
    skip_if_external("counting requests")
    with TestSchemaRegistry() as registry:
        name = topic()
        writer = converter(AvroConverter, registry.url)
        payloads = writer.from_connect_values(name, ORDER, [order(i) for i in range(200)])
        assert registry.count(f"/subjects/{name}-value/versions", "POST") == 1
        reader = converter(AvroConverter, registry.url)
        assert [reader.to_connect_data(name, p).value.items() for p in payloads] == [
            order(i).items() for i in range(200)
        ]
        schema_id = int.from_bytes(payloads[0][1:5], "big")  # type: ignore[index]
        assert registry.count(f"/schemas/ids/{schema_id}") == 1


def test_basic_auth_credentials_are_sent_and_kept_secret() -> None:
    skip_if_external("a registry that requires credentials")
    with TestSchemaRegistry(basic_auth={"connect": "s3cret"}) as registry:
        auth = {"basic.auth.credentials.source": "USER_INFO", "max.retries": "0"}
        avro = converter(
            AvroConverter, registry.url, **auth, **{"basic.auth.user.info": "connect:s3cret"}
        )
        assert avro.from_connect_data(topic(), ORDER, order(1)) is not None
        refused = converter(
            AvroConverter, registry.url, **auth, **{"basic.auth.user.info": "connect:wrong"}
        )
        with pytest.raises(RetriableException, match="401") as failure:
            refused.from_connect_data(topic(), ORDER, order(1))
        assert "wrong" not in str(failure.value)
    config = {
        "name": "n",
        "connector.class": "FileStreamSink",
        "topics": "t",
        "file": "/tmp/out.txt",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": "http://127.0.0.1:8081",
        "value.converter.basic.auth.user.info": "connect:s3cret",
    }
    assert masked_config(config)["value.converter.basic.auth.user.info"] == "[hidden]"
    assert error_lines(validate_connector_config(config)) == []


def test_converter_configs_are_validated_up_front() -> None:
    config = {
        "name": "n",
        "connector.class": "FileStreamSink",
        "topics": "t",
        "file": "/tmp/out.txt",
        "value.converter": "AvroConverter",
        "value.converter.auto.register.schemas": "maybe",
        "key.converter": "io.confluent.connect.protobuf.ProtobufConverter",
        "key.converter.schema.registry.url": "ftp://registry",
        "key.converter.key.subject.name.strategy": "MyStrategy",
    }
    lines = error_lines(validate_connector_config(config))
    assert (
        'value.converter.schema.registry.url: Missing required configuration "schema.registry.url" '
        "which has no default value." in lines
    )
    assert any(line.startswith("value.converter.auto.register.schemas: ") for line in lines)
    assert any(
        line.startswith("key.converter.schema.registry.url: Invalid value ftp://registry")
        for line in lines
    )
    assert any(line.startswith("key.converter.key.subject.name.strategy: ") for line in lines)
    with pytest.raises(ConfigException, match="generalized.sum.type.support"):
        AvroConverter().configure(
            {"schema.registry.url": "http://r", "generalized.sum.type.support": "true"}, False
        )


def test_the_worker_level_converter_serves_connectors_that_name_none(registry_url: str) -> None:
    """``value.converter`` and ``value.converter.*`` in the worker properties configure the
    converter of every connector without one of its own; a connector's own wins."""
    worker = WorkerConfig(
        {
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry_url,
            "value.converter.value.subject.name.strategy": "RecordNameStrategy",
        }
    )

    converters = task_converters({}, worker, lambda **tags: None)  # not Monitorable: unused
    assert isinstance(converters.value, AvroConverter)
    payload = converters.value.from_connect_data(topic(), ORDER, order(1))
    client = SchemaRegistryClient({"url": registry_url})
    assert client.get_latest_version("com.example.Order").schema_id == int.from_bytes(
        payload[1:5], "big"
    )
    own = task_converters(
        {
            "value.converter": "io.confluent.connect.json.JsonSchemaConverter",
            "value.converter.schema.registry.url": registry_url,
        },
        worker,
        lambda **tags: None,
    )
    assert isinstance(own.value, JsonSchemaConverter)
    name = topic()  # the connector's own converter, without the worker's strategy
    own_payload = own.value.from_connect_data(name, ORDER, order(2))
    assert client.get_latest_version(f"{name}-value").schema_id == int.from_bytes(
        own_payload[1:5], "big"
    )
    assert client.get_latest_version("com.example.Order").schema.schema_type == "AVRO"


def test_a_struct_type_used_twice_is_written_by_its_name(registry_url: str) -> None:
    """The second use of a named type refers to the first by name: the encoder resolves
    the reference (as confluent-kafka's deserializer does on the way back)."""
    address = SchemaBuilder.struct().name("com.example.Address").field("city", Schema.STRING_SCHEMA)
    built = address.build()
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Person")
        .field("home", built)
        .field("work", built)
        .build()
    )
    value = (
        Struct(schema)
        .put("home", Struct(built).put("city", "Oslo"))
        .put("work", Struct(built).put("city", "Bergen"))
    )
    name = topic()
    payload = converter(AvroConverter, registry_url).from_connect_data(name, schema, value)
    read = AvroDeserializer(SchemaRegistryClient({"url": registry_url}))
    assert read(payload, value_context(name)) == {
        "home": {"city": "Oslo"},
        "work": {"city": "Bergen"},
    }
