"""The connector sensors say why they wait, on a live runtime (a real SparkSession), the real
broker and real metadata stores: a PAUSED connector, a topic that does not exist, a stall
and a timeout, in poke mode and in deferrable mode (the sensor defers, its trigger runs as
the triggerer would run it, rebuilt from its serialized arguments, and the sensor resumes
with the trigger's event). What a sensor or trigger logs goes to Airflow's log (stdout).

And the metadata database away: a private PostgreSQL cluster crashed under a poking sensor
and restarted (the states a runtime would write written by the test), or a port nothing
listens on."""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowSensorTimeout, TaskDeferred
from confluent_kafka import Producer

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.sensors.connector import (
    ConnectorHealthSensor,
    ConnectorOffsetSensor,
)
from airflow_provider_connect.sensors.hook_sensor import TRIGGER_GRACE_S, SensorStalled
from airflow_provider_connect.store import MetadataStore, TargetState
from tests.connectors import PLAIN
from tests.integration.triggers.test_triggers import (
    BACK,
    CONFIG,
    LOST,
    Output,
    first_event,
    outage_connection,
    report_running,
)
from tests_common.broker import free_port
from tests_common.kafka import new_topic, new_topic_named, produce, wait_until
from tests_common.postgres_cluster import PostgresCluster

pytestmark = pytest.mark.integration

FAST = {"poke_interval": 0.2, "timeout": 60}


def file_sink(topic: str, out: Path) -> dict[str, str]:
    return {"connector.class": "FileStreamSink", "topics": topic, "file": str(out), **PLAIN}


def deferred(sensor: Any) -> tuple[TaskDeferred, Any, dict[str, Any]]:
    """Runs a deferrable sensor until it defers: the deferral, its trigger as the triggerer
    rebuilds it from the serialized arguments, and those arguments."""
    with pytest.raises(TaskDeferred) as deferral:
        sensor.execute(context={})
    path, kwargs = deferral.value.trigger.serialize()
    module, name = path.rsplit(".", 1)
    return deferral.value, getattr(importlib.import_module(module), name)(**kwargs), kwargs


def waits_logged(out: str, reason: str) -> int:
    """How many lines of the log say it waits for ``reason`` (once per change, not per
    poke): Airflow's console lines are ``<time> [info] <message> [<logger>] loc=…``."""
    said = [
        line.split("Still waiting: ", 1)[1]
        for line in out.splitlines()
        if "Still waiting: " in line
    ]
    return [message.rsplit(" [", 1)[0].rstrip() for message in said].count(reason)


@dataclass
class Live:
    """A running runtime's parts: the hook over its store, the store, the broker, and the
    file a FileStreamSink writes."""

    hook: ConnectHook
    store: MetadataStore
    bootstrap: str
    out: Path


@pytest.fixture
def live(
    connection: str, connect: Connect, store: MetadataStore, bootstrap: str, tmp_path: Path
) -> Iterator[Live]:
    hook = ConnectHook(connection)
    yield Live(hook, store, bootstrap, tmp_path / "out.txt")
    hook.close()


