"""Debezium's outbox event router, ``io.debezium.transforms.outbox.EventRouter``: the change
events of an outbox table (rows an application inserts in the same transaction as its own
changes) become the events they carry, each on the topic of its aggregate.

What it does, per record, as Debezium 3.x does (the keys and defaults are Debezium's,
:data:`CONFIG_DEF`):

* A tombstone (null value) is dropped. A record whose value schema is not named
  ``*.Envelope`` (heartbeats, transaction metadata, schema changes) passes unchanged.
* A delete event is dropped (an outbox table is a queue: its rows may be deleted right after
  they are inserted); an update follows ``table.op.invalid.behavior``: ``warn`` and
  ``error`` drop it with a warning or an error logged, ``fatal`` fails the task. Creates and
  snapshot reads (``c``, ``r``) are routed.
* The routed record, from the event's ``after`` row: its topic is ``route.topic.replacement``
  applied to the row's ``route.by.field`` column when ``route.topic.regex`` matches it
  whole (by default ``outbox.event.<aggregatetype>``); its key is the
  ``table.field.event.key`` column (``aggregateid``), with that column's schema; its value
  is the ``table.field.event.payload`` column (``payload``) with its schema, or, when
  ``table.fields.additional.placement`` places a column in the ``envelope``, a struct of
  ``payload`` and those columns (named after the row's schema with the routed value before
  its last part: ``<prefix>.public.outbox.<aggregatetype>.Value``, versioned by the
  ``table.field.event.schema.version`` column when set); its timestamp is the event's
  ``ts_ms``, or the ``table.field.event.timestamp`` column (a Debezium ``Timestamp``,
  ``MicroTimestamp`` or ``NanoTimestamp``). Its headers are the event's, then ``id`` (the
  ``table.field.event.id`` column), then the columns placed in a ``header`` under their
  alias; a column placed in the ``partition`` (an INT32) chooses the Kafka partition.
* ``table.expand.json.payload`` parses a string payload that starts with ``{`` or ``[`` as
  JSON and emits it as a struct whose schema is inferred from the document
  (:class:`JsonSchemaData`, with ``table.json.payload.null.behavior`` and
  ``table.json.payload.empty.array.behavior``); a payload that does not parse is emitted
  as it was, with a warning.
* ``route.tombstone.on.empty.payload``: a null or blank payload makes a tombstone (null value
  and value schema) with the event's key.

Guarantees: the given record is never changed (its headers are copied before ``id`` is
added); keys are validated at ``configure`` (:class:`ConfigException` naming the key, as
Debezium's ``SmtManager.validate``); what an event lacks raises Debezium's errors
(``Unable to find payload field payload in event``).

Deliberate differences from Debezium:

* The schema of an enveloped value is cached by the payload schema, the row's schema, the
  routed value and the schema version together: each aggregate's value schema carries its
  own name. (Debezium caches it by the payload schema alone, or by the version alone, so
  the first aggregate routed names the schema of all the others.)
* Schemas inferred from JSON merge the objects of an array in their order (Debezium: in the
  order of a hash set); a JSON integer beyond 64 bits is a FLOAT64 value (Debezium's
  BigDecimal fails the struct).
* ``table.fields.additional.placement`` entries are checked at ``configure``: a placement
  other than ``header``, ``envelope`` or ``partition`` is refused there (Debezium accepts it
  and fails at the first event).
* OpenTelemetry tracing (``tracing.*``), connector-specific configuration providers (Oracle's)
  and ``field.name.adjustment.mode`` for expanded payloads (Debezium's default ``none`` is
  what is done) are not part of this. ``table.field.event.type`` is accepted, unread, as in
  Debezium 3.x. Debezium 1.x's ``debezium.op.invalid.behavior`` is ``table.op.invalid.behavior``
  in 3.x, the only name read here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, NamedTuple

from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    LambdaValidator,
    Type,
    ValidString,
)
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import ConfigException, ConnectException, DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.transforms import Transformation
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    ENVELOPE_SUFFIX,
    OP_DELETE,
    OP_UPDATE,
    OPERATION,
    TIMESTAMP,
)
from airflow_provider_connect.transforms.routers import (
    REGEX,
    REGEX_ROUTER_CONFIG_DEF,
    REPLACEMENT,
    RegexRouter,
)
from airflow_provider_connect.transforms.util import (
    R,
    SchemaCache,
    copy_schema_basics,
    require_struct,
    type_name,
)

log = logging.getLogger(__name__)

FIELD_EVENT_ID = "table.field.event.id"
FIELD_EVENT_KEY = "table.field.event.key"
FIELD_EVENT_TYPE = "table.field.event.type"
FIELD_EVENT_TIMESTAMP = "table.field.event.timestamp"
FIELD_PAYLOAD = "table.field.event.payload"
FIELDS_ADDITIONAL_PLACEMENT = "table.fields.additional.placement"
FIELDS_ADDITIONAL_MISSING = "table.field.additional.missing"
FIELD_SCHEMA_VERSION = "table.field.event.schema.version"
ROUTE_BY_FIELD = "route.by.field"
ROUTE_TOPIC_REGEX = "route.topic.regex"
ROUTE_TOPIC_REPLACEMENT = "route.topic.replacement"
ROUTE_TOMBSTONE_ON_EMPTY_PAYLOAD = "route.tombstone.on.empty.payload"
OPERATION_INVALID_BEHAVIOR = "table.op.invalid.behavior"
EXPAND_JSON_PAYLOAD = "table.expand.json.payload"
JSON_PAYLOAD_NULL_BEHAVIOR = "table.json.payload.null.behavior"
JSON_PAYLOAD_EMPTY_ARRAY_BEHAVIOR = "table.json.payload.empty.array.behavior"

ENVELOPE_PAYLOAD = "payload"
"""The payload's field in an enveloped value."""
ID_HEADER = "id"

