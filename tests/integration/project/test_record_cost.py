"""``bench/record_cost.py`` measures what it says, in short: the file source's paths (with and
without schemas) run in fresh processes, the runtime's loop beside the hand loop, each stage
timed, and both sides' bytes read back equal (the long run of every path is ``make bench``;
its quick run is in ``make test-faults``)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from airflow_provider_connect.store import MetadataStore

pytestmark = pytest.mark.integration


def _record_cost() -> ModuleType:
    """``bench.record_cost``, loaded as ``python -m`` runs it (tests import no benchmark)."""
    return importlib.import_module("bench.record_cost")


def test_the_file_source_paths_are_measured_beside_their_hand_loops(
    bootstrap: str, tmp_path: Path
) -> None:
    record_cost = _record_cost()
    store = f"sqlite:///{tmp_path / 'connect.db'}"
    MetadataStore(store, migrate=True).close()
    worker = {"bootstrap.servers": bootstrap}

    def project(kind: str, n: int, connector: dict[str, str]) -> dict[str, object]:
        return record_cost.project_spec(kind, n, connector, worker, store)

    paths = record_cost.file_paths(bootstrap, tmp_path, 3000, project)
    measured = record_cost.interleaved_children(bootstrap, paths, 1)
    for name in ("file source, schemas", "file source, no schemas"):
        path = measured[name]
        assert path["same_bytes"] == "yes" and path["records"] == 3000
        for side in ("project", "hand"):
            figures = path[side]
            assert figures["process"] >= figures["task thread"] > 0
            assert figures["poll/build"] > 0 and figures["convert"] > 0
        assert path["ratio"] == path["project"]["process"] / path["hand"]["process"]
