"""The driver's watch of the Kafka cluster against a broker in a host of the test's own,
whose link is cut (packets dropped both ways, no reset) and healed."""

from __future__ import annotations

import pytest

from airflow_provider_connect.runtime.driver.cluster_watch import KafkaClusterWatch
from tests_common import netns
from tests_common.broker import EmbeddedBroker
from tests_common.kafka import wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())
    ),
]


def test_the_watch_tells_a_partition_from_its_first_probe_and_its_heal_from_the_next() -> None:
    """Answered: nothing to tell. Cut: the next probe fails within its timeout and the
    watch names the cluster, how long and why, the herder's text saying since when. Healed:
    a probe is answered again within seconds (TCP sends the cut probe's data again on its
    backed-off schedule), and both texts are gone."""
    with netns.NetworkHost() as host, EmbeddedBroker(host=host) as broker:
        watch = KafkaClusterWatch({"bootstrap.servers": broker.bootstrap_servers}, timeout_s=2)
        watch.probe()
        assert watch.unreachable() is None and watch.outage() is None
        host.cut()
        watch.probe()
        told, outage = watch.unreachable(), watch.outage()
        assert told is not None and outage is not None
        assert told.startswith(f"The Kafka cluster at {broker.bootstrap_servers} has not answered")
        assert outage.startswith(f"the Kafka cluster at {broker.bootstrap_servers} has not")
        watch.probe()
        assert watch.outage() == outage  # one text for the whole outage
        host.heal()

        def answered() -> bool:
            watch.probe()
            return watch.unreachable() is None

        wait_until(answered, 30, "a probe answered after the heal")
        assert watch.outage() is None
