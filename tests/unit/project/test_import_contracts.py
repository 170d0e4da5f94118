"""The import contracts of pyproject.toml ([tool.importlinter], run by ``make lint``) bite:
lint-imports passes on a copy of the checkout's packages as they are, and fails, naming the
contract, on a copy with one forbidden import put back, direct or through a chain of
permitted ones.

lint-imports analyses the packages it can import, and puts its working directory first on
``sys.path``: run in the folder that holds the copy (with ``PYTHONPATH`` saying the same),
it finds the copy ahead of the installed, editable package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # import-linter depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = "airflow_provider_connect"
CONFIG = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def config_arguments(config: Path) -> list[str]:
    """import-linter 2.17 takes config files as arguments and deprecates ``--config``; 2.15,
    the last release for Python 3.10, has ``--config`` only."""
    major, minor = (int(part) for part in version("import-linter").split(".")[:2])
    return [str(config)] if (major, minor) >= (2, 17) else ["--config", str(config)]


def importlinter() -> dict[str, Any]:
    return tomllib.loads(CONFIG.read_text())["tool"]["importlinter"]


def contracts() -> dict[str, dict[str, Any]]:
    return {contract["id"]: contract for contract in importlinter()["contracts"]}


def copy_packages(destination: Path) -> Path:
    """A copy of every package the contracts analyse (``root_packages``)."""
    for package in importlinter()["root_packages"]:
        shutil.copytree(
            ROOT / package, destination / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return destination


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports with the project's contracts, on the packages under ``root``."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache", *config_arguments(CONFIG)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "1000"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_packages_as_they_are_keep_every_contract(tmp_path: Path) -> None:
    result = lint_imports(copy_packages(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(contracts())} kept, 0 broken" in result.stdout


# (module of the copy, line appended to it, contract it breaks, what the report says)
BREAKS = [
    (
        "airflow_provider_connect/hooks/connect.py",
        "import airflow_provider_connect.runtime",
        "airflow-side",
        [
            "airflow_provider_connect.hooks is not allowed to import airflow_provider_connect.runtime",
            "airflow_provider_connect.hooks.connect -> airflow_provider_connect.runtime",
        ],
    ),
    (
        "airflow_provider_connect/connect/header.py",
        "from airflow_provider_connect.store import MetadataStore",
        "connector-api",
        [
            "airflow_provider_connect.connect is not allowed to import airflow_provider_connect.store",
            "airflow_provider_connect.connect.header -> airflow_provider_connect.store",
        ],
    ),
    (
        "airflow_provider_connect/store/records.py",
        "from airflow.sdk import BaseHook",
        "store",
        [
            "airflow_provider_connect.store is not allowed to import airflow:",
            "airflow_provider_connect.store.records -> airflow",
        ],
    ),
    (
        "airflow_provider_connect/transforms/util.py",
        "from airflow_provider_connect.control.secrets import masked_config",
        "plugins",
        [
            "airflow_provider_connect.transforms is not allowed to import airflow_provider_connect.control",
            "airflow_provider_connect.transforms.util -> airflow_provider_connect.control.secrets",
        ],
    ),
    # Through a chain: the control layer imports a connector, which imports the Kafka client.
    (
        "airflow_provider_connect/control/plugins.py",
        "import airflow_provider_connect.connectors.mirror",
        "control",
        [
            "airflow_provider_connect.control is not allowed to import confluent_kafka:",
            "airflow_provider_connect.control.plugins -> airflow_provider_connect.connectors.mirror",
            "airflow_provider_connect.connectors.mirror -> confluent_kafka",
        ],
    ),
    (
        "tests/integration/conftest.py",
        "from demo.airflow import AirflowDemo",
        "tests",
        [
            "tests is not allowed to import demo",
            "tests.integration.conftest -> demo.airflow",
        ],
    ),
    (
        "tests_common/kafka.py",
        "from bench.common import ratio_table",
        "tests-common",
        [
            "tests_common is not allowed to import bench",
            "tests_common.kafka -> bench.common",
        ],
    ),
]


@pytest.mark.parametrize(
    ("module", "line", "contract", "report"), BREAKS, ids=[b[2] for b in BREAKS]
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str, report: list[str]
) -> None:
    root = copy_packages(tmp_path)
    with (root / module).open("a") as source:
        source.write(f"\n{line}  # noqa\n")
    result = lint_imports(root)
    assert result.returncode == 1, result.stdout + result.stderr
    said = " ".join(result.stdout.split())  # in case it was wrapped all the same
    assert f"{contracts()[contract]['name']} BROKEN" in said, result.stdout
    for words in report:
        assert words in said, result.stdout


def test_the_connector_api_contract_names_every_other_top_level_module() -> None:
    """The connector API's "nothing else of the project" is a list of modules: a new
    top-level module must join it."""
    package = ROOT / PACKAGE
    top_level = {
        f"{PACKAGE}.{path.stem}"
        for path in package.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").exists()
    }
    forbidden = set(contracts()["connector-api"]["forbidden_modules"])
    assert forbidden == top_level - {f"{PACKAGE}.connect"}
