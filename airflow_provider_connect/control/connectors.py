"""Every change to a connector, written once: the REST API, ``ConnectHook`` (and so the
operators and the Connectors page) and the embedded ``Connect`` API all call
:class:`ConnectorWrites`.

What a write does, whoever asks for it:

- values are strings, as Kafka Connect keeps them: a number becomes its text, a boolean
  ``true`` or ``false``, a None value leaves its key out (:func:`config_strings`);
- the config's ``name`` must match the connector's (it is added when missing), as Kafka
  Connect's REST API requires;
- a ``[hidden]`` password value sent back for an existing connector keeps the stored secret;
- the config is validated as :func:`~airflow_provider_connect.control.validation.validate_connector_config`
  does, against the client override policy of the runtime, before anything is written: a
  ``${provider:path:key}`` placeholder is kept as written and never resolved here; its value
  is checked where the runtime resolves it, when the connector starts;
- the store write is one transaction; the runtime's herder applies it at its next reconcile.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from airflow_provider_connect.connect.errors import NotFoundException
from airflow_provider_connect.control.errors import BadRequestError, NotStoppedError
from airflow_provider_connect.control.offsets import (
    SourceOffsets,
    offset_entries,
    sink_offsets,
    source_offsets,
)
from airflow_provider_connect.control.overrides import OverridePolicy
from airflow_provider_connect.control.plugins import connector_type
from airflow_provider_connect.control.secrets import restore_hidden
from airflow_provider_connect.control.validation import ensure_valid
from airflow_provider_connect.store import (
    ConnectorRecord,
    MetadataStore,
    State,
    TargetState,
)

INITIAL_STATES = {
    "RUNNING": TargetState.STARTED,
    "PAUSED": TargetState.PAUSED,
    "STOPPED": TargetState.STOPPED,
}
"""KIP-980's ``initial_state`` values and the target states they give."""


def initial_target_state(value: TargetState | str | None) -> TargetState:
    """The target state of KIP-980's ``initial_state`` (any case; None: RUNNING, as when
    left out); BadRequestError naming the allowed values for anything else."""
    if value is None:
        return TargetState.STARTED
    if isinstance(value, TargetState):
        return value
    state = INITIAL_STATES.get(value.upper()) if isinstance(value, str) else None
    if state is None:
        raise BadRequestError(
            f"Invalid initial_state {value!r}: must be one of RUNNING, PAUSED, STOPPED"
        )
    return state


CREATE_OPTIONS = ("initial_state", "initial_offsets")
"""What Kafka Connect's create body may hold beside the name and the config."""


