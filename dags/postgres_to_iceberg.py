"""postgres_to_iceberg: a PostgreSQL table replicated into an Iceberg table through Kafka,
from the write-ahead log.

``capture`` (Debezium's ``PostgresConnector``) snapshots the table, then streams its changes
from a logical replication slot into the topic ``<name>.<schema>.<table>`` in Debezium's
envelope; ``replica`` (the Iceberg sink, ``org.apache.iceberg.connect.IcebergSinkConnector``)
unwraps each event with Debezium's ``ExtractNewRecordState`` (a delete kept as the row
before it, its ``__op`` field ``d``), creates the Iceberg table when missing with
``id_columns`` as its identifier fields, and upserts each row by them
(``iceberg.tables.upsert-mode-enabled``; ``iceberg.tables.cdc-field`` ``__op`` makes a delete
event delete the row), one Iceberg commit every 10 s. The catalog is a pyiceberg SQL catalog
on SQLite and the warehouse a local folder, both in the examples' folder
(``$CONNECT_EXAMPLES_DIR``, ``/tmp`` when unset). ``caught_up`` waits until the replica has
committed what the topic held.

The connectors keep running after the run; ``iceberg_replica_report`` runs on the replica's
commits. Deleting ``capture`` drops its replication slot and publication, and the delete
waits for that (KIP-901). The source needs ``wal_level = logical``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from airflow.sdk import DAG, Param, chain
from iceberg_replica import CATALOG, NAME, TABLE, replica_orders  # beside this file

from airflow_provider_connect.assets import params_assets
from airflow_provider_connect.connectors.iceberg.datasets import iceberg_datasets
from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.sensors.connector import (
    ConnectorHealthSensor,
    ConnectorOffsetSensor,
)

DEFAULTS = {
    "name": NAME,
    "table": "public.orders",
    "id_columns": "id",
    "replica_table": TABLE,
    "catalog_uri": CATALOG["uri"],
    "warehouse": CATALOG["warehouse"],
}


def replica_config(p: Mapping[str, Any]) -> dict[str, Any]:
    """The Iceberg sink's config from the params ``p`` (their values, or their templates)."""
    return {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics": f"{p['name']}.{p['table']}",
        "iceberg.tables": p["replica_table"],
        "iceberg.tables.default-id-columns": p["id_columns"],
        "iceberg.tables.auto-create-enabled": "true",
        "iceberg.tables.evolve-schema-enabled": "true",
        "iceberg.tables.upsert-mode-enabled": "true",
        "iceberg.tables.cdc-field": "__op",
        "iceberg.control.commit.interval-ms": "10000",
        "iceberg.catalog.type": CATALOG["type"],
        "iceberg.catalog.uri": p["catalog_uri"],
        "iceberg.catalog.warehouse": p["warehouse"],
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.unwrap.add.fields": "op",
    }


with DAG(
    dag_id="postgres_to_iceberg",
    description="Replicate a PostgreSQL table into an Iceberg table through Kafka",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    render_template_as_native_obj=True,
    tags=["kafka-connect", "cdc", "iceberg"],
    doc_md=__doc__,
    params={
        "name": Param(
            DEFAULTS["name"],
            type="string",
            title="Name",
            description="Prefix of the connectors' names (NAME-capture, NAME-replica), the "
            "topic's prefix and the replication slot's name",
        ),
        "hostname": Param("127.0.0.1", type="string", title="Source host"),
        "port": Param(5432, type="integer", title="Source port"),
        "user": Param("postgres", type="string", title="Source user (with REPLICATION)"),
        "dbname": Param("postgres", type="string", title="Source database"),
        "table": Param(DEFAULTS["table"], type="string", title="Table", description="schema.table"),
        "id_columns": Param(
            DEFAULTS["id_columns"],
            type="string",
            title="Id columns",
            description="The columns rows are upserted by, comma-separated (the primary key)",
        ),
        "replica_table": Param(
            DEFAULTS["replica_table"],
            type="string",
            title="Iceberg table",
            description="namespace.table, created when missing",
        ),
        "catalog_uri": Param(
            DEFAULTS["catalog_uri"],
            type="string",
            title="Catalog database",
            description="The SQL catalog's SQLAlchemy URL (SQLite or PostgreSQL)",
        ),
        "warehouse": Param(
            DEFAULTS["warehouse"],
            type="string",
            title="Warehouse",
            description="Where new tables are stored: file:///path or s3://bucket/path",
        ),
    },
) as dag:
    name = "{{ params.name }}"
    capture_config = {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": "{{ params.hostname }}",
        "database.port": "{{ params.port }}",
        "database.user": "{{ params.user }}",
        "database.dbname": "{{ params.dbname }}",
        "topic.prefix": name,
        "slot.name": "{{ params.name | replace('-', '_') }}",
        "publication.name": "{{ params.name | replace('-', '_') }}_publication",
        "publication.autocreate.mode": "filtered",
        "table.include.list": "{{ params.table }}",
        "heartbeat.interval.ms": "10000",
    }
    capture_assets = params_assets(capture_config, dag.params)
    capture = CreateConnectorOperator(
        task_id="capture",
        connector_name=f"{name}-capture",
        config=capture_config,
        inlets=capture_assets.inlets,
        outlets=capture_assets.outlets,
        if_exists="update",
        wait_for_running=False,
    )
    templated = replica_config({k: f"{{{{ params.{k} }}}}" for k in DEFAULTS})
    # The table, with iceberg_replica_report's watcher (see iceberg_replica.py): the report
    # also runs once when this task succeeds.
    assert [d.uri for d in iceberg_datasets(replica_config(DEFAULTS), None).writes] == [
        replica_orders.uri
    ]
    replica = CreateConnectorOperator(
        task_id="replica",
        connector_name=f"{name}-replica",
        config=templated,
        inlets=params_assets(templated, dag.params).inlets,
        outlets=[replica_orders],
        if_exists="update",
        wait_for_running=False,
    )
    # Sensors retry: a trigger that fires within seconds of its deferral can meet a race in
    # Airflow's scheduler (apache/airflow#67287, #72716); a retry re-checks.
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
    caught_up = ConnectorOffsetSensor(
        task_id="caught_up",
        connector_name=f"{name}-replica",
        poke_interval=2,
        stall_timeout=600,  # gives up, saying why, after 10 minutes without progress
        timeout=3600,
        **retries,
    )
    chain([capture, replica], healthy[0], healthy[1], caught_up)
