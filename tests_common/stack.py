"""The production stack in one place: the command and the configuration of every service
the image (``docker/Dockerfile``) runs. ``docker/compose.yaml`` is rendered from here for
containers on a network, and the end-to-end test (``make test-e2e``) starts the same
commands with the same configuration as processes on loopback; only the addresses differ.

``python -m tests_common.stack`` writes ``docker/compose.yaml``; a unit test checks that the
committed file is what it writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DOCKER = Path(__file__).resolve().parents[1] / "docker"
COMPOSE_FILE = DOCKER / "compose.yaml"
ENTRYPOINT = DOCKER / "entrypoint.sh"
"""The image's entrypoint: each service's command is its arguments."""
SPARK_WORKERS = 2
SPARK_WORKER_CORES = 4
SPARK_WORKER_MEMORY = "2g"


@dataclass(frozen=True)
class Places:
    """Where the stack's parts listen (``bind``) and how the others reach them."""

    bind: str
    bootstrap_servers: str
    airflow_db_url: str
    connect_db_url: str
    spark_master: tuple[str, int]
    api_server: tuple[str, int]
    runtime: tuple[str, int]
    jwt_secret: str
    """Signs the tokens Airflow's scheduler gives task processes for the API server."""

    @property
    def spark_master_url(self) -> str:
        return "spark://{}:{}".format(*self.spark_master)

    @property
    def api_server_url(self) -> str:
        return "http://{}:{}".format(*self.api_server)

    @property
    def runtime_url(self) -> str:
        return "http://{}:{}".format(*self.runtime)


IN_CONTAINERS = Places(
    bind="0.0.0.0",
    bootstrap_servers="kafka:9092",
    airflow_db_url="postgresql+psycopg://airflow:airflow@postgres:5432/airflow",
    connect_db_url="postgresql+psycopg://connect:connect@postgres:5432/connect",
    spark_master=("spark-master", 7077),
    api_server=("airflow-api-server", 8080),
    runtime=("connect-runtime", 8083),
    jwt_secret="${AIRFLOW_JWT_SECRET:?set AIRFLOW_JWT_SECRET to a random string}",
)
"""The stack as ``docker/compose.yaml`` runs it: one container per service."""


def spark_master_args(host: str, port: int, ui_port: int) -> list[str]:
    """``spark-class org.apache.spark.deploy.master.Master``'s arguments."""
    return ["--host", host, "--port", str(port), "--webui-port", str(ui_port)]


def spark_worker_args(
    host: str, ui_port: int, work_dir: str, master_url: str, cores: int = SPARK_WORKER_CORES
) -> list[str]:
    """``spark-class org.apache.spark.deploy.worker.Worker``'s arguments."""
    return [
        *("--host", host, "--cores", str(cores), "--memory", SPARK_WORKER_MEMORY),
        *("--webui-port", str(ui_port), "--work-dir", work_dir, master_url),
    ]


def airflow_environment(places: Places) -> dict[str, str]:
    """The configuration every Airflow service (and the runtime it deploys) shares."""
    connect = {"metadata_url": places.connect_db_url, "rest_url": places.runtime_url}
    spark_host, spark_port = places.spark_master
    environment = {
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "false",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{places.api_server_url}/execution/",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": places.airflow_db_url,
        "AIRFLOW__API_AUTH__JWT_SECRET": places.jwt_secret,
        "AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE": "true",
        # The cluster the connector operators' topic assets are named after.
        "AIRFLOW__CONNECT__KAFKA_BOOTSTRAP_SERVERS": places.bootstrap_servers,
        "CONNECT_METADATA_URL": places.connect_db_url,
        "AIRFLOW_CONN_CONNECT_DEFAULT": json.dumps({"conn_type": "connect", "extra": connect}),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(
            {"conn_type": "spark", "host": f"spark://{spark_host}", "port": spark_port}
        ),
    }
    if places.airflow_db_url.startswith("postgresql+psycopg:"):
        # Airflow's async engine on the same driver (psycopg 3 is async too; asyncpg unused);
        # on SQLite Airflow derives its own (aiosqlite).
        environment["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] = places.airflow_db_url.replace(
            "postgresql+psycopg:", "postgresql+psycopg_async:", 1
        )
    return environment


def runtime_worker_config(places: Places) -> dict[str, str]:
    """The worker config the ``connect_runtime`` DAG deploys the runtime with."""
    host, port = places.runtime
    return {
        "bootstrap.servers": places.bootstrap_servers,
        "group.id": "connect-cluster",
        "listeners": f"http://{places.bind}:{port}",
        "rest.advertised.host.name": host,
        "exactly.once.source.support": "enabled",
        # Progress reaches the metadata database (and Airflow's sensors) every 5 s, not 60.
        "offset.flush.interval.ms": "5000",
        # A lost sink task's partitions move on within seconds, not Kafka's 45.
        "consumer.session.timeout.ms": "6000",
        "spark.driver.host": host,
        "spark.driver.bindAddress": places.bind,
    }


