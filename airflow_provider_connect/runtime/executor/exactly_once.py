"""Exactly-once source support (KIP-618) on the executors: the transaction boundary, the
offsets topic and the transaction context of a task's transactional producer (the fencing of
earlier generations is the driver's, in ``driver/fencing.py``; transactional ids are named in
``kafka_names.py``; the preflight checks of a config are the control layer's, in
``control/validation.py``).

The metadata store plays the config topic: task configs and task-count records are rows
there, written by the herder. The offsets of exactly-once tasks are records of a Kafka
offsets topic, written in the transaction of the records they cover, and mirrored to the
store after each commit for the REST API and Airflow.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Mapping
from typing import Any

import orjson
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from airflow_provider_connect.connect.connector_config import (
    OFFSETS_TOPIC_CONFIG,
    POLL_BOUNDARY,
    TRANSACTION_BOUNDARY_CONFIG,
)
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.source import (
    OffsetStorageReader,
    SourceRecord,
    TransactionContext,
)
from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from airflow_provider_connect.runtime.worker_config import (
    OFFSET_STORAGE_PARTITIONS,
    OFFSET_STORAGE_REPLICATION_FACTOR,
    OFFSET_STORAGE_TOPIC,
    WorkerConfig,
)
from airflow_provider_connect.store import partition_key


def transaction_boundary(config: Mapping[str, str]) -> str:
    return config.get(TRANSACTION_BOUNDARY_CONFIG, POLL_BOUNDARY).lower()


class OffsetsTopic:
    """A connector's offsets in its offsets topic (``offsets.storage.topic`` of the connector,
    else the worker's ``offset.storage.topic``).

    Records are Kafka Connect's: the key is the JSON ``[connector, partition]``, the value
    the JSON offset (null resets it). All of one connector's records go to one partition,
    chosen from its name, so a task reads one partition at start.
    """

    def __init__(self, worker: WorkerConfig, connector: str, config: Mapping[str, str]) -> None:
        self.worker = worker
        self.connector = connector
        self.name = config.get(OFFSETS_TOPIC_CONFIG) or worker[OFFSET_STORAGE_TOPIC]
        self.partition = 0

    def ensure(self, reader: CommittedLogReader, timeout_s: float = 30) -> None:
        """Creates the topic (compacted) if it does not exist and finds this connector's
        partition."""
        if not reader.partitions(self.name):
            admin = AdminClient({**self.worker.client_config("admin.")})
            topic = NewTopic(
                self.name,
                self.worker[OFFSET_STORAGE_PARTITIONS],
                self.worker[OFFSET_STORAGE_REPLICATION_FACTOR],
                config={"cleanup.policy": "compact"},
            )
            try:
                admin.create_topics([topic])[self.name].result(timeout=timeout_s)
            except Exception as e:  # created meanwhile by another task: fine
                if "TOPIC_ALREADY_EXISTS" not in str(e):
                    raise
        deadline = time.monotonic() + timeout_s
        while not (partitions := reader.partitions(self.name)):
            if time.monotonic() > deadline:
                raise ConnectException(f"Offsets topic {self.name} has no partitions")
            time.sleep(0.1)
        self.partition = zlib.crc32(self.connector.encode()) % len(partitions)

    def record(self, partition: dict[str, Any], offset: dict[str, Any] | None) -> dict[str, Any]:
        """``produce`` arguments of the record storing ``offset`` for ``partition``."""
        return {
            "topic": self.name,
            "partition": self.partition,
            "key": orjson.dumps([self.connector, partition]),
            "value": None if offset is None else orjson.dumps(offset),
        }

    def read(self, reader: CommittedLogReader) -> dict[str, tuple[dict[str, Any], Any]]:
        """The connector's committed offsets, by partition key (latest record wins)."""
        offsets: dict[str, tuple[dict[str, Any], Any]] = {}
        for record in reader.read(self.name, self.partition):
            try:
                connector, partition = orjson.loads(record.key or b"null")
            except (orjson.JSONDecodeError, TypeError, ValueError):
                continue  # not an offset record of the Connect format
            if connector != self.connector or not isinstance(partition, dict):
                continue
            value = None if record.value is None else orjson.loads(record.value)
            offsets[partition_key(partition)] = (partition, value)
        return offsets


class SnapshotOffsetReader(OffsetStorageReader):
    """Offsets read from the offsets topic when the run started, kept current with what the
    run commits itself."""

    def __init__(self) -> None:
        # not self.offsets: that is OffsetStorageReader.offsets(partitions)
        self.entries: dict[str, tuple[dict[str, Any], Any]] = {}

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        entry = self.entries.get(partition_key(partition))
        return None if entry is None else entry[1]


class WorkerTransactionContext(TransactionContext):
    """Holds a task's transaction requests (``transaction.boundary=connector``) until the
    loop applies them; an abort wins over a commit requested for the same point."""

    def __init__(self) -> None:
        self.batch_request: bool | None = None  # True: commit, False: abort
        self.record_requests: dict[int, bool] = {}  # by id(record)

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        self._request(record, True)

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        self._request(record, False)

    def _request(self, record: SourceRecord | None, commit: bool) -> None:
        if record is None:
            self.batch_request = commit and self.batch_request is not False
        else:
            self.record_requests[id(record)] = commit and self.record_requests.get(id(record), True)

    def take_batch_request(self) -> bool | None:
        request, self.batch_request = self.batch_request, None
        return request
