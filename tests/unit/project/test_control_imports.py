"""The Airflow side stands on the control layer alone: importing the provider's hooks,
operators, sensors, triggers and links (the runtime's own operator, sensor and trigger, which
launch and watch it from Airflow, among them) and validating a config through the hook's path
(one naming a Schema Registry converter too) and naming the assets of connector configs
(each connector describing its data) loads no Kafka client, no Spark and no PostgreSQL
driver. A fresh interpreter checks it, since this test session has loaded them all."""

from __future__ import annotations

import json
import subprocess
import sys

AIRFLOW_SIDE = [
    "airflow_provider_connect.get_provider_info",
    "airflow_provider_connect.hooks.connect",
    "airflow_provider_connect.operators.connector",
    "airflow_provider_connect.operators.runtime",
    "airflow_provider_connect.sensors.connector",
    "airflow_provider_connect.sensors.runtime",
    "airflow_provider_connect.triggers.connector",
    "airflow_provider_connect.triggers.runtime",
    "airflow_provider_connect.links.connector",
    "airflow_provider_connect.control.validation",
    "airflow_provider_connect.control.secrets",
    "airflow_provider_connect.control.status",
    "airflow_provider_connect.control.overview",
    "airflow_provider_connect.ui.plugin",
]
FORBIDDEN = ("confluent_kafka", "kafka", "pyspark", "psycopg")

PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
from airflow_provider_connect.control.validation import validate_connector_config
infos = validate_connector_config(
    {
        "name": "n",
        "connector.class": "FileStreamSink",
        "topics": "t",
        "file": "/tmp/x",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": "http://127.0.0.1:8081",
    }
)
assert infos["error_count"] == 0, infos
from airflow_provider_connect.assets import connector_assets
for config in [
    {"connector.class": "MirrorSource", "topics": "t", "source.bootstrap.servers": "a:1"},
    {"connector.class": "PostgresConnector", "database.hostname": "h", "table.include.list": "s.t"},
    {"connector.class": "JdbcSource", "connection.url": "sqlite:////x.db", "table.whitelist": "t"},
]:
    assert connector_assets(config, "k:1").outlets, config
print(json.dumps(sorted(sys.modules)))
"""


def test_the_airflow_side_loads_no_kafka_client_and_no_spark() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *AIRFLOW_SIDE], capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out.splitlines()[-1])  # Airflow's API modules may log a warning first
    assert "airflow_provider_connect.hooks.connect" in loaded
    offending = [m for m in loaded if m.split(".")[0] in FORBIDDEN]
    assert offending == []
