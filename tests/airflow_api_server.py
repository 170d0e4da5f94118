"""A real ``airflow api-server`` on loopback, with the provider's plugin loaded and Airflow's
simple auth manager: an ``admin`` (role admin) and a ``viewer`` (role viewer)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests

from tests_common.broker import free_port
from tests_common.processes import wait_until

USERS = {"admin": "admin", "viewer": "viewer"}
"""User name → role; the passwords are in the generated password file."""


class AirflowApiServer:
    """Migrates Airflow's database (SQLite) in ``home`` and starts the API server; its
    ``connect_default`` connection points at ``metadata_url``; ``pythonpath`` (never the
    checkout, whose egg-info would register the plugin a second time) adds importable
    modules. ``stop`` ends it by PID."""

    def __init__(self, home: Path, metadata_url: str, pythonpath: Path | None = None) -> None:
        self.home = home
        self.url = f"http://127.0.0.1:{free_port()}"
        self.env = {
            **os.environ,
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "false",
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
            "AIRFLOW__API__BASE_URL": self.url,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(
                f"{user}:{role}" for user, role in USERS.items()
            ),
            "AIRFLOW__CONNECT__UI_REFRESH_INTERVAL": "1",
            "AIRFLOW_CONN_CONNECT_DEFAULT": json.dumps(
                {"conn_type": "connect", "extra": {"metadata_url": metadata_url}}
            ),
        }
        self.env.pop("PYTHONPATH", None)
        if pythonpath is not None:
            self.env["PYTHONPATH"] = str(pythonpath)
        self.process: subprocess.Popen[bytes] | None = None
        self.log = home / "api-server.log"

    def start(self) -> AirflowApiServer:
        self.home.mkdir(parents=True, exist_ok=True)
        airflow = [sys.executable, "-m", "airflow"]
        subprocess.run(
            [*airflow, "db", "migrate"],
            env=self.env,
            cwd=self.home,
            check=True,
            capture_output=True,
        )
        host, port = self.url.removeprefix("http://").split(":")
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [*airflow, "api-server", "--host", host, "--port", port, "--workers", "1"],
                env=self.env,
                cwd=self.home,  # not the checkout, whose egg-info would register the plugin twice
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_until(self.healthy, 120, "the API server answers", 0.5)
        except BaseException:
            self.stop()
            raise
        return self

    def healthy(self) -> bool:
        assert self.process is not None and self.process.poll() is None, self.log.read_text()
        try:
            return requests.get(f"{self.url}/api/v2/monitor/health", timeout=5).ok
        except requests.RequestException:
            return False

    def password(self, user: str) -> str:
        passwords = self.home / "simple_auth_manager_passwords.json.generated"
        return str(json.loads(passwords.read_text())[user])

    def token(self, user: str) -> str:
        """A JWT for ``user``, as ``POST /auth/token`` issues it."""
        response = requests.post(
            f"{self.url}/auth/token",
            json={"username": user, "password": self.password(user)},
            timeout=10,
        )
        response.raise_for_status()
        return str(response.json()["access_token"])

    def session(self, user: str | None) -> requests.Session:
        """A session logged in as ``user`` (anonymous for None)."""
        session = requests.Session()
        if user is not None:
            session.headers["Authorization"] = f"Bearer {self.token(user)}"
        return session

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def get(self, user: str | None, path: str, **kwargs: Any) -> requests.Response:
        return self.session(user).get(f"{self.url}{path}", timeout=30, **kwargs)
