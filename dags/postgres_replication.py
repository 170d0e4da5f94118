"""postgres_replication: PostgreSQL tables replicated into another database through Kafka,
from the write-ahead log, with a backfill task.

``capture`` (Debezium's ``PostgresConnector``) snapshots the tables, then streams their
changes from a logical replication slot into ``<prefix>.<schema>.<table>`` topics in
Debezium's envelope; ``replica`` (``JdbcSinkConnector``) unwraps each event with Debezium's
``ExtractNewRecordState``, routes it to the table of the same name and upserts it by
primary key, deleting the row on a delete. ``backfill`` asks ``capture`` for an
incremental snapshot of ``backfill_tables`` (through its signal table, which must exist:
``CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL,
data TEXT)``), read again while changes keep streaming. ``caught_up`` waits until the
replica has consumed what the topics held.

The connectors keep running after the run. Deleting ``capture`` (REST, or a
``DeleteConnectorOperator`` as a teardown) drops its replication slot and the publication
it created, and the delete waits for that (KIP-901); pausing or stopping it keeps them, so
no change is missed.
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG, Param, chain

from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.operators.snapshot import IncrementalSnapshotOperator
from airflow_provider_connect.sensors.connector import (
    ConnectorHealthSensor,
    ConnectorOffsetSensor,
)

with DAG(
    dag_id="postgres_replication",
    description="Replicate PostgreSQL tables through Kafka from the write-ahead log",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    render_template_as_native_obj=True,
    tags=["kafka-connect", "cdc"],
    doc_md=__doc__,
    params={
        "name": Param(
            "orders",
            type="string",
            title="Name",
            description="Prefix of the connectors' names (NAME-capture, NAME-replica), the "
            "topics' prefix and the replication slot's name",
        ),
        "hostname": Param("127.0.0.1", type="string", title="Source host"),
        "port": Param(5432, type="integer", title="Source port"),
        "user": Param("postgres", type="string", title="Source user (with REPLICATION)"),
        "dbname": Param("postgres", type="string", title="Source database"),
        "tables": Param(
            "public.orders",
            type="string",
            title="Tables",
            description="Regular expressions of schema.table, comma-separated",
        ),
        "replica_url": Param(
            "sqlite:////tmp/connect-replica.db",
            type="string",
            title="Replica database",
            description="SQLAlchemy URL, e.g. postgresql+psycopg://user@host:5432/replica",
        ),
        "signal_table": Param(
            "public.debezium_signal",
            type="string",
            title="Signal table",
            description="Where backfills are asked for (signal.data.collection)",
        ),
        "backfill_tables": Param(
            ["public.orders"],
            type="array",
            title="Tables to backfill",
            description="Read again by an incremental snapshot while changes stream",
        ),
    },
) as dag:
    name = "{{ params.name }}"
    capture = CreateConnectorOperator(
        task_id="capture",
        connector_name=f"{name}-capture",
        config={
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": "{{ params.hostname }}",
            "database.port": "{{ params.port }}",
            "database.user": "{{ params.user }}",
            "database.dbname": "{{ params.dbname }}",
            "topic.prefix": name,
            "slot.name": "{{ params.name | replace('-', '_') }}",
            "publication.name": "{{ params.name | replace('-', '_') }}_publication",
            "publication.autocreate.mode": "filtered",
            "table.include.list": "{{ params.tables }},{{ params.signal_table }}",
            "signal.data.collection": "{{ params.signal_table }}",
            "heartbeat.interval.ms": "10000",
        },
        if_exists="update",
        wait_for_running=False,
    )
    replica = CreateConnectorOperator(
        task_id="replica",
        connector_name=f"{name}-replica",
        config={
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "topics.regex": f"{name}\\..*",
            # a table's topic appears with its first event: subscribed by pattern, the
            # consumer sees it at its next metadata refresh (librdkafka's default: 5 minutes)
            "consumer.override.topic.metadata.refresh.interval.ms": "5000",
            "connection.url": "{{ params.replica_url }}",
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "delete.enabled": "true",
            "auto.create": "true",
            "auto.evolve": "true",
            "transforms": "unwrap,table",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "transforms.table.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.table.regex": "[^.]+\\.[^.]+\\.(.+)",
            "transforms.table.replacement": "$1",
        },
        if_exists="update",
        wait_for_running=False,
    )
    retries = {"retries": 2, "retry_delay": dt.timedelta(seconds=2)}
    healthy = [
        ConnectorHealthSensor(
            task_id=f"{part}_healthy",
            connector_name=f"{name}-{part}",
            poke_interval=2,
            **retries,
        )
        for part in ("capture", "replica")
    ]
    backfill = IncrementalSnapshotOperator(
        task_id="backfill",
        connector_name=f"{name}-capture",
        data_collections="{{ params.backfill_tables }}",
    )
    caught_up = ConnectorOffsetSensor(
        task_id="caught_up",
        connector_name=f"{name}-replica",
        poke_interval=2,
        stall_timeout=600,
        timeout=3600,
        **retries,
    )
    chain([capture, replica], healthy[0], healthy[1], backfill, caught_up)
