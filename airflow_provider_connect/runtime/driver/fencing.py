"""Exactly-once source support (KIP-618) on the driver: before the herder writes the
task-count record of a new generation of a connector's task configs, it fences out the
producers of the previous generation (the transactional producer side is the executor's,
in ``executor/exactly_once.py``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from confluent_kafka import Producer

from airflow_provider_connect.runtime.worker_config import transactional

log = logging.getLogger(__name__)


def fence_producers(producer_config: dict[str, str], transactional_ids: Iterable[str]) -> None:
    """Fences out every producer that may still use one of ``transactional_ids``: a new
    producer epoch is claimed for each, which aborts the transaction a zombie left open and
    makes its later writes and commits fail."""
    for tid in transactional_ids:
        producer = Producer(transactional(producer_config, tid))
        producer.init_transactions(30)
        log.info("fenced out producers with transactional id %s", tid)