HEADER, ENVELOPE, PARTITION = "header", "envelope", "partition"
PLACEMENTS = (HEADER, ENVELOPE, PARTITION)
WARN, ERROR, FATAL = "warn", "error", "fatal"
IGNORE, OPTIONAL_BYTES, OPTIONAL_STRING = "ignore", "optional_bytes", "optional_string"

# Debezium's time schemas an event timestamp column may have, and their units per ms.
_TIMESTAMP_UNITS = {
    "io.debezium.time.Timestamp": 1,
    "io.debezium.time.MicroTimestamp": 1_000,
    "io.debezium.time.NanoTimestamp": 1_000_000,
}
_TABLE, _ROUTER = "Table", "Router"


def _one_of(*values: str) -> ValidString:
    """Debezium's enumerations: one of ``values``, in any case."""
    return ValidString(*values, case_sensitive=False)


class AdditionalField(NamedTuple):
    """An entry of ``table.fields.additional.placement``: a column, where it goes, and the
    name it goes under."""

    placement: str
    field: str
    alias: str

    @staticmethod
    def parse_all(entries: list[str] | None) -> list[AdditionalField]:
        """``column:placement[:alias]`` entries (parts trimmed, placement in any case);
        raises :class:`ConfigException` with Debezium's message on any other."""
        fields = []
        if entries is not None and not entries:  # set, and empty
            entries = [""]
        for entry in entries or ():
            parts = [part.strip() for part in entry.split(":")]
            if len(parts) not in (2, 3):
                raise ConfigException.invalid(
                    FIELDS_ADDITIONAL_PLACEMENT,
                    ",".join(entries or ()),
                    "A comma-separated list of valid String pairs or trios is expected but "
                    f"got: {entries}",
                )
            placement = parts[1].lower()
            if placement not in PLACEMENTS:
                raise ConfigException.invalid(
                    FIELDS_ADDITIONAL_PLACEMENT,
                    entry,
                    f"The placement must be one of {', '.join(PLACEMENTS)}",
                )
            fields.append(
                AdditionalField(placement, parts[0], parts[2] if len(parts) == 3 else parts[0])
            )
        return fields


def _check_placements(name: str, value: Any) -> None:
    AdditionalField.parse_all(value)


