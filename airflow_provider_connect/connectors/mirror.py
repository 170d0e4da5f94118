"""Kafka mirror source: replicates topics from another cluster (``source.bootstrap.servers``)
into the runtime's cluster, as MirrorMaker's source connector does.

Records keep their key, value, headers (raw bytes), timestamp and partition; the target
topic is ``topic.rename.format`` with ``${topic}`` for the source topic (default: the same
name). Topics are chosen by ``topics`` (names) or ``topics.regex``; the connector lists the
source cluster every ``refresh.topics.interval.ms`` and asks for new task configs when topics
or partitions appear. Source partitions are spread over ``tasks.max`` tasks.

Offsets are the source cluster's: partition ``{"cluster", "topic", "partition"}``, offset
``{"offset": next offset}``; no consumer group is used. Delivery is at-least-once.

The records are bytes: the connector config must set ``key.converter``, ``value.converter``
and ``header.converter`` to ``org.apache.kafka.connect.converters.ByteArrayConverter`` (the
connector checks). Target topics need at least the source's partitions: create them, or
set ``topic.creation.default.partitions``. ``source.consumer.*`` settings (security,
fetch sizes) go to the source cluster's consumer.

The Kafka client is imported when the connector or a task starts: describing the
connector's data (:meth:`MirrorSourceConnector.datasets`, when a DAG is parsed) loads none.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import (
    Config,
    ConfigDef,
    ConfigValue,
    Importance,
    NonEmptyString,
    Range,
    Type,
    originals_with_prefix,
)
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.datasets import ConnectorData, kafka_cluster, listed, topics
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.header import Header
from airflow_provider_connect.connect.messages import DataMessage
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from airflow_provider_connect.connect.storage import ByteArrayConverter

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

SOURCE_BOOTSTRAP = "source.bootstrap.servers"
SOURCE_ALIAS = "source.cluster.alias"
TOPICS = "topics"
TOPICS_REGEX = "topics.regex"
RENAME = "topic.rename.format"
REFRESH_MS = "refresh.topics.interval.ms"
PARTITIONS = "partitions"  # the task config key with its source partitions (JSON)
CONSUMER_PREFIX = "source.consumer."
BATCH = 1000

CONFIG_DEF = (
    ConfigDef()
    .define(
        SOURCE_BOOTSTRAP,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The bootstrap servers of the cluster to copy from.",
    )
    .define(
        SOURCE_ALIAS,
        Type.STRING,
        "source",
        NonEmptyString(),
        Importance.MEDIUM,
        "A name for the source cluster, part of every source partition.",
    )
    .define(TOPICS, Type.LIST, "", importance=Importance.HIGH, documentation="Topics to copy.")
    .define(
        TOPICS_REGEX,
        Type.STRING,
        "",
        importance=Importance.HIGH,
        documentation="A regex of topics to copy (instead of topics).",
    )
    .define(
        RENAME,
        Type.STRING,
        "${topic}",
        NonEmptyString(),
        Importance.MEDIUM,
        "The target topic; ${topic} is the source topic.",
    )
    .define(
        REFRESH_MS,
        Type.LONG,
        10_000,
        Range.at_least(1),
        Importance.LOW,
        "How often the source cluster's topics and partitions are listed.",
    )
)


def _client_config(props: dict[str, str]) -> dict[str, str]:
    return {
        "bootstrap.servers": props[SOURCE_BOOTSTRAP],
        **originals_with_prefix(props, CONSUMER_PREFIX),
    }


def source_partitions(admin: AdminClient, topics: list[str], regex: str) -> list[tuple[str, int]]:
    """The (topic, partition) pairs to copy, sorted."""
    metadata = admin.list_topics(timeout=10)
    pattern = re.compile(regex) if regex else None
    chosen = [
        t
        for t in metadata.topics
        if not t.startswith("__")
        and (t in topics or (pattern is not None and pattern.fullmatch(t)))
    ]
    return sorted((t, p) for t in chosen for p in metadata.topics[t].partitions)


def target_topic(rename: str, topic: str) -> str:
    """The target topic of a source topic: ``topic.rename.format`` with ``${topic}``."""
    return rename.replace("${topic}", topic)


class MirrorSourceConnector(SourceConnector):
    """Lists the source partitions and spreads them over the tasks; watches for new ones."""

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def task_class(self) -> type[Task]:
        return MirrorSourceTask

    def validate(self, connector_configs: dict[str, str]) -> Config:
        config = super().validate(connector_configs)
        values = {v.name: v for v in config.config_values}
        if not config.error_count:
            topics, regex = values[TOPICS].value, values[TOPICS_REGEX].value
            if bool(topics) == bool(regex):
                values[TOPICS].add_error_message("Set exactly one of topics and topics.regex")
            if regex:
                try:
                    re.compile(regex)
                except re.error as e:
                    values[TOPICS_REGEX].add_error_message(f"Invalid regex: {e}")
        for key in ("key.converter", "value.converter", "header.converter"):
            if not _is_byte_array(connector_configs.get(key, "")):
                config.config_values.append(_converter_error(key))
        return config

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData:
        """Reads its ``topics`` on the source cluster, writes them renamed on the runtime's
        (a ``topics.regex`` names no topic)."""
        names = listed(config.get(TOPICS))
        rename = config.get(RENAME) or "${topic}"
        return ConnectorData(
            topics(kafka_cluster(config.get(SOURCE_BOOTSTRAP)), names),
            topics(cluster, (target_topic(rename, t) for t in names)),
        )

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        self.parsed = CONFIG_DEF.parse(props)
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient({**_client_config(props)})
        self.partitions = self._list()
        self.stopping = threading.Event()
        self.monitor = threading.Thread(target=self._watch, daemon=True)
        self.monitor.start()

    def _list(self) -> list[tuple[str, int]]:
        return source_partitions(self.admin, self.parsed[TOPICS], self.parsed[TOPICS_REGEX])

    def _watch(self) -> None:
        from confluent_kafka import KafkaException

        while not self.stopping.wait(self.parsed[REFRESH_MS] / 1000):
            try:
                found = self._list()
            except KafkaException:  # the source cluster is briefly away: look again later
                continue
            if found != self.partitions:
                self.partitions = found
                self.context.request_task_reconfiguration()

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        count = min(max_tasks, len(self.partitions))
        return [
            {**self.props, PARTITIONS: json.dumps(self.partitions[i::count])} for i in range(count)
        ]

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        """Offsets are the source cluster's: a restart resumes at the next remote offset."""
        return ExactlyOnceSupport.SUPPORTED

    def stop(self, is_deleted: bool = False) -> None:
        self.stopping.set()
        self.monitor.join(timeout=5)


