"""Sink connectors' coordination channels on a real SQLite file and the local PostgreSQL
server: messages, fencing by task run and by generation, and their end with the connector."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text, update

from airflow_provider_connect.connect.channel import FencedException
from airflow_provider_connect.store import ChannelRun, MetadataStore
from airflow_provider_connect.store.models import TaskStatusRow
from tests_common.kafka import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.both_stores]


def _run(store: MetadataStore, connector: str = "iceberg", task_id: int = 0) -> ChannelRun:
    """A new current run of ``task_id`` of the connector's latest generation."""
    generation, _ = store.configs.task_configs(connector)
    run_id = store.statuses.assign_task(connector, task_id, generation, "worker")
    return ChannelRun(connector, task_id, generation, run_id)


@pytest.fixture
def connector(store: MetadataStore) -> str:
    store.configs.create_connector("iceberg", {"connector.class": "X"})
    store.configs.write_task_configs("iceberg", [{}, {}])
    return "iceberg"


def test_send_read_and_remove(store: MetadataStore, connector: str) -> None:
    committer, writer = _run(store, task_id=0), _run(store, task_id=1)
    large = bytes(range(256)) * 16_384  # 4 MiB
    ids = [
        store.channels.send(writer, "data", large),
        store.channels.send(committer, "commit", b"c"),
        store.channels.send(writer, "data", b""),
    ]
    assert ids == sorted(ids) and len(set(ids)) == 3
    messages = store.channels.messages(connector)
    assert [(m.id, m.task_id, m.generation, m.kind) for m in messages] == [
        (ids[0], 1, 1, "data"),
        (ids[1], 0, 1, "commit"),
        (ids[2], 1, 1, "data"),
    ]
    assert messages[0].payload == large and messages[2].payload == b""
    assert [m.id for m in store.channels.messages(connector, ["commit"])] == [ids[1]]
    assert store.channels.messages(connector, []) == []
    assert store.channels.messages("other") == []

    store.channels.remove(committer, [ids[0], ids[2], 12345])
    store.channels.remove(committer, [])
    assert [m.id for m in store.channels.messages(connector)] == [ids[1]]


def test_a_superseded_run_is_fenced(store: MetadataStore, connector: str) -> None:
    old = _run(store)
    sent = store.channels.send(old, "data", b"a")
    new = _run(store)  # a restart of task 0
    with pytest.raises(FencedException, match=f"Run {old.run_id} of task 0"):
        store.channels.send(old, "data", b"b")
    with pytest.raises(FencedException):
        store.channels.remove(old, [sent])
    with pytest.raises(FencedException):
        store.channels.check_current(old)
    assert [m.payload for m in store.channels.messages(connector)] == [b"a"]

    store.channels.check_current(new)
    store.channels.remove(new, [sent])
    assert store.channels.messages(connector) == []


def test_a_newer_generation_fences_the_runs_of_the_earlier_one(
    store: MetadataStore, connector: str
) -> None:
    run = _run(store, task_id=1)
    store.channels.send(run, "data", b"a")
    store.configs.write_task_configs(connector, [{}, {}])  # a reconfiguration
    with pytest.raises(FencedException):  # still the task's run id, of an old generation
        store.channels.send(run, "data", b"b")
    with pytest.raises(FencedException):
        store.channels.check_current(run)
    successor = _run(store, task_id=1)
    assert successor.generation == 2
    store.channels.send(successor, "data", b"c")
    assert [(m.generation, m.payload) for m in store.channels.messages(connector)] == [
        (1, b"a"),
        (2, b"c"),
    ]


def test_a_run_superseded_while_it_sends_appends_nothing(
    store: MetadataStore, connector: str
) -> None:
    """The check and the write are one step: a send that meets a new run's uncommitted
    takeover waits for it, then is fenced."""
    run = _run(store)
    with store.engine.connect() as takeover, ThreadPoolExecutor(1) as pool:
        takeover.execute(
            update(TaskStatusRow)
            .where(TaskStatusRow.connector == connector, TaskStatusRow.task_id == 0)
            .values(run_id="successor")
        )
        sending = pool.submit(store.channels.send, run, "data", b"late")
        if store.engine.dialect.name == "postgresql":
            wait_until(lambda: _waiting_on_a_lock(store), 30, "the send never waited")
        takeover.commit()
        with pytest.raises(FencedException):
            sending.result(timeout=60)
    assert store.channels.messages(connector) == []


def _waiting_on_a_lock(store: MetadataStore) -> bool:
    with store.engine.connect() as c:
        return bool(
            c.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND datname = current_database()"
                )
            ).scalar()
        )


def test_the_messages_go_when_the_deletion_finishes(store: MetadataStore, connector: str) -> None:
    store.configs.create_connector("kept", {"connector.class": "X"})
    store.configs.write_task_configs("kept", [{}])
    store.channels.send(_run(store), "data", b"a")
    kept = store.channels.send(_run(store, "kept"), "data", b"b")
    store.configs.delete_connector(connector)
    assert len(store.channels.messages(connector)) == 1  # until the cleanup has run
    store.configs.finish_deletion(connector)
    assert store.channels.messages(connector) == []
    assert [m.id for m in store.channels.messages("kept")] == [kept]
