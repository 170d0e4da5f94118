"""Pure parts of exactly-once support: the transaction context, offsets records, the
preflight checks of a config, which records of a log the committed-log reader keeps."""

from __future__ import annotations

import struct
from typing import Any

import orjson
import pytest
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.runtime.executor.committed_log import committed_records
from airflow_provider_connect.runtime.executor.exactly_once import (
    OffsetsTopic,
    WorkerTransactionContext,
)
from airflow_provider_connect.runtime.kafka_names import transactional_id
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from tests.validation import config_errors


def record() -> SourceRecord:
    return SourceRecord({"p": 1}, {"o": 1}, "t", value="v")


def test_an_abort_wins_over_a_commit_at_the_same_point() -> None:
    context = WorkerTransactionContext()
    context.commit_transaction()
    assert context.take_batch_request() is True
    assert context.take_batch_request() is None  # taken once
    context.abort_transaction()
    context.commit_transaction()
    assert context.take_batch_request() is False
    first, second = record(), record()
    context.commit_transaction(first)
    context.abort_transaction(second)
    context.commit_transaction(second)
    assert context.record_requests == {id(first): True, id(second): False}


def test_transactional_ids_and_offsets_records_follow_kafka_connect() -> None:
    worker = WorkerConfig({"group.id": "cluster", "offset.storage.topic": "offsets"})
    assert transactional_id(worker, "orders", 3) == "cluster-orders-3"
    topic = OffsetsTopic(worker, "orders", {})
    assert topic.name == "offsets"
    produced = topic.record({"table": "a"}, {"id": 7})
    assert orjson.loads(produced["key"]) == ["orders", {"table": "a"}]
    assert orjson.loads(produced["value"]) == {"id": 7}
    assert topic.record({"table": "a"}, None)["value"] is None  # a reset
    assert OffsetsTopic(worker, "orders", {"offsets.storage.topic": "own"}).name == "own"


@pytest.mark.parametrize(
    ("connector", "field", "message"),
    [
        ("FileStreamSource", "transaction.boundary", "connector-defined transaction boundaries"),
        ("JdbcSourceConnector", "exactly.once.support", "does not support exactly-once"),
    ],
)
def test_preflight_errors(connector: str, field: str, message: str) -> None:
    config = {
        "connector.class": connector,
        "exactly.once.support": "required",
        "transaction.boundary": "connector",
        "file": "/tmp/x",
        "topic": "t",
        "connection.url": "sqlite://",
        "mode": "bulk",
        "topic.prefix": "p-",
    }
    errors = config_errors(config)
    assert any(message in e for e in errors.get(field, [])), errors


def test_bad_exactly_once_values_name_their_fields() -> None:
    errors = config_errors(
        {
            "connector.class": "FileStreamSource",
            "topic": "t",
            "exactly.once.support": "sometimes",
            "transaction.boundary": "never",
        }
    )
    assert set(errors) >= {"exactly.once.support", "transaction.boundary"}


# -- which records the committed-log reader keeps ----------------------------------------------
ZOMBIE = 7  # a producer id: one transactional id's producers, every generation of them


def data(offset: int, epoch: int, *values: str, producer_id: int = ZOMBIE) -> Any:
    """A transactional record batch of ``producer_id`` at ``epoch``, as a broker stores it."""
    builder = DefaultRecordBatchBuilder(2, 0, True, producer_id, epoch, 0, 1 << 20)
    for delta, value in enumerate(values):
        builder.append(delta, 0, None, value.encode(), [])
    return _batch(builder.build(), offset)


def marker(offset: int, epoch: int, *, commit: bool, producer_id: int = ZOMBIE) -> Any:
    """The COMMIT or ABORT control marker ending ``producer_id``'s transaction."""
    builder = DefaultRecordBatchBuilder(2, 0, True, producer_id, epoch, -1, 1 << 20)
    builder.append(0, 0, struct.pack(">hh", 0, int(commit)), struct.pack(">hi", 0, 0), [])
    buffer = builder.build()
    attributes_at, crc_at = DefaultRecordBatch.ATTRIBUTES_OFFSET, DefaultRecordBatch.CRC_OFFSET
    (attributes,) = struct.unpack_from(">h", buffer, attributes_at)
    struct.pack_into(">h", buffer, attributes_at, attributes | DefaultRecordBatch.CONTROL_MASK)
    struct.pack_into(">I", buffer, crc_at, calc_crc32c(bytes(buffer[attributes_at:])))
    return _batch(buffer, offset)


