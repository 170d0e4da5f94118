"""snapshot_backfill: read tables of a running change-capture connector again, and end when
that is done.

``backfill`` sends Debezium's ``execute-snapshot`` signal to ``connector_name`` (a
``PostgresConnector``, ``MySqlConnector`` or ``MariaDbConnector``) through ``channel``: a row of
its signal table (``source``, ``signal.data.collection``), a record of its signal topic
(``kafka``, ``signal.kafka.topic``), a line of its signal file (``file``, ``signal.file``, on
this machine: a local deployment), or, left empty, its ``source`` channel when enabled, else
its first enabled one. An ``incremental`` snapshot reads the tables again in chunks while
changes keep streaming; a ``blocking`` one pauses streaming meanwhile.

``backfilled`` waits for the snapshot's COMPLETED notification, and fails at ABORTED: the
connector must write its notifications to Kafka (``notification.enabled.channels=sink`` and
``notification.sink.topic.name``), read here from ``bootstrap_servers`` (empty: ``[connect]
kafka_bootstrap_servers``) from the time the signal was sent on; it gives up after six
hours. With ``[operators] default_deferrable`` it waits in the triggerer.
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG, Param

from airflow_provider_connect.operators.snapshot import IncrementalSnapshotOperator
from airflow_provider_connect.sensors.snapshot import SnapshotNotificationSensor

SENT = "ti.xcom_pull(task_ids='backfill')"

with DAG(
    dag_id="snapshot_backfill",
    description="Snapshot tables of a change-capture connector again, until it is done",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    render_template_as_native_obj=True,
    tags=["kafka-connect", "cdc"],
    doc_md=__doc__,
    params={
        "connector_name": Param("orders-capture", type="string", title="Connector name"),
        "data_collections": Param(
            ["public.orders"],
            type="array",
            title="Tables",
            description="schema.table (database.table) names or regular expressions",
        ),
        "snapshot_type": Param(
            "incremental", enum=["incremental", "blocking"], title="Snapshot type"
        ),
        "channel": Param(
            "",
            enum=["", "source", "kafka", "file"],
            title="Signal channel",
            description="Empty: the connector's source channel when enabled, else its first",
        ),
        "bootstrap_servers": Param(
            "",
            type="string",
            title="Kafka bootstrap servers",
            description="Of the notification topic; empty: [connect] kafka_bootstrap_servers",
        ),
    },
) as dag:
    backfill = IncrementalSnapshotOperator(
        task_id="backfill",
        connector_name="{{ params.connector_name }}",
        data_collections="{{ params.data_collections }}",
        snapshot_type="{{ params.snapshot_type }}",
        channel="{{ params.channel }}",
    )
    backfilled = SnapshotNotificationSensor(
        task_id="backfilled",
        connector_name="{{ params.connector_name }}",
        signal_id=f"{{{{ {SENT}['signal_id'] }}}}",
        since=f"{{{{ {SENT}['sent_at'] }}}}",
        snapshot_type="{{ params.snapshot_type }}",
        bootstrap_servers="{{ params.bootstrap_servers }}",
        poke_interval=5,
        timeout=6 * 3600,
        # a trigger that fires within seconds of its deferral can meet a race in Airflow
        # 3.3's scheduler that fails the resumed task (see docs/airflow.md)
        retries=2,
        retry_delay=dt.timedelta(seconds=2),
    )
    backfill >> backfilled
