"""The production stack of ``tests_common.stack`` as processes on loopback: the Spark cluster,
Airflow's services one by one, each started with the image's entrypoint and the command
and configuration ``docker/compose.yaml`` gives its container. What the image provides
(``AIRFLOW_HOME``, the DAGs folder, ``SPARK_HOME``, the Python of the executors) points at
this checkout and its virtualenv instead. ``make airflow`` (``demo.airflow``) runs it on
SQLite; the end-to-end test (``make test-e2e``) on PostgreSQL."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import requests

from tests_common.broker import free_port
from tests_common.processes import Started, wait_until
from tests_common.spark_cluster import SparkCluster, spark_env
from tests_common.stack import (
    ENTRYPOINT,
    Places,
    airflow_environment,
    airflow_services,
    deploy_environment,
)

ROOT = Path(__file__).resolve().parents[1]
STACK_ID = "CONNECT_E2E_STACK"
"""The environment variable that marks the processes of one stack."""
SERVICES = ("airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
STOP_GRACE_S = 10
"""How long :meth:`LocalStack.stop` lets the services end by themselves: Airflow's services,
the runtime and its drivers end within a few seconds of SIGTERM when idle; a runtime still
stopping its tasks is killed, as a lost machine would be (nothing the tests read is left)."""


class LocalStack(Started):
    """Starts on :meth:`start`, in order: the Spark cluster, ``init``, Airflow's four
    services (waiting until the API server reports each healthy), then ``deploy-runtime``.
    :meth:`stop` ends every process it started (and what they started), by PID."""

    def __init__(
        self,
        folder: Path,
        bootstrap_servers: str,
        airflow_db_url: str,
        connect_db_url: str,
        *,
        api_port: int | None = None,
        runtime_port: int | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        """Ports left None are free ones; ``extra_env`` goes to every service and to the
        Spark cluster's processes."""
        self.folder = folder
        self.places = Places(
            bind="127.0.0.1",
            bootstrap_servers=bootstrap_servers,
            airflow_db_url=airflow_db_url,
            connect_db_url=connect_db_url,
            spark_master=("127.0.0.1", free_port()),
            api_server=("127.0.0.1", api_port or free_port()),
            runtime=("127.0.0.1", runtime_port or free_port()),
            jwt_secret=secrets.token_hex(32),
        )
        self.spark = SparkCluster(
            folder / "spark", port=self.places.spark_master[1], extra_env=extra_env
        )
        self.airflow_home = folder / "airflow"
        self.id = secrets.token_hex(8)
        self.env = {
            STACK_ID: self.id,
            **spark_env(),
            **airflow_environment(self.places),
            # What the image sets (docker/Dockerfile), for this checkout:
            "AIRFLOW_HOME": str(self.airflow_home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
            # Links Airflow renders (the provider's extra link) point at the API server.
            "AIRFLOW__API__BASE_URL": self.places.api_server_url,
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }
        self.services: dict[str, subprocess.Popen[bytes]] = {}
        self.start_s = 0.0
        """How long :meth:`start` took, the runtime's deployment included."""
        self.step = "nothing yet"
        """What :meth:`start` waits for now, as a person reads it (``make airflow`` says it
        while it waits)."""
        self.session = requests.Session()

    def run(self, name: str, extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Starts service ``name`` as its container would; its output goes to ``name.log``."""
        command = airflow_services(self.places)[name]
        with (self.folder / f"{name}.log").open("ab") as out:
            process = subprocess.Popen(
                [str(ENTRYPOINT), *command],
                env={**self.env, **(extra_env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
            )
        self.services[name] = process
        return process

    def start(self) -> LocalStack:
        began = time.monotonic()
        try:
            self.step = "the Spark cluster (a master and two workers)"
            self.spark.start(timeout_s=120)
            self.airflow_home.mkdir()
            self.step = "Airflow's database (airflow db migrate) and admin user"
            init = self.run("init")
            assert init.wait(timeout=300) == 0, self.log_tail("init")
            for name in SERVICES:
                self.run(name)
            wait_until(self.healthy, 180, "Airflow's services are healthy", 0.5, state=self.health)
            self.login()
            self.step = "the connect_runtime DAG to be triggered (deploy-runtime)"
            deploy = self.run("deploy-runtime", deploy_environment(self.places))
            assert deploy.wait(timeout=300) == 0, self.log_tail("deploy-runtime")
        except BaseException:
            self.stop()
            raise
        self.start_s = time.monotonic() - began
        return self

    def health(self) -> dict[str, Any] | None:
        try:
            response = self.session.get(f"{self.api_url}/api/v2/monitor/health", timeout=5)
            return dict(response.json()) if response.ok else None
        except (requests.RequestException, ValueError):
            return None

    def exited(self) -> list[str]:
        """Airflow's services that are no longer running."""
        return [name for name in SERVICES if self.services[name].poll() is not None]

    def healthy(self) -> bool:
        for name in self.exited():
            raise AssertionError(f"{name} exited: {self.log_tail(name)}")
        health = self.health()
        if health is None:
            self.step = "Airflow's API server to answer"
            return False
        starting = [name for name, part in health.items() if part.get("status") != "healthy"]
        self.step = f"Airflow's {', '.join(starting)} to report healthy"
        return not starting

    @property
    def api_url(self) -> str:
        return self.places.api_server_url

    def password(self, user: str) -> str:
        """The password Airflow's simple auth manager generated for ``user``."""
        passwords = self.airflow_home / "simple_auth_manager_passwords.json.generated"
        return str(json.loads(passwords.read_text())[user])

    def login(self) -> None:
        """A token for ``admin`` of Airflow's simple auth manager, with the password it
        generated in ``AIRFLOW_HOME``."""
        response = self.session.post(
            f"{self.api_url}/auth/token",
            json={"username": "admin", "password": self.password("admin")},
            timeout=10,
        )
        response.raise_for_status()
        self.session.headers["Authorization"] = f"Bearer {response.json()['access_token']}"

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        """Airflow's REST API (``/api/v2`` + ``path``); fails on an error status."""
        response = self.session.request(
            method, f"{self.api_url}/api/v2{path}", timeout=30, **kwargs
        )
        assert response.ok, f"{method} {path}: {response.status_code} {response.text}"
        return response.json()

    def trigger(self, dag_id: str, conf: dict[str, Any]) -> str:
        """Starts a run of ``dag_id``; returns its run id."""
        run = self.api("POST", f"/dags/{dag_id}/dagRuns", json={"logical_date": None, "conf": conf})
        return str(run["dag_run_id"])

    def run_state(self, dag_id: str, run_id: str) -> str:
        return str(self.api("GET", f"/dags/{dag_id}/dagRuns/{run_id}")["state"])

    def task_states(self, dag_id: str, run_id: str) -> dict[str, str]:
        found = self.api("GET", f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances")
        return {t["task_id"]: t["state"] for t in found["task_instances"]}

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self.folder / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def started(self) -> list[psutil.Process]:
        """The services and every process they started: their process trees, and what
        carries the stack's id in its environment wherever it was reparented to (a process
        that renames itself, as Airflow's do, hides its environment, hence both)."""
        found: dict[int, psutil.Process] = {}
        for service in self.services.values():
            with contextlib.suppress(psutil.NoSuchProcess):
                root = psutil.Process(service.pid)
                found.update((p.pid, p) for p in [root, *root.children(recursive=True)])
        for process in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if process.environ().get(STACK_ID) == self.id:
                    found[process.pid] = process
        return list(found.values())

    def stop(self) -> None:
        """SIGTERM to the services and everything they started (the runtime's drivers run
        under the scheduler), SIGKILL to what is left after :data:`STOP_GRACE_S`; then the
        Spark cluster."""
        try:
            processes = self.started()
            for process in processes:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.send_signal(signal.SIGTERM)
            psutil.wait_procs(processes, timeout=STOP_GRACE_S)
            for process in self.started():  # left, or started while the others stopped
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
            for service in self.services.values():
                service.wait(timeout=30)
            self.services.clear()
        finally:
            self.spark.stop()
