"""The connector files ``connect-runtime standalone`` reads, as Kafka Connect's standalone
mode reads them: a JSON REST create body with KIP-980's ``initial_state`` and KIP-995's
``initial_offsets``, a JSON object of config keys, or a Java properties file; and the
initial states every writer accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.control.connectors import initial_target_state
from airflow_provider_connect.control.errors import BadRequestError
from airflow_provider_connect.runtime.cli import read_connector_file
from airflow_provider_connect.store import TargetState

OFFSETS = [{"partition": {"file": "in.txt"}, "offset": {"position": 42}}]


def test_a_create_body_gives_the_config_and_the_create_options(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    body = {
        "name": "lines",
        "config": {"connector.class": "FileStreamSource", "tasks.max": 1, "batch": True},
        "initial_state": "STOPPED",
        "initial_offsets": OFFSETS,
    }
    path.write_text(json.dumps(body))
    config, options = read_connector_file(path)
    assert config == {
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "batch": "true",
        "name": "lines",
    }
    assert options == {"initial_state": "STOPPED", "initial_offsets": OFFSETS}


def test_a_name_in_the_config_must_match_the_bodys(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_text(json.dumps({"name": "lines", "config": {"name": "other"}}))
    with pytest.raises(ConfigException, match="doesn't match the one specified in 'name' at"):
        read_connector_file(path)


def test_a_json_object_of_keys_and_a_properties_file_are_configs(tmp_path: Path) -> None:
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"name": "flat", "connector.class": "FileStreamSink"}))
    assert read_connector_file(flat) == ({"name": "flat", "connector.class": "FileStreamSink"}, {})
    properties = tmp_path / "lines.properties"
    properties.write_text("name=lines\nconnector.class=FileStreamSource\n")
    assert read_connector_file(properties) == (
        {"name": "lines", "connector.class": "FileStreamSource"},
        {},
    )


@pytest.mark.parametrize(
    ("given", "state"),
    [
        ("RUNNING", TargetState.STARTED),
        ("paused", TargetState.PAUSED),
        ("Stopped", TargetState.STOPPED),
        (TargetState.PAUSED, TargetState.PAUSED),
        (None, TargetState.STARTED),  # as when left out
    ],
)
def test_initial_states_in_any_case(given: str | TargetState | None, state: TargetState) -> None:
    assert initial_target_state(given) is state


@pytest.mark.parametrize("given", ["STARTED", "", 1])
def test_other_initial_states_are_refused_naming_the_allowed_ones(given: object) -> None:
    with pytest.raises(BadRequestError, match="must be one of RUNNING, PAUSED, STOPPED"):
        initial_target_state(given)  # type: ignore[arg-type]
