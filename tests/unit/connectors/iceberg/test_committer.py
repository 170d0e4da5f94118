"""The committer's rounds against a real pyiceberg SQL catalog (SQLite, local files) and the
test harness's in-memory channel: chunks committed once with their offsets, replays and
overlaps dropped, a round a crash cut short finished without doubling, a superseded
committer fenced, and a stale one refused by the catalog's compare-and-swap."""

from __future__ import annotations

import json
import pickle
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import _dataframe_to_data_files
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from airflow_provider_connect.connect.channel import FencedException
from airflow_provider_connect.connect.testing import InMemoryChannels
from airflow_provider_connect.connectors.iceberg.chunks import PartitionChunk, TableChunk
from airflow_provider_connect.connectors.iceberg.committer import (
    CHUNKS,
    COMMITTED,
    ROUND,
    Committer,
    Round,
    read_positions,
    table_positions,
)

GROUP = "connect-lake"
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType(), required=False),
    identifier_field_ids=[1],
)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    (tmp_path / "wh").mkdir()
    catalog = SqlCatalog(
        "iceberg", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=f"file://{tmp_path / 'wh'}"
    )
    catalog.create_namespace("db")
    catalog.create_table("db.a", SCHEMA)
    catalog.create_table("db.b", SCHEMA)
    return catalog


def files(catalog: Catalog, table: str, ids: range, name: str = "v1") -> list:
    t = catalog.load_table(table)
    data = pa.Table.from_pylist(
        [{"id": i, "name": name} for i in ids], schema=t.schema().as_arrow()
    )
    return list(_dataframe_to_data_files(t.metadata, data, t.io, uuid.uuid4()))


def chunk(
    start: int, end: int, tables: dict[str, TableChunk], partition: int = 0
) -> PartitionChunk:
    return PartitionChunk("orders", partition, start, end, tables)


def rows(catalog: Catalog, table: str) -> list[tuple[int, str]]:
    scanned = catalog.load_table(table).scan().to_arrow().to_pylist()
    return sorted((r["id"], r["name"]) for r in scanned)


def committer(channels: InMemoryChannels, catalog: Catalog) -> Committer:
    return Committer(channels.open(0), catalog, GROUP, "control-iceberg", ["db.a", "db.b"])


def test_a_round_commits_each_chunk_once_with_the_offsets_in_the_snapshot(catalog: Catalog) -> None:
    channels = InMemoryChannels()
    writer = channels.open(1)
    writer.send(
        CHUNKS,
        pickle.dumps([chunk(0, 10, {"db.a": TableChunk(files(catalog, "db.a", range(10)))})]),
    )
    done = committer(channels, catalog).commit()
    assert done is not None and done.positions == {("orders", 0): 10}
    assert rows(catalog, "db.a") == [(i, "v1") for i in range(10)]
    summary = catalog.load_table("db.a").current_snapshot().summary.additional_properties  # type: ignore[union-attr]
    assert summary["kafka.connect.commit-id"] == done.commit_id
    assert json.loads(summary[f"kafka.connect.offsets.control-iceberg.{GROUP}"]) == {"0": 10}
    assert json.loads(summary[f"kafka.connect.topic-offsets.{GROUP}"]) == {"orders": {"0": 10}}
    left = channels.open(2).messages()
    assert [m.kind for m in left] == [COMMITTED]  # chunks and intent removed
    assert read_positions(left) == {("orders", 0): 10}


def test_replayed_and_overlapping_chunks_are_never_committed_twice(catalog: Catalog) -> None:
    channels = InMemoryChannels()
    first, second = channels.open(1), channels.open(2)
    first.send(
        CHUNKS,
        pickle.dumps([chunk(0, 10, {"db.a": TableChunk(files(catalog, "db.a", range(10)))})]),
    )
    # another run of the partition read it again, further
    second.send(
        CHUNKS,
        pickle.dumps([chunk(0, 15, {"db.a": TableChunk(files(catalog, "db.a", range(15), "v2"))})]),
    )
    boss = committer(channels, catalog)
    boss.commit()
    assert rows(catalog, "db.a") == [(i, "v1") for i in range(10)]
    waiting = boss.channel.messages([CHUNKS])
    assert len(waiting) == 1  # the overlapping chunk waits until it is passed
    second.send(
        CHUNKS,
        pickle.dumps([chunk(10, 20, {"db.a": TableChunk(files(catalog, "db.a", range(10, 20)))})]),
    )
    boss.commit()
    assert rows(catalog, "db.a") == [(i, "v1") for i in range(20)]
    assert boss.channel.messages([CHUNKS]) == []  # passed, then dropped