CONFIG_DEF = (
    ConfigDef()
    .define(
        FIELD_EVENT_ID,
        Type.STRING,
        "id",
        None,
        Importance.LOW,
        "The column which contains the event ID within the outbox table",
        group=_TABLE,
    )
    .define(
        FIELD_EVENT_KEY,
        Type.STRING,
        "aggregateid",
        None,
        Importance.LOW,
        "The column which contains the event key within the outbox table",
        group=_TABLE,
    )
    .define(
        FIELD_EVENT_TYPE,
        Type.STRING,
        "type",
        None,
        Importance.LOW,
        "The column which contains the event type within the outbox table",
        group=_TABLE,
    )
    .define(
        FIELD_PAYLOAD,
        Type.STRING,
        "payload",
        None,
        Importance.LOW,
        "The column which contains the event payload within the outbox table",
        group=_TABLE,
    )
    .define(
        FIELD_EVENT_TIMESTAMP,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "Optionally you can override the Kafka message timestamp with a value from a chosen "
        "column, otherwise it'll be the Debezium event processed timestamp.",
        group=_TABLE,
    )
    .define(
        FIELDS_ADDITIONAL_PLACEMENT,
        Type.LIST,
        None,
        LambdaValidator(_check_placements, "column:placement[:alias] entries"),
        Importance.HIGH,
        "Extra fields can be added as part of the event envelope or a message header, format "
        "is a list of colon-delimited pairs or trios when you desire to have aliases, e.g. "
        "<code>id:header,field_name:envelope:alias,field_name:partition</code> ",
        group=_TABLE,
    )
    .define(
        FIELDS_ADDITIONAL_MISSING,
        Type.STRING,
        ERROR,
        _one_of(ERROR, IGNORE),
        Importance.MEDIUM,
        "When transforming the 'table.fields.additional.placement' fields, defines the "
        "behavior when one of the configured fields is missing in the change data. 'error' "
        "(default) will throw an exception; 'ignore' will silently skip the missing field.",
        group=_TABLE,
    )
    .define(
        FIELD_SCHEMA_VERSION,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "The column which contains the event schema version within the outbox table",
        group=_TABLE,
    )
    .define(
        OPERATION_INVALID_BEHAVIOR,
        Type.STRING,
        WARN,
        _one_of(WARN, ERROR, FATAL),
        Importance.MEDIUM,
        "While Debezium is capturing changes from the outbox table, it is expecting only to "
        "process 'create' or 'delete' row events; in case something else is processed this "
        "transform can log it as warning, error or stop the process.",
        group=_TABLE,
    )
    .define(
        EXPAND_JSON_PAYLOAD,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether or not to try unescaping a JSON string and make it real JSON. It will infer "
        "schema information from payload and update the record schema accordingly. If content "
        "is not JSON, it just produces a warning and emits the record unchanged",
        group=_TABLE,
    )
    .define(
        JSON_PAYLOAD_NULL_BEHAVIOR,
        Type.STRING,
        IGNORE,
        _one_of(IGNORE, OPTIONAL_BYTES),
        Importance.MEDIUM,
        "Behavior when json payload including null value, the default will ignore null, "
        "optional_bytes will keep the null value, and treat null as optional bytes of connect.",
        group=_TABLE,
    )
    .define(
        JSON_PAYLOAD_EMPTY_ARRAY_BEHAVIOR,
        Type.STRING,
        IGNORE,
        _one_of(IGNORE, OPTIONAL_STRING),
        Importance.MEDIUM,
        "Behavior when json payload including an empty array value, the default ignore will "
        "drop the empty array field, optional_string will keep the field as an optional array "
        "with an optional string element type.",
        group=_TABLE,
    )
    .define(
        ROUTE_BY_FIELD,
        Type.STRING,
        "aggregatetype",
        None,
        Importance.HIGH,
        "The column which determines how the events will be routed, the value will become "
        "part of the topic name",
        group=_ROUTER,
    )
    .define(
        ROUTE_TOPIC_REGEX,
        Type.STRING,
        "(?<routedByValue>.*)",
        REGEX_ROUTER_CONFIG_DEF.config_keys[REGEX].validator,
        Importance.LOW,
        "The default regex to use within the RegexRouter, the default capture will allow to "
        "replace the routed field into a new topic name defined in 'route.topic.replacement'",
        group=_ROUTER,
    )
    .define(
        ROUTE_TOPIC_REPLACEMENT,
        Type.STRING,
        "outbox.event.${routedByValue}",
        None,
        Importance.HIGH,
        "The name of the topic in which the events will be routed, a replacement "
        "'${routedByValue}' is available which is the value of The column configured via "
        "'route.by.field'",
        group=_ROUTER,
    )
    .define(
        ROUTE_TOMBSTONE_ON_EMPTY_PAYLOAD,
        Type.BOOLEAN,
        False,
        None,
        Importance.HIGH,
        "Whether or not an empty payload should cause a tombstone event.",
        group=_ROUTER,
    )
)


