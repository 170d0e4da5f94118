"""Whether the Kafka cluster answers the driver, for ``GET /health`` and for readers of the
metadata database (the herder records it: the Airflow hook's waits name it): a thread of
its own asks the cluster of ``bootstrap.servers`` to describe itself (DescribeCluster: its
id and brokers, not every topic's metadata) at a steady interval,
each request bounded, so a partition (packets dropped, connections half-open, no reset) is
told within ``interval + timeout`` of its start and its end within ``interval`` of the heal.
Kafka Connect's distributed worker tells it the same way, through its herder's tick, which
needs the group coordinator: its ``GET /health`` says unhealthy while the cluster is away."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import logging
import threading
import time
from collections.abc import Mapping

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

log = logging.getLogger(__name__)

PROBE_INTERVAL_S = 2.0
PROBE_TIMEOUT_S = 5.0


class KafkaClusterWatch:
    """Probes the cluster of ``config`` (an admin client's settings, ``bootstrap.servers``
    included) every ``interval_s``, each probe bounded by ``timeout_s``, from :meth:`start`
    until :meth:`stop`. :meth:`unreachable` is None while the last probe was answered."""

    def __init__(
        self,
        config: Mapping[str, str],
        interval_s: float = PROBE_INTERVAL_S,
        timeout_s: float = PROBE_TIMEOUT_S,
    ) -> None:
        self.bootstrap = config.get("bootstrap.servers", "")
        self.interval_s, self.timeout_s = interval_s, timeout_s
        self._admin = AdminClient(dict(config))
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kafka-cluster-watch", daemon=True)
        self._failing_since: float | None = None  # monotonic
        self._failing_since_utc: dt.datetime | None = None
        self._error = ""  # the first of the outage

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ends the probes; returns within one probe's timeout."""
        self._stopping.set()
        self._thread.join(self.timeout_s + 2)

    def unreachable(self) -> str | None:
        """Since when and why the cluster has not answered, or None while it answers (and
        before the first probe has ended)."""
        since = self._failing_since
        if since is None:
            return None
        return (
            f"The Kafka cluster at {self.bootstrap} has not answered for "
            f"{time.monotonic() - since:.0f} s: {self._error}"
        )

    def outage(self) -> str | None:
        """As :meth:`unreachable`, with the time it started (UTC) instead of how long ago:
        the same text for the whole outage, what the herder records."""
        since = self._failing_since_utc
        if since is None:
            return None
        return (
            f"the Kafka cluster at {self.bootstrap} has not answered the runtime since "
            f"{since:%Y-%m-%d %H:%M:%S} UTC: {self._error}"
        )

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.probe()
            except Exception:  # the watch goes on whatever one probe met
                log.exception("probing the Kafka cluster failed")
            self._stopping.wait(self.interval_s)

    def probe(self) -> None:
        """One DescribeCluster request, its outcome recorded: an outage starts, with its
        cause, at the first probe that gets no answer within the timeout (dated back by
        it), and ends at the first answered."""
        try:
            self._admin.describe_cluster(request_timeout=self.timeout_s).result(
                timeout=self.timeout_s + 1
            )
        except (KafkaException, concurrent.futures.TimeoutError) as e:
            if self._failing_since is None:
                error = e.args[0] if e.args else e
                self._error = getattr(error, "str", lambda: str(error))() or "no answer"
                self._failing_since = time.monotonic() - self.timeout_s
                self._failing_since_utc = dt.datetime.now(dt.timezone.utc) - dt.timedelta(
                    seconds=self.timeout_s
                )
            return
        self._failing_since = self._failing_since_utc = None
