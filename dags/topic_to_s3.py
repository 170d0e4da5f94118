"""topic_to_s3: a Kafka topic landed in an S3 bucket, and a report of each batch landed.

``topic_to_s3`` creates (or reconfigures) the S3 sink ``NAME``
(``io.confluent.connect.s3.S3SinkConnector``), which writes the topic's records as JSON
objects ``<topics dir>/<topic>/partition=<p>/<topic>+<p>+<start offset>.json`` of
``flush_size`` records each, exactly once; the run waits until the sink is healthy and has
committed what the topic held when it started. The sink commits whole objects only: records
that do not fill one wait for the next. ``store_url`` is any S3-compatible endpoint (blank:
AWS's, of ``region``); the sink's credentials are the AWS default chain of the runtime's
machines (no key is a param: a param's value is kept plain in the run's conf and shown in
the UI).

``s3_landing_report`` runs each time the sink commits: it is scheduled on the objects under
``s3://<bucket>/<topics dir>/<topic>`` (the sink's asset, as Airflow's Amazon provider names
S3 objects), which ``ConnectorCommitTrigger`` watches, and lists the objects landed (its
params, the landing's defaults, say where).

Both DAGs name the data of the params' defaults (a run with other params lands elsewhere):
the topic ``connect-demo-lines`` of ``make airflow``'s stack, into the bucket
``connect-landing`` of the S3-compatible endpoint ``$CONNECT_S3_ENDPOINT`` (read when Airflow
parses this file: ``make airflow``'s moto server, which has the bucket; unset,
``http://127.0.0.1:5000``, e.g. a MinIO with the bucket created), with the credentials of the
AWS default chain. The asset and its watcher are declared here once, for the sink task (its
outlet) and the report (its schedule): Airflow keeps an asset's watchers as the file parsed
last declares them.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from typing import Any

import boto3
from airflow.sdk import DAG, Asset, AssetWatcher, Param, chain, task

from airflow_provider_connect.assets import connector_assets, connector_data
from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.sensors.connector import (
    ConnectorHealthSensor,
    ConnectorOffsetSensor,
)
from airflow_provider_connect.triggers.commits import ConnectorCommitTrigger

DEFAULTS = {
    "name": "lines-to-s3",
    "topic": "connect-demo-lines",
    "bucket": "connect-landing",
    "store_url": os.environ.get("CONNECT_S3_ENDPOINT", "http://127.0.0.1:5000"),
    "region": "us-east-1",
    "topics_dir": "topics",
    "flush_size": 100,
}


def sink_config(p: Mapping[str, Any]) -> dict[str, Any]:
    """The sink's config from the params ``p`` (their values, or their templates)."""
    return {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": p["topic"],
        "s3.bucket.name": p["bucket"],
        "store.url": p["store_url"],
        "s3.region": p["region"],
        "topics.dir": p["topics_dir"],
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "flush.size": p["flush_size"],
        # The worker's default, which wrote the demo topic: each value lands as plain JSON.
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }


(OBJECTS,) = connector_data(sink_config(DEFAULTS), None).writes
"""The objects the sink writes with the defaults: namespace ``s3://connect-landing``, name
``topics/connect-demo-lines``, URI ``s3://connect-landing/topics/connect-demo-lines``."""
landed = Asset(
    uri=OBJECTS.uri,
    watchers=[
        AssetWatcher(
            name="lines_to_s3_commits",
            trigger=ConnectorCommitTrigger(
                connector_name=DEFAULTS["name"], poll_interval=2, min_interval=30
            ),
        )
    ],
)

with DAG(
    dag_id="topic_to_s3",
    description="Land a Kafka topic in an S3 bucket as JSON objects, exactly once",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    render_template_as_native_obj=True,
    tags=["kafka-connect", "s3"],
    doc_md=__doc__,
    params={
        "name": Param(DEFAULTS["name"], type="string", title="Connector name"),
        "topic": Param(DEFAULTS["topic"], type="string", title="Topic"),
        "bucket": Param(
            DEFAULTS["bucket"], type="string", title="Bucket", description="It must exist"
        ),
        "store_url": Param(
            DEFAULTS["store_url"],
            type="string",
            title="S3 endpoint",
            description="Any S3-compatible endpoint; blank: AWS's endpoint of the region",
        ),
        "region": Param(DEFAULTS["region"], type="string", title="Region"),
        "topics_dir": Param(
            DEFAULTS["topics_dir"],
            type="string",
            title="Topics directory",
            description="The prefix of every object's key",
        ),
        "flush_size": Param(
            DEFAULTS["flush_size"],
            type="integer",
            minimum=1,
            title="Records per object",
        ),
    },
) as landing:
    name = "{{ params.name }}"
    sink = CreateConnectorOperator(
        task_id="sink",
        connector_name=name,
        config=sink_config({k: f"{{{{ params.{k} }}}}" for k in DEFAULTS}),
        # The objects, with s3_landing_report's watcher: the report also runs once when
        # this task succeeds.
        outlets=[landed],
        if_exists="update",
        wait_for_running=False,
    )
    sink.inlets = connector_assets(sink_config(DEFAULTS), sink.bootstrap_servers).inlets
    # Sensors retry: a trigger that fires within seconds of its deferral can meet a race in
    # Airflow's scheduler (apache/airflow#67287, #72716); a retry re-checks.
    retries = {"retries": 2, "retry_delay": dt.timedelta(seconds=2)}
    healthy = ConnectorHealthSensor(
        task_id="healthy", connector_name=name, poke_interval=2, **retries
    )
    landed_all = ConnectorOffsetSensor(
        task_id="landed",
        connector_name=name,
        poke_interval=2,
        stall_timeout=600,  # gives up, saying why, after 10 minutes without progress
        timeout=3600,
        **retries,
    )
    chain(sink, healthy, landed_all)


with DAG(
    dag_id="s3_landing_report",
    description="List the objects topic_to_s3's sink landed, at each of its commits",
    schedule=[landed],
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    is_paused_upon_creation=False,
    tags=["kafka-connect", "s3"],
    doc_md=__doc__,
    params={k: landing.params[k] for k in ("topic", "bucket", "store_url", "region", "topics_dir")},
) as report_dag:

    @task
    def report(params: Any = None, triggering_asset_events: Any = None) -> dict[str, Any]:
        """The records the triggering commit events report, and the objects landed so far
        under the sink's prefix (listed with the AWS default chain's credentials)."""
        events = [e for found in (triggering_asset_events or {}).values() for e in found]
        # Airflow keeps a trigger's event under "payload" in the asset event's extra.
        records = sum(int(e.extra.get("payload", {}).get("records", 0)) for e in events)
        (objects,) = connector_data(sink_config({**DEFAULTS, **params}), None).writes
        s3 = boto3.client(
            "s3", endpoint_url=params["store_url"] or None, region_name=params["region"]
        )
        keys = [
            item["Key"]
            for page in s3.get_paginator("list_objects_v2").paginate(
                Bucket=params["bucket"], Prefix=f"{objects.name}/"
            )
            for item in page.get("Contents", [])
        ]
        print(f"{len(events)} commit events: {records} records committed; {len(keys)} objects")
        for key in keys:
            print(f"  {objects.namespace}/{key}")
        return {"events": len(events), "records": records, "objects": keys}

    report()