# -- JSON documents as Connect data ------------------------------------------------------------
class JsonSchemaData:
    """Debezium's ``JsonSchemaData``: the Connect schema a JSON document implies, and the
    document as a value of it. Objects become optional structs named after their path
    (``payload``, ``payload.lineItems``), their fields in the document's order; strings,
    booleans, 32-bit and 64-bit integers and other numbers become optional STRING, BOOLEAN,
    INT32, INT64 and FLOAT64; arrays take the schema of their first non-null element (all
    elements of one JSON type, numbers of one schema; the objects of an array merged into
    one struct). A null field is left out, or with ``null_behavior`` ``optional_bytes`` an
    optional BYTES; an empty array is left out, or with ``empty_array_behavior``
    ``optional_string`` an optional array of optional strings."""

    def __init__(self, null_behavior: str = IGNORE, empty_array_behavior: str = IGNORE) -> None:
        self.null_bytes = null_behavior.lower() == OPTIONAL_BYTES
        self.empty_strings = empty_array_behavior.lower() == OPTIONAL_STRING

    @staticmethod
    def parse(text: str) -> Any:
        """The JSON document ``text`` starts with (an object or an array: the text must start
        with ``{`` or ``[``, as Debezium's check; what follows the document is ignored, as
        Jackson's ``readTree`` does). Raises ValueError otherwise."""
        if not text.startswith(("{", "[")):
            raise ValueError(f"Unable to parse payload starting with '{text[:1]}'")
        document, _ = json.JSONDecoder(parse_constant=_no_constant).raw_decode(text)
        return document

    def to_connect_schema(self, key: str | None, node: Any) -> Schema | None:
        """The schema of ``node`` (a parsed JSON value) at the path ``key``; None for what is
        left out (a null, an empty array)."""
        if isinstance(node, str):
            return Schema.OPTIONAL_STRING_SCHEMA
        if isinstance(node, bool):
            return Schema.OPTIONAL_BOOLEAN_SCHEMA
        if isinstance(node, (int, float)):
            return _number_schema(node)
        if isinstance(node, list):
            if not node:
                if self.empty_strings:
                    return SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build()
                return None
            return SchemaBuilder.array(self._element_schema(key, node)).optional().build()
        if isinstance(node, dict):
            builder = SchemaBuilder.struct().optional()
            if key is not None:
                builder.name(key)
            names: set[str] = set()
            for name, value in node.items():
                schema = self.to_connect_schema(
                    f"{key}.{name}" if key and key.strip() else name, value
                )
                if schema is not None and name not in names:
                    names.add(name)
                    builder.field(name, schema)
            return builder.build()
        if node is None and self.null_bytes:
            return Schema.OPTIONAL_BYTES_SCHEMA
        return None

    def _element_schema(self, key: str | None, array: list[Any]) -> Schema:
        sample = _first_element(array)
        if isinstance(sample, dict):
            merged: Schema | None = None
            for element in array:
                if isinstance(element, dict):
                    schema = self.to_connect_schema(key, element)
                    assert schema is not None
                    merged = (
                        schema if merged is None or merged == schema else _merge(merged, schema)
                    )
            assert merged is not None
            return merged
        schema = self.to_connect_schema(None, sample)
        if schema is None:
            raise ConnectException(f"Array '{_text(array)}' has unrecognized member schema.")
        return schema

    def to_connect_data(self, document: Any, schema: Schema) -> Struct:
        """``document`` (a JSON object) as a struct of ``schema`` (its
        :meth:`to_connect_schema`); raises :class:`DataException` for any other."""
        if not isinstance(document, dict):
            raise DataException(f"Not a struct schema: {schema!r}")
        return _struct_of(document, schema)


