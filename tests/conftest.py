"""Test session setup: Airflow keeps its home (config, logs, database) in a temporary folder,
never in the user's ~/airflow."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests_common.kafka import broker

# Each pytest-xdist worker (PYTEST_XDIST_WORKER) is a test session of its own: its own Airflow
# home and example DAGs' folder under the run's, as its own broker and SparkSession.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
for _variable, _prefix in (
    ("AIRFLOW_HOME", "airflow-provider-connect-tests-"),
    ("CONNECT_EXAMPLES_DIR", "airflow-provider-connect-examples-"),
):
    if _variable not in os.environ:
        os.environ[_variable] = tempfile.mkdtemp(prefix=_prefix)
    if _WORKER and not os.environ[_variable].endswith(f"/{_WORKER}"):
        os.environ[_variable] = os.path.join(os.environ[_variable], _WORKER)
        os.makedirs(os.environ[_variable], exist_ok=True)
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ.setdefault(
    "AIRFLOW__CORE__DAGS_FOLDER", str(Path(__file__).resolve().parents[1] / "dags")
)
# The example DAGs import the modules beside them, as Airflow's dag processor and workers let
# them (they put the DAG bundle's folder on sys.path).
sys.path.append(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])


OPT_IN = {
    "faults": "a long fault test (more kills, more data): run with make test-faults",
    "e2e": "the production stack end to end: run with make test-e2e",
    "soak": "an hour under load with faults on a schedule: run with make test-soak",
}
"""Markers of tests that run only when asked for, with ``--faults``, ``--e2e`` or ``--soak``."""


def pytest_addoption(parser: pytest.Parser) -> None:
    for marker, reason in OPT_IN.items():
        parser.addoption(f"--{marker}", action="store_true", help=f"also run {reason}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for marker, reason in OPT_IN.items():
        if not config.getoption(f"--{marker}"):
            for item in items:
                if item.get_closest_marker(marker) is not None:
                    item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def bootstrap() -> Iterator[str]:
    """The test broker's bootstrap servers, started once per test session."""
    with broker() as servers:
        yield servers
