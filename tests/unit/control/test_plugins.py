"""The plugin lookups the control layer answers with."""

from __future__ import annotations

from airflow_provider_connect.control.plugins import connector_keys


def test_a_connectors_own_keys_are_those_of_its_config_def_in_order() -> None:
    assert connector_keys("FileStreamSource") == ["file", "files", "topic", "batch.size"]
    assert connector_keys("no.such.Connector") == []
    assert connector_keys("StringConverter") == []  # a plugin, but no connector
