"""tests_common/schema_registry.py's registry, driven by confluent-kafka's own client and
serializers over HTTP. With ``SCHEMA_REGISTRY_URL`` set the tests that need no fault
injection run against that registry instead (every subject is new)."""

from __future__ import annotations

import base64
import json
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import (
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tests_common.schema_registry import (
    URL_ENV,
    TestSchemaRegistry,
    schema_registry,
    skip_if_external,
)

pytestmark = pytest.mark.integration

INCOMPATIBLE = {409, 40901}
"""Confluent's error code of an incompatible schema: 409 before 8.1, 40901 since."""


def record(name: str, *fields: dict[str, Any]) -> Schema:
    return Schema(json.dumps({"type": "record", "name": name, "fields": list(fields)}), "AVRO")


def reading(namespace: str = "") -> Schema:
    name = f"{namespace}.Reading" if namespace else "Reading"
    return record(name, {"name": "sensor", "type": "string"}, {"name": "value", "type": "double"})


READING = reading()


def unique_reading() -> Schema:
    """READING in a namespace of its own: a schema no one else registered, for tests that
    count its subjects (on a shared registry too)."""
    return reading(f"n{uuid.uuid4().hex[:10]}")


def new_subject() -> str:
    return f"test-{uuid.uuid4().hex[:10]}"


def parsed(schema: Schema) -> Any:
    return json.loads(schema.schema_str or "null")


def fails(call: Any, *args: Any, **kwargs: Any) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as raised:
        call(*args, **kwargs)
    return raised.value


@pytest.fixture
def url() -> Iterator[str]:
    with schema_registry() as url:
        yield url


@pytest.fixture
def client(url: str) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient({"url": url}) as client:
        yield client


@pytest.fixture
def registry() -> Iterator[TestSchemaRegistry]:
    skip_if_external("fault injection and recorded requests")
    with TestSchemaRegistry() as registry:
        yield registry


def transport_error(call: Any) -> str:
    """The name of the error ``call`` raises: httpx's, or httpx2's when installed (the
    client's choice)."""
    with pytest.raises(Exception) as raised:
        call()
    return type(raised.value).__name__


def quick_client(url: str, **conf: Any) -> SchemaRegistryClient:
    """A client that gives up at once (no retries) unless told otherwise."""
    return SchemaRegistryClient({"url": url, "max.retries": 0, **conf})


def test_register_lookup_and_get_by_id_and_guid(client: SchemaRegistryClient) -> None:
    subject, schema = new_subject(), unique_reading()
    registered = client.register_schema_full_response(subject, schema)
    assert registered.schema_id is not None and registered.guid is not None
    assert registered.version == 1

    found = client.lookup_schema(subject, schema)
    assert (found.schema_id, found.version, found.subject) == (registered.schema_id, 1, subject)

    client.clear_caches()
    assert parsed(client.get_schema(registered.schema_id)) == parsed(schema)
    assert parsed(client.get_schema_by_guid(registered.guid)) == parsed(schema)
    assert client.get_subjects_by_schema_id(registered.schema_id) == [subject]
    [version] = client.get_schema_versions(registered.schema_id)
    assert (version.subject, version.version) == (subject, 1)
    assert subject in client.get_subjects()
    assert set(client.get_schema_types()) >= {"AVRO", "JSON", "PROTOBUF"}


def test_unknown_schemas_and_subjects_are_404_with_confluents_codes(
    client: SchemaRegistryClient,
) -> None:
    missing = fails(client.get_schema, 987654321)
    assert (missing.http_status_code, missing.error_code) == (404, 40403)
    assert missing.error_message == "Schema 987654321 not found"

    subject = new_subject()
    no_subject = fails(client.lookup_schema, subject, READING)
    assert (no_subject.http_status_code, no_subject.error_code) == (404, 40401)

    client.register_schema(subject, READING)
    other = record("Other", {"name": "x", "type": "int"})
    no_schema = fails(client.lookup_schema, subject, other)
    assert (no_schema.http_status_code, no_schema.error_code) == (404, 40403)


def test_ids_are_global_and_registering_twice_adds_no_version(
    client: SchemaRegistryClient, url: str
) -> None:
    first, second, schema = new_subject(), new_subject(), unique_reading()
    schema_id = client.register_schema(first, schema)
    assert client.register_schema(second, schema) == schema_id

    with SchemaRegistryClient({"url": url}) as uncached:
        # the same schema written differently is the same schema
        spaced = Schema(json.dumps(parsed(schema), indent=4), "AVRO")
        assert uncached.register_schema(first, spaced) == schema_id
    assert client.get_versions(first) == [1]
    assert sorted(client.get_subjects_by_schema_id(schema_id)) == sorted([first, second])


def test_versions_and_latest(client: SchemaRegistryClient) -> None:
    subject = new_subject()
    client.register_schema(subject, READING)
    unit = {"name": "unit", "type": "string", "default": "C"}
    v2 = record("Reading", *parsed(READING)["fields"], unit)
    client.register_schema(subject, v2)

    assert client.get_versions(subject) == [1, 2]
    latest = client.get_latest_version(subject)
    assert latest.version == 2 and parsed(latest.schema) == parsed(v2)
    assert parsed(client.get_version(subject, 1).schema) == parsed(READING)
    assert client.get_version(subject, -1).version == 2  # -1 is "latest" too
    invalid = fails(client.get_version, subject, 0)
    assert (invalid.http_status_code, invalid.error_code) == (422, 42202)


def test_soft_and_permanent_deletes(client: SchemaRegistryClient) -> None:
    subject = new_subject()
    first = client.register_schema(subject, READING)
    v2 = record("Reading", *parsed(READING)["fields"], {"name": "n", "type": "int", "default": 0})
    second = client.register_schema(subject, v2)
    assert client.delete_version(subject, 2) == 2
    assert client.get_versions(subject) == [1]
    assert client.get_versions(subject, deleted=True) == [1, 2]
    assert fails(client.get_version, subject, 2).error_code == 40402
    assert client.get_version(subject, 2, deleted=True).schema_id == second
    again = fails(client.delete_version, subject, 2)
    assert (again.http_status_code, again.error_code) == (404, 40406)
    client.clear_caches()
    assert parsed(client.get_schema(second)) == parsed(v2)  # a soft-deleted version's id reads

    not_soft_deleted = fails(client.delete_subject, subject, permanent=True)
    assert not_soft_deleted.error_code == 40405
    assert client.delete_subject(subject) == [1]
    assert subject not in client.get_subjects()
    assert subject in client.get_subjects(deleted=True)
    assert fails(client.delete_subject, subject).error_code == 40404
    assert client.delete_subject(subject, permanent=True) == [1, 2]
    assert fails(client.get_versions, subject, deleted=True).error_code == 40401

    # registered again, the schema keeps its id and the subject starts over
    assert client.register_schema(subject, READING) == first
    assert client.get_versions(subject) == [1]


def test_subject_config(client: SchemaRegistryClient) -> None:
    subject = new_subject()
    unset = fails(client.get_compatibility, subject)
    assert (unset.http_status_code, unset.error_code) == (404, 40408)

    answer: object = client.set_compatibility(subject, "full_transitive")  # the PUT's body
    assert answer == {"compatibility": "FULL_TRANSITIVE"}
    assert client.get_compatibility(subject) == "FULL_TRANSITIVE"
    assert client.get_config(subject).compatibility_level == "FULL_TRANSITIVE"
    assert client.delete_config(subject).compatibility_level == "FULL_TRANSITIVE"
    assert fails(client.get_compatibility, subject).error_code == 40408

    invalid = fails(client.set_compatibility, subject, "SIDEWAYS")
    assert (invalid.http_status_code, invalid.error_code) == (422, 42203)
    assert client.get_global_mode() == "READWRITE"


def test_global_config_defaults_to_backward(registry: TestSchemaRegistry) -> None:
    with SchemaRegistryClient({"url": registry.url}) as client:
        assert client.get_compatibility() == "BACKWARD"
        answer: object = client.set_compatibility(level="NONE")
        assert answer == {"compatibility": "NONE"}
        assert client.get_compatibility() == "NONE"
        assert client.delete_config().compatibility_level == "NONE"
        assert client.get_compatibility() == "BACKWARD"


def test_a_field_without_default_is_refused_under_backward_and_accepted_under_none(
    client: SchemaRegistryClient, url: str
) -> None:
    subject = new_subject()
    client.set_compatibility(subject, "BACKWARD")
    client.register_schema(subject, READING)
    fields = parsed(READING)["fields"]
    without_default = record("Reading", *fields, {"name": "unit", "type": "string"})
    with_default = record("Reading", *fields, {"name": "unit", "type": "string", "default": "C"})

    assert client.test_compatibility(subject, without_default) is False
    refused = fails(client.register_schema, subject, without_default)
    assert refused.http_status_code == 409 and refused.error_code in INCOMPATIBLE
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in refused.error_message
    assert f'incompatible with an earlier schema for subject "{subject}"' in refused.error_message

    verbose = httpx.post(
        f"{url}/compatibility/subjects/{subject}/versions/latest",
        params={"verbose": "true"},
        json=without_default.to_dict(),
    ).json()
    assert verbose["is_compatible"] is False
    assert any("READER_FIELD_MISSING_DEFAULT_VALUE" in m for m in verbose["messages"])

    assert client.test_compatibility(subject, with_default) is True
    assert client.register_schema_full_response(subject, with_default).version == 2

    client.set_compatibility(subject, "NONE")
    assert client.register_schema_full_response(subject, without_default).version == 3


def test_a_schema_that_does_not_parse_is_422(client: SchemaRegistryClient) -> None:
    for schema in (Schema('{"type": "record"}', "AVRO"), Schema("{not json", "JSON")):
        invalid = fails(client.register_schema, new_subject(), schema)
        assert (invalid.http_status_code, invalid.error_code) == (422, 42201)


def test_references_name_registered_schemas(client: SchemaRegistryClient) -> None:
    unit_subject = new_subject()
    client.register_schema(unit_subject, avro(enum("C", "F")))
    uses_unit = json.dumps(
        {"type": "record", "name": "Reading", "fields": [{"name": "unit", "type": "Unit"}]}
    )
    reference = SchemaReference("Unit", unit_subject, 1)
    subject = new_subject()
    schema_id = client.register_schema(subject, Schema(uses_unit, "AVRO", [reference]))
    client.clear_caches()
    assert client.get_schema(schema_id).references == [reference]

    missing = SchemaReference("Unit", unit_subject, 2)
    invalid = fails(client.register_schema, new_subject(), Schema(uses_unit, "AVRO", [missing]))
    assert (invalid.http_status_code, invalid.error_code) == (422, 42201)


def avro(schema: Any) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


def enum(*symbols: str, **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": "Unit", "symbols": list(symbols), **extra}


def one_field(schema: Any, **extra: Any) -> Schema:
    return record("R", {"name": "f", "type": schema, **extra})


@pytest.mark.parametrize(
    ("level", "old", "new", "compatible"),
    [
        ("BACKWARD", one_field("int"), one_field("long"), True),  # int promotes to long
        ("BACKWARD", one_field("long"), one_field("int"), False),
        ("FORWARD", one_field("int"), one_field("long"), False),  # the old reader needs an int
        ("BACKWARD", one_field("string"), one_field("bytes"), True),
        ("BACKWARD", one_field("int"), one_field(["null", "int"]), True),
        ("BACKWARD", one_field(["null", "int"]), one_field("int"), False),  # null has no branch
        ("BACKWARD", one_field(["int", "long"]), one_field(["null", "long"]), True),
        ("BACKWARD", one_field(enum("C", "F")), one_field(enum("C", "F", "K")), True),
        ("BACKWARD", one_field(enum("C", "F")), one_field(enum("C")), False),
        ("BACKWARD", one_field(enum("C", "F")), one_field(enum("C", default="C")), True),
        (
            "BACKWARD",
            one_field({"type": "array", "items": "int"}),
            one_field({"type": "array", "items": "double"}),
            True,
        ),
        (
            "BACKWARD",
            one_field({"type": "map", "values": "int"}),
            one_field({"type": "map", "values": "string"}),
            False,
        ),
        (
            "BACKWARD",
            one_field({"type": "fixed", "name": "F", "size": 4}),
            one_field({"type": "fixed", "name": "F", "size": 8}),
            False,
        ),
        (
            "BACKWARD",
            record("R", {"name": "a", "type": "int"}),
            record("S", {"name": "a", "type": "int"}),
            False,
        ),
        (
            "BACKWARD",
            record("R", {"name": "a", "type": "int"}),
            avro(
                {
                    "type": "record",
                    "name": "S",
                    "aliases": ["R"],
                    "fields": [{"name": "a", "type": "int"}],
                }
            ),
            True,
        ),
        (
            "BACKWARD",
            record("R", {"name": "a", "type": "int"}),
            record("R", {"name": "b", "type": "int", "aliases": ["a"]}),
            True,
        ),
        (
            "BACKWARD",
            record("R", {"name": "a", "type": "int"}, {"name": "b", "type": "int"}),
            record("R", {"name": "a", "type": "int"}),
            True,
        ),
        (
            "FORWARD",
            record("R", {"name": "a", "type": "int"}, {"name": "b", "type": "int"}),
            record("R", {"name": "a", "type": "int"}),
            False,
        ),
        ("FULL", one_field("int"), one_field("int", default=0), True),
        (
            "FULL",
            record("R", {"name": "a", "type": "int"}),
            record("R", {"name": "a", "type": "int"}, {"name": "b", "type": "int"}),
            False,
        ),
        ("BACKWARD", avro("string"), avro({"type": "string"}), True),
        ("BACKWARD", avro("string"), Schema('{"type": "string"}', "JSON"), False),  # another type
    ],
)
def test_avro_schema_resolution(
    client: SchemaRegistryClient, level: str, old: Schema, new: Schema, compatible: bool
) -> None:
    subject = new_subject()
    client.set_compatibility(subject, level)
    client.register_schema(subject, old)
    assert client.test_compatibility(subject, new) is compatible


def test_transitive_levels_check_every_version(client: SchemaRegistryClient) -> None:
    subject = new_subject()
    v1 = record("R", {"name": "a", "type": "int"})
    v2 = record("R", {"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 0})
    v3 = record("R", {"name": "a", "type": "int"}, {"name": "b", "type": "int"})  # reads v2 only
    client.set_compatibility(subject, "BACKWARD")
    client.register_schema(subject, v1)
    client.register_schema(subject, v2)
    assert client.test_compatibility_all_versions(subject, v3) is True
    client.set_compatibility(subject, "BACKWARD_TRANSITIVE")
    assert client.test_compatibility_all_versions(subject, v3) is False
    assert fails(client.register_schema, subject, v3).error_code in INCOMPATIBLE
    # against one version, the level's transitivity has nothing more to check
    assert client.test_compatibility(subject, v3, version="latest") is True
    assert client.test_compatibility(subject, v3, version=1) is False


def topic_and_context() -> tuple[str, SerializationContext]:
    topic = f"topic-{uuid.uuid4().hex[:10]}"
    return topic, SerializationContext(topic, MessageField.VALUE)


def test_avro_round_trip(client: SchemaRegistryClient, url: str) -> None:
    topic, ctx = topic_and_context()
    value = {"sensor": "t1", "value": 21.5}
    data = AvroSerializer(client, READING.schema_str)(value, ctx)
    with SchemaRegistryClient({"url": url}) as reader:
        assert AvroDeserializer(reader)(data, ctx) == value
    # confluent-kafka 2.16's default subject name strategy (associated) falls back to topic
    assert parsed(client.get_latest_version(f"{topic}-value").schema) == parsed(READING)


def test_the_deserializer_asks_for_a_schema_once(registry: TestSchemaRegistry) -> None:
    _, ctx = topic_and_context()
    with SchemaRegistryClient({"url": registry.url}) as writer:
        data = AvroSerializer(writer, READING.schema_str)({"sensor": "a", "value": 1.0}, ctx)
        schema_id = writer.lookup_schema(f"{ctx.topic}-value", READING).schema_id
    with SchemaRegistryClient({"url": registry.url}) as reader:
        deserializer = AvroDeserializer(reader)
        assert deserializer(data, ctx) == deserializer(data, ctx) == {"sensor": "a", "value": 1.0}
    assert registry.count(f"/schemas/ids/{schema_id}") == 1


def reading_message_class() -> Any:
    """A protobuf message class built at run time (no protoc here)."""
    package = f"t{uuid.uuid4().hex[:10]}"
    file = descriptor_pb2.FileDescriptorProto(
        name=f"{package}.proto", package=package, syntax="proto3"
    )
    message = file.message_type.add(name="Reading")
    field = descriptor_pb2.FieldDescriptorProto
    message.field.add(name="sensor", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    message.field.add(name="value", number=2, type=field.TYPE_DOUBLE, label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Reading"))


def test_protobuf_round_trip(client: SchemaRegistryClient, url: str) -> None:
    reading = reading_message_class()
    topic, ctx = topic_and_context()
    data = ProtobufSerializer(reading, client)(reading(sensor="t1", value=21.5), ctx)
    with SchemaRegistryClient({"url": url}) as reader:
        assert ProtobufDeserializer(reading, None, reader)(data, ctx) == reading(
            sensor="t1", value=21.5
        )

    # what the serializer registered: a base64 FileDescriptorProto
    latest = client.get_latest_version(f"{topic}-value", fmt="serialized")
    assert latest.schema.schema_type == "PROTOBUF"
    file = descriptor_pb2.FileDescriptorProto.FromString(
        base64.b64decode(latest.schema.schema_str or "")
    )
    assert [m.name for m in file.message_type] == ["Reading"]


def test_a_proto_text_schema_cannot_be_served_serialized(registry: TestSchemaRegistry) -> None:
    with SchemaRegistryClient({"url": registry.url}) as client:
        text = 'syntax = "proto3";\nmessage Reading { string sensor = 1; }\n'
        schema_id = client.register_schema(new_subject(), Schema(text, "PROTOBUF"))
        client.clear_caches()
        assert client.get_schema(schema_id).schema_str == text
        client.clear_caches()
        refused = fails(client.get_schema, schema_id, fmt="serialized")
        assert (refused.http_status_code, refused.error_code) == (422, 42201)
        assert "no .proto parser" in refused.error_message


def test_json_schema_round_trip(client: SchemaRegistryClient, url: str) -> None:
    schema = {
        "type": "object",
        "properties": {"sensor": {"type": "string"}, "value": {"type": "number"}},
        "required": ["sensor"],
    }
    topic, ctx = topic_and_context()
    data = JSONSerializer(json.dumps(schema), client)({"sensor": "t1", "value": 21.5}, ctx)
    with SchemaRegistryClient({"url": url}) as reader:
        assert JSONDeserializer(None, schema_registry_client=reader)(data, ctx) == {
            "sensor": "t1",
            "value": 21.5,
        }
    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "JSON" and parsed(latest.schema) == schema


def test_down_and_up_keep_the_state_and_the_port(registry: TestSchemaRegistry) -> None:
    subject = new_subject()
    url = registry.url
    with quick_client(url) as client:
        schema_id = client.register_schema(subject, READING)

        registry.down()
        host, port = url.removeprefix("http://").split(":")
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((host, int(port)), timeout=2).close()
        assert transport_error(client.get_subjects) == "ConnectError"

        assert registry.up().url == url
        assert client.get_subjects() == [subject]
        assert client.get_versions(subject) == [1]
    with quick_client(url) as uncached:
        assert uncached.register_schema(subject, READING) == schema_id


def test_slow_delays_every_answer(registry: TestSchemaRegistry) -> None:
    with quick_client(registry.url) as patient, quick_client(registry.url, timeout=0.05) as hasty:
        with registry.slow(0.3):
            started = time.monotonic()
            assert patient.get_subjects() == []
            assert time.monotonic() - started >= 0.3
            assert transport_error(hasty.get_subjects) == "ReadTimeout"
        started = time.monotonic()
        assert hasty.get_subjects() == []
        assert time.monotonic() - started < 0.3


def test_failing_answers_the_status_and_clients_retry(registry: TestSchemaRegistry) -> None:
    with quick_client(registry.url) as client:
        with registry.failing(503):
            failed = fails(client.get_subjects)
            assert (failed.http_status_code, failed.error_code) == (503, 503)
        assert client.get_subjects() == []
    with quick_client(registry.url, **{"max.retries": 2, "retries.wait.ms": 1}) as retrying:
        before = registry.count("/subjects")
        with registry.failing(500):
            assert fails(retrying.get_subjects).http_status_code == 500
        assert registry.count("/subjects") - before == 3  # 500 is retriable: 1 + 2 retries


def test_basic_auth() -> None:
    skip_if_external("a registry with basic auth")
    with TestSchemaRegistry(basic_auth={"alice": "s3cret"}) as registry:
        with quick_client(registry.url) as anonymous:
            refused = fails(anonymous.get_subjects)
            assert (refused.http_status_code, refused.error_code) == (401, 401)
        with quick_client(registry.url, **{"basic.auth.user.info": "alice:wrong"}) as wrong:
            assert fails(wrong.get_subjects).http_status_code == 401
        with quick_client(registry.url, **{"basic.auth.user.info": "alice:s3cret"}) as alice:
            assert alice.get_subjects() == []
        sent = registry.requests[-1].headers["authorization"]
        assert sent == "Basic " + base64.b64encode(b"alice:s3cret").decode()


def test_bearer_token() -> None:
    skip_if_external("a registry with bearer auth")
    with TestSchemaRegistry(bearer_token="t0ken") as registry:

        def bearer(token: str) -> SchemaRegistryClient:
            return quick_client(
                registry.url,
                **{
                    "bearer.auth.credentials.source": "STATIC_TOKEN",
                    "bearer.auth.token": token,
                    "bearer.auth.logical.cluster": "lsrc-test",
                },
            )

        with bearer("other") as wrong:
            assert fails(wrong.get_subjects).http_status_code == 401
        with bearer("t0ken") as right:
            assert right.get_subjects() == []
        assert registry.requests[-1].headers["target-sr-cluster"] == "lsrc-test"


def test_unknown_paths_and_methods_answer_like_jersey(registry: TestSchemaRegistry) -> None:
    assert httpx.get(f"{registry.url}/nowhere").json() == {
        "error_code": 404,
        "message": "HTTP 404 Not Found",
    }
    not_allowed = httpx.put(f"{registry.url}/schemas/types")
    assert not_allowed.status_code == 405
    assert not_allowed.headers["content-type"] == "application/vnd.schemaregistry.v1+json"


def test_the_helper_yields_an_external_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:1")
    with schema_registry() as url:
        assert url == "http://127.0.0.1:1"
    with pytest.raises(pytest.skip.Exception), schema_registry(bearer_token="t"):
        pass
