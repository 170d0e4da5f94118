"""The executor's side of the connector API's task contexts (the connector context is the
driver's, in ``driver/connector_context.py``)."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.sink import (
    ErrantRecordReporter,
    SinkTaskContext,
    TopicPartition,
)
from airflow_provider_connect.connect.source import (
    OffsetStorageReader,
    SourceTaskContext,
    TransactionContext,
)
from airflow_provider_connect.store import OffsetStore


class StoreOffsetReader(OffsetStorageReader):
    """Reads a connector's committed source offsets from the metadata store."""

    def __init__(self, offsets: OffsetStore, connector: str) -> None:
        self.offset_store = offsets
        self.connector = connector

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.offset_store.source_offset(self.connector, partition)


class WorkerSourceTaskContext(SourceTaskContext):
    def __init__(
        self,
        configs: dict[str, str],
        reader: OffsetStorageReader,
        transactions: TransactionContext | None = None,
    ) -> None:
        self._configs = configs
        self._reader = reader
        self._transactions = transactions

    def configs(self) -> dict[str, str]:
        return self._configs

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    def transaction_context(self) -> TransactionContext | None:
        return self._transactions


class WorkerSinkTaskContext(SinkTaskContext):
    """Holds a sink task's requests until its loop applies them after ``put`` returns."""

    def __init__(self, configs: dict[str, str]) -> None:
        self._configs = configs
        self.assigned: set[TopicPartition] = set()
        self.paused: set[TopicPartition] = set()
        self.requested_offsets: dict[TopicPartition, int] = {}
        self.timeout_ms = 0
        self.commit_requested = False
        self.closing = False
        self.reporter: ErrantRecordReporter | None = None

    def configs(self) -> dict[str, str]:
        return self._configs

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        self.requested_offsets.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def request_commit(self) -> None:
        self.commit_requested = True

    def is_closing(self) -> bool:
        return self.closing