def test_a_paused_connector_stalls_the_sensors_and_they_say_why(
    live: Live, capsys: pytest.CaptureFixture[str]
) -> None:
    name, hook = "paused-sink", live.hook
    topic = new_topic(live.bootstrap)
    produce(live.bootstrap, topic, [b"a", b"b", b"c"], one_per_batch=True)
    live.store.configs.create_connector(name, file_sink(topic, live.out), TargetState.PAUSED)
    wait_until(
        lambda: (
            [t["state"] for t in hook.get_status(name)["tasks"]] == ["PAUSED"]
            and hook.get_sink_progress(name)
        ),
        120,
        "the task PAUSED, recording its (paused) partition's progress",
    )
    # paused from its start (partitions paused as they are assigned), the task fetched
    # nothing and put nothing: it knows no end offset to catch up to
    assert [(p.committed_offset, p.end_offset) for p in hook.get_sink_progress(name)] == [
        (None, None)
    ]
    assert not live.out.read_text()
    paused = f"connector {name} is PAUSED and makes no progress until resumed"
    behind = f"{paused}; connector {name} has recorded no end offset since the wait began"

    health = ConnectorHealthSensor(
        task_id="healthy", connector_name=name, stall_timeout=1.5, deferrable=False, **FAST
    )
    capsys.readouterr()
    with pytest.raises(SensorStalled) as stalled:
        health.execute(context={})
    assert str(stalled.value) == f"no progress for 1.5 s: {paused}"
    assert waits_logged(capsys.readouterr().out, paused) == 1  # some eight pokes, one line

    caught_up = ConnectorOffsetSensor(
        task_id="caught_up", connector_name=name, stall_timeout="1.5", deferrable=False, **FAST
    )  # a rendered template is text
    with pytest.raises(SensorStalled) as stalled:
        caught_up.execute(context={})
    assert str(stalled.value) == f"no progress for 1.5 s: {behind}"
    out = capsys.readouterr().out
    assert waits_logged(out, behind) == 1 and "records behind" not in out

    impatient = ConnectorOffsetSensor(
        task_id="caught_up", connector_name=name, poke_interval=0.2, timeout=1, deferrable=False
    )
    with pytest.raises(AirflowSensorTimeout) as timed_out:
        impatient.execute(context={})
    message = str(timed_out.value)
    assert message.startswith("Sensor has timed out; run duration of ")
    assert message.endswith(f"timeout of 1.0; last waited on: {behind}")

    # deferrable: the sensor pokes once, its trigger logs in the triggerer and stalls there
    for sensor, reason in [
        (ConnectorHealthSensor(task_id="h", connector_name=name, **FAST), paused),
        (ConnectorOffsetSensor(task_id="c", connector_name=name, **FAST), behind),
    ]:
        sensor.deferrable, sensor.stall_timeout = True, 1.5
        before = dt.datetime.now(dt.timezone.utc)
        deferral, trigger, kwargs = deferred(sensor)
        after = dt.datetime.now(dt.timezone.utc)
        assert kwargs["stall_timeout"] == 1.5 and kwargs["connector_name"] == name
        deadline = dt.datetime.fromisoformat(kwargs["deadline"])  # the sensor's timeout
        timeout = dt.timedelta(seconds=FAST["timeout"])
        assert before + timeout <= deadline <= after + timeout
        assert deferral.timeout is not None  # the trigger ends first
        assert after + deferral.timeout >= deadline + dt.timedelta(seconds=TRIGGER_GRACE_S)
        capsys.readouterr()
        event, _ = asyncio.run(first_event(trigger))
        assert event == {
            "status": "stalled",
            "connector_name": name,
            "message": f"no progress for 1.5 s: {reason}",
        }
        assert waits_logged(capsys.readouterr().out, reason) == 1  # the triggerer's log
        with pytest.raises(AirflowSensorTimeout, match="no progress for 1.5 s: connector"):
            sensor.execute_complete(context={}, event=event)


def test_a_missing_topic_is_what_the_offset_sensor_waits_for(
    live: Live, capsys: pytest.CaptureFixture[str]
) -> None:
    name, hook = "late-sink", live.hook
    topic = f"absent-{uuid.uuid4().hex[:10]}"
    hook.create_connector(name, file_sink(topic, live.out))
    wait_until(
        lambda: hook.connector_view(name).waiting_on == (f"topic {topic} does not exist",),
        120,
        "the running task reports the missing topic",
    )
    health = ConnectorHealthSensor(task_id="healthy", connector_name=name, deferrable=False, **FAST)
    assert health.execute(context={}) is None  # RUNNING, though it consumes nothing

    missing = f"topic {topic} does not exist; connector {name} has recorded no progress yet"
    impatient = ConnectorOffsetSensor(
        task_id="caught_up", connector_name=name, poke_interval=0.2, timeout=2, deferrable=False
    )
    capsys.readouterr()
    with pytest.raises(AirflowSensorTimeout) as timed_out:
        impatient.execute(context={})
    assert str(timed_out.value).endswith(f"timeout of 2.0; last waited on: {missing}")
    out = capsys.readouterr().out
    assert waits_logged(out, missing) == 1 and "? records behind" not in out

    sensor = ConnectorOffsetSensor(
        task_id="caught_up", connector_name=name, poke_interval=0.2, timeout=2, deferrable=True
    )
    _, trigger, kwargs = deferred(sensor)
    event, _ = asyncio.run(first_event(trigger))  # the trigger's own timeout, at the deadline
    assert event["status"] == "timeout"
    assert event["message"] == f"Timed out at {kwargs['deadline']}; last waited on: {missing}"
    with pytest.raises(AirflowSensorTimeout, match="last waited on: topic"):
        sensor.execute_complete(context={}, event=event)

    new_topic_named(live.bootstrap, topic)  # the task picks it up and the report clears
    produce(live.bootstrap, topic, [b"x", b"y"], one_per_batch=True)  # exact end offsets here
    wait_until(lambda: hook.connector_view(name).waiting_on == (), 60, "the report cleared")
    caught_up = ConnectorOffsetSensor(
        task_id="caught_up", connector_name=name, deferrable=False, **FAST
    )
    capsys.readouterr()
    assert caught_up.execute(context={}) is None
    assert "does not exist" not in capsys.readouterr().out


