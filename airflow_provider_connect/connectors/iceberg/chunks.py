"""What a task hands the committer: a chunk of one topic partition's offsets and, per
table, the data files and deletes its records make. Sent pickled through the connector's
coordination channel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyiceberg.manifest import DataFile


@dataclass
class TableChunk:
    """What one chunk does to one table: delete the rows of ``deleted`` keys (after all rows
    when ``truncate``), then add ``files``."""

    files: list[DataFile] = field(default_factory=list)
    deleted: list[tuple[Any, ...]] = field(default_factory=list)
    truncate: bool = False
    id_columns: list[str] = field(default_factory=list)


@dataclass
class PartitionChunk:
    topic: str
    partition: int
    start: int
    end: int
    tables: dict[str, TableChunk]

    @property
    def tp(self) -> tuple[str, int]:
        return (self.topic, self.partition)
