"""The driver's watch of the Kafka cluster against a broker in a host of the test's own,
whose link is cut (packets dropped both ways, no reset) and healed."""

from __future__ import annotations

import pytest

from airflow_provider_connect.runtime.driver.cluster_watch import KafkaClusterWatch
from tests_common import netns
from tests_common.broker import EmbeddedBroker

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())
    ),
]


def test_the_watch_tells_a_partition_from_its_first_probe_and_its_heal_from_the_next() -> None:
    """Answered: nothing to tell, and the cluster's id known. Cut: the next probe fails
    within its timeout and the watch names the cluster, how long and why. Healed: the next
    probe is answered over the same (half-open, then alive again) connection."""
    with netns.NetworkHost() as host, EmbeddedBroker(host=host) as broker:
        watch = KafkaClusterWatch({"bootstrap.servers": broker.bootstrap_servers}, timeout_s=2)
        watch.probe()
        assert watch.unreachable() is None and watch.cluster_id
        host.cut()
        watch.probe()
        told = watch.unreachable()
        assert told is not None
        assert told.startswith(f"The Kafka cluster at {broker.bootstrap_servers} has not answered")
        host.heal()
        watch.probe()
        assert watch.unreachable() is None