def _no_constant(name: str) -> Any:
    raise ValueError(f"Unexpected JSON value {name}")


def _number_schema(node: int | float) -> Schema:
    if isinstance(node, int) and -(2**31) <= node < 2**31:
        return Schema.OPTIONAL_INT32_SCHEMA
    if isinstance(node, int) and -(2**63) <= node < 2**63:
        return Schema.OPTIONAL_INT64_SCHEMA
    return Schema.OPTIONAL_FLOAT64_SCHEMA


def _kind(node: Any) -> str:
    """Jackson's node type of a parsed JSON value."""
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, float)):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, list):
        return "ARRAY"
    return "OBJECT" if isinstance(node, dict) else "NULL"


def _text(node: Any) -> str:
    """Jackson's ``asText`` of a value (empty for arrays and objects)."""
    if node is None:
        return "null"
    if isinstance(node, (list, dict)):
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def _first_element(array: list[Any]) -> Any:
    """The first non-null element, after checking that all the others are of its kind (and,
    numbers, of its schema)."""
    first: Any = None
    for element in array:
        if element is None:
            continue
        if first is None:
            first = element
        if _kind(element) != _kind(first):
            raise ConnectException(
                f"Field is not a homogenous array ({_text(first)} x {_kind(element)})."
            )
        if _kind(first) == "NUMBER" and _number_schema(element) is not _number_schema(first):
            raise ConnectException(
                f"Field is not a homogenous array ({_text(first)} x {_text(element)}), "
                f"different number types ({_number_schema(first)} x {_number_schema(element)})"
            )
    return first


def _merge(left: Schema, right: Schema) -> Schema:
    """Two struct schemas of an array's objects as one (Debezium's ``mergeSchema``): the
    fields of both, a BYTES field (a null) giving way to the other's; the basics of
    ``left`` (its name, not its optionality)."""
    fields = {f.name: f.schema for f in left.fields or ()}
    for field in right.fields or ():
        old = fields.get(field.name)
        if old is None or (
            old != field.schema
            and old.type is SchemaType.BYTES
            and field.schema.type is not SchemaType.BYTES
        ):
            fields[field.name] = field.schema
    builder = copy_schema_basics(left, SchemaBuilder.struct())
    for name, schema in fields.items():
        builder.field(name, schema)
    return builder.build()


def _struct_of(document: dict[str, Any], schema: Schema) -> Struct:
    struct = Struct(schema)
    for field in schema.fields or ():
        if field.name in document:
            struct.put(field, _value_of(document[field.name], field.schema))
    return struct


def _value_of(node: Any, schema: Schema) -> Any:
    if isinstance(node, list):
        element = schema.value_schema
        assert element is not None
        return [_value_of(item, element) for item in node]
    if isinstance(node, dict):
        return _struct_of(node, schema)
    if isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**63:
        return float(node)
    return node


# -- the router --------------------------------------------------------------------------------
def _typed(struct: Struct, name: str, kind: SchemaType) -> Any:
    """``struct``'s field ``name``, which must be of ``kind`` (Kafka's ``getInt32`` and
    kin)."""
    field = struct.schema.field(name)
    if field is None:
        raise DataException(f"{name} is not a valid field name")
    if field.schema.type is not kind:
        raise DataException(f"Field '{name}' is not of type {kind.value}")
    return struct.get(field)


