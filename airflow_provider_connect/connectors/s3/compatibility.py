"""``schema.compatibility``: when a record's schema starts new files, and how a record is
projected onto the schema of the file it joins (Confluent's ``StorageSchemaCompatibility``).

* NONE: any other schema starts new files; records are written as they are.
* BACKWARD and FULL: a record of an older, compatible schema joins the file of the newer
  one (projected onto it); a newer or incompatible schema starts new files.
* FORWARD: a record of a newer, compatible schema joins the file of the older one (its
  extra fields dropped); an older or incompatible schema starts new files.

Schemas are compared by version, which BACKWARD, FORWARD and FULL require.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.data.projector import SchemaProjector
from airflow_provider_connect.connect.errors import SchemaProjectorException


class Compatibility:
    def __init__(self, name: str) -> None:
        self.name = name

    def _check(self, record: Schema | None, current: Schema | None) -> bool:
        """Whether both are schemas (False when both are None); raises on a switch between
        schema-based and schema-less data, or a missing version."""
        if record is None and current is None:
            return False
        if record is None or current is None:
            raise SchemaProjectorException(
                "Switch between schema-based and schema-less data is not supported"
            )
        if self.name != "NONE" and (record.version is None or current.version is None):
            raise SchemaProjectorException(f"Schema version required for {self.name} compatibility")
        return True

    def incompatible(self, record: Schema | None, current: Schema | None) -> bool:
        """Whether a record of schema ``record`` must start new files."""
        if record is current or not self._check(record, current):
            return False
        assert record is not None and current is not None
        if self.name == "NONE":
            return record != current
        if record == current:
            return False
        if self.name == "FORWARD":
            return not SchemaProjector.is_compatible(record, current) or (record.version or 0) < (
                current.version or 0
            )
        return not SchemaProjector.is_compatible(record, current) or (record.version or 0) > (
            current.version or 0
        )

    def project(self, record: Schema | None, value: Any, current: Schema | None) -> Any:
        """``value`` as a value of the file's schema ``current``."""
        if self.name == "NONE" or record is None or current is None or record == current:
            return value
        return SchemaProjector.project(record, value, current)
