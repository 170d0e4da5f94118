"""A sink connector's coordination channel through the real runtime: its task runs send on
the metadata database, and the messages go only once the connector's deletion has stopped
its tasks as deleted (KIP-901)."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState
from tests.connectors import EVENTS, PLAIN, read_events
from tests_common.kafka import new_topic, produce, wait_until

pytestmark = pytest.mark.integration


def test_task_messages_last_until_the_connector_is_deleted(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic, events = new_topic(bootstrap), tmp_path / "e.jsonl"
    produce(bootstrap, topic, [b"a", b"b", b"c"])
    connect.add_connector(
        "channel",
        {
            "connector.class": "tests.connectors.ChannelSinkConnector",
            "topics": topic,
            EVENTS: str(events),
            **PLAIN,
        },
    )
    messages = wait_until(
        lambda: len(m := connect.store.channels.messages("channel")) == 3 and m,
        60,
        "three messages",
    )
    generation, _ = connect.store.configs.task_configs("channel")
    assert [(m.task_id, m.generation, m.kind, m.payload) for m in messages] == [
        (0, generation, "value", v) for v in (b"a", b"b", b"c")
    ]

    connect.delete_connector("channel")
    wait_until(
        lambda: (d := connect.store.configs.deletion("channel")) and d.state is DeletionState.DONE,
        60,
        "cleanup done",
    )
    assert connect.store.channels.messages("channel") == []
    stops = [e for e in read_events(events) if e["event"] == "task.stop"]
    assert stops  # stop() may come more than once (the runtime's and the delete's)
    assert all(s["deleted"] is True and s["channel"] == ["a", "b", "c"] for s in stops)