class EventRouter(Transformation[R]):
    """Debezium's outbox ``EventRouter`` (see the module's documentation)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.field_event_id: str = config[FIELD_EVENT_ID]
        self.field_event_key: str | None = config[FIELD_EVENT_KEY]
        self.field_payload: str = config[FIELD_PAYLOAD]
        self.field_event_timestamp: str | None = config[FIELD_EVENT_TIMESTAMP]
        self.field_schema_version: str | None = config[FIELD_SCHEMA_VERSION]
        self.route_by_field: str = config[ROUTE_BY_FIELD]
        self.tombstone_on_empty_payload: bool = config[ROUTE_TOMBSTONE_ON_EMPTY_PAYLOAD]
        self.invalid_operation: str = config[OPERATION_INVALID_BEHAVIOR].strip().lower()
        self.additional = AdditionalField.parse_all(config[FIELDS_ADDITIONAL_PLACEMENT])
        self.ignore_missing = config[FIELDS_ADDITIONAL_MISSING].strip().lower() == IGNORE
        self.only_headers = all(f.placement != ENVELOPE for f in self.additional)
        self.json = (
            JsonSchemaData(
                config[JSON_PAYLOAD_NULL_BEHAVIOR], config[JSON_PAYLOAD_EMPTY_ARRAY_BEHAVIOR]
            )
            if config[EXPAND_JSON_PAYLOAD]
            else None
        )
        self.router: RegexRouter[Any] = RegexRouter()
        self.router.configure(
            {REGEX: config[ROUTE_TOPIC_REGEX], REPLACEMENT: config[ROUTE_TOPIC_REPLACEMENT]}
        )
        self.value_schemas: SchemaCache[tuple[Schema, Schema, str, int | None], Schema] = (
            SchemaCache(10_000)
        )

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R | None:
        if record.value is None:
            log.debug("Tombstone message ignored. Message key: %r", record.key)
            return None
        schema = record.value_schema
        if schema is None or schema.name is None or not schema.name.endswith(ENVELOPE_SUFFIX):
            return record
        envelope = require_struct(record.value, "Detect Debezium Operation")
        op = envelope.get(OPERATION)
        if op == OP_DELETE:
            log.debug("Delete message %r ignored", record.key)
            return None
        if op == OP_UPDATE:
            self._unexpected_update(record)
            return None
        if schema.field(AFTER) is None:
            raise DataException(f"Unknown field: {AFTER}")
        row = require_struct(envelope.get(AFTER), "Read Outbox Event")
        return self._routed(record, envelope, row)

    def _unexpected_update(self, record: R) -> None:
        if self.invalid_operation == FATAL:
            raise ConnectException(f"Unexpected update message received {record.key}, fail.")
        level = logging.ERROR if self.invalid_operation == ERROR else logging.WARNING
        log.log(level, "Unexpected update message received %r and ignored", record.key)

    def _routed(self, record: R, envelope: Struct, row: Struct) -> R:
        """The record of the outbox event ``row`` of the change event ``envelope``."""
        row_schema = row.schema
        payload_field = row_schema.field(self.field_payload)
        if payload_field is None:
            raise ConnectException(f"Unable to find payload field {self.field_payload} in event")
        payload_schema = payload_field.schema
        timestamp = self._timestamp(envelope, row)
        event_id = row.get(self.field_event_id)
        id_field = row_schema.field(self.field_event_id)
        assert id_field is not None  # row.get raised otherwise
        payload = row.get(payload_field)
        headers = record.headers.copy()
        headers.add(ID_HEADER, event_id, id_field.schema)
        if self.json is not None:
            payload_schema, payload = self._expanded(record, payload_schema, payload)
        routed_by = _typed(row, self.route_by_field, SchemaType.STRING)
        value_schema: Schema | None = payload_schema
        value = payload
        if not self.only_headers:
            version = (
                None
                if self.field_schema_version is None
                else _typed(row, self.field_schema_version, SchemaType.INT32)
            )
            value_schema = self.value_schemas.get(
                (payload_schema, row_schema, routed_by, version), self._value_schema
            )
            value = Struct(value_schema).put(ENVELOPE_PAYLOAD, payload)
        partition = self._place(row, value, headers)
        if self.tombstone_on_empty_payload and (
            payload is None or (isinstance(payload, str) and not payload.strip())
        ):
            value_schema, value = None, None
        key_field = None if self.field_event_key is None else row_schema.field(self.field_event_key)
        routed = record.new_record(
            routed_by,
            partition,
            Schema.STRING_SCHEMA if key_field is None else key_field.schema,
            None if self.field_event_key is None else row.get(self.field_event_key),
            value_schema,
            value,
            timestamp,
            headers,
        )
        log.debug("Message emitted with event id: %r, event key: %r", event_id, routed.key)
        result: R = self.router.apply(routed)
        return result

    def _place(self, row: Struct, value: Any, headers: Headers) -> int | None:
        """Puts the additional columns of ``row`` in the enveloped ``value`` and in
        ``headers``; returns the partition a column places the record in (None: none)."""
        partition = None
        for extra in self.additional:
            if self.ignore_missing and row.schema.field(extra.field) is None:
                continue
            if extra.placement == ENVELOPE:
                value.put(extra.alias, row.get(extra.field))
            elif extra.placement == HEADER:
                column = row.schema.field(extra.field)
                headers.add(extra.alias, row.get(extra.field), column.schema if column else None)
            else:
                partition = _typed(row, extra.field, SchemaType.INT32)
        return partition

    def _timestamp(self, envelope: Struct, row: Struct) -> int | None:
        """The record's timestamp: the event's ``ts_ms``, or the timestamp column's (in ms)."""
        name = self.field_event_timestamp
        if name is None:
            return _typed(envelope, TIMESTAMP, SchemaType.INT64)  # type: ignore[no-any-return]
        field = row.schema.field(name)
        if field is None:
            raise ConnectException(f"Unable to find timestamp field {name} in event")
        value = _typed(row, name, SchemaType.INT64)
        if value is None:
            return _typed(envelope, TIMESTAMP, SchemaType.INT64)  # type: ignore[no-any-return]
        if field.schema.name is None:
            raise ConnectException(
                f"Unsupported field type {field.schema.type.value} (without logical schema "
                "name) for event timestamp"
            )
        unit = _TIMESTAMP_UNITS.get(field.schema.name)
        if unit is None:
            raise ConnectException(
                f"Unsupported field type {field.schema.name} for event timestamp"
            )
        return int(value) // unit

    def _expanded(self, record: R, schema: Schema, payload: Any) -> tuple[Schema, Any]:
        """A string payload parsed as JSON into a struct (unchanged, with a warning, when it
        does not parse or is not a string)."""
        assert self.json is not None
        if isinstance(payload, str):
            try:
                document = self.json.parse(payload)
                expanded = self.json.to_connect_schema(self.field_payload, document)
                if expanded is None:
                    raise ValueError("the payload has no schema")
                return expanded, self.json.to_connect_data(document, expanded)
            except (ValueError, ConnectException) as e:
                log.warning("JSON expansion failed: %s", e)
        elif payload is not None:
            log.warning(
                "Expand JSON payload is turned on but payload is not a string in %r (a %s)",
                record.key,
                type_name(payload),
            )
        return schema, payload

    def _value_schema(self, key: tuple[Schema, Schema, str, int | None]) -> Schema:
        """The schema of an enveloped value: ``payload`` and the ``envelope`` columns, named
        after the row's schema with the routed value before its last part."""
        payload_schema, row_schema, routed_by, version = key
        original = row_schema.name
        if original is None:
            name = routed_by
        elif "." in original:
            head, _, tail = original.rpartition(".")
            name = f"{head}.{routed_by}.{tail}"
        else:
            name = f"{routed_by}.{original}"
        builder = SchemaBuilder.struct().name(name).field(ENVELOPE_PAYLOAD, payload_schema)
        if version is not None:
            builder.version(version)
        for extra in self.additional:
            if extra.placement != ENVELOPE:
                continue
            column = row_schema.field(extra.field)
            if column is None:
                if not self.ignore_missing:
                    raise ConnectException(f"Unable to find field {extra.field} in event")
                continue
            builder.field(extra.alias, column.schema)
        return builder.build()
