"""The herder: reconciles the metadata store's desired state on the driver.

Every ``tick`` (a few times a second) it reads the connectors from the store, so writes
from the REST API or another process (an Airflow task) take effect within a second:

* a new or changed connector config: the connector instance is (re)started, asked for
  ``task_configs(tasks.max)``, and a new generation is written when they differ;
* a generation change, a restart request or a run that ended unexpectedly: the task gets a
  new run. The old run is superseded in the store, stops on its next heartbeat, and is
  cancelled after ``task.shutdown.graceful.timeout.ms``; the new run is submitted once the
  old one has ended, so two runs of one task never move data at once;
* PAUSED: tasks pause themselves (heartbeat); STOPPED: an empty generation is written, so
  every run stops, and the connector instance is stopped (KIP-875);
* a delete: runs stop with ``connector_deleted=True``, the instance with
  ``is_deleted=True``; for tasks with no live run (the delete arrived while the runtime
  was down) a cleanup-only run starts and stops them as deleted. The outcome is stored.

After a pass, while it holds the lease, it samples every connector's records moved and sink
lag into the store's history, at most once per ``metrics.history.interval.ms``
(``history.py``).

While the metadata database is unreachable the herder changes nothing: its runs go on
(``task.store.unreachable.grace.ms``, the heartbeat's rule), and it reconciles again once the
database answers. Its lease expires meanwhile; a standby that saw the database away too
waits one lease period (``task.heartbeat.timeout.ms``) after it is back before taking an
expired lease, so that a leader that was only cut off by the same outage renews first. A
leader that finds another holding the lease lets its runs go: each stops once superseded,
or is cancelled after ``task.shutdown.graceful.timeout.ms``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent import futures
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from airflow_provider_connect.connect.config import Type, originals_with_prefix, parse_value
from airflow_provider_connect.connect.config_provider import placeholder_keys
from airflow_provider_connect.connect.connector import Connector, call_stop
from airflow_provider_connect.connect.connector_config import (
    TASKS_MAX_CONFIG,
    TASKS_MAX_ENFORCE_CONFIG,
    TOPICS_CONFIG,
    TOPICS_REGEX_CONFIG,
)
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.metrics import MetricName
from airflow_provider_connect.connect.plugins import class_name
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connect.source import SourceConnector
from airflow_provider_connect.control.plugins import connector_class, ensure_plugin_versions
from airflow_provider_connect.control.validation import (
    error_lines,
    invalid_config_message,
    validate_connector_config,
)
from airflow_provider_connect.runtime.config_transformer import ConfigTransformer, reverse_transform
from airflow_provider_connect.runtime.driver.cluster_watch import KafkaClusterWatch
from airflow_provider_connect.runtime.driver.connector_context import HerderConnectorContext
from airflow_provider_connect.runtime.driver.fencing import fence_producers
from airflow_provider_connect.runtime.driver.history import HistorySampler
from airflow_provider_connect.runtime.driver.initial_offsets import (
    copy_source_offsets,
    write_initial_offsets,
)
from airflow_provider_connect.runtime.driver.run_watch import ProgressSource, RunWatcher
from airflow_provider_connect.runtime.driver.slot_packer import asks_dedicated_slot
from airflow_provider_connect.runtime.executor.task_base import TaskOutcome, trace_of
from airflow_provider_connect.runtime.executor.task_spec import TASK_CLASS_CONFIG, TaskSpec
from airflow_provider_connect.runtime.kafka_names import transactional_id
from airflow_provider_connect.runtime.logs import LOG_LEVELS, connector_context
from airflow_provider_connect.runtime.worker_config import (
    TASK_HEARTBEAT_INTERVAL_MS,
    TASK_HEARTBEAT_TIMEOUT_MS,
    TASK_RESTART_BACKOFF_MAX_MS,
    TASK_RESTART_BACKOFF_MS,
    TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS,
    WorkerConfig,
)
from airflow_provider_connect.store import (
    ConfigStore,
    ConnectorRecord,
    HerderLease,
    LogLevelStore,
    OffsetStore,
    State,
    StatusStore,
    StoreUnavailable,
    TargetState,
)
from airflow_provider_connect.store.statuses import KAFKA_CLUSTER_OUTAGE

log = logging.getLogger(__name__)

STOP_POLL_S = 0.1
"""How often a stopping herder looks for the ends of its runs."""
START_BUDGET_S = 1.0
"""How long one pass goes on starting new connectors (at least one): the others start in
the passes that follow at once, so that a thousand new connectors never hold up the lease's
renewal, the runs' syncs and the start of a connector asking for a dedicated slot."""


