"""``io.confluent.connect.s3.S3SinkConnector``: topics into objects of an S3 bucket (any
S3-compatible endpoint), as Confluent's S3 sink names, splits and commits them.

Exactly once for deterministic partitioners and rotations (Confluent's model): nothing is
listed or read from S3; Kafka's committed offset is the only state, and it never passes a
record outside a completed object (:mod:`.writer`); records read again after a crash or a
rebalance land in objects of the same names, overwritten with the same content. Not exactly
once, as in Confluent's: the Wallclock timestamp extractor and ``rotate.schedule.interval.ms``
(their boundaries depend on when records are processed, so a replay may cut elsewhere).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import Config, ConfigDef
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.datasets import ConnectorData, listed, object_prefix, topics
from airflow_provider_connect.connect.errors import ConnectException, DataException
from airflow_provider_connect.connect.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connectors.s3 import config as c
from airflow_provider_connect.connectors.s3.formats import HEADERS, KEYS, VALUE, View, make_format
from airflow_provider_connect.connectors.s3.partitioners import (
    PARTITIONER_CONFIG_DEF,
    partitioner_from_config,
    validate_partitioner,
)
from airflow_provider_connect.connectors.s3.storage import S3Storage
from airflow_provider_connect.connectors.s3.writer import TopicPartitionWriter

CONFIG_DEF: ConfigDef = c.S3_CONFIG_DEF.merged(PARTITIONER_CONFIG_DEF)


def parse(props: Mapping[str, str]) -> dict[str, Any]:
    """The typed config; raises ConfigException as Confluent's config constructor does
    (the scheduled rotation needs a timezone). ``format.bytearray.separator`` is the raw,
    untrimmed value (Confluent reads it from the originals: white space is its point)."""
    parsed = CONFIG_DEF.parse(props)
    parsed[c.BYTEARRAY_SEPARATOR] = props.get(c.BYTEARRAY_SEPARATOR)
    refused = c.refused_at_start(parsed)
    if refused:
        raise ConnectException(refused[0][0])
    return parsed


class S3SinkConnector(SinkConnector):
    """Checks the bucket at start; hands its config to every task."""

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def validate(self, connector_configs: dict[str, str]) -> Config:
        """The ConfigDef's checks, the partitioner's, then Confluent's cross-key checks."""
        values = {v.name: v for v in CONFIG_DEF.validate(connector_configs)}
        for key, messages in validate_partitioner(connector_configs).items():
            for message in messages:
                if key in values and message not in values[key].error_messages:
                    values[key].add_error_message(message)
        if not any(v.error_messages for v in values.values()):
            c.check_connector_config(CONFIG_DEF.parse(connector_configs), values)
        return Config(list(values.values()))

    def start(self, props: dict[str, str]) -> None:
        """Fails with a clear reason when the bucket is missing or the credentials are
        refused (probed with ListObjectsV2)."""
        parse(props)
        S3Storage(CONFIG_DEF.parse(props)).probe()
        self.props = props

    def task_class(self) -> type[Task]:
        return S3SinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Reads its topics; writes ``s3://<bucket>/<topics.dir><directory.delim><topic>``
        per topic (the prefix of its object keys), as Airflow's Amazon provider and
        OpenLineage name S3 datasets."""
        names = listed(config.get(self.TOPICS_CONFIG))
        bucket = (config.get(c.BUCKET) or "").strip()
        folder = (config.get(c.TOPICS_DIR, "topics") or "").strip().strip("/")
        delim = config.get(c.DIRECTORY_DELIM, "/").strip()
        prefixes = [
            f"s3://{bucket}/{folder}{delim}{t}" if folder else f"s3://{bucket}/{t}" for t in names
        ]
        writes = [d for d in map(object_prefix, prefixes) if d is not None] if bucket else []
        return ConnectorData(topics(cluster, names), writes)


class S3SinkTask(SinkTask):
    """One :class:`~.writer.TopicPartitionWriter` per assigned topic partition. ``stop``
    is safe without a ``start`` (or after a failed one): there is nothing to discard."""

    def __init__(self) -> None:
        self.writers: dict[TopicPartition, TopicPartitionWriter] = {}

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.parsed = parse(props)
        self.storage = S3Storage(self.parsed)
        self.null_behavior = self.parsed[c.BEHAVIOR_ON_NULL_VALUES].strip().lower()
        self.formats = self._formats()

    def _formats(self) -> dict[View, Any]:
        parsed = self.parsed
        classes = {VALUE: parsed[c.FORMAT_CLASS]}
        if parsed[c.STORE_KEYS]:
            classes[KEYS] = parsed[c.KEYS_FORMAT_CLASS]
        if parsed[c.STORE_HEADERS]:
            classes[HEADERS] = parsed[c.HEADERS_FORMAT_CLASS]
        return {view: make_format(name, parsed, view) for view, name in classes.items()}

    def open(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self.writers[tp] = TopicPartitionWriter(
                tp,
                self.storage,
                partitioner_from_config(self.parsed, self.parsed[c.DIRECTORY_DELIM]),
                self.formats,
                self.parsed,
                self.context,
            )

    def put(self, records: list[SinkRecord]) -> None:
        writers = self.writers
        # The buffer of the last record's partition: a run of records of one partition
        # finds its writer once.
        topic, partition = None, -1
        buffer: deque[SinkRecord]  # set with topic and partition, before any append
        for record in records:
            if record.value is None and not self._accept_null(record):
                continue
            if record.kafka_partition != partition or record.topic != topic:
                topic, partition = record.topic, record.kafka_partition
                # a (topic, partition) tuple finds its TopicPartition (a NamedTuple) key
                writer = writers.get((topic, partition))  # type: ignore[call-overload]
                if writer is None:
                    raise ConnectException(
                        f"No writer found for topic partition {topic}-{partition}. "
                        "The record's topic-partition does not match any assigned partitions. "
                        f"Assigned partitions: [{', '.join(f'{t.topic}-{t.partition}' for t in writers)}]"
                    )
                buffer = writer.buffer
            buffer.append(record)
        for writer in writers.values():
            writer.write()

    def _accept_null(self, record: SinkRecord) -> bool:
        if self.null_behavior == "write":
            return True
        if self.null_behavior == "ignore":
            reporter = self.context.errant_record_reporter()
            if self.parsed[c.REPORT_NULLS_TO_DLQ] and reporter is not None:
                reporter.report(record, DataException("Skipping null value record."))
            return False
        raise ConnectException(
            "Null valued records are not writeable with current behavior.on.null.values 'settings."
        )

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The offsets past completed objects of the partitions in ``current_offsets``, every
        time (committing one again is harmless, and a commit the runtime failed is made at
        the next call; Confluent's hands each out once). Retries and time-based rotations
        happen in ``put``, which the runtime calls with an empty batch on an idle poll."""
        committable = {}
        for tp in current_offsets:
            writer = self.writers.get(tp)
            if writer is not None and writer.offset_to_commit is not None:
                committable[tp] = writer.offset_to_commit
        return committable

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        """Discards the revoked partitions' open files (uploads aborted): their records are
        read again by the next owner, from the committed offset. Resumes those it paused."""
        for tp in partitions:
            writer = self.writers.pop(tp, None)
            if writer is not None:
                writer.close()

    def stop(self, connector_deleted: bool = False) -> None:
        self.close(list(self.writers))