def test_a_round_cut_short_is_finished_by_the_next_committer_without_doubling(
    catalog: Catalog,
) -> None:
    channels = InMemoryChannels()
    writer = channels.open(1)
    a_files, b_files = files(catalog, "db.a", range(5)), files(catalog, "db.b", range(5, 9))
    writer.send(
        CHUNKS,
        pickle.dumps([chunk(0, 9, {"db.a": TableChunk(a_files), "db.b": TableChunk(b_files)})]),
    )
    crashed = committer(channels, catalog)
    crashed.positions = {}
    # the crash: the intent written, db.a committed, db.b not, nothing recorded
    chunks = crashed.channel.messages([CHUNKS])
    work = Round(
        "c1",
        {("orders", 0): 9},
        {"db.a": [TableChunk(a_files)], "db.b": [TableChunk(b_files)]},
        {"db.a": [("orders", 0)], "db.b": [("orders", 0)]},
        [m.id for m in chunks],
    )
    crashed.channel.send(ROUND, pickle.dumps(work))
    crashed._commit_table("db.a", work.tables["db.a"], work)
    restarted = committer(channels, catalog)  # a new run of task 0 fences the crashed one
    restarted.commit()
    assert rows(catalog, "db.a") == [(i, "v1") for i in range(5)]
    assert rows(catalog, "db.b") == [(i, "v1") for i in range(5, 9)]
    assert restarted.positions == {("orders", 0): 9}
    assert [m.kind for m in restarted.channel.messages()] == [COMMITTED]


def test_a_superseded_committer_commits_nothing(catalog: Catalog) -> None:
    channels = InMemoryChannels()
    writer = channels.open(1)
    zombie = committer(channels, catalog)
    zombie.positions = {}
    current = committer(channels, catalog)  # task 0 ran again: the first run is a zombie
    writer.send(
        CHUNKS, pickle.dumps([chunk(0, 4, {"db.a": TableChunk(files(catalog, "db.a", range(4)))})])
    )
    with pytest.raises(FencedException):
        zombie.commit()
    assert rows(catalog, "db.a") == []
    current.commit()
    assert rows(catalog, "db.a") == [(i, "v1") for i in range(4)]


class StaleOnce:
    """A catalog whose first load of a table gives it as it was before another commit."""

    def __init__(self, catalog: Catalog, stale: Table) -> None:
        self.catalog, self.stale = catalog, stale
        self.loads = 0

    def load_table(self, name: str) -> Table:
        self.loads += 1
        return self.stale if self.loads == 1 else self.catalog.load_table(name)

    def commit_table(self, table: Table, requirements: Any, updates: Any) -> Any:
        return self.catalog.commit_table(table, requirements, updates)


def test_a_stale_commit_loses_the_catalogs_compare_and_swap(catalog: Catalog) -> None:
    """Two committers finishing the same round: the one that checked the table before the
    other committed fails on the catalog, and on its retry finds the round there."""
    channels = InMemoryChannels()
    a_files = files(catalog, "db.a", range(3))
    work = Round(
        "c1", {("orders", 0): 3}, {"db.a": [TableChunk(a_files)]}, {"db.a": [("orders", 0)]}
    )
    stale = StaleOnce(catalog, catalog.load_table("db.a"))
    committer(channels, catalog)._commit_table("db.a", work.tables["db.a"], work)
    late = Committer(channels.open(0), stale, GROUP, "control-iceberg", [])  # type: ignore[arg-type]
    late._commit_table("db.a", work.tables["db.a"], work)
    assert stale.loads == 2  # refused once, then found the round held
    assert rows(catalog, "db.a") == [(i, "v1") for i in range(3)]
    assert table_positions(catalog.load_table("db.a"), GROUP) == {("orders", 0): 3}
