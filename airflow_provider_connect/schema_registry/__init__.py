"""Confluent's Schema Registry converters: Connect data as Avro, Protobuf or JSON Schema in
Confluent's wire format, the schemas in a Schema Registry reached with confluent-kafka's
``schema_registry`` client (the ``schema-registry`` extra).

* :class:`~.avro.AvroConverter` (``io.confluent.connect.avro.AvroConverter``);
* :class:`~.protobuf.ProtobufConverter` (``io.confluent.connect.protobuf.ProtobufConverter``);
* :class:`~.json_schema.JsonSchemaConverter` (``io.confluent.connect.json.JsonSchemaConverter``).

The rooms: ``config`` (the keys), ``converter`` (the plugin base, light), ``serde`` (subjects,
registration, wire format, caches), ``registry`` (the client and its errors), and per format
its mapping (``*_data``) and its codec (``*_codec``).
"""

from airflow_provider_connect.schema_registry.avro import AvroConverter
from airflow_provider_connect.schema_registry.json_schema import JsonSchemaConverter
from airflow_provider_connect.schema_registry.protobuf import ProtobufConverter

__all__ = ["AvroConverter", "JsonSchemaConverter", "ProtobufConverter"]
