"""The control layer's connector writes (``control.connectors``) on a real SQLite store: names,
hidden values, placeholders, validation before any write, states and offsets."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.errors import BadRequestError, NotStoppedError
from airflow_provider_connect.control.overrides import OverridePolicy
from airflow_provider_connect.control.validation import (
    ConfigValidationError,
    validate_connector_config,
)
from airflow_provider_connect.store import MetadataStore, State, TargetState
from tests.connectors import recording_source


@pytest.fixture
def writes(store: MetadataStore) -> ConnectorWrites:
    return ConnectorWrites(store, OverridePolicy)


def config(**extra: str) -> dict[str, str]:
    return recording_source("/tmp/events.jsonl", "t", {"secret": "hunter2", **extra})


def test_create_adds_the_name_and_refuses_a_taken_one(
    writes: ConnectorWrites, store: MetadataStore
) -> None:
    record = writes.create("a", config())
    assert record.config == {**config(), "name": "a"} == store.configs.connector("a").config
    with pytest.raises(AlreadyExistsException):
        writes.create("a", config())


def test_a_name_that_differs_from_the_connector_is_refused(writes: ConnectorWrites) -> None:
    with pytest.raises(BadRequestError, match=r"\(b\) doesn't match connector name \(a\)"):
        writes.put("a", {**config(), "name": "b"})


def test_invalid_configs_never_reach_the_store(
    writes: ConnectorWrites, store: MetadataStore
) -> None:
    with pytest.raises(ConfigValidationError, match="errors.tolerance"):
        writes.create("a", config(**{"errors.tolerance": "some"}))
    assert store.configs.connectors() == []
    writes.create("a", config())
    with pytest.raises(ConfigValidationError, match="errors.tolerance"):
        writes.patch("a", {"errors.tolerance": "some"})
    assert store.configs.connector("a").config_version == 1


def test_an_invalid_config_names_each_key_once_per_distinct_error(
    writes: ConnectorWrites,
) -> None:
    sink = {"connector.class": "FileStreamSink", "tasks.max": "0", "file": "/tmp/out.txt"}
    with pytest.raises(ConfigValidationError) as refused:
        writes.create("a", sink)
    lines = str(refused.value).splitlines()
    assert lines[0].endswith("contains the following 2 error(s):")
    assert lines[1].startswith("tasks.max: Invalid value 0 for configuration tasks.max")
    assert lines[2] == "topics, topics.regex: Must configure one of topics or topics.regex"
    assert lines[3].startswith("You can also find the above list of errors at the endpoint")


def test_hidden_values_keep_the_stored_secret_and_patches_remove_keys(
    writes: ConnectorWrites, store: MetadataStore
) -> None:
    writes.create("a", config(count="3"))
    writes.replace("a", {**config(count="4"), "secret": "[hidden]"})
    assert store.configs.connector("a").config["secret"] == "hunter2"
    record = writes.patch("a", {"count": None, "topic": "u"})
    assert "count" not in record.config and record.config["topic"] == "u"
    assert record.config_version == 3
    _, created = writes.put("a", {**config(), "secret": "[hidden]"})
    assert not created and store.configs.connector("a").config["secret"] == "hunter2"
    with pytest.raises(NotFoundException):
        writes.replace("missing", config())


def test_placeholders_are_kept_and_their_values_checked_where_they_resolve(
    writes: ConnectorWrites, store: MetadataStore
) -> None:
    """A placeholder in a validated key (errors.tolerance takes none or all) counts as set:
    the writer cannot read the secret, so its value is checked at start. Other keys are
    still checked at once."""
    placeholder = "${file:/run/secrets/connect.properties:tolerance}"
    writes.create("a", config(**{"errors.tolerance": placeholder}))
    assert store.configs.connector("a").config["errors.tolerance"] == placeholder
    with pytest.raises(ConfigValidationError) as refused:
        writes.create("b", config(**{"errors.tolerance": placeholder, "errors.retry.timeout": "x"}))
    assert "errors.retry.timeout" in str(refused.value) and placeholder not in str(refused.value)
    infos = validate_connector_config(config(name="c", **{"errors.tolerance": placeholder}))
    assert infos["error_count"] == 0


def test_states_restarts_and_deletion(writes: ConnectorWrites, store: MetadataStore) -> None:
    writes.create("a", config())
    for change, state in (
        (writes.pause, TargetState.PAUSED),
        (writes.stop, TargetState.STOPPED),
        (writes.resume, TargetState.STARTED),
    ):
        change("a")
        assert store.configs.connector("a").target_state is state
    writes.restart("a", include_tasks=True, only_failed=True)
    writes.restart_task("a", 0)
    requests = store.configs.take_restart_requests()
    assert [(r.task_id, r.include_tasks, r.only_failed) for r in requests] == [
        (None, True, True),
        (0, False, False),
    ]
    writes.delete("a")
    with pytest.raises(NotFoundException):
        writes.pause("a")


def test_offsets_change_only_when_stopped(writes: ConnectorWrites, store: MetadataStore) -> None:
    writes.create("a", config())
    writes.stop("a")
    with pytest.raises(NotStoppedError, match="'/connectors/a/stop'"):
        writes.require_stopped("a")  # asked for, but the runtime has not stopped it yet
    store.statuses.put_connector_status("a", State.STOPPED, "w")
    assert writes.require_stopped("a") == "source"
    writes.alter_source_offsets("a", [({"task": 0}, {"next": 5})])
    assert store.offsets.source_offsets("a") == [({"task": 0}, {"next": 5})]
    writes.reset_source_offsets("a")
    assert store.offsets.source_offsets("a") == []


def test_values_are_kept_as_strings_as_kafka_connect_keeps_them(
    writes: ConnectorWrites, store: MetadataStore
) -> None:
    """DAG authors write numbers and booleans; JSON bodies carry them too."""
    given: dict[str, object] = {**config(), "tasks.max": 2, "errors.log.enable": True, "x": None}
    assert writes.create("a", given).config == {
        **config(),
        "name": "a",
        "tasks.max": "2",
        "errors.log.enable": "true",
    }
