"""What the example DAGs that replicate a database's tables through Kafka share
(``postgres_replication``, ``mariadb_replication``): each names its source's params and its
change-capture connector's config, :func:`replication_dag` builds the rest.

The run: ``capture`` (a change-capture connector) snapshots the tables, then streams their
changes into ``<name>.<schema or database>.<table>`` topics in Debezium's envelope;
``replica`` (``JdbcSinkConnector``) unwraps each event with Debezium's
``ExtractNewRecordState``, routes it to the table of the same name in ``replica_url`` and
upserts it by primary key, deleting the row on a delete. Both created, ``capture_healthy``
then ``replica_healthy`` wait for them to run; ``backfill`` asks ``capture`` for an
incremental snapshot of ``backfill_tables`` through its signal table (an
``IncrementalSnapshotOperator``), read again while changes keep streaming; ``caught_up``
waits until the replica has consumed what the topics held. The connectors keep running
after the run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from airflow.sdk import DAG, Param, chain

from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.operators.snapshot import IncrementalSnapshotOperator
from airflow_provider_connect.sensors.connector import (
    ConnectorHealthSensor,
    ConnectorOffsetSensor,
)

NAME = "{{ params.name }}"
"""The connectors' names' prefix (``NAME-capture``, ``NAME-replica``) and the topics'."""


def replica_config() -> dict[str, str]:
    """The replica sink's config: every topic of the capture's tables (``<name>.*``), each
    into the table of its last name part in ``replica_url``, upserted and deleted by the
    record's key (the captured table's primary key), created and evolved as needed."""
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "topics.regex": f"{NAME}\\..*",
        # a table's topic appears with its first event: subscribed by pattern, the consumer
        # sees it at its next metadata refresh (librdkafka's default: 5 minutes)
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
    }


_ON_DEMAND: dict[str, Any] = {
    "schedule": None,
    "start_date": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    "catchup": False,
    "render_template_as_native_obj": True,
}
"""Run when triggered, the params' values rendered as they are (numbers, lists)."""


def replication_dag(
    *,
    dag_id: str,
    description: str,
    doc_md: str | None,
    connector_class: str,
    port: int,
    user: str,
    user_title: str,
    source: Mapping[str, Param],
    capture: Mapping[str, str],
    tables: str,
    table_form: str,
    signal_table: str,
    replica_url: str,
    name: str = "orders",
    name_also: str = "",
) -> DAG:
    """The DAG ``dag_id`` replicating the tables of a source through Kafka (see the module).

    The capture is a ``connector_class`` connector reaching the source at the params
    ``hostname``, ``port`` and ``user`` (``port`` and ``user`` their defaults, ``user_title``
    the user's title), then ``source``, the source's own params; ``capture`` is the rest of
    its config (templates of those params), to which the topics' prefix, the tables
    (``params.tables`` and the signal table), the signal table and a heartbeat are added.
    ``tables`` (regular expressions of ``table_form``, e.g. ``schema.table``,
    comma-separated), ``signal_table`` and ``replica_url`` are the defaults of the params of
    the same names; ``backfill_tables``'s is ``tables``, ``name``'s is ``name``, whose
    description ends with ``name_also`` (what else the source names after it).
    """
    params = {
        "name": Param(
            name,
            type="string",
            title="Name",
            description="Prefix of the connectors' names (NAME-capture, NAME-replica), "
            f"the topics' prefix{name_also}",
        ),
        "hostname": Param("127.0.0.1", type="string", title="Source host"),
        "port": Param(port, type="integer", title="Source port"),
        "user": Param(user, type="string", title=user_title),
        **source,
        "tables": Param(
            tables,
            type="string",
            title="Tables",
            description=f"Regular expressions of {table_form}, comma-separated",
        ),
        "replica_url": Param(
            replica_url,
            type="string",
            title="Replica database",
            description="SQLAlchemy URL, e.g. postgresql+psycopg://user@host:5432/replica",
        ),
        "signal_table": Param(
            signal_table,
            type="string",
            title="Signal table",
            description="Where backfills are asked for (signal.data.collection)",
        ),
        "backfill_tables": Param(
            [t.strip() for t in tables.split(",")],
            type="array",
            title="Tables to backfill",
            description="Read again by an incremental snapshot while changes stream",
        ),
    }
    tags = ["kafka-connect", "cdc"]
    with DAG(
        dag_id, description=description, doc_md=doc_md, params=params, tags=tags, **_ON_DEMAND
    ) as dag:
        _replicate(
            {
                "connector.class": connector_class,
                "database.hostname": "{{ params.hostname }}",
                "database.port": "{{ params.port }}",
                "database.user": "{{ params.user }}",
                **capture,
            }
        )
    return dag


def _replicate(capture: Mapping[str, str]) -> None:
    """The tasks of the DAG being defined, in their order."""
    created = [
        CreateConnectorOperator(
            task_id=part,
            connector_name=f"{NAME}-{part}",
            config=config,
            if_exists="update",
            wait_for_running=False,
        )
        for part, config in (
            ("capture", {**capture, **_capture_common()}),
            ("replica", replica_config()),
        )
    ]
    retries: dict[str, Any] = {"retries": 2, "retry_delay": dt.timedelta(seconds=2)}
    healthy = [
        ConnectorHealthSensor(
            task_id=f"{part}_healthy", connector_name=f"{NAME}-{part}", poke_interval=2, **retries
        )
        for part in ("capture", "replica")
    ]
    backfill = IncrementalSnapshotOperator(
        task_id="backfill",
        connector_name=f"{NAME}-capture",
        data_collections="{{ params.backfill_tables }}",
    )
    caught_up = ConnectorOffsetSensor(
        task_id="caught_up",
        connector_name=f"{NAME}-replica",
        poke_interval=2,
        stall_timeout=600,
        timeout=3600,
        **retries,
    )
    chain(created, healthy[0], healthy[1], backfill, caught_up)


def _capture_common() -> dict[str, str]:
    """What every capture's config has: the topics' prefix, the tables with the signal
    table, the signal table, a heartbeat every 10 s (the stored position advances while
    the tables are quiet)."""
    return {
        "topic.prefix": NAME,
        "table.include.list": "{{ params.tables }},{{ params.signal_table }}",
        "signal.data.collection": "{{ params.signal_table }}",
        "heartbeat.interval.ms": "10000",
    }
