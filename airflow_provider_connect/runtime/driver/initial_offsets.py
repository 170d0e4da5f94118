"""A new sink connector's initial offsets (KIP-995) on the driver: every writer stores them
with the connector (the Airflow side reaches no Kafka), and the herder writes them to the
connector's consumer group before anything of the connector starts. A source connector's
are written with the connector itself, in the metadata database."""

from __future__ import annotations

import logging

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.runtime.sink_offsets import ConsumerGroupOffsets
from airflow_provider_connect.runtime.worker_config import WorkerConfig
from airflow_provider_connect.store import ConfigStore, ConnectorRecord

log = logging.getLogger(__name__)

TIMEOUT_S = 10.0
"""How long the herder, which waits for it, waits for each of Kafka's answers."""


def write_initial_offsets(
    worker: WorkerConfig, configs: ConfigStore, record: ConnectorRecord
) -> None:
    """Replaces the consumer group offsets of ``record``'s connector (an earlier connector of
    that name may have left some) with its initial ones, then marks them written in the
    store. Called by the herder at every start of the connector until they are written,
    before the connector or a task starts; waits at most ``TIMEOUT_S`` for each of Kafka's
    answers. ConnectException naming the group when Kafka does not take them (the
    connector fails with it; a restart tries again)."""
    assert record.initial_offsets is not None
    group = ConsumerGroupOffsets(worker, record.name, record.config, TIMEOUT_S)
    try:
        group.replace(list(record.initial_offsets))
    except Exception as e:  # whatever it is, it fails this connector, never the herder
        raise ConnectException(
            f"The initial offsets of connector {record.name} could not be written to its "
            f"consumer group {group.group}: {e}"
        ) from e
    configs.drop_initial_offsets(record.name)
    log.info("wrote the initial offsets of %s to its consumer group %s", record.name, group.group)