def airflow_services(places: Places) -> dict[str, list[str]]:
    """Airflow's services, one process each (never ``airflow standalone``, which binds
    every interface), and the two one-off roles of the image: ``init`` (both schemas) and
    ``deploy-runtime`` (triggers ``connect_runtime``)."""
    return {
        "init": ["init"],
        "airflow-api-server": [
            *("airflow", "api-server", "--host", places.bind),
            *("--port", str(places.api_server[1])),
        ],
        "airflow-scheduler": ["airflow", "scheduler", "--skip-serve-logs"],
        "airflow-dag-processor": ["airflow", "dag-processor"],
        "airflow-triggerer": ["airflow", "triggerer", "--skip-serve-logs"],
        "deploy-runtime": ["deploy-runtime"],
    }


def deploy_environment(places: Places) -> dict[str, str]:
    """``deploy-runtime``'s: the worker config it passes to the ``connect_runtime`` run."""
    return {"CONNECT_WORKER_CONFIG": json.dumps(runtime_worker_config(places))}


def compose() -> dict[str, Any]:
    """``docker/compose.yaml``: the services above in containers, with Apache Kafka and
    PostgreSQL from their images."""
    places = IN_CONTAINERS
    image = {
        "image": "airflow-provider-connect:0.1.0",
        "build": {"context": "..", "dockerfile": "docker/Dockerfile"},
    }
    master_host, master_port = places.spark_master
    services: dict[str, Any] = {
        "kafka": {
            "image": "apache/kafka:3.9.0",
            "environment": {
                "KAFKA_NODE_ID": "1",
                "KAFKA_PROCESS_ROLES": "broker,controller",
                "KAFKA_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093",
                "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://{places.bootstrap_servers}",
                "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
                "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@kafka:9093",
                "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
                "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
                "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
            },
        },
        "postgres": {
            "image": "postgres:16",
            "environment": {"POSTGRES_PASSWORD": "postgres"},
            "volumes": ["./postgres-init.sql:/docker-entrypoint-initdb.d/init.sql:ro"],
            "healthcheck": {
                "test": ["CMD", "pg_isready", "-U", "postgres"],
                "interval": "2s",
                "retries": 30,
            },
        },
        "spark-master": {
            **image,
            "hostname": master_host,
            "command": ["spark-master", *spark_master_args(master_host, master_port, 8080)],
            "ports": ["8081:8080"],
        },
    }
    for index in range(1, SPARK_WORKERS + 1):
        name = f"spark-worker-{index}"
        services[name] = {
            **image,
            "hostname": name,
            "command": [
                "spark-worker",
                *spark_worker_args(name, 8081, "/opt/spark/work", places.spark_master_url),
            ],
            "depends_on": ["spark-master"],
        }
    environment = airflow_environment(places)
    logs = ["airflow-logs:/opt/airflow/logs"]  # the API server reads the task logs
    initialized = {"init": {"condition": "service_completed_successfully"}}
    for name, command in airflow_services(places).items():
        service: dict[str, Any] = {
            **image,
            "command": command,
            "environment": environment,
            "depends_on": initialized,
        }
        services[name] = service
        if name == "init":
            service["depends_on"] = {"postgres": {"condition": "service_healthy"}}
        elif name == "airflow-api-server":
            service.update(ports=[f"{places.api_server[1]}:{places.api_server[1]}"], volumes=logs)
        elif name == "airflow-scheduler":
            # The runtime's driver runs in the scheduler's LocalExecutor (client deploy
            # mode): its REST API and Spark driver are this container's.
            service.update(
                hostname=places.runtime[0],
                ports=[f"{places.runtime[1]}:{places.runtime[1]}"],
                volumes=logs,
            )
        elif name == "airflow-triggerer":
            service["volumes"] = logs
        elif name == "deploy-runtime":
            service["environment"] = {**environment, **deploy_environment(places)}
            service["depends_on"] = {
                **initialized,
                "airflow-scheduler": {"condition": "service_started"},
            }
    return {"services": services, "volumes": {"airflow-logs": {}}}


HEADER = """\
# The whole stack: Apache Kafka (KRaft), PostgreSQL (the metadata database of both Airflow
# and Connect), a Spark master and two workers, Airflow's services one by one (api-server,
# scheduler with LocalExecutor, dag-processor, triggerer), and the Connect runtime, deployed
# on Spark by the connect_runtime DAG. The e2e test (make test-e2e) runs the same commands
# and configuration on loopback.
#
# Generated by `python -m tests_common.stack` from tests_common/stack.py: edit that, not this file.
#
#   AIRFLOW_JWT_SECRET=$(openssl rand -hex 32) docker compose -f docker/compose.yaml up -d
#   Airflow: http://localhost:8080   Connect REST: http://localhost:8083   Spark: :8081
"""


class _Dumper(yaml.SafeDumper):
    """Writes repeated parts in full (no ``&id001`` anchors): the file reads top to bottom."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def render() -> str:
    return HEADER + yaml.dump(compose(), Dumper=_Dumper, sort_keys=False, width=100)


if __name__ == "__main__":
    COMPOSE_FILE.write_text(render())
