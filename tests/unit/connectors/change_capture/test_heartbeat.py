"""Heartbeats of the change-capture core (connectors/change_capture/heartbeat.py): due once
per interval, never with an interval of 0, keyed by the server's name."""

from __future__ import annotations

import time

from airflow_provider_connect.connectors.change_capture import heartbeat as hb
from airflow_provider_connect.connectors.change_capture.topics import heartbeat_topic


def test_no_heartbeat_without_an_interval() -> None:
    beat = hb.Heartbeat(0, "srv", heartbeat_topic("srv"), {"server": "srv"})
    assert not beat.due()


def test_due_once_an_interval_has_passed() -> None:
    assert not hb.Heartbeat(3600, "srv", "t", {"server": "srv"}).due()
    beat = hb.Heartbeat(1e-6, "srv", "t", {"server": "srv"})
    deadline = time.monotonic() + 5
    while not beat.due():
        assert time.monotonic() < deadline, "no heartbeat due after 5 s"


def test_a_heartbeat_record() -> None:
    beat = hb.Heartbeat(1, "srv", heartbeat_topic("srv"), {"server": "srv"})
    record = beat.record({"lsn_commit": 9, "event": -1})
    assert (record.topic, record.source_partition, record.source_offset) == (
        "__debezium-heartbeat.srv",
        {"server": "srv"},
        {"lsn_commit": 9, "event": -1},
    )
    assert record.key_schema is hb.HEARTBEAT_KEY_SCHEMA and record.key.get("serverName") == "srv"
    assert record.value_schema is hb.HEARTBEAT_VALUE_SCHEMA and record.value.get("ts_ms") > 0
