"""The plugins this project has that Kafka Connect, Confluent or Debezium also have, as
``GET /connector-plugins`` must list them: under their Java class names, with the types
Kafka lists them as."""

from __future__ import annotations

KAFKA = "org.apache.kafka.connect."
KAFKA_PLUGINS = frozenset(
    {
        (KAFKA + "file.FileStreamSinkConnector", "sink"),
        (KAFKA + "file.FileStreamSourceConnector", "source"),
        ("io.confluent.connect.jdbc.JdbcSourceConnector", "source"),
        ("io.debezium.connector.postgresql.PostgresConnector", "source"),
        (KAFKA + "converters.IntegerConverter", "converter"),
        (KAFKA + "converters.IntegerConverter", "header_converter"),
        (KAFKA + "json.JsonConverter", "converter"),
        (KAFKA + "storage.StringConverter", "converter"),
        (KAFKA + "storage.StringConverter", "header_converter"),
        (KAFKA + "storage.SimpleHeaderConverter", "header_converter"),
        ("io.confluent.connect.avro.AvroConverter", "converter"),
        (KAFKA + "transforms.InsertField$Key", "transformation"),
        (KAFKA + "transforms.InsertField$Value", "transformation"),
        (KAFKA + "transforms.RegexRouter", "transformation"),
        ("io.debezium.transforms.ExtractNewRecordState", "transformation"),
        (KAFKA + "transforms.predicates.TopicNameMatches", "predicate"),
    }
)
"""``(class, type)`` of each; a listing holds all of them (and more)."""
KAFKA_ORDER = ("sink", "source", "transformation", "predicate", "converter", "header_converter")
"""The order of the plugin types in Kafka's listing (each type's plugins by class name)."""
