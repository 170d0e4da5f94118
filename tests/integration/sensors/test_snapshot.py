"""The snapshot sensor and its trigger read Debezium-shaped notification records from the
test broker (written here as the connector's sink channel writes them: the key and value
schemas of Debezium's notifications, through the project's JsonConverter, with and without
schemas): one written before the sensor started counts, those of other connectors and other
snapshots do not, ABORTED fails the task, and a blocking snapshot's (no signal id) are told
by their time."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowException, AirflowSensorTimeout

from airflow_provider_connect.connect.data import Struct
from airflow_provider_connect.connect.json import JsonConverter
from airflow_provider_connect.connectors.change_capture.notifications import (
    INCREMENTAL_SNAPSHOT,
    INITIAL_SNAPSHOT,
    NOTIFICATION_KEY_SCHEMA,
    NOTIFICATION_VALUE_SCHEMA,
)
from airflow_provider_connect.sensors.snapshot import SnapshotNotificationSensor
from airflow_provider_connect.store import MetadataStore
from tests.integration.sensors.test_connector import deferred
from tests.integration.triggers.test_triggers import first_event
from tests_common.kafka import new_topic, new_topic_named, produce

pytestmark = pytest.mark.integration

FAST = {"poke_interval": 0.2, "timeout": 60}


def capture_config(topic: str, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "topic.prefix": prefix,
        "notification.enabled.channels": "sink",
        "notification.sink.topic.name": topic,
        **extra,
    }


def notifications(
    bootstrap: str,
    topic: str,
    prefix: str,
    steps: list[tuple[str, str]],
    *,
    aggregate_type: str = INCREMENTAL_SNAPSHOT,
    timestamp: int | None = None,
    schemas: bool = True,
) -> None:
    """Writes a notification for each ``(id, type)`` of ``steps``, as the sink channel does."""
    key_converter, value_converter = JsonConverter(), JsonConverter()
    key_converter.configure({"schemas.enable": schemas}, True)
    value_converter.configure({"schemas.enable": schemas}, False)
    keys, values = [], []
    for notification_id, kind in steps:
        value = {
            "id": notification_id,
            "type": kind,
            "aggregate_type": aggregate_type,
            "additional_data": {"connector_name": prefix, "data_collections": "public.orders"},
            "timestamp": timestamp or int(time.time() * 1000),
        }
        keys.append(
            key_converter.from_connect_data(
                topic,
                NOTIFICATION_KEY_SCHEMA,
                Struct.of(NOTIFICATION_KEY_SCHEMA, {"id": value["id"]}),
            )
        )
        values.append(
            value_converter.from_connect_data(
                topic, NOTIFICATION_VALUE_SCHEMA, Struct.of(NOTIFICATION_VALUE_SCHEMA, value)
            )
        )
    produce(bootstrap, topic, values, keys)


def sensor(**kwargs: Any) -> SnapshotNotificationSensor:
    return SnapshotNotificationSensor(
        task_id="backfilled", connector_name="cdc", **{**FAST, **kwargs}
    )


def test_a_completion_written_before_the_sensor_started_ends_it(
    store: MetadataStore, connection: str, bootstrap: str
) -> None:
    topic, prefix, signal_id = new_topic(bootstrap), "shop", f"airflow-{uuid.uuid4().hex}"
    store.configs.put_connector_config("cdc", capture_config(topic, prefix))
    notifications(bootstrap, topic, "other", [(signal_id, "COMPLETED")])  # another connector
    notifications(bootstrap, topic, prefix, [("other-signal", "COMPLETED")])  # another snapshot
    notifications(bootstrap, topic, prefix, [(signal_id, "STARTED"), (signal_id, "COMPLETED")])
    done = sensor(signal_id=signal_id, bootstrap_servers=bootstrap).execute(context={})
    assert done["id"] == signal_id and done["type"] == "COMPLETED"
    assert done["aggregate_type"] == "Incremental Snapshot"
    assert done["additional_data"]["connector_name"] == prefix


def test_an_abort_fails_the_task(store: MetadataStore, connection: str, bootstrap: str) -> None:
    topic, signal_id = new_topic(bootstrap), f"airflow-{uuid.uuid4().hex}"
    store.configs.put_connector_config("cdc", capture_config(topic, "shop"))
    notifications(bootstrap, topic, "shop", [(signal_id, "STARTED"), (signal_id, "ABORTED")])
    with pytest.raises(AirflowException, match=f"aborted the incremental snapshot {signal_id}"):
        sensor(signal_id=signal_id, bootstrap_servers=bootstrap).execute(context={})


def test_the_trigger_waits_for_a_completion_of_schemaless_json(
    store: MetadataStore, connection: str, bootstrap: str
) -> None:
    """Deferred before the notification topic exists, with the connector's own schemaless
    JsonConverter, read by the trigger from the store; the topic and the completion, after an
    IN_PROGRESS, arrive while the trigger runs."""
    topic, signal_id = f"notes-{uuid.uuid4().hex[:10]}", f"airflow-{uuid.uuid4().hex}"
    config = capture_config(
        topic,
        "shop",
        **{
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        },
    )
    store.configs.put_connector_config("cdc", config)
    waiting = sensor(signal_id=signal_id, bootstrap_servers=bootstrap, deferrable=True)
    _, trigger, kwargs = deferred(waiting)
    # the converter's settings (a registry's credentials, say) are not serialized: the
    # trigger reads them from the store
    assert "value_converter_config" not in kwargs["watch"]

    def complete() -> None:
        new_topic_named(bootstrap, topic)  # as the connector creates it
        steps = [(signal_id, "IN_PROGRESS"), (signal_id, "COMPLETED")]
        notifications(bootstrap, topic, "shop", steps, schemas=False)

    event, _ = asyncio.run(first_event(trigger, meanwhile=complete))
    assert event["status"] == "success" and event["notification"]["id"] == signal_id
    assert waiting.execute_complete(context={}, event=event)["type"] == "COMPLETED"


def test_a_blocking_snapshot_is_told_by_its_time(
    store: MetadataStore, connection: str, bootstrap: str
) -> None:
    """An initial snapshot's completion before ``since`` does not end the wait for the
    blocking snapshot asked for then; its ABORTED, after ``since``, fails the trigger."""
    topic = new_topic(bootstrap)
    store.configs.put_connector_config("cdc", capture_config(topic, "shop"))
    since = int(time.time() * 1000)
    blocking = {"aggregate_type": INITIAL_SNAPSHOT}
    notifications(
        bootstrap, topic, "shop", [("initial", "COMPLETED")], timestamp=since - 1, **blocking
    )
    notifications(bootstrap, topic, "shop", [("b1", "STARTED"), ("b2", "ABORTED")], **blocking)
    waiting = sensor(snapshot_type="blocking", since=since, bootstrap_servers=bootstrap)
    with pytest.raises(AirflowException, match="aborted the blocking snapshot of shop"):
        waiting.execute(context={})

    with pytest.raises(AirflowException, match="give since"):
        sensor(snapshot_type="blocking", bootstrap_servers=bootstrap).execute(context={})
    store.configs.put_connector_config(
        "quiet", {**capture_config(topic, "shop"), "notification.enabled.channels": "log"}
    )
    with pytest.raises(AirflowException, match="add sink to notification.enabled.channels"):
        SnapshotNotificationSensor(
            task_id="backfilled", connector_name="quiet", bootstrap_servers=bootstrap, **FAST
        ).execute(context={})


def test_a_timeout_says_what_the_sensor_last_waited_on(
    store: MetadataStore, connection: str, bootstrap: str
) -> None:
    """No notification topic yet; then a topic of records the converter cannot read (the
    connector's default JsonConverter expects schemas, the records have none)."""
    absent = f"notes-{uuid.uuid4().hex[:10]}"
    store.configs.put_connector_config("cdc", capture_config(absent, "shop"))
    with pytest.raises(AirflowSensorTimeout, match=f"last waited on: topic {absent} does not"):
        sensor(signal_id="s1", bootstrap_servers=bootstrap, timeout=1).execute(context={})

    topic = new_topic(bootstrap)
    store.configs.put_connector_config("cdc", capture_config(topic, "shop"))
    notifications(bootstrap, topic, "shop", [("s1", "COMPLETED")], schemas=False)
    with pytest.raises(AirflowSensorTimeout, match="JsonConverter cannot read a record"):
        sensor(signal_id="s1", bootstrap_servers=bootstrap, timeout=1).execute(context={})
