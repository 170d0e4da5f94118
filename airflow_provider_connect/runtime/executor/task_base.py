"""What source and sink task loops share: starting the task, reporting status, the
heartbeat, and ending with the right calls in the right order whatever happened."""

from __future__ import annotations

import logging
import traceback
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any

from airflow_provider_connect.connect.config import originals_with_prefix
from airflow_provider_connect.connect.connector import Task, call_stop
from airflow_provider_connect.connect.metrics import PluginMetrics
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.runtime.config_transformer import ConfigTransformer
from airflow_provider_connect.runtime.executor.errors import RunAgain, StoppedWhileRetrying
from airflow_provider_connect.runtime.executor.host_resources import HostResources
from airflow_provider_connect.runtime.executor.store_writes import StoreWrites
from airflow_provider_connect.runtime.executor.task_control import Heartbeat
from airflow_provider_connect.runtime.executor.task_metrics import TaskMetrics
from airflow_provider_connect.runtime.executor.task_spec import TaskSpec
from airflow_provider_connect.runtime.executor.transformations import transformation_chain
from airflow_provider_connect.runtime.logs import TaskLog
from airflow_provider_connect.runtime.worker_config import (
    OFFSET_FLUSH_INTERVAL_MS,
    OFFSET_FLUSH_TIMEOUT_MS,
    TASK_HEARTBEAT_INTERVAL_MS,
    TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS,
    TASK_STORE_UNREACHABLE_GRACE_MS,
    WorkerConfig,
)
from airflow_provider_connect.store import (
    ChannelStore,
    ConfigStore,
    Database,
    OffsetStore,
    RunReport,
    State,
    StatusStore,
    StoreUnavailable,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskOutcome:
    """How a task run ended, as reported to the driver.

    ``deleted`` says it was stopped because its connector was deleted; ``cleanup_trace``
    is set when ``stop(connector_deleted=True)`` raised; ``trace`` when the task failed.
    """

    connector: str
    task_id: int
    run_id: str
    failed: bool = False
    trace: str | None = None
    deleted: bool = False
    cleanup_trace: str | None = None
    run_again: str | None = None
    """Why the run ended asking to be started again (``RunAgain``), not failed."""


@dataclass(frozen=True)
class TaskStores:
    """The stores a task run uses: ``statuses`` for its status and heartbeats, ``offsets``
    for source offsets and sink progress, ``configs`` only to read its connector's
    generation and task-count record (exactly-once sources), and ``channels`` for a sink's
    coordination channel."""

    statuses: StatusStore
    offsets: OffsetStore
    configs: ConfigStore
    channels: ChannelStore

    @classmethod
    def of(cls, db: Database) -> TaskStores:
        return cls(StatusStore(db), OffsetStore(db), ConfigStore(db), ChannelStore(db))


class TaskRefusedToStart(Exception):
    """Raised by a run's setup, after releasing what it created, when the run must not
    start (an exactly-once task of a stale generation); the run ends without failing."""


def resolved(spec: TaskSpec) -> TaskSpec:
    """``spec`` with its connector and task configs' ``${provider:path:key}`` resolved by the
    worker's config providers, here on the executor (the store keeps the placeholders)."""
    secrets = ConfigTransformer(spec.worker_props)
    try:
        return replace(
            spec,
            connector_config=secrets.transform(spec.connector_config),
            task_config=secrets.transform(spec.task_config),
        )
    finally:
        secrets.close()


def trace_of(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


class WorkerTask(ABC):
    """Runs one task run to its end. Subclasses supply the data loop.

    Order of calls on the task: ``initialize``, ``start``, the loop's calls, then the
    subclass's ``_finish`` after the heartbeat thread has ended (so nothing runs concurrently
    with it); ``stop`` is called exactly once, by ``_finish`` or earlier from the heartbeat.

    The run's state, offsets, progress and topics reach the store through ``writes``
    (``store_writes.py``): the loop never waits on the database, and goes on for
    ``task.store.unreachable.grace.ms`` while it cannot be reached (the heartbeat's rule).
    """

    task: Task
    is_sink = False
    log: TaskLog | None = None
    """The run's log (set by ``run_task``): a FAILED trace ends with its last lines."""

    def __init__(
        self,
        spec: TaskSpec,
        stores: TaskStores,
        worker_id: str,
        host: HostResources | None = None,
    ) -> None:
        self.spec = spec
        self.statuses = stores.statuses
        self.offsets = stores.offsets
        self.configs = stores.configs
        self.channels = stores.channels
        self.worker_id = worker_id
        self.worker = WorkerConfig(spec.worker_props)
        self.name = f"{spec.connector}-{spec.task_id}"
        self.metrics = TaskMetrics(sink=self.is_sink, run=f"{self.name} (run {spec.run_id})")
        self.flush_interval_s = self.worker[OFFSET_FLUSH_INTERVAL_MS] / 1000
        self.offset_flush_timeout_s = self.worker[OFFSET_FLUSH_TIMEOUT_MS] / 1000
        self.flush_timeout_s = max(self.worker[TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS] / 1000, 1.0)
        self.heartbeat = Heartbeat(
            stores.statuses,
            spec.connector,
            spec.task_id,
            spec.run_id,
            self.worker[TASK_HEARTBEAT_INTERVAL_MS] / 1000,
            self.worker[TASK_STORE_UNREACHABLE_GRACE_MS] / 1000,
            self._on_stop,
            self._report,
            spec.log_levels_since,
            host.heartbeats if host is not None else None,
        )
        self.writes = StoreWrites(
            stores.statuses,
            stores.offsets,
            (spec.connector, spec.task_id, spec.run_id),
            worker_id,
            self.heartbeat.interval_s,
        )
        self.host = host
        """What the run shares with the other runs of its slot host; None in a slot of its
        own."""
        self._stop_called = False
        self._cleanup_trace: str | None = None
        self.failure: Exception | None = None  # set before ``_finish`` when the run failed

    def overrides(self, prefix: str) -> dict[str, Any]:
        """The connector's client overrides under ``prefix`` (``producer.override.``, …)."""
        return originals_with_prefix(self.spec.connector_config, prefix)

    def plugin_metrics(self, **tags: str) -> PluginMetrics:
        """The metrics of one of the run's plugins (KIP-877): the task's (no ``tags``), a
        converter's, a transformation's or a predicate's, tagged ``connector`` and ``task``,
        then ``tags``. Sampled with every heartbeat; removed when the run ends."""
        return self.metrics.plugin_metrics(
            {"connector": self.spec.connector, "task": str(self.spec.task_id), **tags}
        )

    # -- subclass hooks --------------------------------------------------------------------
    @abstractmethod
    def _setup(self) -> None:
        """Creates clients and converters and calls ``task.initialize``."""

    @abstractmethod
    def _loop(self) -> None:
        """Moves data until ``self.heartbeat.stopping`` is set; raises on failure."""

    @abstractmethod
    def _finish(self, deleted: bool) -> None:
        """Final work after the loop, ``stop_task(deleted)`` included, in the order the task
        kind needs: commit what is safe, stop, release."""

    def _on_stop(self, deleted: bool) -> None:
        """Called once from the heartbeat thread when the run must stop."""

    def waiting_on(self) -> str | None:
        """What the run waits on beyond its state (a topic that does not exist), written
        with each heartbeat; None when nothing. Called from the heartbeat thread."""
        return None

    def _report(self) -> RunReport:
        return RunReport(self.metrics.snapshot(), self.waiting_on())

    @abstractmethod
    def _close_clients(self) -> None: ...

    # -- the run ---------------------------------------------------------------------------
    def stop_task(self, deleted: bool) -> None:
        """Calls the task's ``stop`` once; a failing stop during a delete is the cleanup's
        outcome, otherwise it is logged."""
        if self._stop_called:
            return
        self._stop_called = True
        try:
            call_stop(self.task, deleted)
        except Exception as e:
            if deleted:
                self._cleanup_trace = trace_of(e)
            log.exception("%s: stop(connector_deleted=%s) failed", self.name, deleted)

    def run(self) -> TaskOutcome:
        """Runs the task until it is told to stop or fails. Never raises: a failure is
        recorded as FAILED with its trace (when the store can be reached) and returned."""
        try:
            return self._run()
        finally:
            try:  # closed already, unless the run ended before its loop
                self._close_writes()
            except Exception:
                log.exception("%s: a write to the metadata database failed", self.name)

    def _run(self) -> TaskOutcome:
        try:
            self.heartbeat.apply_log_levels()  # before the task's first call
            self.spec = resolved(self.spec)
            self.task = load_class(self.spec.task_class)()
            self.chain = transformation_chain(self.spec.connector_config, self.plugin_metrics)
            self._setup()
            self.task.start(self.spec.task_config)
        except TaskRefusedToStart as e:
            log.warning("%s refused to start: %s", self.name, e)
            self._close_converters()
            return TaskOutcome(self.spec.connector, self.spec.task_id, self.spec.run_id)
        except Exception as e:
            self._close_converters()
            return self._failed(e)
        if self.spec.cleanup_only:
            return self._cleanup_only()
        failure: Exception | None = None
        run_again: str | None = None
        try:
            self.heartbeat.start()
            self.report_running()
            self._loop()
        except (StoppedWhileRetrying, RunAgain) as e:
            run_again = self._ended_early(e)
        except Exception as e:
            failure = e
        finally:
            self.heartbeat.close()  # after this, no stop call can come from another thread
        deleted = self.heartbeat.deleted
        self.failure = failure
        try:
            self._finish(deleted)
        except (StoppedWhileRetrying, RunAgain) as e:
            run_again = self._ended_early(e) or run_again
        except Exception as e:
            failure = failure or e
        finally:
            self.metrics.sample_plugins_last()  # for the final report, before plugins close
            self._close_clients()
            self._close_converters()
            self._close_chain()
            self.metrics.close_plugins()  # as Kafka: a plugin closes, then its metrics
            try:  # before the final status and metrics
                self._close_writes()
            except Exception as e:  # a write failed: the run fails with it
                failure = failure or e
            self._report_metrics()
        if failure is not None:
            return self._failed(failure)
        return TaskOutcome(
            self.spec.connector,
            self.spec.task_id,
            self.spec.run_id,
            deleted=deleted,
            cleanup_trace=self._cleanup_trace,
            run_again=run_again,
        )

    def _ended_early(self, ended: StoppedWhileRetrying | RunAgain) -> str | None:
        """Logs a run's early end, a stop or a request to start again (not a failure);
        returns the request's reason."""
        if isinstance(ended, StoppedWhileRetrying):
            log.info("%s stopped while retrying %s", self.name, ended)
            return None
        log.warning("%s: %s; the run ends and the task starts again", self.name, ended)
        return str(ended)

    def _close_writes(self) -> None:
        """Ends the store writer once the loop is done with it: what it holds is written
        within the graceful timeout, and a write under way gets the database's deadline."""
        self.writes.close(self.flush_timeout_s, self.statuses.db.timeout_s)

    def _cleanup_only(self) -> TaskOutcome:
        """A deleted connector's task, started only to be stopped as deleted (KIP-901)."""
        try:
            self._finish(True)
        finally:  # nothing reports its metrics: no last sample
            self._close_clients()
            self._close_converters()
            self._close_chain()
            self.metrics.close_plugins()
        return TaskOutcome(
            self.spec.connector,
            self.spec.task_id,
            self.spec.run_id,
            deleted=True,
            cleanup_trace=self._cleanup_trace,
        )

    def _report_metrics(self) -> None:
        """The run's final counters, written once after its last commit (heartbeats write
        them while it runs), its records moved counted in the history even when it is no
        longer the task's current run; a run that ended waits on nothing."""
        try:
            self.statuses.heartbeat(
                self.spec.connector,
                self.spec.task_id,
                self.spec.run_id,
                RunReport(self.metrics.snapshot(), final=True),
            )
        except StoreUnavailable as e:
            log.warning("%s: the final metrics were not written: %s", self.name, e)
        except Exception:
            log.warning("%s: writing the final metrics failed", self.name, exc_info=True)

    def _close_converters(self) -> None:
        """Closes the run's converters once, after the last record (a Schema Registry
        converter's HTTP client with them); a failing close is logged and does not fail
        the run."""
        converters = self.__dict__.pop("converters", ())  # set by _setup, if it got so far
        for converter in converters:
            try:
                converter.close()
            except Exception:
                log.exception("%s: closing a converter failed", self.name)

    def _close_chain(self) -> None:
        """Closes the transformations and predicates once, after the last record; a failing
        close is logged, as Kafka does, and does not fail the run."""
        try:
            self.chain.close()
        except Exception:
            log.exception("%s: closing a transformation or predicate failed", self.name)

    def _failed(self, error: Exception) -> TaskOutcome:
        log.error("%s failed: %s", self.name, error)
        trace = trace_of(error)
        # The trace is kept as text: the frames' locals go now (a client the loop held in a
        # local would otherwise live, connected, until the garbage collector's next pass).
        traceback.clear_frames(error.__traceback__)
        if self.log is not None:
            trace = f"{trace}\n{self.log.tail()}"
        try:
            self.statuses.put_task_status(
                self.spec.connector,
                self.spec.task_id,
                self.spec.run_id,
                State.FAILED,
                self.worker_id,
                trace,
            )
        except StoreUnavailable as e:  # the herder records it from the outcome
            log.warning("%s: its FAILED state was not written: %s", self.name, e)
        return TaskOutcome(
            self.spec.connector, self.spec.task_id, self.spec.run_id, failed=True, trace=trace
        )

    def report_running(self) -> None:
        self.writes.state(State.RUNNING)

    def report_paused(self) -> None:
        self.writes.state(State.PAUSED)
