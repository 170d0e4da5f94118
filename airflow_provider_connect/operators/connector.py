"""Operators that create, change and delete connectors through the metadata database.

Every write is one transaction in the store, so a task killed at any point leaves either
the old or the new connector state, never half of one; the runtime picks the change up
within a second. Configs are validated before they are written: an invalid one fails the
task with the name of each bad field and writes nothing. Password-typed values never leave
in the clear: results pushed to XCom show ``[hidden]``, and the values are registered with
Airflow's secrets masker, so logs and the rendered fields Airflow stores show ``***``.

While the metadata database cannot be reached, a step of an operator (a write, a read) is
tried again, with backoff, for ``store_retry_timeout`` seconds (30 by default; each try
bounded by the connection's deadline); then the task fails with the database's name and the
cause, and Airflow retries it as its ``retries`` say. A write whose commit's outcome was
unknown is safe to try again: a create or an update that finds the connector already holding
its config succeeds without writing again, a delete finds the connector being deleted, and
pause, resume and stop set the state they set. A restart asked for twice may restart twice.
Waits ride out an outage until their own timeout.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from airflow.sdk import BaseOperator, Context
from airflow.sdk.configuration import conf
from airflow.sdk.exceptions import AirflowException
from airflow.sdk.log import mask_secret
from jproperties import Properties

from airflow_provider_connect.assets import connector_assets, connector_lineage
from airflow_provider_connect.connect.config import HIDDEN
from airflow_provider_connect.control.connectors import (
    INITIAL_STATES,
    initial_target_state,
    split_create_body,
)
from airflow_provider_connect.control.offsets import InitialOffsets
from airflow_provider_connect.control.secrets import password_keys
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.links.connector import ConnectorStatusLink
from airflow_provider_connect.settings import KAFKA_BOOTSTRAP_SERVERS, SECTION
from airflow_provider_connect.store import DeletionState, StoreUnavailable
from airflow_provider_connect.triggers.connector import (
    ConnectorDeletedTrigger,
    ConnectorStateTrigger,
)
from airflow_provider_connect.triggers.polling import DEFAULT_POLL_INTERVAL_S

DEFAULT_TIMEOUT_S = 300.0
STORE_RETRY_TIMEOUT_S = 30.0
"""How long an operator tries a step again while the metadata database cannot be reached."""
STORE_RETRY_MAX_DELAY_S = 8.0
WAITED_STATE = {target: state for state, target in INITIAL_STATES.items()}
"""The state a new connector is waited for in, by the target state it was created in."""

T = TypeVar("T")


def default_deferrable() -> bool:
    """Airflow's ``[operators] default_deferrable``."""
    return bool(conf.getboolean("operators", "default_deferrable", fallback=False))


def load_config(
    config: dict[str, Any] | None,
    config_file: str | None,
    base_dir: Path | None = None,
    what: str = "connector",
) -> dict[str, Any]:
    """The ``what`` config (connector, worker): ``config_file`` (``.json`` or Java
    ``.properties``; relative to ``base_dir``) overlaid with ``config``. Values become
    strings as Kafka Connect holds them (booleans ``true``/``false``); None stays None (a
    removal, for partial updates)."""
    merged: dict[str, Any] = {}
    if config_file:
        path = _config_path(config_file, base_dir, what)
        if path.suffix == ".json":
            merged.update(split_create_body(_json_file(path))[0])  # a REST create body too
        else:
            properties = Properties()
            properties.load(path.read_bytes(), "utf-8")
            merged.update({k: v.data for k, v in properties.items()})
    merged.update(config or {})
    if not merged:
        raise AirflowException(f"No {what} config: pass config or config_file")
    return {key: _config_value(value) for key, value in merged.items()}


def create_options(config_file: str | None, base_dir: Path | None = None) -> dict[str, Any]:
    """The ``initial_state`` and ``initial_offsets`` of a ``.json`` config file that holds a
    REST create body (KIP-980, KIP-995); empty for any other file."""
    if not config_file or not config_file.endswith(".json"):
        return {}
    return split_create_body(_json_file(_config_path(config_file, base_dir, "connector")))[1]


def _config_path(config_file: str, base_dir: Path | None, what: str) -> Path:
    path = Path(config_file)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise AirflowException(f"{what.capitalize()} config file {path} does not exist")
    return path


def _json_file(path: Path) -> dict[str, Any]:
    loaded = json.loads(path.read_text())
    if not isinstance(loaded, dict):
        raise AirflowException(f"{path} must hold a JSON object of config keys")
    return loaded


