"""A sink connector's offsets in Kafka, which more than one room of the runtime reaches: its
consumer group's committed positions, read, altered and reset by the REST API (KIP-875) and
set by the herder from a new connector's initial offsets (KIP-995). Every call waits for the
broker's answer, at most ``timeout_s``, and raises its error (``KafkaException``)."""

from __future__ import annotations

from collections.abc import Mapping

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient

from airflow_provider_connect.connect.config import originals_with_prefix
from airflow_provider_connect.control.offsets import SinkOffsets
from airflow_provider_connect.runtime.kafka_names import consumer_group
from airflow_provider_connect.runtime.worker_config import WorkerConfig

TIMEOUT_S = 30.0


class ConsumerGroupOffsets:
    """The committed offsets of the consumer group a sink connector's tasks consume in, as
    Kafka Connect reaches them: with the worker's admin client config and the connector's
    ``admin.override.*``, in ``consumer.override.group.id`` when it sets one."""

    def __init__(
        self,
        worker: WorkerConfig,
        connector: str,
        config: Mapping[str, str],
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.group = consumer_group(connector, config)
        self.admin = AdminClient(
            {**worker.client_config("admin."), **originals_with_prefix(config, "admin.override.")}
        )
        self.timeout_s = timeout_s

    def committed(self) -> SinkOffsets:
        """The (topic, partition, offset) positions committed, in topic and partition order."""
        listed = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(self.group)])
        found = listed[self.group].result(timeout=self.timeout_s).topic_partitions or []
        return sorted((tp.topic, tp.partition, tp.offset) for tp in found if tp.offset >= 0)

    def alter(self, positions: SinkOffsets) -> None:
        """Commits ``positions``, leaving other partitions' as they are; the group must have
        no active member."""
        partitions = [KafkaPartition(topic, p, offset) for topic, p, offset in positions]
        altered = ConsumerGroupTopicPartitions(self.group, partitions)
        self.admin.alter_consumer_group_offsets([altered])[self.group].result(
            timeout=self.timeout_s
        )

    def reset(self) -> None:
        """Deletes the group, and with it every committed offset (a group that does not
        exist has none: no error)."""
        try:
            self.admin.delete_consumer_groups([self.group])[self.group].result(
                timeout=self.timeout_s
            )
        except KafkaException as e:
            if e.args[0].code() != KafkaError.GROUP_ID_NOT_FOUND:
                raise

    def replace(self, positions: SinkOffsets) -> None:
        """Makes ``positions`` the only committed offsets (none: a reset): the group is
        deleted first when it holds offsets of other partitions."""
        given = {(topic, partition) for topic, partition, _ in positions}
        if any((t, p) not in given for t, p, _ in self.committed()):
            self.reset()
        if positions:
            self.alter(positions)