def _is_byte_array(name: str) -> bool:
    try:
        return issubclass(load_class(name), ByteArrayConverter) if name else False
    except ImportError:
        return False


def _converter_error(key: str) -> ConfigValue:
    value = ConfigValue(key)
    value.add_error_message(
        f"The mirror copies raw bytes: set {key} to "
        "org.apache.kafka.connect.converters.ByteArrayConverter"
    )
    return value


def _timestamp(message: Any) -> int | None:
    from confluent_kafka import TIMESTAMP_NOT_AVAILABLE

    kind, timestamp = message.timestamp()
    return None if kind == TIMESTAMP_NOT_AVAILABLE else timestamp


class MirrorSourceTask(SourceTask):
    """Consumes its source partitions from the stored offsets (no group) and emits each
    message unchanged."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer
        from confluent_kafka import TopicPartition as KafkaPartition

        parsed = CONFIG_DEF.parse(props)
        self.alias = parsed[SOURCE_ALIAS]
        self.rename = parsed[RENAME]
        partitions = [tuple(p) for p in json.loads(props[PARTITIONS])]
        self.consumer = Consumer(
            {
                **_client_config(props),
                "group.id": f"connect-mirror-{props.get('name', 'mirror')}",
                "enable.auto.commit": "false",
                "enable.partition.eof": "false",
            }
        )
        reader = self.context.offset_storage_reader()
        assignment = []
        for topic, partition in partitions:
            stored = reader.offset(self._partition(topic, partition))
            offset = stored["offset"] if stored else OFFSET_BEGINNING
            assignment.append(KafkaPartition(topic, partition, offset))
        self.consumer.assign(assignment)

    def _partition(self, topic: str, partition: int) -> dict[str, Any]:
        return {"cluster": self.alias, "topic": topic, "partition": partition}

    def poll(self) -> list[SourceRecord] | None:
        records = []
        for event in self.consumer.consume(BATCH, 0.2):
            error = event.error()
            if error is not None:
                if error.fatal():
                    raise ConnectException(f"Consuming from the source cluster failed: {error}")
                continue
            message = cast(DataMessage, event)
            topic, partition = message.topic(), message.partition()
            headers = [
                Header(k, Schema.OPTIONAL_BYTES_SCHEMA, v) for k, v in message.headers() or []
            ]
            records.append(
                SourceRecord(
                    self._partition(topic, partition),
                    {"offset": message.offset() + 1},
                    target_topic(self.rename, topic),
                    partition,
                    Schema.OPTIONAL_BYTES_SCHEMA,
                    message.key(),
                    Schema.OPTIONAL_BYTES_SCHEMA,
                    message.value(),
                    _timestamp(message),
                    headers,
                )
            )
        return records or None

    def stop(self, connector_deleted: bool = False) -> None:
        """The consumer is closed in ``stopped``, after the last poll."""

    def stopped(self) -> None:
        self.consumer.close()
