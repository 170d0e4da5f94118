"""connector_lifecycle: run one connector from setup to teardown.

create (setup) → healthy (all tasks RUNNING) → caught_up (a sink has consumed what its
topics held when the sensor started; a source has committed ``source_offset``) → delete
(teardown: runs even when a task before it failed, and waits for the connectorDeleted
cleanup). Trigger it from the UI's trigger form with your own connector config.

With its defaults (on ``make airflow``'s stack) a FileStreamSink replays the topic
``connect-demo-lines``, which the stack's ``demo-lines`` source fills, into
``connect-lifecycle-out.txt`` in the example DAGs' folder (``$CONNECT_EXAMPLES_DIR``,
``/tmp`` when unset; ``make airflow`` sets its own).
"""

from __future__ import annotations

import datetime as dt
import os

from airflow.sdk import DAG, Param, chain

from airflow_provider_connect.operators.connector import (
    CreateConnectorOperator,
    DeleteConnectorOperator,
)
from airflow_provider_connect.sensors.connector import (
    ConnectorHealthSensor,
    ConnectorOffsetSensor,
)

with DAG(
    dag_id="connector_lifecycle",
    description="Create a connector, watch it run and catch up, then delete it",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    render_template_as_native_obj=True,
    tags=["kafka-connect"],
    doc_md=__doc__,
    params={
        "connector_name": Param(
            "lifecycle-file-sink",
            type="string",
            title="Connector name",
            description="The connector's name; the run creates it and deletes it at the end",
        ),
        "config": Param(
            {
                "connector.class": "FileStreamSink",
                "tasks.max": "1",
                "topics": "connect-demo-lines",
                "file": f"{os.environ.get('CONNECT_EXAMPLES_DIR', '/tmp')}/connect-lifecycle-out.txt",
            },
            type="object",
            title="Connector config",
            description=(
                "The connector config, as Kafka Connect's REST API takes it (POST /connectors "
                "'config'). The default replays the topic connect-demo-lines into a file"
            ),
        ),
        "source_offset": Param(
            {},
            type="object",
            title="Source offset to reach",
            description=(
                "For a source connector: the committed offset caught_up waits for, e.g. "
                '{"position": 1024} for a FileStreamSource. Leave {} for a sink, which is '
                "caught up once it consumed what its topics held when caught_up started"
            ),
        ),
    },
) as dag:
    name = "{{ params.connector_name }}"
    # The setup only writes the connector, so that the teardown runs whatever happens next.
    create = CreateConnectorOperator(
        task_id="create",
        connector_name=name,
        config="{{ params.config }}",
        wait_for_running=False,
    )
    # Sensors retry: a trigger that fires within seconds of its deferral can meet a race in
    # Airflow's scheduler (apache/airflow#67287, #72716: the deferring process's "success"
    # arrives after the task was queued again, and the task is failed); a retry re-checks.
    retries = {"retries": 2, "retry_delay": dt.timedelta(seconds=2)}
    healthy = ConnectorHealthSensor(
        task_id="healthy",
        connector_name=name,
        mode="reschedule",
        poke_interval=2,
        timeout=300,
        **retries,
    )
    caught_up = ConnectorOffsetSensor(
        task_id="caught_up",
        connector_name=name,
        source_offset="{{ params.source_offset or None }}",
        poke_interval=2,
        stall_timeout=600,  # gives up, saying why, after 10 minutes without progress
        timeout=1800,
        **retries,
    )
    delete = DeleteConnectorOperator(task_id="delete", connector_name=name)
    chain(create, healthy, caught_up, delete.as_teardown(setups=create))
