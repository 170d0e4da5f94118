"""Test session setup: Airflow keeps its home (config, logs, database) in a temporary folder,
never in the user's ~/airflow."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="airflow-provider-connect-tests-"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ.setdefault(
    "AIRFLOW__CORE__DAGS_FOLDER", str(Path(__file__).resolve().parents[1] / "dags")
)
