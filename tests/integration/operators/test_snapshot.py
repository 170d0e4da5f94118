"""The signal operators send Debezium's signals through each channel a connector enables,
judged by what lands: a row of the signal table of a private PostgreSQL cluster (source), a
record of the signal topic on the test broker (kafka), a line of the signal file (file). They
only ask the connector where its channels are (``SourceConnector.signal_channels``): a
connector outside the built-ins gets its row written where it says. A channel that is not
enabled or not configured fails the task naming the config to set.

And the example backfill DAG, run for real (``dag.test()``, its sensor deferrable, its
trigger run in line) against a streaming PostgresConnector that writes its notifications to
Kafka: the DAG run ends once the connector notified that the snapshot COMPLETED, an
incremental one asked for through the signal table, a blocking one through the signal
topic."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psycopg
import pytest
from airflow.sdk.exceptions import AirflowException
from fastapi.testclient import TestClient

from airflow_provider_connect.connect.signals import NoSignals, SignalChannels, SignalDatabase
from airflow_provider_connect.connect.source import SourceConnector
from airflow_provider_connect.operators.snapshot import (
    IncrementalSnapshotOperator,
    PauseSnapshotOperator,
    ResumeSnapshotOperator,
    SignalOperator,
    StopSnapshotOperator,
)
from airflow_provider_connect.store import MetadataStore
from tests.connectors import NeverStarted
from tests.integration.conftest import create
from tests.integration.project.test_dags import airflow_db, load_dag, task_states
from tests_common.broker import free_port
from tests_common.kafka import new_topic_named, read_messages, wait_until
from tests_common.postgres_cluster import PostgresCluster

pytestmark = pytest.mark.integration
__all__ = ["airflow_db"]  # a fixture

CLASS = f"{__name__}.SqliteSignalledSourceConnector"
SIGNALS = "CREATE TABLE signals (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT)"


class SqliteSignalledSourceConnector(NeverStarted, SourceConnector):
    """A third party's source whose signals are rows of ``signals`` in ``database.file``."""

    def signal_channels(self, config: Mapping[str, str]) -> SignalChannels:
        if not config.get("database.file"):
            raise NoSignals("set database.file in its config")
        database = SignalDatabase("sqlite", None, None, None, None, config["database.file"])
        return SignalChannels(["source"], "own", table="signals", database=database)


def test_the_operator_writes_the_row_the_connector_describes(
    store: MetadataStore, connection: str, tmp_path: Path
) -> None:
    path = tmp_path / "source.db"
    with sqlite3.connect(path) as db:
        db.execute(SIGNALS)
    store.configs.put_connector_config(
        "own", {"connector.class": CLASS, "database.file": str(path)}
    )
    before = dt.datetime.now(dt.timezone.utc)
    result = IncrementalSnapshotOperator(
        task_id="backfill", connector_name="own", data_collections="a.orders, a.refunds"
    ).execute(context={})
    with sqlite3.connect(path) as db:
        written = db.execute("SELECT id, type, data FROM signals").fetchall()
    data = {"data-collections": ["a.orders", "a.refunds"], "type": "incremental"}
    assert written == [(result["signal_id"], "execute-snapshot", json.dumps(data))]
    assert result["channel"] == "source" and result["snapshot_type"] == "incremental"
    assert result["data_collections"] == ["a.orders", "a.refunds"]
    assert (
        before <= dt.datetime.fromisoformat(result["sent_at"]) <= dt.datetime.now(dt.timezone.utc)
    )

    store.configs.put_connector_config("unsignalled", {"connector.class": CLASS})
    with pytest.raises(AirflowException, match="cannot be signalled: set database.file"):
        IncrementalSnapshotOperator(
            task_id="backfill", connector_name="unsignalled", data_collections="a.orders"
        ).execute(context={})


@pytest.fixture
def captured(pg_cluster: PostgresCluster) -> dict[str, str]:
    """A PostgresConnector config on a new database of the private cluster, whose
    ``public.signals`` is the signal table (the connector itself is not running: the
    operator only reads its config). The private cluster goes with the module, the
    database with it."""
    database = f"signals{free_port()}"
    with psycopg.connect(pg_cluster.dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {database}")
    with psycopg.connect(f"{pg_cluster.dsn.rsplit('/', 1)[0]}/{database}") as conn:
        conn.execute(SIGNALS)
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": "127.0.0.1",
        "database.port": str(pg_cluster.port),
        "database.user": "postgres",
        "database.dbname": database,
        "topic.prefix": f"shop{free_port()}",
        "table.include.list": "public.orders",
        "signal.data.collection": "public.signals",
    }