class TooManyTasksException(ConnectException):
    """A connector generated more task configs than its ``tasks.max`` (KIP-1004), with
    Kafka Connect's message."""

    def __init__(self, connector: str, tasks: int, max_tasks: int) -> None:
        super().__init__(
            f"The connector {connector} has generated {tasks} tasks, which is greater than "
            f"{max_tasks}, the maximum number of tasks it is configured to create. This "
            "behaviour should be considered a bug and is disallowed. If necessary, it can be "
            f"permitted by reconfiguring the connector with '{TASKS_MAX_ENFORCE_CONFIG}' set "
            "to false; however, this option will be removed in a future release of Kafka "
            "Connect."
        )


class TaskRunner(ProgressSource, Protocol):
    """Runs task runs (``slot_packer.SlotPacker`` on Spark)."""

    def submit(self, spec: TaskSpec) -> Future[TaskOutcome]: ...

    def cancel(self, spec: TaskSpec) -> None: ...

    def lead(self) -> None:
        """Called once each time this herder takes the lease."""

    def sync(self, live: Iterable[TaskSpec]) -> list[tuple[str, int]]:
        """Called after each pass with the live runs; returns the tasks to run again (they
        need a slot of their own)."""

    def close(self) -> None:
        """Called once, last, when the herder stops: gives back every slot it holds."""


@dataclass
class _Run:
    spec: TaskSpec
    future: Future[TaskOutcome] | None = None  # None until submitted
    cancel_at: float | None = None  # set once superseded: the graceful deadline
    after: _Run | None = None  # the superseded run that must end before this one starts
    failures: int = 0  # failed runs of this task in a row before this one (automatic restarts)
    failed_seen_at: float | None = None
    failure_recorded: bool = False

    @property
    def ended(self) -> bool:
        return self.future is not None and self.future.done()


@dataclass
class _Managed:
    """A connector the herder runs: its instance on the driver and its task runs."""

    record: ConnectorRecord
    instance: Connector | None = None
    context: HerderConnectorContext = field(init=False)
    generation: int = 0
    task_configs: list[dict[str, str]] = field(default_factory=list)
    runs: dict[int, _Run] = field(default_factory=dict)  # current run per task id
    waiting: dict[int, _Run] = field(
        default_factory=dict
    )  # assigned, submitted once the old run ends
    failed: bool = False
    start_pending: bool = False  # a start the store's outage broke off: tried again
    counted_generation: int = -1  # the latest generation known to have its task-count record
    tasks_max: tuple[int, bool] | None = None  # tasks.max and tasks.max.enforce, resolved

    def __post_init__(self) -> None:
        self.context = HerderConnectorContext(self.record.name)


@dataclass
class _Deletion:
    runs: list[_Run]
    traces: list[str]


