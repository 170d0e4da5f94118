"""connect_runtime: deploy the Connect runtime on a Spark cluster.

``runtime`` submits the runtime (``connect-runtime serve``) to the master of the Spark
connection ``spark_default`` and runs as long as it does: its driver runs the herder and the
REST API, its executors the connectors' tasks. ``serving`` waits, in the triggerer, until the
runtime holds the herder lease on the ``connect_default`` metadata database and answers on
its REST URL, and pushes that URL as its XCom.

Each run is one driver. A second run started while one serves is a standby that takes over
when the first stops or dies; upgrading is starting a run with the new version and then
marking the old one's ``runtime`` task failed (its driver stops gracefully). Trigger it from
the UI's form with your own worker config (Kafka Connect's worker keys, ``spark.*`` for the
Spark conf).
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG, Param

from airflow_provider_connect.operators.runtime import ConnectRuntimeSubmitOperator
from airflow_provider_connect.sensors.runtime import ConnectRuntimeSensor

with DAG(
    dag_id="connect_runtime",
    description="Run the Connect runtime on a Spark cluster and wait until it serves",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    render_template_as_native_obj=True,
    tags=["kafka-connect"],
    doc_md=__doc__,
    params={
        "worker_config": Param(
            {
                "bootstrap.servers": "127.0.0.1:9092",
                "group.id": "connect-cluster",
                "listeners": "http://127.0.0.1:8083",
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
            },
            type="object",
            title="Worker config",
            description=(
                "The runtime's worker config: Kafka Connect's worker keys (bootstrap.servers, "
                "listeners, offset.flush.interval.ms, ...) and spark.* for the Spark conf; the "
                "metadata database is connect_default's"
            ),
        ),
    },
) as dag:
    runtime = ConnectRuntimeSubmitOperator(
        task_id="runtime",
        worker_config="{{ params.worker_config }}",
        retries=3,  # a driver that dies is submitted again; the standby (if any) leads meanwhile
        retry_delay=dt.timedelta(seconds=10),
    )
    # No dependency: the sensor runs beside the long-running submit task.
    # retries: see connector_lifecycle.py (a race in Airflow's scheduler after deferral).
    serving = ConnectRuntimeSensor(
        task_id="serving", deferrable=True, poke_interval=2, timeout=600, retries=2
    )