def signal_rows(pg_cluster: PostgresCluster, config: dict[str, str]) -> list[tuple[Any, ...]]:
    dsn = f"{pg_cluster.dsn.rsplit('/', 1)[0]}/{config['database.dbname']}"
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT id, type, data FROM signals ORDER BY type").fetchall()


def test_every_signal_through_the_source_channel(
    store: MetadataStore, connection: str, pg_cluster: PostgresCluster, captured: dict[str, str]
) -> None:
    """A blocking snapshot with a condition, a stop of one table, a pause, a resume and a
    log signal, each a row of the connector's signal table on its own connection."""
    store.configs.put_connector_config("cdc", captured)
    common = {"connector_name": "cdc"}
    sent = {
        r["signal_type"]: r["signal_id"]
        for r in (
            IncrementalSnapshotOperator(
                task_id="blocking",
                data_collections=["public.orders"],
                snapshot_type="BLOCKING",
                additional_conditions=[
                    {"data-collection": "public.orders", "filter": "SELECT * FROM orders"}
                ],
                **common,
            ).execute(context={}),
            StopSnapshotOperator(
                task_id="stop", data_collections="public.orders", **common
            ).execute(context={}),
            PauseSnapshotOperator(task_id="pause", **common).execute(context={}),
            ResumeSnapshotOperator(task_id="resume", **common).execute(context={}),
            SignalOperator(
                task_id="log", signal_type="log", data={"message": "hello {}"}, **common
            ).execute(context={}),
        )
    }
    conditions = [{"data-collection": "public.orders", "filter": "SELECT * FROM orders"}]
    expected = [
        (
            "execute-snapshot",
            {
                "data-collections": ["public.orders"],
                "type": "blocking",
                "additional-conditions": conditions,
            },
        ),
        ("log", {"message": "hello {}"}),
        ("pause-snapshot", {}),
        ("resume-snapshot", {}),
        ("stop-snapshot", {"type": "incremental", "data-collections": ["public.orders"]}),
    ]
    rows = signal_rows(pg_cluster, captured)
    assert [(t, json.loads(d)) for _, t, d in rows] == expected
    assert {i: t for i, t, _ in rows} == {i: t for t, i in sent.items()}


def test_the_kafka_channel_gets_a_record_keyed_by_the_topic_prefix(
    store: MetadataStore, connection: str, bootstrap: str, captured: dict[str, str]
) -> None:
    prefix = captured["topic.prefix"]
    topic = new_topic_named(bootstrap, f"{prefix}-signal")  # the default signal.kafka.topic
    config = {
        **captured,
        "signal.enabled.channels": "source,kafka",
        "signal.kafka.bootstrap.servers": bootstrap,
    }
    store.configs.put_connector_config("cdc", config)
    result = IncrementalSnapshotOperator(
        task_id="backfill",
        connector_name="cdc",
        data_collections=["public.orders"],
        channel="kafka",
    ).execute(context={})
    assert result["channel"] == "kafka"
    [message] = read_messages(bootstrap, topic, 1)
    assert message.partition() == 0 and message.key() == prefix.encode()
    assert json.loads(message.value()) == {
        "id": result["signal_id"],
        "type": "execute-snapshot",
        "data": {"data-collections": ["public.orders"], "type": "incremental"},
    }

    store.configs.put_connector_config(
        "unconfigured", {**captured, "signal.enabled.channels": "kafka"}
    )
    with pytest.raises(AirflowException, match="set signal.kafka.bootstrap.servers"):
        PauseSnapshotOperator(task_id="pause", connector_name="unconfigured").execute(context={})


