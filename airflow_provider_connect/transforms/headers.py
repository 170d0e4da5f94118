"""The header transformations: ``DropHeaders``, ``InsertHeader`` and ``HeaderFrom``
(``HeaderFrom$Key``/``HeaderFrom$Value``), as Kafka's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    LambdaValidator,
    Type,
    ValidString,
)
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.storage import parse_string
from airflow_provider_connect.connect.transforms import Transformation
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    PartTransformation,
    R,
    SchemaCache,
    copy_schema_basics,
    distinct_list,
    field_value,
    non_empty_list,
    require_map,
    require_struct,
    with_headers,
    with_replace_null_with_default,
)

HEADERS = "headers"
HEADER = "header"
VALUE_LITERAL = "value.literal"
FIELDS = "fields"
OPERATION = "operation"
MOVE, COPY = "move", "copy"


def _not_null(name: str, value: Any) -> None:
    if value is None:
        raise ConfigException.invalid(name, value, "entry must be non null")


DROP_HEADERS_CONFIG_DEF = ConfigDef().define(
    HEADERS,
    Type.LIST,
    NO_DEFAULT,
    distinct_list(empty_allowed=False),
    Importance.HIGH,
    "The name of the headers to be removed.",
)


class DropHeaders(Transformation[R]):
    """Removes one or more headers from each record (Kafka's ``DropHeaders``)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.headers = set(DROP_HEADERS_CONFIG_DEF.parse(configs)[HEADERS])

    def config(self) -> ConfigDef:
        return DROP_HEADERS_CONFIG_DEF

    def apply(self, record: R) -> R:
        return with_headers(record, Headers(h for h in record.headers if h.key not in self.headers))


INSERT_HEADER_CONFIG_DEF = (
    ConfigDef()
    .define(
        HEADER,
        Type.STRING,
        NO_DEFAULT,
        LambdaValidator(_not_null, "non-null string"),
        Importance.HIGH,
        "The name of the header.",
    )
    .define(
        VALUE_LITERAL,
        Type.STRING,
        NO_DEFAULT,
        LambdaValidator(_not_null, "non-null string"),
        Importance.HIGH,
        "The literal value that is to be set as the header value on all records.",
    )
)


class InsertHeader(Transformation[R]):
    """Add a header to each record (Kafka's ``InsertHeader``); the literal's type is inferred
    as Kafka's ``Values.parseString`` does (``42`` an int8, ``true`` a boolean, …)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = INSERT_HEADER_CONFIG_DEF.parse(configs)
        self.header: str = config[HEADER]
        self.literal = parse_string(config[VALUE_LITERAL])

    def config(self) -> ConfigDef:
        return INSERT_HEADER_CONFIG_DEF

    def apply(self, record: R) -> R:
        headers = record.headers.copy()
        headers.add(self.header, self.literal.value, self.literal.schema)
        return with_headers(record, headers)


HEADER_FROM_CONFIG_DEF = with_replace_null_with_default(
    ConfigDef()
    .define(
        FIELDS,
        Type.LIST,
        NO_DEFAULT,
        non_empty_list(),
        Importance.HIGH,
        "Field names in the record whose values are to be copied or moved to headers.",
    )
    .define(
        HEADERS,
        Type.LIST,
        NO_DEFAULT,
        non_empty_list(),
        Importance.HIGH,
        "Header names, in the same order as the field names listed in the fields configuration "
        "property.",
    )
    .define(
        OPERATION,
        Type.STRING,
        NO_DEFAULT,
        ValidString(MOVE, COPY),
        Importance.HIGH,
        "Either <code>move</code> if the fields are to be moved to the headers (removed from the "
        "key/value), or <code>copy</code> if the fields are to be copied to the headers "
        "(retained in the key/value).",
    )
)


class HeaderFrom(PartTransformation[R]):
    """Moves or copies fields in the key/value of a record into that record's headers. Use
    :class:`HeaderFromKey` or :class:`HeaderFromValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = HEADER_FROM_CONFIG_DEF.parse(configs)
        self.fields: list[str] = config[FIELDS]
        self.headers: list[str] = config[HEADERS]
        if len(self.headers) != len(self.fields):
            raise ConfigException(
                f"'{FIELDS}' config must have the same number of elements as '{HEADERS}' config."
            )
        self.move = config[OPERATION] == MOVE
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        self.schemas: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        return HEADER_FROM_CONFIG_DEF

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        headers = record.headers.copy()
        purpose = f"header {MOVE if self.move else COPY}"
        if schema is None:
            mapping = require_map(value, purpose)
            updated: Any = dict(mapping)
            for field, header in zip(self.fields, self.headers, strict=True):
                if self.move:
                    updated.pop(field, None)
                headers.add(header, mapping.get(field), None)
            return self.new_record(record, None, updated, headers)
        struct = require_struct(value, purpose)
        updated_schema = schema
        updated = struct
        if self.move:
            updated_schema = self.schemas.get(schema, self._moved_schema)
            updated = Struct(updated_schema)
            for kept in updated_schema.fields or ():
                updated.put(
                    kept.name, field_value(struct, kept.name, self.replace_null_with_default)
                )
        for field, header in zip(self.fields, self.headers, strict=True):
            present = struct.schema.field(field)
            schema_field = schema.field(field)
            headers.add(
                header,
                field_value(struct, field, self.replace_null_with_default)
                if present is not None
                else None,
                None if schema_field is None else schema_field.schema,
            )
        return self.new_record(record, updated_schema, updated, headers)

    def _moved_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields or ():
            if field.name not in self.fields:
                builder.field(field.name, field.schema)
        return builder.build()


class HeaderFromKey(HeaderFrom[R]):
    """Kafka's ``HeaderFrom$Key``."""

    KEY = True


class HeaderFromValue(HeaderFrom[R]):
    """Kafka's ``HeaderFrom$Value``."""

    KEY = False
