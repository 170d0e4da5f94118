"""The installed distribution: Spark's Python files match its jars, and Airflow finds the
provider through its entry point."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pyspark

from airflow_provider_connect import __version__


def test_pyspark_python_files_match_the_jars() -> None:
    """pyspark-client (pulled in by the Spark provider) writes into pyspark/ too; with a
    different version its Python files would sit over pyspark's jars and Python UDFs and
    mapInArrow would fail."""
    jars = list((Path(pyspark.__file__).parent / "jars").glob("spark-core_*.jar"))
    assert len(jars) == 1, jars
    jar_version = re.fullmatch(r"spark-core_[\d.]+-(.+)\.jar", jars[0].name).group(1)
    assert pyspark.__version__ == jar_version


def test_provider_entry_point_describes_the_provider() -> None:
    (entry,) = [
        e
        for e in entry_points(group="apache_airflow_provider")
        if e.value.startswith("airflow_provider_connect")
    ]
    info = entry.load()()
    assert info["package-name"] == "airflow-provider-connect"
    assert info["versions"] == [__version__]
    assert info["name"] and info["description"]


def test_airflow_lists_the_provider() -> None:
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert manager.providers["airflow-provider-connect"].version == __version__
    hook = manager.hooks["connect"]
    assert hook.hook_class_name == "airflow_provider_connect.hooks.connect.ConnectHook"
    assert hook.connection_type == "connect"
    assert "airflow_provider_connect.links.connector.ConnectorStatusLink" in (
        manager.extra_links_class_names
    )
    triggers = [
        t.trigger_class_name for t in manager.trigger if t.package_name == hook.package_name
    ]
    assert sorted(triggers) == [
        "airflow_provider_connect.triggers.commits",
        "airflow_provider_connect.triggers.connector",
        "airflow_provider_connect.triggers.runtime",
        "airflow_provider_connect.triggers.snapshot",
    ]


def test_airflow_cli_lists_the_provider() -> None:
    listed = subprocess.run(
        [str(Path(sys.executable).parent / "airflow"), "providers", "list", "--output", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {p["package_name"] for p in json.loads(listed.stdout)}
    assert "airflow-provider-connect" in names
