"""The built distribution on its own: the wheel and sdist pass ``twine check``, and the wheel
installed in a fresh virtualenv (no checkout, no dev extras) gives a working provider and
runtime: Airflow's entry point, the plugin registry, the migrations, the console script,
the script spark-submit runs; a Schema Registry converter, without its extra, says which
extra it needs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]

PROBE = """
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.get_provider_info import get_provider_info
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import CreateConnectorOperator
from airflow_provider_connect.sensors.connector import ConnectorHealthSensor
from airflow_provider_connect.triggers.connector import ConnectorStateTrigger
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.operators.runtime import RUNTIME_ENTRY
from pathlib import Path

assert "runtime.cli import main" in Path(RUNTIME_ENTRY).read_text()  # spark-submit's script
assert get_provider_info()["package-name"] == "airflow-provider-connect"
assert load_class("FileStreamSource").__name__ == "FileStreamSourceConnector"
assert load_class("org.apache.kafka.connect.json.JsonConverter").__name__ == "JsonConverter"
from airflow_provider_connect.connect.errors import ConfigException

avro = load_class("io.confluent.connect.avro.AvroConverter")()  # listed without its extra
try:
    avro.configure({"schema.registry.url": "http://127.0.0.1:8081"}, False)
except ConfigException as e:
    assert "needs the schema-registry extra" in str(e) and "pip install" in str(e), e
else:
    raise AssertionError("AvroConverter configured without the schema-registry extra")
print("ok")
"""


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs a command outside this test session's environment: nothing may come from the
    checkout or the development virtualenv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result


@pytest.mark.timeout(900)
def test_the_wheel_installs_and_works_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "build", "--outdir", dist, ROOT, cwd=tmp_path)
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    run(sys.executable, "-m", "twine", "check", "--strict", *wheels, *sdists, cwd=tmp_path)

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", wheels[0], cwd=tmp_path)
    # Outside the checkout (cwd) and without PYTHONPATH: only the installed wheel is imported.
    assert run(python, "-c", PROBE, cwd=tmp_path).stdout.strip() == "ok"
    cli = venv / "bin" / "connect-runtime"
    assert "standalone" in run(cli, "--help", cwd=tmp_path).stdout
    url = f"sqlite:///{tmp_path / 'metadata.db'}"
    run(cli, "db", "migrate", "--metadata-url", url, cwd=tmp_path)
    assert "as expected" in run(cli, "db", "check", "--metadata-url", url, cwd=tmp_path).stdout
