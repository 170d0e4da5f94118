"""Offsets set outside a connector's tasks, taken to Kafka by the herder before anything of
the connector starts (the Airflow side reaches no Kafka, so every writer stores them):

- a sink connector's offsets kept with the connector are written to its consumer group: a new
  one's initial offsets (KIP-995), and those altered or reset (KIP-875) while it was STOPPED
  by a writer that reaches no Kafka;
- a source connector's, set in the metadata database by its initial offsets or by KIP-875's
  alter or reset, are copied into its offsets topic on an exactly-once worker, whose tasks
  read them there.
"""

from __future__ import annotations

import logging

from confluent_kafka import KafkaError, Producer

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from airflow_provider_connect.runtime.executor.exactly_once import OffsetsTopic
from airflow_provider_connect.runtime.sink_offsets import ConsumerGroupOffsets
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import ConfigStore, ConnectorRecord, OffsetStore, partition_key

log = logging.getLogger(__name__)

TIMEOUT_S = 10.0
"""How long the herder, which waits for it, waits for each of Kafka's answers."""


def write_initial_offsets(
    worker: WorkerConfig, configs: ConfigStore, record: ConnectorRecord
) -> None:
    """Replaces the consumer group offsets of ``record``'s connector (an earlier connector of
    that name may have left some) with its initial ones, or alters the partitions they name
    (``initial_offsets_alter``), then marks them written in the store. Called by the herder at every start of the connector until they are written,
    before the connector or a task starts; waits at most ``TIMEOUT_S`` for each of Kafka's
    answers. ConnectException naming the group when Kafka does not take them (the
    connector fails with it; a restart tries again)."""
    assert record.initial_offsets is not None
    group = ConsumerGroupOffsets(worker, record.name, record.config, TIMEOUT_S)
    try:
        positions = list(record.initial_offsets)
        if record.initial_offsets_alter:
            group.alter(positions)
        else:
            group.replace(positions)
    except Exception as e:  # whatever it is, it fails this connector, never the herder
        raise ConnectException(
            f"The initial offsets of connector {record.name} could not be written to its "
            f"consumer group {group.group}: {str(e) or type(e).__name__}"
        ) from e
    configs.drop_initial_offsets(record.name)
    log.info("wrote the initial offsets of %s to its consumer group %s", record.name, group.group)


def copy_source_offsets(
    worker: WorkerConfig, configs: ConfigStore, offsets: OffsetStore, record: ConnectorRecord
) -> None:
    """Makes the offsets topic hold exactly the source offsets the metadata database holds
    for ``record``'s connector (a record for each, a tombstone for each partition the topic
    has and the database has not), then marks them copied. Called by the herder, on an
    exactly-once worker, at every start of the connector until they are copied, before a
    task starts (none of its tasks writes the topic meanwhile); ConnectException naming the
    topic when Kafka does not take them (the connector fails with it; a restart tries
    again)."""
    topic = OffsetsTopic(worker, record.name, record.config)
    reader = CommittedLogReader(worker.client_config("consumer."))
    try:
        topic.ensure(reader, TIMEOUT_S)
        wanted = {partition_key(p): (p, o) for p, o in offsets.source_offsets(record.name)}
        stale = [p for key, (p, _) in topic.read(reader).items() if key not in wanted]
        producer = Producer({**worker.client_config("producer."), "enable.idempotence": True})
        failures: list[KafkaError] = []

        def delivered(error: KafkaError | None, _: object) -> None:
            if error is not None:
                failures.append(error)

        for partition, offset in [*((p, None) for p in stale), *wanted.values()]:
            producer.produce(**topic.record(partition, offset), on_delivery=delivered)
        if producer.flush(TIMEOUT_S):
            raise TimeoutError(f"no answer within {TIMEOUT_S:.0f} s")
        if failures:
            raise ConnectException(f"Kafka did not take {len(failures)}: {failures[-1]}")
    except Exception as e:  # whatever it is, it fails this connector, never the herder
        raise ConnectException(
            f"The offsets of connector {record.name} could not be written to its offsets "
            f"topic {topic.name}: {str(e) or type(e).__name__}"
        ) from e
    finally:
        reader.close()
    configs.mark_source_offsets(record.name, set_=False)
    log.info("copied the offsets of %s into its offsets topic %s", record.name, topic.name)