def _batch(buffer: bytearray, offset: int) -> Any:
    struct.pack_into(">q", buffer, 0, offset)  # the base offset the broker assigned
    return MemoryRecords(bytes(buffer)).next_batch()


def values_of(batches: list[Any]) -> list[str]:
    return [r.value.decode() for r in committed_records(batches)]


def test_a_fenced_producers_late_batch_is_not_committed_by_its_successor() -> None:
    """What the test broker (tansu 0.6) was seen to leave in a partition when a fencing
    producer's InitProducerId ran while the zombie's produce was in flight: the zombie's
    batch of its old epoch written after the abort marker of that epoch, and no marker of
    its own ever after. The successor (same transactional id, so same producer id) then
    commits its own transaction: that must not commit the zombie's batch, which Kafka would
    have refused (its producer epoch was fenced)."""
    log = [
        data(0, 0, "s0:0"),
        marker(1, 0, commit=True),
        data(2, 0, "s0:1"),
        marker(3, 0, commit=False),  # the fencing aborts the open transaction
        data(4, 0, "s0:2"),  # the zombie's in-flight batch, taken after the abort
        data(5, 2, "s0:1", "s0:2"),  # the new generation, from the committed offset
        marker(7, 2, commit=True),
    ]
    assert values_of(log) == ["s0:0", "s0:1", "s0:2"]


def test_a_fenced_producers_batch_with_no_marker_in_its_partition_is_not_committed() -> None:
    """The fencing wrote no marker in this partition (the batch was not yet recorded in
    the transaction when it aborted): the zombie's batch is still open when a newer epoch
    of its producer writes, so its transaction never ended."""
    log = [data(0, 0, "s0:0"), data(1, 2, "s0:0"), marker(2, 2, commit=True)]
    assert values_of(log) == ["s0:0"]


def test_kafkas_markers_close_transactions_whatever_epoch_they_carry() -> None:
    """Kafka's fencing aborts with the bumped epoch, and with transaction version 2 every
    marker carries the epoch + 1 that the producer's next transaction uses: a marker ends
    the open transaction of its producer when that transaction's epoch is not above its
    own. A late batch of an epoch below one already seen is a fenced write."""
    fenced = [
        data(0, 0, "a"),
        marker(1, 1, commit=False),
        data(2, 0, "late"),
        data(3, 2, "b"),
        marker(4, 2, commit=True),
    ]
    assert values_of(fenced) == ["b"]
    version_2 = [
        data(0, 0, "a"),
        marker(1, 1, commit=True),
        data(2, 1, "b"),
        marker(3, 2, commit=False),
        data(4, 2, "c"),
        marker(5, 3, commit=True),
    ]
    assert values_of(version_2) == ["a", "c"]


def test_a_late_marker_of_a_fenced_epoch_does_not_end_the_newer_transaction() -> None:
    log = [
        data(0, 2, "new"),
        marker(1, 0, commit=True),  # the zombie's commit, written after it was fenced
        marker(2, 2, commit=False),
        data(3, 2, "next"),
        marker(4, 2, commit=True),
    ]
    assert values_of(log) == ["next"]


def test_transactions_of_other_producers_and_plain_records_are_unaffected() -> None:
    def log() -> list[Any]:  # anew for each read: a batch's records are read once
        builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
        builder.append(0, 0, None, b"plain", [])
        return [
            data(0, 0, "other-open", producer_id=8),
            data(1, 0, "zombie"),
            _batch(builder.build(), 2),
            data(3, 1, "other-committed", producer_id=9),
            marker(4, 1, commit=True, producer_id=9),
            data(5, 2, "successor"),
            marker(6, 2, commit=True),
        ]

    assert values_of(log()) == ["plain", "other-committed", "successor"]
    assert [r.offset for r in committed_records(log(), start=3)] == [3, 5]
