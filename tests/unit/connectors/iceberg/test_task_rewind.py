"""A task whose chunk was passed over rewinds to the committed position, and a failure in the
same ``put`` (the metadata database away) leaves it as it was: the runtime puts the same
records again, and every record ends in the table once."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from airflow_provider_connect.connect.errors import RetriableException
from airflow_provider_connect.connect.sink import SimpleSinkTaskContext, SinkRecord, TopicPartition
from airflow_provider_connect.connect.testing import InMemoryChannels
from airflow_provider_connect.connectors.iceberg.chunks import PartitionChunk, TableChunk
from airflow_provider_connect.connectors.iceberg.committer import CHUNKS, COMMITTED, Committer
from airflow_provider_connect.connectors.iceberg.task import IcebergSinkTask

NO_TICK = 10**15


def record(partition: int, offset: int) -> SinkRecord:
    return SinkRecord("orders", partition, None, None, None, {"id": offset}, offset)


@dataclass
class Lake:
    catalog: SqlCatalog
    props: dict[str, str]


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    """A SQL catalog on SQLite with one table, ``db.t``, and the sink's config for it."""
    (tmp_path / "wh").mkdir()
    uri, warehouse = f"sqlite:///{tmp_path / 'c.db'}", f"file://{tmp_path / 'wh'}"
    catalog = SqlCatalog("iceberg", uri=uri, warehouse=warehouse)
    catalog.create_namespace("db")
    catalog.create_table("db.t", Schema(NestedField(1, "id", LongType(), required=False)))
    props = {
        "name": "lake",
        "topics": "orders",
        "iceberg.tables": "db.t",
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": uri,
        "iceberg.catalog.warehouse": warehouse,
    }
    return Lake(catalog, props)


def test_chunks_passed_over_or_not_sent_are_read_again_once(lake: Lake) -> None:
    """A partition whose chunk the committer passed over rewinds to the committed position;
    one whose chunk could not be sent (the metadata database away) rewinds to where that
    chunk started; read again, every record is in the table once."""
    catalog, props = lake.catalog, lake.props
    channels = InMemoryChannels()
    boss_channel = channels.open(0)
    boss = Committer(boss_channel, catalog, "connect-lake", "control-iceberg", ["db.t"])
    boss_channel.send(COMMITTED, pickle.dumps({("orders", 0): 0}))
    task, context = IcebergSinkTask(), SimpleSinkTaskContext(props, channel=channels.open(1))
    task.initialize(context)
    task.start(props)
    a, b = TopicPartition("orders", 0), TopicPartition("orders", 1)
    task.open([a, b])
    context.requested_offsets.clear()

    def put(records: list[SinkRecord], tick: bool) -> None:
        task.next_tick = 0 if tick else NO_TICK
        task.put(records)
        if task.work is not None:
            task.work.wait()  # the tick's chunks written and sent (or not)

    put([record(0, o) for o in range(10)], tick=True)  # sends [0, 10)
    # another run of the partition sent [0, 5) first (it held no rows): the committer takes it
    sent = boss_channel.messages([CHUNKS])
    boss_channel.remove([m.id for m in sent])
    other = channels.open(2)
    other.send(CHUNKS, pickle.dumps([PartitionChunk("orders", 0, 0, 5, {"db.t": TableChunk()})]))
    for message in sent:
        other.send(CHUNKS, message.payload)
    boss.commit()
    assert boss.positions == {("orders", 0): 5}

    send = task.channel.send
    task.channel.send = _failing  # type: ignore[method-assign]
    put([record(0, o) for o in range(10, 15)] + [record(1, 100)], tick=True)
    assert context.requested_offsets == {a: 5}  # passed over: from the committed position
    task.channel.send = send  # type: ignore[method-assign]
    with pytest.raises(RetriableException):
        put([], tick=False)  # the failed send seen: b's chunk is read again
    assert context.requested_offsets == {a: 5, b: 100}
    put([record(0, o) for o in range(5, 15)] + [record(1, 100)], tick=True)  # from the seeks
    boss.commit()
    ids = sorted(r["id"] for r in catalog.load_table("db.t").scan().to_arrow().to_pylist())
    assert ids == [*range(5, 15), 100]  # 0-4 were the other run's (no rows)


def test_partitions_opened_while_the_positions_cannot_be_read_wait_for_them(lake: Lake) -> None:
    props = lake.props
    channels = InMemoryChannels()
    channels.open(0).send(COMMITTED, pickle.dumps({("orders", 0): 7}))
    task, context = IcebergSinkTask(), SimpleSinkTaskContext(props, channel=channels.open(1))
    task.initialize(context)
    task.start(props)
    messages = task.channel.messages
    task.channel.messages = _failing  # type: ignore[method-assign]
    task.open([TopicPartition("orders", 0)])  # the rebalance goes on
    assert context.requested_offsets == {}
    try:
        task.put([record(0, 3)])
        raise AssertionError("the put should have failed")
    except RetriableException:
        pass
    task.channel.messages = messages  # type: ignore[method-assign]
    task.put([record(0, 3)])  # the runtime's retry: placed, sought, the record not taken
    assert context.requested_offsets == {TopicPartition("orders", 0): 7}
    assert task.writers[TopicPartition("orders", 0)].end == 7


def _failing(*args: Any) -> Any:
    raise RetriableException("the metadata database is away")
