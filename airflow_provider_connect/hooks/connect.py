"""The Airflow hook over the metadata database: everything Airflow does to connectors goes
through the store, so Airflow needs no network path to Spark or to the runtime.

Connection (type ``connect``, default id ``connect_default``): the SQLAlchemy URL of the
metadata database in the extra ``metadata_url``, or a PostgreSQL server described by
host/port/login/password/schema; optionally the runtime's REST URL in the extra ``rest_url``
(for links only), and in ``metadata_timeout`` the seconds each metadata-database transaction
may take (default 10).

While the metadata database cannot be reached, or does not answer within that deadline,
every method raises ``StoreUnavailable`` naming the database (never its password) and the
cause, never the driver's bare error; the waits (``wait_for_state``, ``wait_for_deletion``)
keep waiting through it until their timeout.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, TypeVar

from airflow.sdk import BaseHook
from sqlalchemy.engine import URL

from airflow_provider_connect.connect.errors import (
    AlreadyExistsException,
    ConnectException,
    NotFoundException,
)
from airflow_provider_connect.connect.metrics import MetricName
from airflow_provider_connect.control.connectors import ConnectorWrites, config_strings
from airflow_provider_connect.control.history import connector_history
from airflow_provider_connect.control.offsets import InitialOffsets
from airflow_provider_connect.control.overrides import OverridePolicy
from airflow_provider_connect.control.overview import connectors_overview, current_waiting_on
from airflow_provider_connect.control.plugins import connector_type
from airflow_provider_connect.control.progress import (
    ConnectorView,
    SinkCatchUp,
    Waiting,
    WaitWatch,
    not_running,
    sink_behind,
    source_behind,
    waiting,
)
from airflow_provider_connect.control.secrets import (
    hide_restored,
    masked_config,
    restore_hidden,
)
from airflow_provider_connect.control.status import (
    connector_info,
    connector_status,
    stale_after,
    status_of,
)
from airflow_provider_connect.control.validation import validate_connector_config
from airflow_provider_connect.hooks.connection_form import EXTRA_FIELDS, ui_field_behaviour
from airflow_provider_connect.store import (
    DEFAULT_TIMEOUT_S,
    Database,
    Deletion,
    DeletionState,
    LeaseHolder,
    MetadataStore,
    SchemaBehindError,
    SinkProgress,
    State,
    StoreUnavailable,
)

T = TypeVar("T")


class ConnectorFailedError(ConnectException):
    """The connector or one of its tasks is FAILED; the message carries the trace."""


class ConnectHook(BaseHook):
    """Creates, changes, watches and deletes connectors through the metadata database.

    Configs are validated with the connector plugin's ConfigDef before anything is written:
    an invalid config raises ``ConfigValidationError`` naming each bad field. Results never
    contain password values (``[hidden]``).

    ``metadata_timeout`` (seconds; default: the connection's extra ``metadata_timeout``, else
    10) is the deadline of each metadata-database transaction, the schema check that opens
    the store included; past it, or when the database refuses connections until then, the
    call raises ``StoreUnavailable``. With ``fail_fast``, once a call found the database
    unreachable the next ones raise at once until a background probe finds it again (what
    the Connectors page uses, so it answers within its deadline).
    """

    conn_name_attr = "connect_conn_id"
    default_conn_name = "connect_default"
    conn_type = "connect"
    hook_name = "Kafka Connect on Spark"

    def __init__(
        self,
        connect_conn_id: str = default_conn_name,
        *,
        metadata_timeout: float | None = None,
        fail_fast: bool = False,
    ) -> None:
        super().__init__()
        self.connect_conn_id = connect_conn_id
        self.metadata_timeout = metadata_timeout
        self.fail_fast = fail_fast
        self._store: MetadataStore | None = None
        self._opening_lock = threading.Lock()
        self._opening: Database | None = None  # kept across failed opens: logs once each

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Labels and placeholders of the connection form (Airflow before 3.2)."""
        return ui_field_behaviour()

    @classmethod
    def get_connection_form_widgets(cls) -> dict[str, Any]:
        """The extras as form fields (Airflow before 3.2, whose API server has wtforms;
        later versions read ``conn-fields`` from the provider info instead)."""
        from wtforms import StringField  # type: ignore[import-untyped]

        return {
            name: StringField(field["label"], description=field["description"])
            for name, field in EXTRA_FIELDS.items()
        }

    # -- connection ------------------------------------------------------------------------
    @cached_property
    def _connection(self) -> Any:
        return self.get_connection(self.connect_conn_id)

    @cached_property
    def metadata_url(self) -> str:
        conn = self._connection
        url = self._extra("metadata_url")
        if url:
            return url
        if not conn.host:
            raise ConnectException(
                f"Connection {self.connect_conn_id!r} names no metadata database: set the extra "
                "'metadata_url' or a PostgreSQL host"
            )
        return URL.create(
            "postgresql+psycopg",
            username=conn.login or None,
            password=conn.password or None,
            host=conn.host,
            port=conn.port or None,
            database=conn.schema or None,
        ).render_as_string(hide_password=False)

    @property
    def rest_url(self) -> str | None:
        return self._extra("rest_url")

    @cached_property
    def metadata_timeout_s(self) -> float:
        """The deadline of each metadata-database transaction, in seconds: the hook's
        ``metadata_timeout``, else the connection's extra ``metadata_timeout``, else 10."""
        if self.metadata_timeout is not None:
            return _positive_seconds(self.metadata_timeout, "metadata_timeout")
        value = self._extra("metadata_timeout")
        if value is None:
            return DEFAULT_TIMEOUT_S
        return _positive_seconds(
            value, f"The extra metadata_timeout of connection {self.connect_conn_id!r}"
        )

    def _extra(self, name: str) -> str | None:
        """An extra as the connection form saved it: plain, or prefixed the way forms of
        older Airflow versions store them."""
        extra = self._connection.extra_dejson
        value: str | None = extra.get(name) or extra.get(f"extra__{self.conn_type}__{name}")
        return value or None

    @property
    def store(self) -> MetadataStore:
        """The metadata store, opened at first use once the database is reachable and at
        this version's schema: ``StoreUnavailable`` while it cannot be reached (within the
        deadline), ``SchemaVersionError`` when it is at another schema. A failed open is
        tried again at the next use, through the same connection pool, so the database's
        loss and return are logged once each, not once per attempt."""
        store = self._store
        if store is not None:
            return store
        with self._opening_lock:
            if self._store is not None:
                return self._store
            if self._opening is None:
                self._opening = Database(
                    self.metadata_url, timeout_s=self.metadata_timeout_s, fail_fast=self.fail_fast
                )
            self._opening.check_schema()
            store = MetadataStore(
                self.metadata_url, timeout_s=self.metadata_timeout_s, fail_fast=self.fail_fast
            )
            self._opening.close()
            self._opening = None
            self._store = store
            return store

    def close(self) -> None:
        self.__dict__.pop("writes", None)
        with self._opening_lock:
            store, self._store = self._store, None
            if store is not None:
                store.close()
            if self._opening is not None:
                self._opening.close()
                self._opening = None

    def test_connection(self) -> tuple[bool, str]:
        try:
            count = len(self.store.configs.connectors())
        except Exception as e:
            return False, str(e)
        return True, f"Connected to the metadata database: {count} connector(s)"

    def override_policy(self) -> OverridePolicy:
        """The client override policy the runtime recorded (``All`` before any ran)."""
        return OverridePolicy.of(self.store.statuses.worker_settings())

    @cached_property
    def writes(self) -> ConnectorWrites:
        """The control layer's connector writes, checked against the override policy the
        runtime recorded (see :class:`~airflow_provider_connect.control.connectors.ConnectorWrites`)."""
        return ConnectorWrites(self.store, self.override_policy, "connector_name")

    # -- writes ----------------------------------------------------------------------------
    def written_version(
        self, name: str, config: Mapping[str, Any], *, partial: bool = False
    ) -> int | None:
        """The config version of connector ``name`` when its stored config is already what
        writing ``config`` would store (values as strings, ``name`` added, ``[hidden]``
        keeping the stored password; ``partial``: ``config`` holds changes to the stored
        config, None removing a key); None otherwise, and when there is no such connector.
        How a write retried after an outage knows that its first try committed."""
        try:
            stored = self.store.configs.connector(name)
        except NotFoundException:
            return None
        wanted = config_strings({**stored.config, **config} if partial else config)
        wanted.setdefault("name", name)
        wanted = restore_hidden(wanted, stored.config)
        return stored.config_version if wanted == stored.config else None

    def create_connector(
        self,
        name: str,
        config: dict[str, str],
        if_exists: str = "fail",
        *,
        initial_state: str = "RUNNING",
        initial_offsets: InitialOffsets | None = None,
    ) -> bool:
        """Creates a connector; returns whether it created one.

        ``if_exists``: ``fail`` raises AlreadyExistsException, ``update`` replaces the config,
        ``skip`` leaves the existing connector as it is. A new connector starts in
        ``initial_state`` (KIP-980: ``RUNNING``, ``PAUSED`` or ``STOPPED``) from
        ``initial_offsets`` (KIP-995: ``{"offsets": [{"partition": {...}, "offset":
        {...}}]}``, as REST's ``PATCH /connectors/{name}/offsets`` takes them, or the list
        alone; they replace what an earlier
        connector of that name left); both are ignored for an existing connector.
        """
        if if_exists not in ("fail", "update", "skip"):
            raise ValueError(f"if_exists must be fail, update or skip, not {if_exists!r}")
        try:
            self.writes.create(
                name, config, initial_state=initial_state, initial_offsets=initial_offsets
            )
        except AlreadyExistsException:
            if if_exists == "fail":
                raise
            if if_exists == "update":
                self.update_connector(name, config)
            return False
        return True

    def update_connector(self, name: str, config: dict[str, str]) -> int:
        """Replaces the config of an existing connector; returns its new config version.
        A ``[hidden]`` password value keeps the stored secret."""
        return self.writes.replace(name, config).config_version

    def patch_connector(self, name: str, changes: dict[str, str | None]) -> int:
        """Changes some keys (None removes a key); returns the new config version."""
        return self.writes.patch(name, changes).config_version

    def delete_connector(self, name: str, missing_ok: bool = False) -> bool:
        """Marks the connector deleted (its tasks stop with connectorDeleted=true); returns
        False when it did not exist and ``missing_ok``."""
        try:
            self.writes.delete(name)
        except NotFoundException:
            if missing_ok:
                return False
            raise
        return True

    def pause_connector(self, name: str) -> None:
        self.writes.pause(name)

    def resume_connector(self, name: str) -> None:
        self.writes.resume(name)

    def stop_connector(self, name: str) -> None:
        self.writes.stop(name)

    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> None:
        self.writes.restart(name, include_tasks=include_tasks, only_failed=only_failed)

    def restart_task(self, name: str, task_id: int) -> None:
        self.writes.restart_task(name, task_id)

    def alter_offsets(self, name: str, offsets: list[dict[str, Any]]) -> None:
        """KIP-875's ``PATCH /connectors/{name}/offsets`` of a STOPPED connector (409
        NotStoppedError before): a source's offsets at once, a sink's staged for the runtime
        to write to its consumer group before the connector next starts (see
        ``ConnectorWrites.alter_offsets``)."""
        self.writes.alter_offsets(name, offsets)

    def reset_offsets(self, name: str) -> None:
        """KIP-875's ``DELETE /connectors/{name}/offsets`` of a STOPPED connector, a sink's
        applied by the runtime before the connector next starts."""
        self.writes.reset_offsets(name)

    def validate_config(self, config: dict[str, str], name: str | None = None) -> dict[str, Any]:
        """Kafka Connect's ``PUT /connector-plugins/{class}/config/validate`` answer
        (``ConfigInfos``: every field's definition, value, recommended values and errors)
        under the runtime's override policy; writes nothing. With ``name`` (an edit's form),
        ``[hidden]`` values are validated as connector ``name``'s stored secrets when its
        stored class is the config's, and the answer shows none of them."""
        stored = {} if name is None else self.store.configs.connector(name).config
        if stored.get("connector.class") != config.get("connector.class"):
            return validate_connector_config(config, self.override_policy())
        restored = restore_hidden(config, stored)
        infos = validate_connector_config(restored, self.override_policy())
        return hide_restored(infos, {k: v for k, v in restored.items() if config[k] != v})

    # -- reads -----------------------------------------------------------------------------
    def get_status(self, name: str) -> dict[str, Any]:
        """The connector's status in Kafka Connect's REST shape."""
        return connector_status(self.store, name)

    def get_info(self, name: str) -> dict[str, Any]:
        """The connector's ``ConnectorInfo`` in Kafka Connect's REST shape (name, config with
        password values ``[hidden]``, tasks, type)."""
        return connector_info(self.store, name)

    def get_config(self, name: str) -> dict[str, str]:
        """The connector's config with password values ``[hidden]``."""
        return masked_config(self.store.configs.connector(name).config)

    def get_source_offsets(self, name: str) -> list[dict[str, Any]]:
        return [{"partition": p, "offset": o} for p, o in self.store.offsets.source_offsets(name)]

    def connectors_overview(self) -> dict[str, Any]:
        """Every connector with status, config (passwords hidden), offsets, sink lag and
        last deletion, in one query per table (see ``control.overview``)."""
        return connectors_overview(self.store)

    def connectors_history(self, window: dt.timedelta) -> dict[str, dict[str, Any]]:
        """Every connector's throughput and lag over the last ``window``, from the samples
        the runtime keeps (``metrics.history.*``), in one query (see
        ``control.history.connector_history``)."""
        return connector_history(self.store, dt.datetime.now(dt.timezone.utc) - window)

    def get_sink_progress(self, name: str) -> list[SinkProgress]:
        """Committed and end offsets per topic partition, as the sink tasks last recorded."""
        return self.store.offsets.sink_progress(name)

    def plugin_metrics(self, name: str) -> dict[int, dict[str, float]]:
        """The metrics the connector's tasks and their plugins registered (KIP-877), as of
        each task's last heartbeat, by task id and metric name: e.g. a PostgreSQL
        change-capture task's ``slot-retained-bytes``, ``slot-lag-bytes`` and
        ``milliseconds-behind-source``."""
        found: dict[int, dict[str, float]] = {}
        for status in self.store.statuses.task_statuses(name):
            if status.task_id is None:
                continue
            metrics = found.setdefault(status.task_id, {})
            for key, value in (status.metrics or {}).items():
                metric = MetricName.decode(key)
                if metric is not None:
                    metrics[metric.name] = value
        return found

    def connector_type(self, name: str) -> str:
        """``source``, ``sink`` or ``unknown``."""
        return connector_type(self.store.configs.connector(name).config.get("connector.class", ""))

    def connector_view(
        self, name: str, config_version: int | None = None, *, offsets: bool = False
    ) -> ConnectorView:
        """The connector as a wait sees it (see ``ConnectorView``): waiting for
        ``config_version`` of its config (default: the current one), with its sink progress
        and source offsets when ``offsets``. Raises NotFoundException for an unknown one."""
        store = self.store
        connector = store.configs.connector(name)
        wanted = connector.config_version if config_version is None else config_version
        applied = store.statuses.connector_status(name)
        generation, configs = store.configs.task_configs(name)
        tasks = [t for t in store.statuses.task_statuses(name) if t.generation == generation]
        status = status_of(connector, applied, tasks, stale_after(store))
        holder = store.lease.current()
        outage = None if holder is None else store.statuses.kafka_cluster_outage()
        return ConnectorView(
            name,
            status,
            wanted,
            applied is not None and applied.config_version >= wanted,
            len(configs),
            None if holder is None else holder.holder,
            tuple(
                sorted(
                    {
                        waiting_on
                        for task, entry in zip(tasks, status["tasks"], strict=True)
                        if (waiting_on := current_waiting_on(task, entry))
                    }
                )
            )
            + ((outage,) if outage else ()),
            tuple(store.offsets.sink_progress(name)) if offsets else (),
            tuple(store.offsets.source_offsets(name)) if offsets else (),
        )

    # -- conditions (each checked once; sensors, triggers and the waits poll them) ---------
    def check_health(
        self, name: str, config_version: int | None = None
    ) -> dict[str, Any] | Waiting:
        """The status once the connector runs ``config_version`` of its config (default: the
        current one) with every task of the current generation RUNNING; until then, why not
        (``Waiting``: PAUSED, STOPPED, tasks UNASSIGNED waiting for a Spark task slot, no
        runtime, ...).

        Raises ConnectorFailedError with the trace when, for that config, the connector or a
        task of the current generation is FAILED (a FAILED state of an earlier config, which
        an update is meant to fix, is waited past).
        """
        view = self.connector_view(name, config_version)
        if view.applied:
            _raise_if_failed(view.status)
        return view.status if not_running(view) is None else waiting(view)

    def state_status(
        self, name: str, state: str, config_version: int | None = None
    ) -> dict[str, Any] | None:
        """The status once the connector is in ``state`` (RUNNING, PAUSED or STOPPED) with
        every task in it too (STOPPED: no tasks left); None until then. RUNNING means
        ``check_health``'s. Raises ConnectorFailedError when something is FAILED."""
        if state == State.RUNNING.value:
            health = self.check_health(name, config_version)
            return None if isinstance(health, Waiting) else health
        if state not in (State.PAUSED.value, State.STOPPED.value):
            raise ValueError(f"state must be RUNNING, PAUSED or STOPPED, not {state!r}")
        status = self.raise_if_failed(name)
        if status["connector"]["state"] == state and all(
            t["state"] == state for t in status["tasks"]
        ):
            return status
        return None

    def deletion_outcome(self, name: str) -> Deletion | None:
        """The finished deletion of ``name`` (DONE); None while its cleanup is pending.

        Raises ConnectorFailedError with the trace when the cleanup failed, and
        NotFoundException when there is neither a connector nor a deletion by that name.
        """
        deletion = self.store.configs.deletion(name)
        if deletion is None:
            self.store.configs.connector(name)  # raises NotFoundException when it never existed
            return None
        if deletion.state is DeletionState.PENDING:
            return None
        if deletion.state is DeletionState.FAILED:
            raise ConnectorFailedError(
                f"The connectorDeleted cleanup of {name} failed:\n{deletion.trace or ''}"
            )
        return deletion

    def raise_if_failed(self, name: str) -> dict[str, Any]:
        """The status; raises ConnectorFailedError with the trace when the connector or a
        task is FAILED."""
        status = self.get_status(name)
        _raise_if_failed(status)
        return status

    def check_progress(
        self,
        name: str,
        catch_up: SinkCatchUp,
        source_offset: dict[str, Any] | None = None,
        source_partition: dict[str, Any] | None = None,
    ) -> Waiting | None:
        """None once a source's committed offset reached ``source_offset`` (when given) or a
        sink caught up (``catch_up``); until then, why not (``Waiting``: the connector's
        state, a topic that does not exist, how far behind it is). Raises
        ConnectorFailedError when something is FAILED, since a failed connector makes no
        more progress."""
        view = self.connector_view(name, offsets=True)
        _raise_if_failed(view.status)
        if source_offset is None:
            behind = sink_behind(view, catch_up)
        else:
            behind = source_behind(view, source_offset, source_partition)
        return None if behind is None else waiting(view, behind)

    # -- the runtime ------------------------------------------------------------------------
    def active_runtime(self) -> LeaseHolder | None:
        """The driver whose herder runs the connectors now (it holds an unexpired lease);
        None while no runtime does, including before the first runtime migrated the
        database (a schema newer than this code's still raises SchemaVersionError)."""
        try:
            store = self.store
        except SchemaBehindError:
            return None
        return store.lease.current()

    def runtime_health(self) -> dict[str, Any] | None:
        """The active runtime's health as its REST API's ``GET /health`` gives it (KIP-1017):
        ``holder``, ``rest_url``, ``status`` (``healthy``, ``starting`` or ``unhealthy``) and
        ``message``; None while no runtime holds the lease, or its REST API does not answer
        at the URL it advertised."""
        runtime = self.active_runtime()
        if runtime is None or runtime.rest_url is None:
            return None
        found = _get_json(runtime.rest_url + "/health")
        if found is None or not {"status", "message"} <= found.keys():
            return None  # nothing, or not a runtime's health, answers there
        return {
            "holder": runtime.holder,
            "rest_url": runtime.rest_url,
            "status": found["status"],
            "message": found["message"],
        }

    def serving_runtime(self) -> dict[str, Any] | None:
        """The active runtime once its REST API says it is healthy at the URL it advertised:
        its ``holder``, ``rest_url`` and ``version``; None until then."""
        health = self.runtime_health()
        return None if health is None else self.healthy_runtime(health)

    @staticmethod
    def healthy_runtime(health: dict[str, Any]) -> dict[str, Any] | None:
        """The runtime ``health`` (``runtime_health``'s) is of, as ``serving_runtime`` gives
        it, when it says healthy; None otherwise."""
        if health["status"] != "healthy":
            return None
        info = _get_json(health["rest_url"] + "/")
        if info is None or "version" not in info:
            return None
        return {
            "holder": health["holder"],
            "rest_url": health["rest_url"],
            "version": info["version"],
        }

    # -- waits (through outages of the metadata database) ---------------------------------
    def wait_for_state(
        self,
        name: str,
        state: str = State.RUNNING.value,
        config_version: int | None = None,
        timeout_s: float = 300,
        poll_interval_s: float = 1.0,
    ) -> dict[str, Any]:
        """Waits for ``state_status``; returns the status. Raises ConnectorFailedError as
        soon as something is FAILED, and TimeoutError after ``timeout_s``."""
        return self._poll(
            lambda: self.state_status(name, state, config_version),
            timeout_s,
            poll_interval_s,
            f"Connector {name} was not {state}",
        )

    def wait_for_running(
        self,
        name: str,
        config_version: int | None = None,
        timeout_s: float = 300,
        poll_interval_s: float = 1.0,
    ) -> dict[str, Any]:
        """``wait_for_state`` RUNNING: the current config (or ``config_version``) runs."""
        return self.wait_for_state(
            name, State.RUNNING.value, config_version, timeout_s, poll_interval_s
        )

    def wait_for_deletion(
        self, name: str, timeout_s: float = 300, poll_interval_s: float = 1.0
    ) -> Deletion:
        """Waits for ``deletion_outcome``; returns the finished deletion."""
        return self._poll(
            lambda: self.deletion_outcome(name),
            timeout_s,
            poll_interval_s,
            f"The connectorDeleted cleanup of {name} did not finish",
        )

    def _poll(
        self, check: Callable[[], T | None], timeout_s: float, interval_s: float, what: str
    ) -> T:
        """Calls ``check`` until it returns something; raises TimeoutError after
        ``timeout_s``. A check that cannot reach the metadata database is tried again at
        the next interval (its loss and return logged once each); the TimeoutError then
        ends with what the wait last waited on."""
        deadline = time.monotonic() + timeout_s
        watch = WaitWatch()
        while True:
            try:
                result = check()
            except StoreUnavailable as e:
                watch.unreachable(e, self.log)
                result = None
            else:
                watch.reachable(self.log)
            if result is not None:
                return result
            if time.monotonic() >= deadline:
                message = f"{what} after {timeout_s}s"
                raise TimeoutError(
                    watch.last_waited_on(message) if watch.database_away else message
                )
            time.sleep(interval_s)


def _get_json(url: str) -> dict[str, Any] | None:
    """The JSON object a GET of ``url`` answers, an error status's body included (KIP-1017's
    503 and 500 carry the health); None when nothing or no JSON object answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            found = json.loads(response.read())
    except urllib.error.HTTPError as e:
        try:
            found = json.loads(e.read())
        except ValueError:
            return None
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _positive_seconds(value: float | str, what: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not seconds > 0:
        raise ConnectException(f"{what} must be a positive number of seconds, not {value!r}")
    return seconds


def _raise_if_failed(status: dict[str, Any]) -> None:
    failure = failed_trace(status)
    if failure:
        raise ConnectorFailedError(failure)


def failed_trace(status: dict[str, Any]) -> str | None:
    """A description of what is FAILED, with traces, or None."""
    parts = []
    if status["connector"]["state"] == "FAILED":
        parts.append(f"Connector {status['name']} FAILED:\n{status['connector'].get('trace', '')}")
    for task in status["tasks"]:
        if task["state"] == "FAILED":
            parts.append(f"Task {status['name']}-{task['id']} FAILED:\n{task.get('trace', '')}")
    return "\n".join(parts) or None