def split_create_body(loaded: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The config and the create options (``CREATE_OPTIONS``) of a JSON object that is
    Kafka Connect's create body (its ``name`` goes into the config, which must not name
    another connector: BadRequestError) or else a config object, as Kafka Connect's
    standalone mode reads connector files."""
    if not isinstance(loaded.get("config"), dict):
        return dict(loaded), {}
    config, name = dict(loaded["config"]), loaded.get("name")
    if isinstance(name, str) and config.setdefault("name", name) != name:
        raise BadRequestError(
            "Connector name configuration in 'config' doesn't match the one specified in 'name'"
        )
    return config, {k: loaded[k] for k in CREATE_OPTIONS if k in loaded}


def config_strings(config: Mapping[str, Any]) -> dict[str, str]:
    """``config`` with string values, as JSON bodies and DAG authors give them: booleans
    lowercase, other values as their text, None values left out."""
    return {
        k: v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
        for k, v in config.items()
        if v is not None
    }


class ConnectorWrites:
    """Creates, reconfigures, pauses, resumes, stops, restarts and deletes connectors in
    ``store``; ``policy`` gives the client override policy configs are checked against (the
    runtime's own, or the one it recorded in the store); ``name_source`` says, in the error
    for a config whose ``name`` differs, where the connector's name came from.

    Every method raises NotFoundException for an unknown (or deleted) connector, except the
    creating ones, which raise AlreadyExistsException for a taken name.
    """

    def __init__(
        self,
        store: MetadataStore,
        policy: Callable[[], OverridePolicy],
        name_source: str = "connector name",
    ) -> None:
        self.store = store
        self.policy = policy
        self.name_source = name_source

    # -- configs ---------------------------------------------------------------------------
    def create(
        self,
        name: str,
        config: Mapping[str, Any],
        *,
        initial_state: TargetState | str | None = None,
        initial_offsets: Any = None,
    ) -> ConnectorRecord:
        """A new connector with ``config`` (ConfigValidationError names every bad field), in
        ``initial_state`` (KIP-980: ``RUNNING``, ``PAUSED`` or ``STOPPED``, any case), and,
        given ``initial_offsets`` (KIP-995: ``{"offsets": [{"partition": {...}, "offset":
        {...}}]}`` as ``PATCH .../offsets`` takes them, or the list alone), starting from
        those offsets: they replace every
        offset an earlier connector of that name left, before any of it runs. Everything
        is checked before anything is written (BadRequestError for a bad state or offsets)."""
        checked = self._checked(name, config, stored=None)
        state = initial_target_state(initial_state)
        source = sink = None
        if initial_offsets is not None:
            entries = offset_entries(initial_offsets, "initial_offsets")
            if connector_type(checked["connector.class"]) == "sink":
                sink = sink_offsets(entries)
            else:
                source = source_offsets(entries)
        return self.store.configs.create_connector(
            name, checked, state, source_offsets=source, sink_offsets=sink
        )

    def put(self, name: str, config: Mapping[str, Any]) -> tuple[ConnectorRecord, bool]:
        """Creates the connector or replaces its config; returns it and whether it was
        created (REST's ``PUT /connectors/{name}/config``)."""
        stored = None
        with contextlib.suppress(NotFoundException):  # a new connector: nothing to restore
            stored = self.store.configs.connector(name).config
        return self.store.configs.put_connector_config(name, self._checked(name, config, stored))

    def replace(self, name: str, config: Mapping[str, Any]) -> ConnectorRecord:
        """Replaces the config of an existing connector."""
        stored = self.store.configs.connector(name).config
        return self.store.configs.put_connector_config(name, self._checked(name, config, stored))[0]

    def patch(self, name: str, changes: Mapping[str, Any]) -> ConnectorRecord:
        """Changes some keys of an existing connector's config; None removes a key."""
        config: dict[str, Any] = {**self.store.configs.connector(name).config, **changes}
        return self.replace(name, config)

    def _checked(
        self, name: str, config: Mapping[str, Any], stored: Mapping[str, str] | None
    ) -> dict[str, str]:
        checked = config_strings(config)
        given = checked.setdefault("name", name)
        if given != name:
            raise BadRequestError(
                f"Connector name configuration ({given}) doesn't match {self.name_source} ({name})"
            )
        if stored is not None:
            checked = restore_hidden(checked, dict(stored))
        ensure_valid(checked, self.policy())
        return checked

    # -- states ----------------------------------------------------------------------------
    def pause(self, name: str) -> None:
        self.store.configs.set_target_state(name, TargetState.PAUSED)

    def resume(self, name: str) -> None:
        self.store.configs.set_target_state(name, TargetState.STARTED)

    def stop(self, name: str) -> None:
        self.store.configs.set_target_state(name, TargetState.STOPPED)

    def restart(self, name: str, *, include_tasks: bool = False, only_failed: bool = False) -> None:
        self.store.configs.request_restart(
            name, include_tasks=include_tasks, only_failed=only_failed
        )

    def restart_task(self, name: str, task_id: int) -> None:
        self.store.configs.request_restart(name, task_id)

    def delete(self, name: str) -> None:
        """Marks the connector deleted: its tasks stop with connectorDeleted=true, and the
        runtime records the cleanup's outcome as the connector's deletion."""
        self.store.configs.delete_connector(name)

    # -- offsets (KIP-875) ---------------------------------------------------------------
    def require_stopped(self, name: str) -> str:
        """The connector's type (``source``, ``sink`` or ``unknown``) once it is STOPPED, as
        asked and as the runtime reported; NotStoppedError before."""
        connector = self.store.configs.connector(name)
        current = self.store.statuses.connector_status(name)
        if (
            connector.target_state is not TargetState.STOPPED
            or current is None
            or current.state is not State.STOPPED
        ):
            raise _not_stopped(name)
        return connector_type(connector.config.get("connector.class", ""))

    def alter_source_offsets(self, name: str, offsets: SourceOffsets) -> None:
        """Writes a STOPPED source connector's offsets (None removes a partition's); an
        exactly-once worker copies them into its offsets topic before the tasks run."""
        self.store.offsets.commit_source_offsets(name, offsets)
        self.store.configs.mark_source_offsets(name, set_=True)

    def reset_source_offsets(self, name: str) -> None:
        """Removes every offset of a STOPPED source connector."""
        self.store.offsets.delete_source_offsets(name)
        self.store.configs.mark_source_offsets(name, set_=True)

    def alter_offsets(self, name: str, entries: Any) -> None:
        """KIP-875's alter for a writer that reaches no Kafka (the Airflow side): a STOPPED
        source connector's offsets are written at once; a STOPPED sink connector's are
        staged over its committed ones, and the herder writes them to its consumer group
        before it next starts. NotStoppedError (409) before it is STOPPED, BadRequestError
        naming what is wrong in ``entries`` (``[{"partition": {...}, "offset": {...}}]``);
        nothing is written then."""
        kind = self._known(self.require_stopped(name))
        checked = offset_entries(entries)
        if kind == "sink":
            if not self.store.configs.stage_sink_offsets(name, sink_offsets(checked)):
                raise _not_stopped(name)
        else:
            self.alter_source_offsets(name, source_offsets(checked))

    @staticmethod
    def _known(kind: str) -> str:
        """``kind`` when its class could be loaded here; BadRequestError otherwise: whether
        its offsets are a source's or a sink's is unknown."""
        if kind == "unknown":
            raise BadRequestError(
                "The connector's class cannot be loaded here, so whether its offsets are a "
                "source's or a sink's is unknown: change them through the runtime's REST API"
            )
        return kind

    def reset_offsets(self, name: str) -> None:
        """KIP-875's reset for a writer that reaches no Kafka: a STOPPED source connector's
        offsets go at once; a STOPPED sink connector's consumer group is deleted by the
        herder before the connector next starts. NotStoppedError (409) before it is
        STOPPED."""
        if self._known(self.require_stopped(name)) == "sink":
            if not self.store.configs.stage_sink_offsets(name, None):
                raise _not_stopped(name)
        else:
            self.reset_source_offsets(name)


def _not_stopped(name: str) -> NotStoppedError:
    return NotStoppedError(
        "Connectors must be in the STOPPED state before their offsets can be modified. "
        "This can be done for the specified connector by issuing a 'PUT' request to "
        f"the '/connectors/{name}/stop' endpoint"
    )
