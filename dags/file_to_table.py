"""file_to_table: the lines of a file, through a Kafka topic, into a database table.

``source`` (FileStreamSource) tails the file into the topic; ``sink`` (JdbcSinkConnector)
writes each record as a row ``(__connect_topic, __connect_partition, __connect_offset,
line)``, keyed by the record's Kafka coordinates and upserted, so a replayed record
rewrites its own row.
On a worker with ``exactly.once.source.support=enabled`` each line is one record, and so
one row: exactly once from file to table, through lost executors and drivers.

The run sets the pipeline up and waits, in the triggerer, until both connectors are
healthy and the source has read ``file_size`` bytes of the file (when given); the
connectors keep running after it, to tail the file further. Trigger it again with another
config to reconfigure them.

The connector tasks declare the assets of the params' defaults (the configs are templates,
which name no data until a run renders them): Airflow's asset graph shows the file, the
topic and the table, and ``lines_report``, which is scheduled on the table. A run with other
params moves other data than the graph shows.
"""

from __future__ import annotations

import datetime as dt
import os

from airflow.sdk import DAG, Param, chain
from lines_table import committed_lines  # beside this file

from airflow_provider_connect.assets import params_assets
from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.sensors.connector import (
    ConnectorHealthSensor,
    ConnectorOffsetSensor,
)

with DAG(
    dag_id="file_to_table",
    description="Tail a file of lines into a Kafka topic and the topic into a table",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    render_template_as_native_obj=True,
    tags=["kafka-connect"],
    doc_md=__doc__,
    params={
        "name": Param(
            "lines",
            type="string",
            title="Name",
            description="Prefix of the connectors' names: NAME-source and NAME-sink",
        ),
        "file": Param(
            f"{os.environ.get('CONNECT_EXAMPLES_DIR', '/tmp')}/connect-lines.txt",
            type="string",
            title="Input file",
            description="The file of lines the source tails (on the runtime's machine)",
        ),
        "topic": Param(
            "lines", type="string", title="Topic", description="The Kafka topic between them"
        ),
        "connection_url": Param(
            f"sqlite:///{os.environ.get('CONNECT_EXAMPLES_DIR', '/tmp')}/connect-lines.db",
            type="string",
            title="Database",
            description=(
                "The database of the table, as a SQLAlchemy URL, e.g. "
                "postgresql+psycopg://user@host:5432/db"
            ),
        ),
        "table": Param(
            "lines",
            type="string",
            title="Table",
            description="The table the lines go to (created when missing)",
        ),
        "file_size": Param(
            None,
            type=["null", "integer"],
            title="Bytes to wait for",
            description=(
                "Wait until the source has read this many bytes of the file; empty: until "
                "it committed its first offset"
            ),
        ),
    },
) as dag:
    name = "{{ params.name }}"
    converter = {"value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    source_config = {
        "connector.class": "FileStreamSource",
        "file": "{{ params.file }}",
        "topic": "{{ params.topic }}",
        **converter,
    }
    sink_config = {
        "connector.class": "JdbcSinkConnector",
        "topics": "{{ params.topic }}",
        "connection.url": "{{ params.connection_url }}",
        "table.name.format": "{{ params.table }}",
        "auto.create": "true",
        "insert.mode": "upsert",
        "pk.mode": "kafka",
        "transforms": "line",
        "transforms.line.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        "transforms.line.field": "line",
        **converter,
    }
    source_assets = params_assets(source_config, dag.params)
    sink_assets = params_assets(sink_config, dag.params)
    source = CreateConnectorOperator(
        task_id="source",
        connector_name=f"{name}-source",
        config=source_config,
        inlets=source_assets.inlets,
        outlets=source_assets.outlets,
        if_exists="update",
        wait_for_running=False,
    )
    # The table, with lines_report's watcher (see lines_table.py): lines_report also runs
    # once when this task succeeds.
    assert [a.uri for a in sink_assets.outlets] == [committed_lines.uri]
    sink = CreateConnectorOperator(
        task_id="sink",
        connector_name=f"{name}-sink",
        config=sink_config,
        inlets=sink_assets.inlets,
        outlets=[committed_lines],
        if_exists="update",
        wait_for_running=False,
    )
    # Sensors retry: a trigger that fires within seconds of its deferral can meet a race in
    # Airflow's scheduler (apache/airflow#67287, #72716: the deferring process's "success"
    # arrives after the task was queued again, and the task is failed); a retry re-checks.
    retries = {"retries": 2, "retry_delay": dt.timedelta(seconds=2)}
    healthy = [
        ConnectorHealthSensor(
            task_id=f"{part}_healthy",
            connector_name=f"{name}-{part}",
            poke_interval=2,
            **retries,
        )
        for part in ("source", "sink")
    ]
    read = ConnectorOffsetSensor(
        task_id="file_read",
        connector_name=f"{name}-source",
        source_partition={"filename": "{{ params.file }}"},
        source_offset={"position": "{{ params.file_size or 0 }}"},
        poke_interval=2,
        stall_timeout=600,  # gives up, saying why, after 10 minutes without progress
        timeout=3600,
        **retries,
    )
    chain([source, sink], healthy[0], healthy[1], read)
