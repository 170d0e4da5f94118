"""Debezium's ``io.debezium.transforms.ExtractNewRecordState`` ("event flattening"): replaces a
Debezium change event (the ``*.Envelope`` struct with ``before``, ``after``, ``source``, ``op``,
``ts_ms``, ``transaction``) by the row state it carries, for sinks that want rows, not events.

What it does, per record, as Debezium 3.x does (the keys and defaults are Debezium's):

* A record whose value is null (a tombstone) is dropped, or, with
  ``delete.tombstone.handling.mode=rewrite-with-tombstone``, passed on; with ``add.headers``
  naming ``op`` it gets that header with the value ``d``.
* A record whose value schema is not named ``*.Envelope`` (heartbeats, schema changes,
  transaction metadata, schemaless values) is passed on unchanged, as the same object.
* Create, read and update events (``after`` set) become ``after``. The value schema is a copy
  of ``after``'s (its name ``<prefix>.<db>.<table>.Value``, version, doc and parameters, its
  fields) that is required, not optional, as Debezium's is, with the ``add.fields`` appended.
* Delete events (``after`` null, ``before`` set) follow ``delete.tombstone.handling.mode``:
  ``drop`` drops them; ``tombstone`` (the default) keeps the record with a null value (value
  schema: ``after``'s); ``delete-to-tombstone`` makes a real tombstone (null value and value
  schema); ``rewrite`` and ``rewrite-with-tombstone`` unwrap ``before`` and add
  ``__deleted=true`` (and ``__deleted=false`` to creates and updates), the null fields of the
  row replaced by their defaults unless ``replace.null.with.default=false``.
* Events with neither (truncates, messages) are dropped.
* ``add.fields`` / ``add.headers``: ``op``, ``ts_ms``, ``ts_us``, ``ts_ns`` of the envelope,
  ``id``, ``total_order``, ``data_collection_order`` of ``transaction``, any other name of
  ``source``; ``struct.field`` names the struct; ``field:NEW`` renames. The name is the prefix
  (``__`` by default) with ``field`` or ``struct_field``; a field the event lacks is left out.
  Its schema is the event field's, optional.
* ``route.by.field`` sends the record to the topic named by that string field of the row
  (``before``'s for deletes); a null or blank value keeps the topic.
* ``drop.fields.header.name`` names a header listing fields to drop from the value (and with
  ``drop.fields.from.key`` from the key), the optional ones only unless
  ``drop.fields.keep.schema.compatible=false``.

Guarantees: the given record is never changed (headers included: the added headers go on the
new record's copy); the output schema is derived once per input schema (bounded caches of
64, as Debezium's), a record then costs a few dictionary lookups and one list copy; errors are
:class:`DataException` with Kafka's messages (``Unknown field: after``, ``Only Struct objects
supported for [source field insertion], found: str``); keys are validated by
:data:`CONFIG_DEF` at ``configure`` (:class:`ConfigException`, ``Invalid value X for
configuration NAME: ...``), where Debezium logs the problem and raises ``Unable to validate
config``.

Deliberate differences from Debezium:

* ``delete.handling.mode`` (``drop``, ``rewrite``, ``none``) and ``drop.tombstones``, which
  Debezium 2.5 deprecated and 3.2 removed (it now ignores them), are honoured as Debezium 2.5
  to 3.1 did: when ``delete.tombstone.handling.mode`` is not set (a warning is logged), their
  defaults (``drop``, ``true``) filling in the one not set. When it is set, they are ignored
  (with a warning). With none of the three set the default is ``tombstone``, as in Debezium 3.2.
* ``add.fields`` / ``add.headers``: a struct named that the event lacks (``updateDescription``
  outside MongoDB, ``transaction`` in a hand-built envelope) makes the field be looked up at
  the top level, where Debezium fails with a NullPointerException; a struct or map field is
  added with its whole schema, where Debezium copies its name only and fails to put the value.
  Entries with more than one ``:`` or ``.``, or an empty part, are rejected at ``configure``
  (Debezium reads ``a.b.c`` as ``a.b``), and so are two entries of ``add.fields`` with the same
  resulting name (Debezium fails on the first event).
* The parts of an entry are trimmed (``lsn : LSN`` is ``lsn:LSN``; Debezium keeps the blanks
  around ``:`` in the names).
* Output schemas are cached by envelope schema and row schema (Debezium: by row schema and
  ``op``): the same schemas, and a new one when only the envelope's other fields change.
* The unwrapped row's values are not checked again against their unchanged schemas (Debezium
  re-validates each ``put``): the envelope's struct was checked when it was built.
* ``drop.fields.keep.schema.compatible=true`` with a part that has no struct schema drops
  nothing from it (Debezium fails with a NullPointerException).
* The MongoDB variant (``ExtractNewDocumentState``) is not part of this.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from operator import itemgetter
from typing import Any, NamedTuple

from airflow_provider_connect.connect.config import ConfigDef, Importance, Type, Validator, Width
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data.schema import Type as SchemaType
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.transforms import Transformation
from airflow_provider_connect.connectors.change_capture.envelope import (
    AFTER,
    BEFORE,
    ENVELOPE_SUFFIX,
    OP_DELETE,
    OPERATION,
    SOURCE,
    TIMESTAMPS,
    TRANSACTION,
)
from airflow_provider_connect.connectors.change_capture.transactions import BLOCK_FIELDS
from airflow_provider_connect.transforms.replace_field import (
    ReplaceField,
    ReplaceFieldKey,
    ReplaceFieldValue,
)
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    R,
    SchemaCache,
    copy_schema_basics,
    require_struct,
    type_name,
)

log = logging.getLogger(__name__)

DELETED_FIELD = "__deleted"
METADATA_FIELD_PREFIX = "__"
UPDATE_DESCRIPTION = "updateDescription"  # MongoDB's envelope
SCHEMA_CACHE_SIZE = 64

HANDLE_TOMBSTONE_DELETES = "delete.tombstone.handling.mode"
HANDLE_DELETES = "delete.handling.mode"
DROP_TOMBSTONES = "drop.tombstones"
ROUTE_BY_FIELD = "route.by.field"
ADD_FIELDS_PREFIX = "add.fields.prefix"
ADD_FIELDS = "add.fields"
ADD_HEADERS_PREFIX = "add.headers.prefix"
ADD_HEADERS = "add.headers"
DROP_FIELDS_HEADER = "drop.fields.header.name"
DROP_FIELDS_FROM_KEY = "drop.fields.from.key"
DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE = "drop.fields.keep.schema.compatible"

EXTRACT_PURPOSE = "field extraction"
PURPOSE = "source field insertion"
ROUTE_UPSERT_PURPOSE = "Read record to set topic routing for CREATE / UPDATE"


class DeleteTombstoneHandling(str, Enum):
    """The values of ``delete.tombstone.handling.mode``."""

    DROP = "drop"
    TOMBSTONE = "tombstone"
    REWRITE = "rewrite"
    REWRITE_WITH_TOMBSTONE = "rewrite-with-tombstone"
    DELETE_TO_TOMBSTONE = "delete-to-tombstone"


class DeleteHandling(str, Enum):
    """The values of the deprecated ``delete.handling.mode``."""

    DROP = "drop"
    REWRITE = "rewrite"
    NONE = "none"


class _OneOf(Validator):
    """One of an enumeration's values, trimmed and in any case, with Debezium's message."""

    def __init__(self, enum: type[Enum]) -> None:
        self.values = [member.value for member in enum]

    def ensure_valid(self, name: str, value: Any) -> None:
        if not isinstance(value, str) or value.strip().lower() not in self.values:
            raise ConfigException.invalid(
                name, value, "Value must be one of " + ", ".join(self.values)
            )

    def __str__(self) -> str:
        return "[" + ", ".join(self.values) + "]"


class FieldReference(NamedTuple):
    """An entry of ``add.fields`` or ``add.headers``: the struct of the envelope that holds
    the field (None for the envelope's own ``op``, ``ts_ms``, ``ts_us``, ``ts_ns``), the
    field, and the name it is added under."""

    struct: str | None
    field: str
    new_field: str

    @staticmethod
    def parse(prefix: str, spec: str, key: str = ADD_FIELDS) -> FieldReference:
        """``[struct.]field[:new_name]``; raises ConfigException (naming ``key``) otherwise."""
        parts = [part.strip() for part in spec.split(":")]
        path = parts[0].split(".")
        path = [step.strip() for step in path]
        if len(parts) > 2 or len(path) > 2 or not all(parts) or not all(path):
            raise ConfigException.invalid(
                key, spec, "Expected [<struct>.]<field>[:<new field name>]"
            )
        if len(path) == 1:
            struct, field = _struct_of(path[0]), path[0]
            default_name = field
        else:
            struct, field = path
            default_name = f"{struct}_{field}"
        return FieldReference(
            struct, field, prefix + (parts[1] if len(parts) == 2 else default_name)
        )

    @staticmethod
    def parse_all(prefix: str, specs: Sequence[str], key: str) -> list[FieldReference]:
        """The references of a list value (its empty items ignored, as Debezium's are)."""
        return [FieldReference.parse(prefix, spec, key) for spec in specs if spec.strip()]


def _struct_of(field: str) -> str | None:
    """The struct that holds a field named without one (Debezium's ``determineStruct``)."""
    if field in BLOCK_FIELDS:
        return TRANSACTION
    if field == OPERATION or field in TIMESTAMPS:
        return None
    if field == UPDATE_DESCRIPTION:
        return UPDATE_DESCRIPTION
    return SOURCE


def _check_references(name: str, value: Any) -> None:
    references = FieldReference.parse_all("", value or [], name)
    if name == ADD_FIELDS:
        seen: set[str] = set()
        for reference in references:
            if reference.new_field in seen:
                raise ConfigException.invalid(
                    name,
                    ",".join(value),
                    f"Two fields would be added as {reference.new_field}",
                )
            seen.add(reference.new_field)


class _References(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        _check_references(name, value)

    def __str__(self) -> str:
        return "comma-separated list of [<struct>.]<field>[:<new field name>]"


_FIELD_DOC = (
    "Example: 'version,connector,source.ts_ms' would add __version, __connector and "
    "__source_ts_ms fields. Optionally one can also map new field name like "
    "version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP. Please note that the "
    "new field name is case-sensitive."
)

CONFIG_DEF = (
    ConfigDef()
    .define(
        HANDLE_TOMBSTONE_DELETES,
        Type.STRING,
        DeleteTombstoneHandling.TOMBSTONE.value,
        _OneOf(DeleteTombstoneHandling),
        Importance.MEDIUM,
        "How to handle delete records. Options are: "
        "drop - Remove the delete event and tombstone from the stream."
        "tombstone (default) - For each delete event, leave only a tombstone in the stream."
        "rewrite - Remove tombstone from the record, and add a `__deleted` field with the value "
        "`true`."
        "rewrite-with-tombstone - Retain tombstone in record and add a `__deleted` field with the "
        "value `true`."
        "delete-to-tombstone - Convert delete events to tombstone events and drop tombstone events.",
        width=Width.MEDIUM,
        display_name="Handle delete and tombstone records",
    )
    .define(
        HANDLE_DELETES,
        Type.STRING,
        DeleteHandling.DROP.value,
        _OneOf(DeleteHandling),
        Importance.MEDIUM,
        "Deprecated (removed in Debezium 3.2), used only when delete.tombstone.handling.mode is "
        "not set. How to handle delete records. Options are: none - records are passed, drop - "
        "records are removed (the default), rewrite - __deleted field is added to records.",
        width=Width.MEDIUM,
        display_name="Handle delete records",
    )
    .define(
        DROP_TOMBSTONES,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Deprecated (removed in Debezium 3.2), used only when delete.tombstone.handling.mode is "
        "not set. Debezium by default generates a tombstone record to enable Kafka compaction "
        "after a delete record was generated. This record is usually filtered out to avoid "
        "duplicates as a delete record is converted to a tombstone record, too.",
        width=Width.SHORT,
        display_name="Drop tombstones",
    )
    .define(
        ROUTE_BY_FIELD,
        Type.STRING,
        "",
        None,
        Importance.LOW,
        "The column which determines how the events will be routed, the value will replace the "
        "topic name.",
        width=Width.LONG,
        display_name="Route by field name",
    )
    .define(
        ADD_FIELDS_PREFIX,
        Type.STRING,
        METADATA_FIELD_PREFIX,
        None,
        Importance.LOW,
        "Adds this prefix to each field listed.",
        width=Width.SHORT,
        display_name="Field prefix to be added to each field.",
    )
    .define(
        ADD_FIELDS,
        Type.LIST,
        "",
        _References(),
        Importance.LOW,
        "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified). "
        + _FIELD_DOC,
        width=Width.LONG,
        display_name="Adds the specified field(s) to the message if they exist.",
    )
    .define(
        ADD_HEADERS_PREFIX,
        Type.STRING,
        METADATA_FIELD_PREFIX,
        None,
        Importance.LOW,
        "Adds this prefix listed to each header.",
        width=Width.SHORT,
        display_name="Header prefix to be added to each header.",
    )
    .define(
        ADD_HEADERS,
        Type.LIST,
        "",
        _References(),
        Importance.LOW,
        "Adds each field listed to the header,  __ (or __<struct>_ if the struct is specified). "
        + _FIELD_DOC,
        width=Width.LONG,
        display_name="Adds the specified fields to the header if they exist.",
    )
    .define(
        DROP_FIELDS_HEADER,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "Specifies the name of a header that contains a list of fields to be removed from the "
        "event value.",
        width=Width.SHORT,
        display_name="Specifies a header that contains a list of field names to be removed",
    )
    .define(
        DROP_FIELDS_FROM_KEY,
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Specifies whether to apply the drop fields behavior to the event key as well as the "
        "value. Default behavior is to only remove fields from the event value, not the key.",
        width=Width.SHORT,
        display_name="Specifies whether the fields to be dropped should also be omitted from the key",
    )
    .define(
        DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Controls the output event's schema compatibility when using the drop fields feature. "
        "`true`: dropped fields are removed if the schema indicates its optional leaving the "
        "schemas unchanged, `false`: dropped fields are removed from the key/value schemas, "
        "regardless of optionality.",
        width=Width.SHORT,
        display_name="Specifies if fields are dropped, will the event's schemas be compatible",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "When this option is enabled, null field values are replaced by source-defined defaults "
        "when rewriting the record.",
        width=Width.SHORT,
        display_name="replace null field value with default",
    )
)


class _Deletes(Enum):
    """What becomes of a delete event."""

    DROP = "drop"
    NULL_VALUE = "null value"  # after's schema, a null value: "tombstone" (and "none")
    TOMBSTONE = "tombstone"  # null schema and value: "delete-to-tombstone"
    REWRITE = "rewrite"  # before, with __deleted=true


class Handling(NamedTuple):
    """How deletes and tombstones are handled, from either generation of keys."""

    deletes: _Deletes
    keep_tombstones: bool

    @property
    def rewrite(self) -> bool:
        return self.deletes is _Deletes.REWRITE

    @staticmethod
    def of(configs: Mapping[str, Any], parsed: Mapping[str, Any]) -> Handling:
        legacy = [k for k in (HANDLE_DELETES, DROP_TOMBSTONES) if k in configs]
        if HANDLE_TOMBSTONE_DELETES in configs or not legacy:
            if legacy:
                log.warning(
                    "%s is set: the deprecated %s ignored",
                    HANDLE_TOMBSTONE_DELETES,
                    " and ".join(legacy),
                )
            mode = DeleteTombstoneHandling(parsed[HANDLE_TOMBSTONE_DELETES].strip().lower())
            return _HANDLINGS[mode]
        log.warning(
            'The deleted record handling configs "drop.tombstones" and "delete.handling.mode" '
            'have been deprecated, please use "delete.tombstone.handling.mode" instead.'
        )
        deletes = {
            DeleteHandling.DROP: _Deletes.DROP,
            DeleteHandling.NONE: _Deletes.NULL_VALUE,
            DeleteHandling.REWRITE: _Deletes.REWRITE,
        }[DeleteHandling(parsed[HANDLE_DELETES].strip().lower())]
        return Handling(deletes, not parsed[DROP_TOMBSTONES])


_HANDLINGS = {
    DeleteTombstoneHandling.DROP: Handling(_Deletes.DROP, False),
    DeleteTombstoneHandling.TOMBSTONE: Handling(_Deletes.NULL_VALUE, False),
    DeleteTombstoneHandling.REWRITE: Handling(_Deletes.REWRITE, False),
    DeleteTombstoneHandling.REWRITE_WITH_TOMBSTONE: Handling(_Deletes.REWRITE, True),
    DeleteTombstoneHandling.DELETE_TO_TOMBSTONE: Handling(_Deletes.TOMBSTONE, False),
}

_Getter = Callable[[list[Any]], Any]


class _Addition(NamedTuple):
    """A field or header to add: its name, its schema, and how to read its value from the
    envelope's values."""

    name: str
    schema: Schema
    get: _Getter


class _Output(NamedTuple):
    """The value schema made from a row's schema, and how to fill it: ``defaults``, each
    field's default when null values take them (else None); ``route``, the index of
    ``route.by.field`` (or the error reading it)."""

    schema: Schema
    defaults: tuple[Any, ...] | None
    route: int
    route_error: str | None


def _optional(schema: Schema) -> Schema:
    """``schema`` optional, without a default (Debezium's ``copySchemaBasics().optional()``,
    with the fields, keys and elements kept)."""
    if schema.optional and schema.default_value is None:
        return schema
    return schema.replace(optional=True, default_value=None)


def _addition(name: str, schema: Schema, get: _Getter) -> _Addition:
    target = _optional(schema)
    if target.type is SchemaType.STRUCT and target != schema:

        def restructured(values: list[Any]) -> Any:
            value = get(values)
            return None if value is None else Struct._trusted(target, list(value._values))

        return _Addition(name, target, restructured)
    return _Addition(name, target, get)


def _resolve(reference: FieldReference, envelope: Schema) -> _Addition | None:
    """Where ``reference`` is in events of ``envelope``, or None when they lack it: the field
    of its struct, else the envelope's own field of that name (Debezium's ``FieldReference``)."""
    top = envelope.field(reference.field)
    if reference.struct is None:
        if top is None:
            return None
        return _addition(reference.new_field, top.schema, itemgetter(top.index))
    parent = envelope.field(reference.struct)
    child = (
        parent.schema.field(reference.field)
        if parent is not None and parent.schema.type is SchemaType.STRUCT
        else None
    )
    if parent is not None and child is not None:
        p, c = parent.index, child.index

        def nested(values: list[Any]) -> Any:
            struct = values[p]
            return None if struct is None else struct._values[c]

        return _addition(reference.new_field, child.schema, nested)
    if top is None:
        return None
    if parent is None:
        return _addition(reference.new_field, top.schema, itemgetter(top.index))
    p, t = parent.index, top.index

    def beside(values: list[Any]) -> Any:  # Debezium reads it only when the struct is set
        return None if values[p] is None else values[t]

    return _addition(reference.new_field, top.schema, beside)


class _Envelope:
    """What one envelope schema's events need: where ``after`` and ``before`` are, the
    fields and headers to add, and the output schemas made from its rows' schemas."""

    __slots__ = ("after", "after_schema", "before", "fields", "headers", "outputs", "owner")

    def __init__(self, owner: ExtractNewRecordState[Any], schema: Schema) -> None:
        after = schema.field(AFTER)
        if after is None:
            raise DataException(f"Unknown field: {AFTER}")
        self.owner = owner
        self.after = after
        self.after_schema = after.schema
        self.before = schema.field(BEFORE)
        self.fields = [a for a in (_resolve(r, schema) for r in owner.fields) if a is not None]
        self.headers = [a for a in (_resolve(r, schema) for r in owner.headers) if a is not None]
        self.outputs: SchemaCache[tuple[Schema, bool, bool], _Output] = SchemaCache(
            SCHEMA_CACHE_SIZE
        )

    def output(self, schema: Schema, deleted: bool, added: bool) -> _Output:
        return self.outputs.get((schema, deleted, added), self._output)

    def _output(self, key: tuple[Schema, bool, bool]) -> _Output:
        schema, deleted, added = key
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields or ():
            builder.field(field.name, field.schema)
        if deleted:  # InsertField's static field: an optional string
            builder.field(DELETED_FIELD, Schema.OPTIONAL_STRING_SCHEMA)
        if added:
            for addition in self.fields:
                builder.field(addition.name, addition.schema)
        output = builder.build()
        fields = schema.fields or []
        defaults = None
        if deleted and self.owner.replace_null_with_default:
            found = tuple(f.schema.default_value for f in fields)
            defaults = found if any(d is not None for d in found) else None
        route, route_error = -1, None
        name = self.owner.route_by_field
        if name:
            found_field = output.field(name)
            if found_field is None or found_field.index >= len(fields) + int(deleted):
                route_error = f"{name} is not a valid field name"
            elif found_field.schema.type is not SchemaType.STRING:
                route_error = f"Field '{name}' is not of type STRING"
            else:
                route = found_field.index
        return _Output(output, defaults, route, route_error)


def _string_field(struct: Struct, name: str) -> Any:
    """Kafka's ``Struct.getString``: the value as set, the field a string."""
    field = struct.schema.field(name)
    if field is None:
        raise DataException(f"{name} is not a valid field name")
    if field.schema.type is not SchemaType.STRING:
        raise DataException(f"Field '{name}' is not of type STRING")
    return struct._values[field.index]


class ExtractNewRecordState(Transformation[R]):
    """Debezium's ``ExtractNewRecordState``: a change event becomes the row it carries (see
    the module's documentation)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.handling = Handling.of(configs, config)
        self.fields = FieldReference.parse_all(
            config[ADD_FIELDS_PREFIX], config[ADD_FIELDS], ADD_FIELDS
        )
        self.headers = FieldReference.parse_all(
            config[ADD_HEADERS_PREFIX], config[ADD_HEADERS], ADD_HEADERS
        )
        self.tombstone_headers = [r.new_field for r in self.headers if r.field == OPERATION]
        self.route_by_field: str = config[ROUTE_BY_FIELD] or ""
        self.drop_fields_header: str | None = config[DROP_FIELDS_HEADER] or None
        self.drop_fields_from_key: bool = config[DROP_FIELDS_FROM_KEY]
        self.keep_schema_compatible: bool = config[DROP_FIELDS_KEEP_SCHEMA_COMPATIBLE]
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        self.envelopes: SchemaCache[Schema, _Envelope] = SchemaCache(SCHEMA_CACHE_SIZE)
        self.droppers: SchemaCache[tuple[bool, tuple[str, ...]], ReplaceField[Any]] = SchemaCache(
            SCHEMA_CACHE_SIZE
        )

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: R) -> R | None:
        value = record.value
        if value is None:
            return self._tombstone(record)
        schema = record.value_schema
        if schema is None or schema.name is None or not schema.name.endswith(ENVELOPE_SUFFIX):
            return record
        envelope = require_struct(value, EXTRACT_PURPOSE)
        plan = self.envelopes.get(envelope.schema, self._envelope)
        values = envelope._values
        after = values[plan.after.index]
        if after is None:
            after = plan.after_schema.default_value  # as ExtractField reads it
        if after is not None:
            return self._upsert(record, plan, values, after)
        if plan.before is None:
            raise DataException(f"Unknown field: {BEFORE}")
        before = values[plan.before.index]
        if before is None:
            before = plan.before.schema.default_value
        if before is None:  # a truncate, or a message: dropped
            return None
        return self._delete(record, plan, values, before)

    def _envelope(self, schema: Schema) -> _Envelope:
        return _Envelope(self, schema)

    def _tombstone(self, record: R) -> R | None:
        if not self.handling.keep_tombstones:
            return None
        if not self.tombstone_headers:
            return record
        headers = record.headers.copy()
        for name in self.tombstone_headers:
            headers.add(name, OP_DELETE, Schema.STRING_SCHEMA)
        return _replaced(record, record.topic, record.value_schema, record.value, headers)

    def _headers(self, record: R, plan: _Envelope, values: list[Any]) -> Headers | None:
        """The record's headers with ``add.headers``; None (a copy of its own) without."""
        if not plan.headers:
            return None
        headers = record.headers.copy()
        for addition in plan.headers:
            headers.add(addition.name, addition.get(values), addition.schema)
        return headers

    def _row(
        self, output: _Output, row: Struct, deleted: str | None, added: list[Any] | None
    ) -> Struct:
        """The output struct: the row's values (defaults for nulls where they apply),
        ``__deleted``, the added fields."""
        raw = row._values
        defaults = output.defaults
        if defaults is None:
            items = list(raw)
        else:
            items = [d if v is None else v for v, d in zip(raw, defaults, strict=True)]
        if deleted is not None:
            items.append(deleted)
        if added is not None:
            items.extend(added)
        # The values were valid under the same field schemas: no need to check them again.
        return Struct._trusted(output.schema, items)

    def _upsert(self, record: R, plan: _Envelope, values: list[Any], after: Any) -> R:
        if self.route_by_field:
            require_struct(after, ROUTE_UPSERT_PURPOSE)
        row = require_struct(after, PURPOSE)
        rewrite = self.handling.rewrite
        output = plan.output(row.schema, rewrite, True)
        struct = self._row(
            output,
            row,
            "false" if rewrite else None,
            [a.get(values) for a in plan.fields] if plan.fields else None,
        )
        topic = record.topic
        if self.route_by_field:
            if output.route_error is not None:
                raise DataException(output.route_error)
            topic = _topic(struct._values[output.route], topic)
        result = _replaced(
            record, topic, output.schema, struct, self._headers(record, plan, values)
        )
        return self._drop_fields(result) if self.drop_fields_header else result

    def _delete(self, record: R, plan: _Envelope, values: list[Any], before: Any) -> R | None:
        deletes = self.handling.deletes
        if deletes is _Deletes.DROP:
            return None
        topic = record.topic
        if self.route_by_field:
            if not isinstance(before, Struct):
                raise DataException(f"Field '{BEFORE}' is not of type STRUCT")
            topic = _topic(_string_field(before, self.route_by_field), topic)
        headers = self._headers(record, plan, values)
        if deletes is _Deletes.NULL_VALUE:
            result = _replaced(record, topic, plan.after_schema, None, headers)
            return self._drop_fields(result) if self.drop_fields_header else result
        if deletes is _Deletes.TOMBSTONE:
            result = _replaced(record, topic, None, None, headers)
            return self._drop_fields(result) if self.drop_fields_header else result
        row = require_struct(before, PURPOSE)
        if not self.drop_fields_header:
            output = plan.output(row.schema, True, True)
            added = [a.get(values) for a in plan.fields] if plan.fields else None
            return _replaced(
                record, topic, output.schema, self._row(output, row, "true", added), headers
            )
        # Debezium drops the fields before it adds the others: two steps.
        output = plan.output(row.schema, True, False)
        result = self._drop_fields(
            _replaced(record, topic, output.schema, self._row(output, row, "true", None), headers)
        )
        if not plan.fields or result.value is None:
            return result
        dropped = require_struct(result.value, PURPOSE)
        output = plan.output(dropped.schema, False, True)
        struct = self._row(output, dropped, None, [a.get(values) for a in plan.fields])
        return _replaced(result, result.topic, output.schema, struct, None)

    def _drop_fields(self, record: R) -> R:
        """Without the fields that the ``drop.fields.header.name`` header lists."""
        header = next((h for h in record.headers if h.key == self.drop_fields_header), None)
        if header is None or header.value is None:
            return record
        names = header.value
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            raise DataException(
                f"Header {self.drop_fields_header} must hold a list of field names, "
                f"found: {type_name(names)}"
            )
        if not names:
            return record
        if self.drop_fields_from_key and record.key is not None:
            record = self._drop(record, True, self._droppable(record.key_schema, names))
        return self._drop(record, False, self._droppable(record.value_schema, names))

    def _droppable(self, schema: Schema | None, names: Sequence[str]) -> tuple[str, ...]:
        if not self.keep_schema_compatible:
            return tuple(names)
        if schema is None or schema.fields is None:
            return ()
        return tuple(f.name for f in schema.fields if f.schema.optional and f.name in names)

    def _drop(self, record: R, key: bool, names: tuple[str, ...]) -> R:
        if not names:
            return record
        dropper = self.droppers.get((key, names), _dropper)
        result: R = dropper.apply(record)
        return result

    def close(self) -> None:
        self.envelopes = SchemaCache(SCHEMA_CACHE_SIZE)
        self.droppers = SchemaCache(SCHEMA_CACHE_SIZE)


def _dropper(key: tuple[bool, tuple[str, ...]]) -> ReplaceField[Any]:
    """Kafka's ``ReplaceField`` excluding the names, as Debezium configures it."""
    on_key, names = key
    dropper: ReplaceField[Any] = ReplaceFieldKey() if on_key else ReplaceFieldValue()
    dropper.configure({"exclude": list(names)})
    return dropper


def _topic(value: Any, topic: str) -> str:
    """The routed topic: ``value``, unless null or blank."""
    return value if isinstance(value, str) and value.strip() else topic


def _replaced(
    record: R, topic: str, schema: Schema | None, value: Any, headers: Headers | None
) -> R:
    """``record`` with this topic, value schema, value, and headers (None: a copy of its own)."""
    return record.new_record(
        topic,
        record.kafka_partition,
        record.key_schema,
        record.key,
        schema,
        value,
        record.timestamp,
        headers,
    )