def _config_value(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def mask_passwords(config: dict[str, Any]) -> dict[str, Any]:
    """Registers the password-typed values of ``config`` with Airflow's secrets masker, so no
    log line or rendered field shows them; returns ``config``."""
    for key in password_keys(config):
        if isinstance(config.get(key), str) and config[key] not in ("", HIDDEN):
            mask_secret(config[key])
    return config


class ConnectorOperator(BaseOperator):
    """What every connector operator shares: the connector's name, the connection, the
    link to the connector's REST status, a hook closed when the task ends or is killed, and
    steps tried again while the metadata database cannot be reached
    (``store_retry_timeout`` seconds; 0: fail at the first outage)."""

    template_fields: Sequence[str] = ("connector_name",)
    operator_extra_links = (ConnectorStatusLink(),)
    ui_color = "#e8f1fb"

    def __init__(
        self,
        *,
        connector_name: str,
        connect_conn_id: str = ConnectHook.default_conn_name,
        store_retry_timeout: float = STORE_RETRY_TIMEOUT_S,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.connector_name = connector_name
        self.connect_conn_id = connect_conn_id
        self.store_retry_timeout = store_retry_timeout

    @cached_property
    def hook(self) -> ConnectHook:
        return ConnectHook(self.connect_conn_id)

    def with_store(self, step: Callable[[bool], T]) -> T:
        """Runs ``step`` (told whether it is a retry: an earlier try may have committed),
        trying again with backoff while the metadata database cannot be reached, until
        ``store_retry_timeout`` seconds have passed since the first failed try began (a try
        under way then runs to its deadline); then fails the task with an AirflowException
        that names the database and the cause. The loss and the return are logged once."""
        started: float | None = None
        tries = 0
        delay = 1.0
        while True:
            begun = time.monotonic()
            tries += 1
            try:
                result = step(started is not None)
            except StoreUnavailable as e:
                if started is None:
                    started = begun
                    if self.store_retry_timeout > 0:
                        self.log.warning(
                            "%s; trying again for up to %g s", e, self.store_retry_timeout
                        )
                spent = time.monotonic() - started
                if spent + delay > self.store_retry_timeout:
                    tried = f" (tried {tries} times in {spent:.0f} s)" if tries > 1 else ""
                    # The message names the database and the cause: the driver's
                    # tracebacks under it would only bury it in the task's log.
                    raise AirflowException(
                        f"{e}{tried}; the task fails, and Airflow retries it as its retries allow"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX_DELAY_S)
                continue
            if started is not None:
                self.log.info(
                    "The metadata database is reachable again (after %.1f s)",
                    time.monotonic() - started,
                )
            return result

    def post_execute(self, context: Context, result: Any = None) -> None:
        self.hook.close()

    def on_kill(self) -> None:
        """Nothing to undo: each write was one transaction, and what was written stays (a
        teardown deletes the connector). Only the store connection is closed."""
        self.log.info("Killed; connector %s keeps its last written state", self.connector_name)
        self.hook.close()

    def result(self, status: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
        """What the task returns to XCom: the connector's masked config and status."""
        name = self.connector_name
        return {
            "name": name,
            "config": self.with_store(lambda _: self.hook.get_config(name)),
            "status": status
            if status is not None
            else self.with_store(lambda _: self.hook.get_status(name)),
            **extra,
        }


class _WaitingOperator(ConnectorOperator):
    """An operator that waits for the runtime: ``timeout`` and ``poll_interval`` in seconds;
    ``deferrable`` waits in the triggerer (default ``[operators] default_deferrable``)."""

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        poll_interval: float = DEFAULT_POLL_INTERVAL_S,
        deferrable: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.deferrable = default_deferrable() if deferrable is None else deferrable

    def wait_for_state(
        self, state: str, version: int | None = None, **extra: Any
    ) -> dict[str, Any]:
        """Waits until the connector and its tasks are in ``state`` (RUNNING: as of config
        ``version``), in the triggerer when deferrable; returns ``result``. Fails with the
        trace as soon as the connector or a task is FAILED."""
        if self.deferrable:
            self.defer(
                trigger=ConnectorStateTrigger(
                    self.connector_name,
                    self.connect_conn_id,
                    poll_interval=self.poll_interval,
                    state=state,
                    config_version=version,
                ),
                method_name="execute_complete",
                kwargs=extra,
                timeout=dt.timedelta(seconds=self.timeout),
            )
        status = self.hook.wait_for_state(
            self.connector_name, state, version, self.timeout, self.poll_interval
        )
        self.log.info("Connector %s is %s: %s", self.connector_name, state, status)
        return self.result(status, **extra)

    def execute_complete(
        self, context: Context, event: dict[str, Any], **extra: Any
    ) -> dict[str, Any]:
        """Called once, when the trigger fired."""
        if event["status"] != "success":
            raise AirflowException(event["message"])
        self.log.info("Connector %s: %s", self.connector_name, event["connector_status"])
        return self.result(event["connector_status"], **extra)


class _WaitsForRunning(_WaitingOperator):
    """Writes a config, then (``wait_for_running``) waits until that config runs with every
    task RUNNING; fails with the trace as soon as the connector or a task is FAILED.

    Unless given ``inlets`` or ``outlets``, the operator declares the assets its ``config``
    names (``airflow_provider_connect.assets``): what the connector reads as inlets, what it
    writes as outlets, topics on ``bootstrap_servers`` (default: ``[connect]
    kafka_bootstrap_servers``), so that Airflow's asset graph shows source → topic → sink.
    As for any task, Airflow records an event of each outlet when the task succeeds: give
    ``outlets=[]`` to a task whose outlets a DAG is scheduled on through
    ``ConnectorCommitTrigger`` (it would also run when the connector is created).
    With Airflow's OpenLineage provider (the ``openlineage`` extra), the same data, as the
    rendered config names it, are the task's lineage inputs and outputs."""

    template_fields: Sequence[str] = ("connector_name", "config", "config_file")
    template_fields_renderers: ClassVar[dict[str, str]] = {"config": "json"}

    def __init__(
        self,
        *,
        config: dict[str, Any] | None = None,
        config_file: str | None = None,
        wait_for_running: bool = True,
        bootstrap_servers: str | None = None,
        **kwargs: Any,
    ) -> None:
        declared = "inlets" in kwargs or "outlets" in kwargs
        super().__init__(**kwargs)
        self.config = config
        self.config_file = config_file
        self.wait_for_running = wait_for_running
        self.bootstrap_servers: str | None = bootstrap_servers or (
            conf.get(SECTION, KAFKA_BOOTSTRAP_SERVERS, fallback="") or None
        )
        if not (declared or self.inlets or self.outlets) and isinstance(config, dict):
            try:
                assets = connector_assets(config, self.bootstrap_servers)
            except Exception:  # never fail a DAG's parsing for its lineage
                self.log.warning("%s: no assets from its config", self.task_id, exc_info=True)
            else:
                self.inlets, self.outlets = list(assets.inlets), list(assets.outlets)

    def get_openlineage_facets_on_start(self) -> Any:
        """The connector's inputs and outputs, as its rendered ``config`` names them, for
        Airflow's OpenLineage provider (the ``openlineage`` extra)."""
        config = self.config if isinstance(self.config, dict) else {}
        return connector_lineage(config, self.bootstrap_servers)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        return self.get_openlineage_facets_on_start()

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        return self.get_openlineage_facets_on_start()

    def render_template_fields(self, context: Context, jinja_env: Any = None) -> None:
        """Renders, then registers the config's password values with Airflow's secrets
        masker, so the rendered fields Airflow stores and shows read ``***``."""
        super().render_template_fields(context, jinja_env)
        if isinstance(self.config, dict):
            mask_passwords(self.config)

    def connector_config(self, context: Context) -> dict[str, Any]:
        return mask_passwords(load_config(self.config, self.config_file, _dag_folder(context)))

    def wait(self, version: int, **extra: Any) -> dict[str, Any]:
        """Waits (``wait_for_running``) until ``version`` of the config runs."""
        if not self.wait_for_running:
            return self.result(**extra)
        return self.wait_for_state("RUNNING", version, **extra)


class CreateConnectorOperator(_WaitsForRunning):
    """Creates a connector and waits until it runs (or is in its ``initial_state``).

    :param connector_name: the connector's name (templated)
    :param config: its config (templated); overlays ``config_file``
    :param config_file: a ``.json`` (config object or REST create body, whose
        ``initial_state`` and ``initial_offsets`` count unless given here) or
        ``.properties`` file, relative to the DAG's folder (templated)
    :param if_exists: ``fail`` (default), ``update`` (replace the config) or ``skip``
    :param initial_state: ``RUNNING`` (default), ``PAUSED`` or ``STOPPED``: the state a
        new connector starts in (KIP-980; templated)
    :param initial_offsets: the offsets a new connector starts from, as REST's
        ``PATCH /connectors/{name}/offsets`` takes them (KIP-995):
        ``{"offsets": [{"partition": {...}, "offset": {...}}]}``, or the list alone; for a sink ``{"kafka_topic": ...,
        "kafka_partition": ...}`` and ``{"kafka_offset": ...}``. They replace every offset
        an earlier connector of that name left (templated). Both are ignored when the
        connector exists (``if_exists`` ``update`` or ``skip``).
    :param wait_for_running: wait until the connector and every task are in
        ``initial_state`` (RUNNING: running this config)
    :param timeout: seconds to wait
    :param poll_interval: seconds between checks
    :param deferrable: wait in the triggerer (default ``[operators] default_deferrable``)
    :return: ``{"name", "config" (passwords [hidden]), "status", "created"}``
    """

    template_fields: Sequence[str] = (
        *_WaitsForRunning.template_fields,
        "initial_state",
        "initial_offsets",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {
        **_WaitsForRunning.template_fields_renderers,
        "initial_offsets": "json",
    }

    def __init__(
        self,
        *,
        if_exists: str = "fail",
        initial_state: str | None = None,
        initial_offsets: InitialOffsets | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if if_exists not in ("fail", "update", "skip"):
            raise ValueError(f"if_exists must be fail, update or skip, not {if_exists!r}")
        self.if_exists = if_exists
        self.initial_state = initial_state
        self.initial_offsets = initial_offsets

    def execute(self, context: Context) -> dict[str, Any]:
        name, config = self.connector_name, self.connector_config(context)
        options = create_options(self.config_file, _dag_folder(context))
        if self.initial_state is not None:
            options["initial_state"] = self.initial_state
        if self.initial_offsets is not None:
            options["initial_offsets"] = self.initial_offsets
        state = WAITED_STATE[initial_target_state(options.get("initial_state"))]
        retried_task = _try_number(context) > 1

        def create(retry: bool) -> tuple[bool, int]:
            # A retry (of this step, or of the task) may find what an earlier try committed.
            if retry or retried_task:
                written = self.hook.written_version(name, config)
                if written is not None:
                    self.log.info("Connector %s already holds this config: written before", name)
                    return True, written
            created = self.hook.create_connector(name, config, self.if_exists, **options)
            return created, self.hook.store.configs.connector(name).config_version

        created, version = self.with_store(create)
        self.log.info(
            "Connector %s %s (config version %d)",
            name,
            f"created, target state {state}" if created else f"existed ({self.if_exists})",
            version,
        )
        if not created and options:
            self.log.info("Its initial_state and initial_offsets apply to a new connector only")
        if state == "RUNNING" or not created or not self.wait_for_running:
            return self.wait(version, created=created)
        return self.wait_for_state(state, created=created)


class UpdateConnectorOperator(_WaitsForRunning):
    """Changes an existing connector's config and waits until the new config runs.

    :param partial: change only the given keys (``None`` removes one), as REST's PATCH;
        otherwise the config is replaced, as REST's PUT. A ``[hidden]`` value keeps the
        stored secret.
    :return: ``{"name", "config", "status", "config_version"}``
    """

    def __init__(self, *, partial: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.partial_update = partial  # not self.partial: that is BaseOperator.partial()

    def execute(self, context: Context) -> dict[str, Any]:
        name, config = self.connector_name, self.connector_config(context)

        def update(retry: bool) -> int:
            if retry:  # the first try may have committed: do not write the same config twice
                written = self.hook.written_version(name, config, partial=self.partial_update)
                if written is not None:
                    return written
            if self.partial_update:
                return self.hook.patch_connector(name, config)
            return self.hook.update_connector(name, config)

        version = self.with_store(update)
        self.log.info("Connector %s updated to config version %d", self.connector_name, version)
        return self.wait(version, config_version=version)


class DeleteConnectorOperator(_WaitingOperator):
    """Deletes a connector and waits for its connectorDeleted cleanup: its tasks stop with
    ``stop(connector_deleted=True)`` and the connector with ``is_deleted``. Fails with the
    trace when the cleanup failed; succeeds when the connector is already gone (deleted
    before). Meant as the DAG's teardown: ``delete.as_teardown(setups=create)``.

    :param wait_for_cleanup: wait for the cleanup's outcome
    :param missing_ok: succeed when no connector of that name ever existed (otherwise the
        task fails: the name is probably wrong)
    :return: ``{"name", "deletion": "DONE" | "PENDING" | "ABSENT"}``
    """

    def __init__(
        self, *, wait_for_cleanup: bool = True, missing_ok: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.wait_for_cleanup = wait_for_cleanup
        self.missing_ok = missing_ok

    def execute(self, context: Context) -> dict[str, Any]:
        name = self.connector_name

        def delete(_: bool) -> bool:
            """Whether there is a deletion to wait for (a retry finds its first try's)."""
            if self.hook.delete_connector(name, missing_ok=True):
                self.log.info("Connector %s marked deleted", name)
                return True
            deletion = self.hook.store.configs.deletion(name)
            if deletion is None and not self.missing_ok:
                raise AirflowException(f"Connector {name} not found: there is nothing to delete")
            if deletion is None or deletion.state is not DeletionState.PENDING:
                self.log.info("Connector %s is already gone; nothing to delete", name)
                return False
            self.log.info("Connector %s is already being deleted", name)
            return True

        if not self.with_store(delete):
            return {"name": name, "deletion": "ABSENT"}
        if not self.wait_for_cleanup:
            return {"name": name, "deletion": "PENDING"}
        if self.deferrable:
            self.defer(
                trigger=ConnectorDeletedTrigger(
                    name, self.connect_conn_id, poll_interval=self.poll_interval
                ),
                method_name="execute_complete",
                timeout=dt.timedelta(seconds=self.timeout),
            )
        deletion = self.hook.wait_for_deletion(name, self.timeout, self.poll_interval)
        self.log.info("Connector %s deleted; its cleanup ran", name)
        return {"name": name, "deletion": deletion.state.value}

    def execute_complete(
        self, context: Context, event: dict[str, Any], **extra: Any
    ) -> dict[str, Any]:
        """Called once, when the trigger fired (with no ``extra``: the deferral passes none)."""
        if event["status"] != "success":
            raise AirflowException(event["message"])
        self.log.info("Connector %s deleted; its cleanup ran", self.connector_name)
        return {"name": self.connector_name, "deletion": event["deletion"]}


class _ChangesTargetState(_WaitingOperator):
    """Sets the connector's target state, then (``wait``) waits until the connector and its
    tasks are in it. Returns ``{"name", "config", "status"}``."""

    reached = ""

    def __init__(self, *, wait: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.wait = wait

    def change(self) -> None:
        raise NotImplementedError

    def execute(self, context: Context) -> dict[str, Any]:
        self.with_store(lambda _: self.change())  # setting a target state twice is harmless
        self.log.info("Connector %s: asked to be %s", self.connector_name, self.reached)
        return self.wait_for_state(self.reached) if self.wait else self.result()


class PauseConnectorOperator(_ChangesTargetState):
    """Pauses a connector (Kafka Connect's PUT /pause): its tasks stop moving data and keep
    their resources."""

    reached = "PAUSED"

    def change(self) -> None:
        self.hook.pause_connector(self.connector_name)


class ResumeConnectorOperator(_ChangesTargetState):
    """Resumes a paused or stopped connector (Kafka Connect's PUT /resume)."""

    reached = "RUNNING"

    def change(self) -> None:
        self.hook.resume_connector(self.connector_name)


class StopConnectorOperator(_ChangesTargetState):
    """Stops a connector (Kafka Connect's PUT /stop, KIP-875): its tasks are shut down and
    its config kept; offsets can then be changed."""

    reached = "STOPPED"

    def change(self) -> None:
        self.hook.stop_connector(self.connector_name)


class RestartConnectorOperator(ConnectorOperator):
    """Requests a restart, as Kafka Connect's POST /restart: of the connector, with
    ``include_tasks`` its tasks too, with ``only_failed`` only the FAILED ones; or of one
    task (``connector_task_id``). Returns once the request is written."""

    def __init__(
        self,
        *,
        include_tasks: bool = False,
        only_failed: bool = False,
        connector_task_id: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.include_tasks = include_tasks
        self.only_failed = only_failed
        self.connector_task_id = connector_task_id

    def execute(self, context: Context) -> None:
        name, task_id = self.connector_name, self.connector_task_id

        def restart(_: bool) -> None:  # a request whose commit was unknown may come twice
            if task_id is not None:
                self.hook.restart_task(name, task_id)
            else:
                self.hook.restart_connector(name, self.include_tasks, self.only_failed)

        self.with_store(restart)
        self.log.info("Restart of %s requested", name)


def _try_number(context: Context) -> int:
    """The task instance's try (1 outside a task run, as in ``operator.execute({})``)."""
    ti = context.get("ti")
    return int(getattr(ti, "try_number", 1) or 1)


def _dag_folder(context: Context) -> Path | None:
    """The folder of the running task's DAG file, which config files are relative to."""
    dag = context.get("dag")
    return Path(dag.fileloc).parent if dag is not None and dag.fileloc else None
