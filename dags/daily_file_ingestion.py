"""daily_file_ingestion: each run moves one day's file of lines into Kafka.

Every day a file ``{input_dir}/YYYY-MM-DD.txt`` lands; the run creates (or updates) a
FileStreamSource connector for it, waits until the connector's committed offset reaches the
file's size (every line is in Kafka, at least once), then deletes the connector and waits
for its cleanup. Offsets are kept per file, so a rerun of a day resumes where it stopped.

The connector's task declares the topic of the ``topic`` param's default as its outlet (its
config is a template, which names no data until a run renders it); the day's file is known
when the run starts only, and is no inlet.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, Param, chain, task

from airflow_provider_connect.assets import topic_asset
from airflow_provider_connect.operators.connector import (
    CreateConnectorOperator,
    DeleteConnectorOperator,
)
from airflow_provider_connect.sensors.connector import ConnectorOffsetSensor

with DAG(
    dag_id="daily_file_ingestion",
    description="Move each day's file of lines into a Kafka topic",
    schedule="@daily",
    start_date=dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,
    render_template_as_native_obj=True,
    tags=["kafka-connect"],
    doc_md=__doc__,
    params={
        "input_dir": Param(
            f"{os.environ.get('CONNECT_EXAMPLES_DIR', '/tmp')}/connect-daily",
            type="string",
            title="Input folder",
            description="Where day files land, one YYYY-MM-DD.txt file of lines a day",
        ),
        "topic": Param(
            "daily-lines",
            type="string",
            title="Topic",
            description="The Kafka topic the day's lines go to",
        ),
    },
) as dag:

    @task
    def day_file(input_dir: str, dag_run: Any = None) -> dict[str, Any]:
        """The day's file and the source offset that means all of it was read. The day is
        the run's logical date, or for a run triggered without one, the day it runs."""
        day = (dag_run.logical_date or dag_run.run_after).date().isoformat()
        path = Path(input_dir) / f"{day}.txt"
        if not path.is_file():
            raise FileNotFoundError(f"No file for {day}: {path}")
        return {"file": str(path), "offset": {"position": path.stat().st_size}}

    day = day_file("{{ params.input_dir }}")
    name = "daily-file-ingestion"
    topic = topic_asset(dag.params["topic"])
    ingest = CreateConnectorOperator(
        task_id="ingest",
        connector_name=name,
        config={
            "connector.class": "FileStreamSource",
            "tasks.max": "1",
            "file": "{{ ti.xcom_pull(task_ids='day_file')['file'] }}",
            "topic": "{{ params.topic }}",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        },
        outlets=[topic] if topic else [],
        if_exists="update",
        wait_for_running=False,  # a setup that fails skips its teardown: the sensor waits
    )
    all_read = ConnectorOffsetSensor(
        task_id="all_read",
        connector_name=name,
        source_partition={"filename": "{{ ti.xcom_pull(task_ids='day_file')['file'] }}"},
        source_offset="{{ ti.xcom_pull(task_ids='day_file')['offset'] }}",
        poke_interval=2,
        stall_timeout=600,  # gives up, saying why, after 10 minutes without progress
        timeout=3600,
        retries=2,  # see connector_lifecycle.py: a race in Airflow's scheduler
    )
    done = DeleteConnectorOperator(task_id="delete", connector_name=name)
    chain(day, ingest, all_read, done.as_teardown(setups=ingest))