def test_a_sink_of_a_transactional_topic_catches_up_at_its_end(live: Live) -> None:
    """A transaction's commit marker takes the last offset of its partition: the sink's
    progress passes it once every record before it was put and committed."""
    name, topic = "transactional-sink", new_topic(live.bootstrap)
    producer = Producer(
        {"bootstrap.servers": live.bootstrap, "transactional.id": f"writer-{uuid.uuid4()}"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for value in (b"a", b"b", b"c"):
        producer.produce(topic, value)
    producer.commit_transaction(30)
    live.store.configs.create_connector(name, file_sink(topic, live.out), TargetState.STARTED)
    sensor = ConnectorOffsetSensor(task_id="c", connector_name=name, deferrable=False, **FAST)
    sensor.execute(context={})
    assert live.out.read_text().split() == ["a", "b", "c"]
    assert [(p.committed_offset, p.end_offset) for p in live.hook.get_sink_progress(name)] == [
        (4, 4)  # three records and the commit marker
    ]


# -- the metadata database away ---------------------------------------------------------------
def test_a_sensor_pokes_on_while_the_database_is_away_and_succeeds_once_it_is_back(
    pg_cluster: PostgresCluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MetadataStore(pg_cluster.url)
    store.configs.create_connector("away", CONFIG)
    stall_s = 5.0
    sensor = ConnectorHealthSensor(
        task_id="healthy",
        connector_name="away",
        connect_conn_id=outage_connection(monkeypatch, pg_cluster.url, 1),
        stall_timeout=stall_s,
        deferrable=False,
        **FAST,
    )
    output = Output(capsys)
    outcome: list[object] = []

    def poke() -> None:
        try:
            outcome.append(sensor.execute(context={}))
        except Exception as e:  # a failure or a stall: the test says which
            outcome.append(e)

    poking = threading.Thread(target=poke)
    poking.start()
    try:
        wait_until(lambda: output.lines("Still waiting: no runtime"), 30, "the sensor waits")
        pg_cluster.crash()
        crashed = time.monotonic()
        wait_until(lambda: output.lines(LOST), 30, "the sensor says the database is away")
        # away longer than the stall timeout, which counts no time the database was away
        wait_until(lambda: time.monotonic() - crashed > stall_s + 0.5, 30, "a long outage")
        assert poking.is_alive()  # neither failed nor stalled
        pg_cluster.restart()
        wait_until(lambda: output.lines(BACK), 30, "the sensor says the database is back")
        report_running(store, "away")
        poking.join(30)
        assert not poking.is_alive() and outcome == [None]  # succeeded
    finally:
        poking.join(60)
        store.close()
    named = f"The metadata database {pg_cluster.url} is unreachable: connection failed: "
    (lost,) = output.lines(LOST)  # once, however many pokes failed
    assert "[warning" in lost and f"Still waiting: {named}" in lost
    (back,) = output.lines(BACK)
    assert "[info" in back


def test_a_sensor_that_times_out_while_the_database_is_away_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"postgresql+psycopg://connect:s3cret@127.0.0.1:{free_port()}/meta"
    conn_id = outage_connection(monkeypatch, url, 0.5)
    named = "The metadata database postgresql+psycopg://connect:***@127.0.0.1:"
    poking = ConnectorHealthSensor(
        task_id="h", connector_name="c", connect_conn_id=conn_id, poke_interval=0.1, timeout=2
    )
    with pytest.raises(AirflowSensorTimeout) as timed_out:
        poking.execute(context={})  # poked until its timeout: no failure before
    message = str(timed_out.value)
    assert f"timeout of 2.0; last waited on: {named}" in message and "s3cret" not in message

    # deferrable: the first poke could not reach it either; the sensor defers all the same
    sensor = ConnectorOffsetSensor(
        task_id="c", connector_name="c", connect_conn_id=conn_id, deferrable=True, timeout=2
    )
    _, trigger, kwargs = deferred(sensor)
    event, _ = asyncio.run(first_event(trigger))
    assert event["status"] == "timeout"
    assert event["message"].startswith(
        f"Timed out at {kwargs['deadline']}; last waited on: {named}"
    )
    with pytest.raises(AirflowSensorTimeout, match="is unreachable: connection failed: "):
        sensor.execute_complete(context={}, event=event)
