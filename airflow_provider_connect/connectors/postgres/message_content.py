"""Debezium's ``io.debezium.connector.postgresql.transforms.DecodeLogicalDecodingMessageContent``:
the record of a logical decoding message (``pg_logical_emit_message``, on
``<topic.prefix>.message``) becomes a change event of its JSON content, so that the outbox
``EventRouter`` routes messages as it routes the rows of an outbox table: an outbox without
an outbox table.

What it does, per record, as Debezium 3.x does:

* A record whose value schema is not ``io.debezium.connector.postgresql.MessageValue``
  passes unchanged.
* The message's content (which must be bytes: ``binary.handling.mode=bytes``) is read as
  UTF-8 text that must start with ``{`` or ``[`` and parse as JSON; otherwise the record
  fails (``Unable to parse logical decoding message content JSON string ''``).
* The value becomes an envelope (schema ``io.debezium.connector.postgresql.MessageValue
  .Envelope``, so the EventRouter takes it for a change event) with the message's fields but
  ``message`` (``op``, ``ts_ms``, ``source``, ``transaction``), ``op`` set to ``c``, and
  ``after``: the content as a struct whose schema is inferred from the JSON document (the
  outbox router's ``JsonSchemaData``; fields with a null value are left out unless
  ``fields.null.include``, which keeps them as optional bytes). The key (the message's
  prefix) and its schema become null; topic, partition, timestamp and headers are kept.

Deliberate differences from Debezium: a record without a value schema passes unchanged
(Debezium fails with a NullPointerException); the content's text is decoded as UTF-8
whatever the JVM's default charset."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.transforms import Transformation
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    ENVELOPE_SUFFIX,
    OP_CREATE,
    OPERATION,
)
from airflow_provider_connect.connectors.postgres.envelope import (
    MESSAGE,
    MESSAGE_CONTENT,
    MESSAGE_VALUE_SCHEMA_NAME,
)
from airflow_provider_connect.transforms.outbox import (
    IGNORE,
    OPTIONAL_BYTES,
    JsonSchemaData,
)
from airflow_provider_connect.transforms.util import R, SchemaCache, require_struct

FIELDS_NULL_INCLUDE = "fields.null.include"

CONFIG_DEF = ConfigDef().define(
    FIELDS_NULL_INCLUDE,
    Type.BOOLEAN,
    False,
    None,
    Importance.MEDIUM,
    "Defines whether to include fields with null values to the decoded structure",
)


class DecodeLogicalDecodingMessageContent(Transformation[R]):
    """Debezium's ``DecodeLogicalDecodingMessageContent`` (see the module's documentation)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.json = JsonSchemaData(OPTIONAL_BYTES if config[FIELDS_NULL_INCLUDE] else IGNORE)
        self.schemas: SchemaCache[tuple[Schema, Schema], Schema] = SchemaCache(10_000)

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R:
        schema = record.value_schema
        if schema is None or schema.name != MESSAGE_VALUE_SCHEMA_NAME:
            return record
        value = require_struct(record.value, "Retrieve a record value")
        content = self._content(value)
        envelope = self.schemas.get((content.schema, schema), _envelope_schema)
        after = envelope.field(AFTER)
        assert after is not None
        values = [
            content
            if field is after
            else OP_CREATE
            if field.name == OPERATION
            else value.get(field.name)
            for field in envelope.fields or ()
        ]
        return record.new_record(
            record.topic,
            record.kafka_partition,
            None,
            None,
            envelope,
            Struct._trusted(envelope, values),
            record.timestamp,
        )

    def _content(self, value: Struct) -> Struct:
        """The message's content as the struct its JSON document makes."""
        message = require_struct(
            value.get(MESSAGE), "Retrieve content of a logical decoding message"
        )
        field = message.schema.field(MESSAGE_CONTENT)
        if field is None or field.schema.type is not SchemaType.BYTES:
            raise DataException("The content of a logical decoding message is non-binary")
        text = bytes(message.get(field) or b"").decode("utf-8", errors="replace")
        if not text.startswith(("{", "[")):
            raise DataException(
                f"Unable to parse logical decoding message content JSON string '{text}'"
            )
        try:
            document = self.json.parse(text)
        except ValueError as e:
            raise DataException(f"Unable to parse logical decoding message content: {e}") from e
        content_schema = self.json.to_connect_schema(None, document)
        assert content_schema is not None  # an object or an array
        return self.json.to_connect_data(document, content_schema)


def _envelope_schema(key: tuple[Schema, Schema]) -> Schema:
    """The value schema of a decoded message: the message value's fields but ``message``,
    then ``after`` of the content's schema, named ``<its name>.Envelope``."""
    content_schema, message_schema = key
    builder = SchemaBuilder.struct().name(str(message_schema.name) + ENVELOPE_SUFFIX)
    for field in message_schema.fields or ():
        if field.name != MESSAGE:
            builder.field(field.name, field.schema)
    return builder.field(AFTER, content_schema).build()