class Herder:
    """Runs the connectors of one metadata database on one driver, while it holds the
    ``lease``; see the module docstring."""

    def __init__(
        self,
        worker: WorkerConfig,
        configs: ConfigStore,
        statuses: StatusStore,
        lease: HerderLease,
        runner: TaskRunner,
        worker_id: str,
        tick_s: float = 0.2,
        rest_url: str | None = None,
        cluster_watch: KafkaClusterWatch | None = None,
    ) -> None:
        self.worker = worker
        self.cluster_watch = cluster_watch
        self._cluster_told: str | None = None  # the outage text last recorded ("": none)
        self.configs = configs
        self.statuses = statuses
        self.lease = lease
        self.runner = runner
        self.worker_id = worker_id
        self.tick_s = tick_s
        self.rest_url = rest_url
        self.graceful_s = worker[TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS] / 1000
        self.lease_s = worker[TASK_HEARTBEAT_TIMEOUT_MS] / 1000
        self.lease_holder = f"{worker_id}/{uuid.uuid4().hex[:8]}"  # unique per herder
        self.leading: bool | None = None  # None until the first look at the lease
        self.store_back_at: float | None = None  # monotonic: when the last store outage ended
        self._store_away = False
        self.restart_backoff_s = worker[TASK_RESTART_BACKOFF_MS] / 1000
        self.restart_backoff_max_s = worker[TASK_RESTART_BACKOFF_MAX_MS] / 1000
        self.secrets = ConfigTransformer(worker.originals)
        self.managed: dict[str, _Managed] = {}
        self.deletions: dict[str, _Deletion] = {}
        self.retiring: list[_Run] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.watcher = RunWatcher(runner, statuses)
        self.passed_at: float | None = None  # monotonic: when the last pass (tick) ended
        self.deferred = False  # the last pass left new connectors to the next (START_BUDGET_S)
        self._doing: tuple[str, float] | None = None  # what a pass is on, since (epoch s)
        self.log_levels = LogLevelStore(configs.db)
        self.log_levels_since: int | None = None
        """KIP-976: the cluster-wide log levels' version when this herder started (taken by
        its first pass that reaches the store); only later levels apply, here and in its
        runs, as a Kafka worker ignores those written before it completed startup."""
        self.log_levels_interval_s = worker[TASK_HEARTBEAT_INTERVAL_MS] / 1000
        self._log_levels_due = 0.0  # monotonic: when this driver may read them next
        self.history = HistorySampler(worker, configs.db)

    def slot_usage(self) -> tuple[int, int]:
        """Spark task slots used by this herder's task runs, and all the application has
        (read from other threads: a snapshot of the runs)."""
        runs = [
            run for managed in list(self.managed.values()) for run in list(managed.runs.values())
        ]
        used = {
            self.runner.slot_of(run.spec)
            for run in runs
            if run.future is not None and not run.ended
        }
        return len(used), self.runner.slots()

    def plugin_metrics(self) -> dict[MetricName, float]:
        """The plugin metrics of this driver's connector instances now (KIP-877; read by
        ``/metrics`` from other threads: a snapshot of the connectors)."""
        return {
            name: value
            for managed in list(self.managed.values())
            for name, value in managed.context.metrics.values().items()
        }

    # -- the loop ----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="herder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except StoreUnavailable:  # logged by the database, once; the runs go on
                self._store_away = True
                self._retire()  # the tick stopped short of it: cancelled in time all the same
            except Exception:
                log.exception("herder tick failed; trying again")
            else:
                if self._store_away:
                    self._store_away = False
                    self.store_back_at = time.monotonic()
                self._sync_log_levels()  # after the pass: never holds up the lease's renewal
                if self.leading:
                    self.history.sample(list(self.managed))
            self._sync_runner()
            self._doing, self.passed_at = None, time.monotonic()
            self._stop.wait(0 if self.deferred else self.tick_s)

    def doing(self) -> str | None:
        """What the current pass over the connectors is on and since when, as Kafka
        Connect's health check says it (None between passes); read from other threads."""
        doing = self._doing
        if doing is None:
            return None
        since = dt.datetime.fromtimestamp(doing[1], dt.timezone.utc).isoformat(timespec="seconds")
        return f"The herder is currently {doing[0]}, which began at {since}."

    def _stage(self, description: str) -> None:
        self._doing = (description, time.time())

    def _sync_log_levels(self) -> None:
        """KIP-976: applies to this driver's process the cluster-wide log levels written
        since this herder started, at most once per ``task.heartbeat.interval.ms``; never
        raises."""
        now = time.monotonic()
        if self.log_levels_since is None or now < self._log_levels_due:
            return
        self._log_levels_due = now + self.log_levels_interval_s
        LOG_LEVELS.sync(self.log_levels, since=self.log_levels_since)

    def _may_take_expired_lease(self) -> bool:
        """Whether an expired lease of another driver may be taken: not within one lease
        period of this herder's last store outage (its holder, cut off by the same outage,
        renews first)."""
        return self.store_back_at is None or (time.monotonic() - self.store_back_at >= self.lease_s)

    def tick(self) -> None:
        """One reconciliation pass, when this herder holds the lease; otherwise it stands by
        (another driver runs the connectors of this database) and takes over once that
        driver's lease expires."""
        self.deferred = False
        if self.log_levels_since is None:  # KIP-976's baseline: read once, at the first pass
            self.log_levels_since = self.log_levels.version()
        if not self.lease.acquire(
            self.lease_holder,
            self.lease_s,
            self.rest_url,
            take_expired=self._may_take_expired_lease(),
        ):
            if self.leading is None:  # this driver's first look
                log.info("another driver holds the herder lease: standing by until it ends")
            self.leading = False
            if self.managed or self.deletions:
                self._step_down()
            self._retire()
            return
        if not self.leading:  # status readers and validation outside apply our settings
            log.info(
                "this driver holds the herder lease (%s) and runs the connectors", self.lease_holder
            )
            self.statuses.record_worker_settings(
                {
                    TASK_HEARTBEAT_TIMEOUT_MS: str(self.worker[TASK_HEARTBEAT_TIMEOUT_MS]),
                    **self.worker.override_policy.settings(),
                }
            )
            self.runner.lead()
            self.leading = True
            self._cluster_told = None  # recorded again: another leader may have written since
        self._record_cluster_outage()
        records = self.configs.connectors(include_deleted=True)
        starts_until, started = time.monotonic() + START_BUDGET_S, False
        for record in sorted(records, key=lambda r: not asks_dedicated_slot(r.config)):
            with connector_context(record.name):
                if record.deleted:
                    self._stage(f"deleting connector {record.name}")
                    self._delete(record)
                elif record.name in self.managed:
                    self._stage(f"reconciling connector {record.name}")
                    self._reconcile(record)
                elif started and time.monotonic() >= starts_until:
                    self.deferred = True  # started by the next pass, which comes at once
                else:
                    self._stage(f"starting connector {record.name}")
                    self._reconcile(record)
                    started = True
        names = {r.name for r in records}
        for name in [n for n in self.managed if n not in names]:
            self.managed.pop(name)
        self._restart_requested()
        self._retire()
        self.watcher.watch(self._live())

    def _record_cluster_outage(self) -> None:
        """Records what the cluster watch tells (``KAFKA_CLUSTER_OUTAGE``: the outage's
        text, empty while the cluster answers) whenever it changed since the last record,
        and at each first pass of this herder as leader (another leader's word is
        replaced)."""
        if self.cluster_watch is None:
            return
        told = self.cluster_watch.outage() or ""
        if told != self._cluster_told:
            self.statuses.record_worker_settings({KAFKA_CLUSTER_OUTAGE: told})
            self._cluster_told = told

    def _live(self) -> list[TaskSpec]:
        """The runs submitted and not ended."""
        return [
            run.spec
            for managed in self.managed.values()
            for run in managed.runs.values()
            if run.future is not None and not run.ended
        ]

    def _sync_runner(self) -> None:
        """After every pass, leading or not, whatever it met: the runner learns which runs
        ended (those sharing slots), and tasks it measured busy start again."""
        try:
            moves = self.runner.sync(self._live())
            for name, task_id in moves if self.leading else ():
                managed = self.managed.get(name)
                if managed is not None and task_id < len(managed.task_configs):
                    self._replace(managed, task_id)
        except StoreUnavailable:  # logged by the database; the next pass tries again
            pass
        except Exception:
            log.exception("the task runner's sync failed; trying again")

    # -- connectors ------------------------------------------------------------------------
    def _reconcile(self, record: ConnectorRecord) -> None:
        managed = self.managed.get(record.name)
        if managed is None:
            generation, task_configs = self.configs.task_configs(record.name)
            managed = self.managed[record.name] = _Managed(record, generation=generation)
            managed.task_configs = task_configs
            self._start_connector(managed)
        elif managed.start_pending:  # its start met an outage of the store: again
            managed.record = record
            self._start_connector(managed)
        elif managed.record.config_version != record.config_version or (
            managed.record.target_state is TargetState.STOPPED
            and record.target_state is not TargetState.STOPPED
        ):
            managed.record = record
            self._stop_connector(managed)
            self._start_connector(managed)
        elif managed.record.target_state is not record.target_state:
            managed.record = record
            self._apply_target_state(managed)
        if managed.failed:  # its runs go on, a restarted task's new run once the old ended
            self._submit_waiting(managed)
            return
        if managed.context.error is not None:
            self._fail_connector(managed, managed.context.error)
            return
        if managed.context.take_reconfiguration_request():
            try:
                self._write_task_configs(managed)
            except TooManyTasksException as e:
                self._fail_connector(managed, e)
                return
        if self._fenced(managed):
            self._ensure_runs(managed)

    def _start_connector(self, managed: _Managed) -> None:
        """Starts the instance and writes its task configs; a failure fails the connector,
        except the store being unreachable: then the start is tried again next tick."""
        record = managed.record
        managed.failed = False
        managed.start_pending = True
        if managed.context.closed:  # a restart: the stopped instance's context ended with it
            managed.context = HerderConnectorContext(record.name)
        try:
            self._start(managed, record)
        except StoreUnavailable:
            self._stop_connector(managed)
            raise
        managed.start_pending = False

    def _start(self, managed: _Managed, record: ConnectorRecord) -> None:
        if record.initial_offsets is not None:  # KIP-995: before anything of it starts
            try:
                self._stage(f"writing the initial offsets of connector {record.name}")
                write_initial_offsets(self.worker, self.configs, record)
            except ConnectException as e:
                self._fail_connector(managed, e)
                return
            managed.record = record = dataclasses.replace(record, initial_offsets=None)
        if record.source_offsets_set and self._copy_source_offsets(managed, record):
            return
        if record.target_state is TargetState.STOPPED:
            self._apply_target_state(managed)
            return
        try:
            config = self.secrets.transform(record.config)
            if placeholder_keys(record.config):  # what no writer could check (control.validation)
                self._validate_resolved(record.config, config)
            self._check_plugin_versions(record.config, config)
            managed.instance = self._new_instance(record)
            managed.instance.initialize(managed.context)
            self._stage(f"starting connector {record.name}")
            managed.instance.start(config)
            self._write_task_configs(managed)
        except StoreUnavailable:
            raise
        except Exception as e:
            self._fail_connector(managed, e)
            return
        self._apply_target_state(managed)

    def _copy_source_offsets(self, managed: _Managed, record: ConnectorRecord) -> bool:
        """Offsets set outside the connector's tasks reach where they read them: on an
        exactly-once worker, the offsets topic (a failure fails the connector: True);
        elsewhere the metadata database, where they are already."""
        if self.worker.exactly_once_source:
            self._stage(f"copying the offsets of connector {record.name} into its offsets topic")
            try:
                copy_source_offsets(self.worker, self.configs, OffsetStore(self.configs.db), record)
            except ConnectException as e:
                self._fail_connector(managed, e)
                return True
        else:
            self.configs.mark_source_offsets(record.name, set_=False)
        managed.record = dataclasses.replace(record, source_offsets_set=False)
        return False

    def _validate_resolved(self, raw: dict[str, str], resolved: dict[str, str]) -> None:
        """Validates a config whose placeholders the writers could not check, now resolved;
        ConnectException naming each bad key when it is invalid (an unresolved placeholder
        included). The message never holds a resolved value: it becomes the connector's
        FAILED trace and a log line."""
        infos = validate_connector_config(
            resolved, self.worker.override_policy, defer_placeholders=False
        )
        errors = error_lines(infos)
        if errors:
            message = invalid_config_message(errors, when=" once its placeholders are resolved")
            raise ConnectException(self.secrets.mask(raw, message))

    def _check_plugin_versions(self, raw: dict[str, str], resolved: dict[str, str]) -> None:
        """KIP-891 where the connector starts: a plugin of the resolved config (the worker's
        converters for those it does not set) whose installed version misses its requirement
        (a package changed since the config was written) fails the connector with Kafka's
        message, rather than running another version."""
        try:
            ensure_plugin_versions(resolved, self.worker.converters())
        except ConnectException as e:
            raise type(e)(self.secrets.mask(raw, str(e))) from None

    @staticmethod
    def _new_instance(record: ConnectorRecord) -> Connector:
        return connector_class(record.config["connector.class"])()

    def _apply_target_state(self, managed: _Managed) -> None:
        name, state = managed.record.name, managed.record.target_state
        if state is TargetState.STOPPED:
            self._stop_connector(managed)
            if managed.task_configs or managed.generation == 0:
                managed.generation = self.configs.write_task_configs(name, [])
                managed.task_configs = []
                self.statuses.remove_task_statuses(name, 0)
            self._put_status(managed, State.STOPPED)
        else:
            self._put_status(
                managed, State.PAUSED if state is TargetState.PAUSED else State.RUNNING
            )

    def _put_status(self, managed: _Managed, state: State, trace: str | None = None) -> None:
        """Records the connector's state as of its current generation and config version."""
        self.statuses.put_connector_status(
            managed.record.name,
            state,
            self.worker_id,
            trace,
            managed.generation,
            managed.record.config_version,
        )

    def _stop_connector(self, managed: _Managed, deleted: bool = False) -> str | None:
        """Stops the instance if there is one; returns the trace when stop failed."""
        instance, managed.instance = managed.instance, None
        if instance is None:
            return None
        try:
            call_stop(instance, deleted)
        except Exception as e:
            log.exception("stopping connector %s failed", managed.record.name)
            return trace_of(e)
        finally:
            managed.context.close()  # KIP-877: its plugin metrics end with it
        return None

    def _fail_connector(self, managed: _Managed, error: Exception) -> None:
        log.error("connector %s failed: %s", managed.record.name, error)
        self._stop_connector(managed)
        managed.failed = True
        self._put_status(managed, State.FAILED, trace_of(error))

    def _write_task_configs(self, managed: _Managed) -> None:
        """Asks the connector for task configs; writes a new generation if they changed.
        More configs than ``tasks.max`` raise TooManyTasksException, or with
        ``tasks.max.enforce=false`` are all kept, with Kafka's warning (KIP-1004)."""
        assert managed.instance is not None
        config = managed.record.config
        managed.tasks_max = max_tasks, enforce = self._tasks_max(config)
        task_class = class_name(managed.instance.task_class())
        configs = []
        returned = managed.instance.task_configs(max_tasks)
        if len(returned) > max_tasks:
            if enforce:
                raise TooManyTasksException(managed.record.name, len(returned), max_tasks)
            log.warning(
                "The connector %s has generated %d tasks, which is greater than %d, the maximum "
                "number of tasks it is configured to create. This behavior should be considered "
                "a bug and will be disallowed in future releases of Kafka Connect. Please report "
                "this to the maintainers of the connector and request that they adjust their "
                "connector's taskConfigs() method to respect the maxTasks parameter.",
                managed.record.name,
                len(returned),
                max_tasks,
            )
        for task_config in reverse_transform(config, returned):  # no resolved secret stored
            task_config = {**task_config, TASK_CLASS_CONFIG: task_class}
            if isinstance(managed.instance, SinkConnector):  # as Kafka's worker does
                for key in (TOPICS_CONFIG, TOPICS_REGEX_CONFIG):
                    if key in config:
                        task_config[key] = config[key]
            configs.append(task_config)
        if configs != managed.task_configs or managed.generation == 0:
            managed.generation = self.configs.write_task_configs(managed.record.name, configs)
            managed.task_configs = configs
            self.statuses.remove_task_statuses(managed.record.name, len(configs))

    def _tasks_max(self, config: dict[str, str]) -> tuple[int, bool]:
        """``tasks.max`` and ``tasks.max.enforce`` of a connector config, resolved."""
        resolved = self.secrets.transform(
            {k: config[k] for k in (TASKS_MAX_CONFIG, TASKS_MAX_ENFORCE_CONFIG) if k in config}
        )
        enforce = parse_value(
            TASKS_MAX_ENFORCE_CONFIG, resolved.get(TASKS_MAX_ENFORCE_CONFIG, True), Type.BOOLEAN
        )
        return int(resolved.get(TASKS_MAX_CONFIG, "1")), bool(enforce)

    def _submit(self, managed: _Managed, spec: TaskSpec) -> Future[TaskOutcome]:
        """Submits a run, unless its generation has more tasks than ``tasks.max`` and
        ``tasks.max.enforce`` is true (as the connector's instance last read them): then, as
        Kafka's ``Worker.startTask``, the task is FAILED with TooManyTasksException instead
        (a run already ended failed, restarted as any failed run is)."""
        max_tasks, enforce = managed.tasks_max or (0, False)
        if not enforce or len(managed.task_configs) <= max_tasks:
            return self.runner.submit(spec)
        error = TooManyTasksException(spec.connector, len(managed.task_configs), max_tasks)
        log.error("task %s-%s failed: %s", spec.connector, spec.task_id, error)
        trace = trace_of(error)
        self.statuses.put_task_status(
            spec.connector, spec.task_id, spec.run_id, State.FAILED, self.worker_id, trace
        )
        failed: Future[TaskOutcome] = Future()
        failed.set_result(
            TaskOutcome(spec.connector, spec.task_id, spec.run_id, failed=True, trace=trace)
        )
        return failed

    def _fenced(self, managed: _Managed) -> bool:
        """KIP-618, for source connectors when exactly-once support is preparing or enabled:
        before the tasks of a new generation start, producers of the previous generation are
        fenced (when either task count is above one; a single task fences its predecessor
        itself) and the generation's task-count record is written. Returns whether the
        current generation may run; on failure it is tried again next tick."""
        if (
            not self.worker.fences_zombies
            or not isinstance(managed.instance, SourceConnector)
            or managed.counted_generation >= managed.generation
        ):
            return True
        name = managed.record.name
        latest = self.configs.task_count(name)
        if latest is not None and latest[0] >= managed.generation:
            managed.counted_generation = latest[0]
            return True
        new_count = len(managed.task_configs)
        try:
            if latest is not None and (latest[1] > 1 or new_count > 1):
                fence_producers(
                    {
                        **self.worker.client_config("producer."),
                        **originals_with_prefix(
                            self.secrets.transform(managed.record.config), "producer.override."
                        ),
                    },
                    [transactional_id(self.worker, name, t) for t in range(latest[1])],
                )
        except Exception:
            log.exception("fencing the earlier tasks of %s failed; trying again", name)
            return False
        self.configs.write_task_count(name, managed.generation, new_count)
        managed.counted_generation = managed.generation
        return True

    # -- task runs -------------------------------------------------------------------------
    def _ensure_runs(self, managed: _Managed) -> None:
        name = managed.record.name
        for task_id in range(len(managed.task_configs)):
            if task_id in managed.waiting:
                continue
            run = managed.runs.get(task_id)
            if run is None or run.spec.generation != managed.generation:
                self._replace(managed, task_id)
            elif run.ended and not self._failed(run):
                self._log_early_end(run)
                self._replace(managed, task_id)
            elif run.ended and not run.failure_recorded:
                self._record_failure(run)
            elif run.ended and self._restart_due(run):
                log.info(
                    "task %s-%s failed; restarting it (failure %d in a row)",
                    name,
                    task_id,
                    run.failures + 1,
                )
                self._replace(managed, task_id, failures=run.failures + 1)
        for task_id in [t for t in managed.runs if t >= len(managed.task_configs)]:
            self._supersede(managed.runs.pop(task_id))
        for task_id in [t for t in managed.waiting if t >= len(managed.task_configs)]:
            del managed.waiting[task_id]
        self._submit_waiting(managed)

    def _restart_due(self, run: _Run) -> bool:
        """Whether a FAILED run's automatic restart is due (task.restart.backoff.ms)."""
        if self.restart_backoff_s <= 0:
            return False
        now = time.monotonic()
        if run.failed_seen_at is None:
            run.failed_seen_at = now
        backoff = min(self.restart_backoff_s * 2**run.failures, self.restart_backoff_max_s)
        return bool(now - run.failed_seen_at >= backoff)

    def _record_failure(self, run: _Run) -> None:
        """Writes the FAILED state of a run that ended failed, once, unless the run wrote
        it (it could not while the database was unreachable)."""
        assert run.future is not None
        outcome = run.future.result()
        spec = run.spec
        self.statuses.put_task_status(
            spec.connector,
            spec.task_id,
            spec.run_id,
            State.FAILED,
            self.worker_id,
            outcome.trace,
            unless=State.FAILED,
        )
        run.failure_recorded = True

    def _log_early_end(self, run: _Run) -> None:
        """Says why a run that did not fail ended while its task should run: it asked to be
        started again (``RunAgain``, at INFO), or it ended unexpectedly (a lost job, a
        crash: WARNING)."""
        assert run.future is not None
        spec = run.spec
        if run.future.exception() is None and (reason := run.future.result().run_again):
            log.info("task %s-%s starts again: %s", spec.connector, spec.task_id, reason)
        else:
            log.warning(
                "task %s-%s ended unexpectedly; starting it again", spec.connector, spec.task_id
            )

    def _failed(self, run: _Run) -> bool:
        """Whether the run ended FAILED (it stays so until restarted)."""
        assert run.future is not None
        if run.future.exception() is not None:
            return False  # the job was lost, not failed by the task: start it again
        return run.future.result().failed

    def _replace(self, managed: _Managed, task_id: int, failures: int = 0) -> None:
        """Gives the task a new run of the current generation; the old run is superseded.
        ``failures`` counts automatic restarts in a row (0 for any other reason)."""
        name = managed.record.name
        run_id = self.statuses.assign_task(name, task_id, managed.generation, self.worker_id)
        old = managed.runs.pop(task_id, None)  # once superseded in the store
        spec = self._spec(managed, task_id, run_id)
        if old is not None and not old.ended:
            self._supersede(old)
            managed.waiting[task_id] = _Run(spec, after=old, failures=failures)
        else:
            managed.runs[task_id] = _Run(spec, self._submit(managed, spec), failures=failures)

    def _spec(
        self, managed: _Managed, task_id: int, run_id: str, cleanup_only: bool = False
    ) -> TaskSpec:
        """What an executor needs to run ``task_id`` of the current generation."""
        assert self.log_levels_since is not None  # taken by the pass, before any run
        return TaskSpec(
            managed.record.name,
            task_id,
            managed.generation,
            run_id,
            dict(managed.record.config),
            managed.task_configs[task_id],
            dict(self.worker.originals),
            cleanup_only,
            self.log_levels_since,
        )

    def _submit_waiting(self, managed: _Managed) -> None:
        for task_id, run in list(managed.waiting.items()):
            if run.after is None or run.after.ended:
                del managed.waiting[task_id]
                run.after = None
                run.future = self._submit(managed, run.spec)
                managed.runs[task_id] = run

    def _supersede(self, run: _Run) -> None:
        if run.cancel_at is None:
            run.cancel_at = time.monotonic() + self.graceful_s
            self.retiring.append(run)

    def _retire(self) -> None:
        """Cancels superseded runs that outlived the graceful timeout."""
        now = time.monotonic()
        still = []
        for run in self.retiring:
            if run.ended or run.future is None:
                continue
            if run.cancel_at is not None and now >= run.cancel_at:
                log.warning(
                    "task run %s did not stop in time; cancelling its Spark job", run.spec.run_id
                )
                self.runner.cancel(run.spec)
                run.cancel_at = None
            still.append(run)
        self.retiring = still

    # -- restarts ----------------------------------------------------------------------------
    def _restart_requested(self) -> None:
        for request in self.configs.take_restart_requests():
            managed = self.managed.get(request.connector)
            if managed is None:
                continue
            if request.task_id is not None:
                if request.task_id < len(managed.task_configs):
                    self._replace(managed, request.task_id)
                continue
            if not request.only_failed or managed.failed:
                self._stop_connector(managed)
                self._start_connector(managed)
            if request.include_tasks:
                reported = (
                    self._reported_failed(request.connector) if request.only_failed else set()
                )
                for task_id, run in list(managed.runs.items()):
                    failed = self._failed(run) if run.ended else task_id in reported
                    if not request.only_failed or failed:
                        self._replace(managed, task_id)
            self._submit_waiting(managed)

    def _reported_failed(self, name: str) -> set[int]:
        """The tasks of ``name`` whose status is FAILED: a run writes it before it returns,
        so a restart asked for on seeing it can come while the run is still ending."""
        statuses = self.statuses.task_statuses(name)
        return {s.task_id for s in statuses if s.task_id is not None and s.state is State.FAILED}

    # -- deletion ----------------------------------------------------------------------------
    def _delete(self, record: ConnectorRecord) -> None:
        name = record.name
        deletion = self.deletions.get(name)
        if deletion is None:
            deletion = self.deletions[name] = self._begin_deletion(record)
        if all(run.ended for run in deletion.runs):
            for run in deletion.runs:
                assert run.future is not None
                error = run.future.exception()
                cleanup_trace = None if error is not None else run.future.result().cleanup_trace
                if error is not None:
                    deletion.traces.append(f"task {run.spec.task_id}: {error}")
                elif cleanup_trace:
                    deletion.traces.append(cleanup_trace)
            self.configs.finish_deletion(name, "\n".join(deletion.traces) or None)
            del self.deletions[name]
            log.info("connector %s deleted%s", name, " (cleanup failed)" if deletion.traces else "")

    def _begin_deletion(self, record: ConnectorRecord) -> _Deletion:
        """Stops everything of a deleted connector as deleted (KIP-883, KIP-901)."""
        managed = self.managed.pop(record.name, None)
        traces: list[str] = []
        runs: list[_Run] = []
        if managed is None:  # deleted while no runtime ran it: run its cleanup now
            managed = _Managed(record)
            managed.generation, managed.task_configs = self.configs.task_configs(record.name)
            try:
                managed.instance = self._new_instance(record)
                managed.instance.initialize(managed.context)
                managed.instance.start(self.secrets.transform(record.config))
            except Exception as e:
                traces.append(trace_of(e))
                managed.instance = None
        trace = self._stop_connector(managed, deleted=True)
        if trace:
            traces.append(trace)
        for task_id in range(len(managed.task_configs)):
            run = managed.runs.get(task_id)
            if run is not None and run.future is not None and not run.ended:
                runs.append(run)  # it learns of the delete from its heartbeat
                continue
            spec = self._spec(managed, task_id, "", cleanup_only=True)
            runs.append(_Run(spec, self.runner.submit(spec)))
        runs.extend(managed.waiting.values())
        return _Deletion([r for r in runs if r.future is not None], traces)

    # -- leadership --------------------------------------------------------------------------
    def _step_down(self) -> None:
        """Another driver took the lease: let go of everything; its herder supersedes our
        runs, which then stop on their next heartbeat, or are cancelled after the graceful
        timeout."""
        log.warning("another driver runs the connectors now; standing by")
        for managed in self.managed.values():
            self._stop_connector(managed)
            for run in [*managed.runs.values(), *managed.waiting.values()]:
                if run.future is not None and not run.ended:
                    self._supersede(run)
        self.managed.clear()
        self.deletions.clear()

    # -- shutdown ----------------------------------------------------------------------------
    def stop(self) -> None:
        """Stops the loop, then every run (gracefully, then cancelled) and every connector
        instance, with connectorDeleted=false. Tasks are left UNASSIGNED in the store; while
        the store is unreachable their runs, which cannot learn it, are cancelled at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        runs = [run for managed in self.managed.values() for run in managed.runs.values()]
        for run in runs:
            spec = run.spec
            if not self._stored(
                self.statuses.unassign_task, spec.connector, spec.task_id, spec.run_id
            ):
                self.runner.cancel(spec)
        deadline = time.monotonic() + self.graceful_s
        pending = [run for run in runs + self.retiring if run.future is not None]
        while pending and time.monotonic() < deadline:
            self._stored(self.runner.sync, [])  # the ends of runs that share slots
            pending = [run for run in pending if not run.ended]
            if pending:
                futures.wait([run.future for run in pending if run.future], STOP_POLL_S)
        for run in pending:
            self.runner.cancel(run.spec)
        self.runner.close()
        for managed in self.managed.values():
            self._stop_connector(managed)
            if not managed.failed:
                self._stored(self._put_status, managed, State.UNASSIGNED)
        self._stored(self.lease.release, self.lease_holder)
        self.secrets.close()

    def _stored(self, write: Callable[..., object], *args: Any) -> bool:
        """Makes a store write at shutdown; False (logged) when the store is unreachable,
        or was at the last access (then not tried: each try would wait out the deadline)."""
        if not self.statuses.db.reachable:
            return False
        try:
            write(*args)
        except StoreUnavailable as e:
            log.warning("stopping without the metadata database: %s", e)
            return False
        return True
