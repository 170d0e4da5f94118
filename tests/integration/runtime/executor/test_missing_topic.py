"""A sink task subscribed to a topic that does not exist, on the real broker and store: it
warns once, reports ``waiting_on`` with its heartbeat (the store, the Connectors page's
overview and the hook read it), and once the topic is created it consumes it and the report
clears.

What confluent-kafka 2.16 (librdkafka 2.16) reports, measured with this broker: one error
event, ``UNKNOWN_TOPIC_OR_PART`` "Subscribed topic not available: T: Broker: Unknown topic
or partition", at subscribe and never again; a topic created later is noticed at the next
metadata refresh only (``topic.metadata.refresh.interval.ms``, 5 minutes by default), unless
the client asks for the topic's metadata, which the task does every MISSING_TOPIC_CHECK_S.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from pathlib import Path

import pytest

from airflow_provider_connect.control.overview import connectors_overview
from airflow_provider_connect.control.progress import SinkCatchUp
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime.executor.sink_task import MISSING_TOPIC_CHECK_S
from airflow_provider_connect.store import MetadataStore, State, TargetState
from tests.connectors import EVENTS, PLAIN, RecordingSinkTask, read_events
from tests.integration.conftest import start_run
from tests_common.kafka import new_topic_named, produce, wait_until

pytestmark = pytest.mark.integration


def waiting_on(store: MetadataStore, name: str) -> str | None:
    return store.statuses.task_statuses(name)[0].waiting_on


def test_a_sink_warns_about_a_missing_topic_until_it_is_created(
    store: MetadataStore,
    connection: str,
    worker_props: dict[str, str],
    bootstrap: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "airflow_provider_connect.runtime.executor.sink_task")
    topic = f"missing-{uuid.uuid4().hex[:10]}"
    events = tmp_path / "events.jsonl"
    config = {"topics": topic, EVENTS: str(events), **PLAIN}
    run = start_run(store, worker_props, "late", config, config, RecordingSinkTask)
    try:
        check_the_missing_topic(store, connection, bootstrap, caplog, topic, events)
    finally:
        store.configs.set_target_state("late", TargetState.STOPPED)
        assert run.join().failed is False


def check_the_missing_topic(
    store: MetadataStore,
    connection: str,
    bootstrap: str,
    caplog: pytest.LogCaptureFixture,
    topic: str,
    events: Path,
) -> None:
    store.lease.acquire("test-driver", ttl_s=600)  # what the herder writes besides the run
    generation, _ = store.configs.task_configs("late")
    store.statuses.put_connector_status("late", State.RUNNING, "test", None, generation, 1)
    wait_until(
        lambda: waiting_on(store, "late") == f"topic {topic} does not exist",
        30,
        "the task reports the missing topic with its heartbeat",
    )
    warning = (
        f"late-0: subscribed topic {topic} does not exist; the task consumes nothing from it "
        "until it is created"
    )
    assert [r.levelname for r in caplog.records if r.getMessage() == warning] == ["WARNING"]

    task = connectors_overview(store)["connectors"][0]["tasks"][0]
    assert task["state"] == "RUNNING" and task["waiting_on"] == f"topic {topic} does not exist"
    hook = ConnectHook(connection)
    catch_up = SinkCatchUp(dt.datetime.now(dt.timezone.utc))
    behind = hook.check_progress("late", catch_up)
    assert behind is not None and behind.reason == (
        f"topic {topic} does not exist; connector late has recorded no progress yet"
    )
    beat = store.statuses.task_statuses("late")[0].heartbeat_at
    wait_until(
        lambda: store.statuses.task_statuses("late")[0].heartbeat_at != beat,
        10,
        "a later heartbeat",
    )
    assert waiting_on(store, "late") == f"topic {topic} does not exist"  # each beat writes it

    new_topic_named(bootstrap, topic)
    created = time.monotonic()
    produce(bootstrap, topic, [b"a", b"b", b"c"], one_per_batch=True)
    wait_until(
        lambda: (
            [v for e in read_events(events) if e["event"] == "put" for v in e["values"]]
            == ["a", "b", "c"]
        ),
        MISSING_TOPIC_CHECK_S + 30,
        "the created topic consumed",
    )
    took = time.monotonic() - created
    wait_until(lambda: waiting_on(store, "late") is None, 10, "the report cleared")
    assert "waiting_on" not in connectors_overview(store)["connectors"][0]["tasks"][0]
    wait_until(lambda: hook.check_progress("late", catch_up) is None, 10, "caught up")
    assert any(f"late-0: topic {topic} exists now" in m for m in caplog.messages)
    assert [r.getMessage() for r in caplog.records].count(warning) == 1  # once, not per beat
    logging.getLogger(__name__).info("the created topic was consumed %.1f s after", took)
    hook.close()
