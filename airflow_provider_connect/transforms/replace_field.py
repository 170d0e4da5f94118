"""``ReplaceField``: keeps, drops and renames fields of the key or the value (Kafka's
``ReplaceField$Key`` and ``ReplaceField$Value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import ConfigDef, Importance, LambdaValidator, Type
from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    PartTransformation,
    R,
    SchemaCache,
    copy_schema_basics,
    distinct_list,
    require_map,
    require_struct,
    with_replace_null_with_default,
)

EXCLUDE = "exclude"
INCLUDE = "include"
RENAMES = "renames"
PURPOSE = "field replacement"


def parse_rename_mappings(mappings: list[str]) -> dict[str, str]:
    """``old:new`` pairs as a dict; raises ConfigException for any other item."""
    renames = {}
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) != 2:
            raise ConfigException.invalid(RENAMES, mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def _check_renames(_name: str, value: Any) -> None:
    parse_rename_mappings(value)


CONFIG_DEF = with_replace_null_with_default(
    ConfigDef()
    .define(
        EXCLUDE,
        Type.LIST,
        [],
        distinct_list(empty_allowed=True),
        Importance.MEDIUM,
        "Fields to exclude. This takes precedence over the fields to include.",
    )
    .define(
        INCLUDE,
        Type.LIST,
        [],
        distinct_list(empty_allowed=True),
        Importance.MEDIUM,
        "Fields to include. If specified, only these fields will be used.",
    )
    .define(
        RENAMES,
        Type.LIST,
        [],
        LambdaValidator(
            _check_renames, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
        ),
        Importance.MEDIUM,
        "Field rename mappings.",
    )
)


class ReplaceField(PartTransformation[R]):
    """Filter or rename fields. Use :class:`ReplaceFieldKey` or :class:`ReplaceFieldValue`."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = CONFIG_DEF.parse(configs)
        self.exclude = set(config[EXCLUDE])
        self.include = set(config[INCLUDE])
        self.renames = parse_rename_mappings(config[RENAMES])
        self.replace_null_with_default: bool = config[REPLACE_NULL_WITH_DEFAULT]
        self.plans: SchemaCache[Schema, tuple[Schema, list[int]]] = SchemaCache()
        self.names: dict[str, str | None] = {}  # schemaless keys: new name, None if dropped

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def _kept(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def _learn(self, name: str) -> str | None:
        """What becomes of schemaless key ``name`` (remembered: records share their keys)."""
        new = self.renames.get(name, name) if self._kept(name) else None
        if len(self.names) < 10_000:
            self.names[name] = new
        return new

    def apply(self, record: R) -> R:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            names = self.names
            updated = {}
            for name, field_value in require_map(value, PURPOSE).items():
                new = names[name] if name in names else self._learn(name)
                if new is not None:
                    updated[new] = field_value
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        schema, sources = self.plans.get(struct.schema, self._plan)
        values = struct._values
        if self.replace_null_with_default:
            fields = struct.schema.fields or ()
            picked = [
                fields[i].schema.default_value if values[i] is None else values[i] for i in sources
            ]
        else:
            picked = [values[i] for i in sources]
        # The values were valid under the same field schemas: no need to check them again.
        return self.new_record(record, schema, Struct._trusted(schema, picked))

    def _plan(self, schema: Schema) -> tuple[Schema, list[int]]:
        """The updated schema, and the index in ``schema`` of each of its fields."""
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        sources = []
        for field in schema.fields or ():
            if self._kept(field.name):
                builder.field(self.renames.get(field.name, field.name), field.schema)
                sources.append(field.index)
        return builder.build(), sources


class ReplaceFieldKey(ReplaceField[R]):
    """Kafka's ``ReplaceField$Key``."""

    KEY = True


class ReplaceFieldValue(ReplaceField[R]):
    """Kafka's ``ReplaceField$Value``."""

    KEY = False
