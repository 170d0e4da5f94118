"""A destination table as a task writes it: loaded once, created from the first record's
schema when ``iceberg.tables.auto-create-enabled`` allows, evolved to the records' schemas
when ``iceberg.tables.evolve-schema-enabled`` does (as Apache's ``IcebergWriterFactory`` and
``SchemaUtils``), with the converter of its current schema."""

from __future__ import annotations

import contextlib
from typing import Any

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table import Table

from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.errors import ConnectException, DataException
from airflow_provider_connect.connectors.iceberg.config import IcebergSinkConfig
from airflow_provider_connect.connectors.iceberg.partitions import partition_spec
from airflow_provider_connect.connectors.iceberg.schemas import (
    apply_updates,
    iceberg_schema,
    infer_schema,
    schema_updates,
)
from airflow_provider_connect.connectors.iceberg.values import RowConverter

FITTED_SCHEMAS_KEPT = 64
"""How many record schemas a table remembers as already fitting it (a bound, not a tuning)."""


def record_schema(schema: Schema | None, value: Any) -> Schema | IcebergSchema:
    """The schema of a row: its Connect schema, or the Iceberg schema inferred from a
    schemaless map as Apache does."""
    if schema is not None:
        return schema
    if isinstance(value, dict):
        return infer_schema(value)
    raise DataException(
        f"Cannot write a row of type {type(value).__name__} without a struct schema: "
        "use a converter that gives structs or maps"
    )


class NoSuchTable(ConnectException):
    """A destination table does not exist, and auto-create is off."""


class TableHandle:
    """One table of a task; see the module docstring. ``id_columns`` are the table's
    config's (``iceberg.table.<t>.id-columns``, else the default), else its identifier
    fields; for a table still to create, else the first upserted record's key fields."""

    def __init__(self, catalog: Catalog, name: str, config: IcebergSinkConfig) -> None:
        self.catalog = catalog
        self.name = name
        self.config = config
        self.table_config = config.table_config(name)
        self.table: Table | None = None
        self.id_columns: list[str] = list(self.table_config.id_columns)
        self._fitted: dict[Any, None] = {}
        try:
            self._use(catalog.load_table(name))
        except NoSuchTableError:
            if not config.auto_create:
                raise NoSuchTable(
                    f"Table {name} does not exist and iceberg.tables.auto-create-enabled is false"
                ) from None

    def _use(self, table: Table) -> None:
        self.table = table
        schema = table.schema()
        self.converter = RowConverter(schema, self.config.case_insensitive)
        configured = self.table_config.id_columns
        self.id_columns = configured or [
            name for i in schema.identifier_field_ids if (name := schema.find_column_name(i))
        ]
        self._fitted.clear()

    def fit(self, schema: Schema | None, value: Any) -> None:
        """Makes the table hold rows of ``schema`` (or of a schemaless ``value``'s keys):
        creates it, or adds the missing columns and widens types. Called per record; does
        the work once per new record schema."""
        marker: Any = schema if schema is not None else _keys(value)
        if marker in self._fitted:
            return
        if self.table is None:
            found = record_schema(schema, value)
            if isinstance(found, Schema):
                found = iceberg_schema(found, self.config.force_optional)
            self._create(found)
        elif self.config.evolve_schema:
            updates = schema_updates(
                self.table.schema(),
                record_schema(schema, value),
                self.config.case_insensitive,
                self.config.force_optional,
            )
            if updates:
                apply_updates(self.table, updates)
                self._use(self.catalog.load_table(self.name))
        if len(self._fitted) >= FITTED_SCHEMAS_KEPT:
            self._fitted.clear()
        self._fitted[marker] = None

    def _create(self, schema: IcebergSchema) -> None:
        ids = self.id_columns
        if ids:
            schema = _with_identifier(schema, ids)
        namespace = self.name.rsplit(".", 1)[0] if "." in self.name else None
        if namespace:
            with contextlib.suppress(NamespaceAlreadyExistsError):  # another task's
                self.catalog.create_namespace(namespace)
        try:
            table = self.catalog.create_table(
                self.name,
                schema,
                partition_spec=partition_spec(schema, self.table_config.partition_by),
                properties=dict(self.config.auto_create_props),
            )
        except TableAlreadyExistsError:  # another task created it first
            table = self.catalog.load_table(self.name)
        self._use(table)

    def refresh(self) -> None:
        """Reloads the table (another task may have evolved it)."""
        self._use(self.catalog.load_table(self.name))


def _keys(value: Any) -> Any:
    if isinstance(value, dict):
        return frozenset(value)
    if isinstance(value, Struct):
        return value.schema
    return type(value)


def _with_identifier(schema: IcebergSchema, columns: list[str]) -> IcebergSchema:
    """``schema`` with ``columns`` as its identifier fields, made required (Iceberg's rule
    for identifier fields)."""
    from pyiceberg.types import NestedField

    ids = []
    fields = []
    wanted = set(columns)
    for field in schema.fields:
        if field.name in wanted:
            ids.append(field.field_id)
            field = NestedField(
                field.field_id, field.name, field.field_type, required=True, doc=field.doc
            )
        fields.append(field)
    missing = wanted - {f.name for f in schema.fields}
    if missing:
        raise ConnectException(
            f"Id columns {sorted(missing)} are not columns of the records' schema"
        )
    return IcebergSchema(*fields, identifier_field_ids=ids)
