"""Pure parts of exactly-once support: the transaction context, offsets records, the
preflight checks of a config."""

from __future__ import annotations

import orjson
import pytest

from airflow_provider_connect.connect.source import SourceRecord
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