def test_the_file_channel_gets_a_line_and_the_default_channel_is_the_first_enabled(
    store: MetadataStore, connection: str, captured: dict[str, str], tmp_path: Path
) -> None:
    signals = tmp_path / "signals.txt"
    signals.write_text('{"id": "earlier", "type": "log", "data": {"message": "m"}}\n')
    config = {**captured, "signal.enabled.channels": "file", "signal.file": str(signals)}
    store.configs.put_connector_config("cdc", config)
    result = StopSnapshotOperator(task_id="stop", connector_name="cdc").execute(context={})
    assert result["channel"] == "file"
    earlier, line = signals.read_text().splitlines()
    assert json.loads(earlier)["id"] == "earlier"  # appended after what was there
    assert json.loads(line) == {
        "id": result["signal_id"],
        "type": "stop-snapshot",
        "data": {"type": "incremental"},
    }

    with pytest.raises(AirflowException, match="add source to signal.enabled.channels"):
        ResumeSnapshotOperator(task_id="resume", connector_name="cdc", channel="source").execute(
            context={}
        )
    store.configs.put_connector_config("relative", {**config, "signal.file": "signals.txt"})
    with pytest.raises(AirflowException, match="set signal.file to an absolute path"):
        ResumeSnapshotOperator(task_id="resume", connector_name="relative").execute(context={})


@pytest.mark.parametrize(
    ("snapshot_type", "channel", "aggregate_type"),
    [("incremental", "source", "Incremental Snapshot"), ("blocking", "kafka", "Initial Snapshot")],
)
def test_a_backfill_dag_ends_when_the_connector_notified_the_snapshot_completed(
    snapshot_type: str,
    channel: str,
    aggregate_type: str,
    airflow_db: None,
    connection: str,
    rest: TestClient,
    bootstrap: str,
    pg_cluster: PostgresCluster,
    captured: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", "True")
    database = captured["database.dbname"]
    dsn = f"{pg_cluster.dsn.rsplit('/', 1)[0]}/{database}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL)")
        conn.execute("INSERT INTO orders SELECT g, 'item ' || g FROM generate_series(1, 1000) g")
    config = {
        **captured,
        "table.include.list": "public.orders,public.signals",
        "slot.name": f"slot_{database}",
        "publication.name": f"pub_{database}",
        "publication.autocreate.mode": "filtered",
        "snapshot.mode": "no_data",
        "incremental.snapshot.chunk.size": "100",
        "poll.interval.ms": "50",
        "signal.enabled.channels": "source,kafka",
        "signal.kafka.bootstrap.servers": bootstrap,
        # the signal topic read every 5 s: the sensor mostly defers before the snapshot starts
        "signal.poll.interval.ms": "5000",
        "notification.enabled.channels": "sink",
        "notification.sink.topic.name": f"{captured['topic.prefix']}-notifications",
    }
    new_topic_named(bootstrap, f"{captured['topic.prefix']}-signal")
    create(rest, "capture", config)
    streaming = f"SELECT active FROM pg_replication_slots WHERE slot_name = 'slot_{database}'"
    with psycopg.connect(dsn, autocommit=True) as conn:
        wait_until(
            lambda: conn.execute(streaming).fetchall() == [(True,)], 120, "the task streaming"
        )
    dag = load_dag("snapshot_backfill")
    sensor = dag.get_task("backfilled")
    assert sensor.deferrable
    sensor.timeout = 180  # not the example's hours: a missing notification fails the test soon
    dag_run = dag.test(
        run_conf={
            "connector_name": "capture",
            "data_collections": ["public.orders"],
            "snapshot_type": snapshot_type,
            "channel": channel,
            "bootstrap_servers": bootstrap,
        }
    )
    assert str(dag_run.state) == "success", task_states(dag_run)
    [backfill, backfilled] = sorted(dag_run.get_task_instances(), key=lambda ti: ti.task_id)
    sent = backfill.xcom_pull(task_ids="backfill")
    completed = backfilled.xcom_pull(task_ids="backfilled")
    assert sent["channel"] == channel and sent["snapshot_type"] == snapshot_type
    assert completed["type"] == "COMPLETED" and completed["aggregate_type"] == aggregate_type
    if snapshot_type == "incremental":  # a blocking snapshot's notifications have random ids
        assert completed["id"] == sent["signal_id"]
    assert completed["additional_data"]["connector_name"] == captured["topic.prefix"]
