"""The embedded API (KIP-26): a Connect runtime inside an application.

    with Connect("my-app", {"bootstrap.servers": "...", "metadata.url": "sqlite:///c.db"}) as connect:
        connect.add_connector("lines", {"connector.class": "FileStreamSource", ...})
        print(connect.status("lines"))

Every process using the same metadata database manages the same connectors; ``app_id`` is
the Connect cluster's ``group.id``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from airflow_provider_connect.connect.metrics import MetricName
from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.offsets import InitialOffsets
from airflow_provider_connect.control.status import connector_status
from airflow_provider_connect.runtime.driver.cluster_watch import KafkaClusterWatch
from airflow_provider_connect.runtime.driver.herder import Herder
from airflow_provider_connect.runtime.driver.slot_packer import SlotPacker
from airflow_provider_connect.runtime.driver.spark_runner import SparkTaskRunner, spark_session
from airflow_provider_connect.runtime.executor.task_runner import worker_id
from airflow_provider_connect.runtime.rest.health import (
    HEALTH_CHECK_TIMEOUT_S,
    HEALTHY,
    WorkerHealth,
    starting,
    unhealthy,
)
from airflow_provider_connect.runtime.rest.metrics import AppInfo
from airflow_provider_connect.runtime.rest.server import REST_STORE_TIMEOUT_S, RestListeners
from airflow_provider_connect.runtime.worker_config import (
    GROUP_ID,
    METADATA_REQUEST_TIMEOUT_MS,
    METADATA_URL,
    WorkerConfig,
)
from airflow_provider_connect.store import MetadataStore


class Connect:
    """A runtime in this process: the herder on this driver, tasks on Spark.

    The metadata database's schema is migrated to the latest revision first, unless
    ``migrate`` is false (then it must be there already: ``connect-runtime db migrate``).
    """

    def __init__(
        self, app_id: str, worker_config: Mapping[str, Any], *, migrate: bool = True
    ) -> None:
        self.app_id = app_id
        self.worker = WorkerConfig({GROUP_ID: app_id, **worker_config})
        self.store = MetadataStore(
            self.worker[METADATA_URL],
            migrate=migrate,
            timeout_s=self.worker[METADATA_REQUEST_TIMEOUT_MS] / 1000,
        )
        self.writes = ConnectorWrites(self.store, lambda: self.worker.override_policy)
        self.spark: Any = None
        self.herder: Herder | None = None
        self.cluster_watch: KafkaClusterWatch | None = None
        self.rest: RestListeners | None = None
        self._stopped = threading.Event()
        self.health_timeout_s = HEALTH_CHECK_TIMEOUT_S
        """How long the herder may go without ending a pass before ``GET /health`` says
        unhealthy."""

    def start(self, *, rest: bool = False) -> None:
        """Starts Spark (or joins the running session) and the herder; with ``rest``, first
        Kafka Connect's REST API on every one of ``listeners`` (and ``admin.listeners``);
        the herder records the advertised URL with its lease. When a part fails to start,
        what had started is stopped (:meth:`stop`: no listener is left bound) before the
        error is raised."""
        try:
            self._start(rest)
        except BaseException:
            self.stop()
            raise

    def _start(self, rest: bool) -> None:
        self.spark = spark_session({"spark.app.name": self.app_id, **self.worker.spark_config()})
        if rest:  # serving before leading: whoever sees this driver hold the lease can call it
            rest_store = MetadataStore(
                self.worker[METADATA_URL], timeout_s=REST_STORE_TIMEOUT_S, fail_fast=True
            )
            self.rest = RestListeners(
                rest_store,
                self.worker,
                self._slot_usage,
                self._health,
                self._connector_metrics,
                AppInfo(worker_id()),
            )
            self.rest.start()
        self.cluster_watch = KafkaClusterWatch(self.worker.client_config("admin."))
        self.cluster_watch.start()
        self.herder = Herder(
            self.worker,
            self.store.configs,
            self.store.statuses,
            self.store.lease,
            SlotPacker(
                SparkTaskRunner(self.spark), self.store.hosts, self.store.statuses, self.worker
            ),
            worker_id(),
            rest_url=self.worker.rest_advertised_url() if rest else None,
            cluster_watch=self.cluster_watch,
        )
        self.herder.start()

    def _slot_usage(self) -> tuple[int, int] | None:
        return None if self.herder is None else self.herder.slot_usage()

    def _connector_metrics(self) -> dict[MetricName, float]:
        return {} if self.herder is None else self.herder.plugin_metrics()

    def _health(self) -> WorkerHealth:
        """Unhealthy while the Kafka cluster does not answer, saying since when and why;
        else starting until the herder's first pass over the connectors has ended, and
        unhealthy when none has ended for ``health_timeout_s``, saying what the herder is
        on."""
        unreachable = None if self.cluster_watch is None else self.cluster_watch.unreachable()
        if unreachable is not None:
            return unhealthy(unreachable)
        herder = self.herder
        if herder is None or herder.passed_at is None:
            return starting(None if herder is None else herder.doing())
        if time.monotonic() - herder.passed_at > self.health_timeout_s:
            return unhealthy(herder.doing())
        return HEALTHY

    def add_connector(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        initial_state: str = "RUNNING",
        initial_offsets: InitialOffsets | None = None,
    ) -> None:
        """Creates a connector after validating its config (ConfigValidationError lists every
        bad field), in ``initial_state`` (``RUNNING``, ``PAUSED`` or ``STOPPED``) and from
        ``initial_offsets`` (``{"offsets": [{"partition": {...}, "offset": {...}}]}`` or
        the list alone) when given;
        raises AlreadyExistsException for a taken name. Writes go through
        ``control.connectors`` as REST's and the Airflow hook's do."""
        self.writes.create(
            name, config, initial_state=initial_state, initial_offsets=initial_offsets
        )

    def put_connector(self, name: str, config: Mapping[str, str]) -> bool:
        """Creates the connector or replaces its config; returns whether it was created."""
        return self.writes.put(name, config)[1]

    def update_connector(self, name: str, config: Mapping[str, str]) -> None:
        """Replaces an existing connector's config (NotFoundException for an unknown name)."""
        self.writes.replace(name, config)

    def delete_connector(self, name: str) -> None:
        """Deletes the connector: its tasks and instance stop with connectorDeleted=true."""
        self.writes.delete(name)

    def status(self, name: str) -> dict[str, Any]:
        return connector_status(self.store, name)

    def stop(self) -> None:
        """Stops every task and connector of this runtime (not deleting them)."""
        if self.rest is not None:
            self.rest.stop()
            self.rest.store.close()
            self.rest = None
        if self.herder is not None:
            self.herder.stop()
            self.herder = None
        if self.cluster_watch is not None:  # after the herder, which reads it
            self.cluster_watch.stop()
            self.cluster_watch = None
        self.store.close()
        self._stopped.set()

    def join(self, timeout: float | None = None) -> bool:
        """Waits until :meth:`stop` has finished; returns whether it had."""
        return self._stopped.wait(timeout)

    def __enter__(self) -> Connect:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
