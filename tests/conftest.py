"""Test session setup: Airflow keeps its home (config, logs, database) in a temporary folder,
never in the user's ~/airflow."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="airflow-provider-connect-tests-"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ.setdefault(
    "AIRFLOW__CORE__DAGS_FOLDER", str(Path(__file__).resolve().parents[1] / "dags")
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--faults",
        action="store_true",
        help="also run the long fault tests (marked faults); make test-faults sets it",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--faults"):
        return
    skip = pytest.mark.skip(reason="a long fault test: run with make test-faults")
    for item in items:
        if "faults" in item.keywords:
            item.add_marker(skip)
