"""The Parquet export sink end to end: records into files of flush.size (and smaller ones
after rotate.interval.ms), each record exactly once, across a restart mid-stream."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from airflow_provider_connect.control.validation import ConfigValidationError, ensure_valid
from airflow_provider_connect.runtime import Connect
from tests.records import order, send
from tests_common.kafka import new_topic, wait_until

pytestmark = pytest.mark.integration


def export_config(root: Path, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "ParquetSinkConnector",
        "store.url": f"file://{root}",
        "topics": topic,
        "flush.size": "100",
        **extra,
    }


def exported(root: Path, topic: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The committed files' names and their rows (temporary files left out)."""
    files = sorted((root / "topics" / topic).glob("partition=*/*.parquet"))
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    return [f.name for f in files], rows


def test_files_of_flush_size_then_rotation(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap, partitions=2)
    send(bootstrap, topic, [order(i) for i in range(250)])
    connect.add_connector(
        "export", export_config(tmp_path, topic, **{"rotate.interval.ms": "1500"})
    )
    wait_until(lambda: len(exported(tmp_path, topic)[1]) == 250, 60, "250 rows in files")
    names, rows = exported(tmp_path, topic)
    assert sorted(r["id"] for r in rows) == list(range(250))  # each exactly once
    assert all(n.startswith(f"{topic}+") and n.endswith(".parquet") for n in names)
    sizes = [
        pq.read_metadata(f).num_rows
        for f in sorted((tmp_path / "topics" / topic).glob("*/*.parquet"))
    ]
    assert max(sizes) == 100 and sum(sizes) == 250
    first = min(rows, key=lambda r: r["id"])
    assert first["name"] == "order 0" and first["amount"] is None and first["at"].year == 2026


def test_exactly_once_across_a_restart(
    worker_props: dict[str, str], spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap, partitions=2)
    total, step = 4000, 100
    done = threading.Event()

    def write() -> None:
        for first in range(0, total, step):
            send(bootstrap, topic, [order(i) for i in range(first, first + step)])
            if done.wait(0.05):
                return

    writer = threading.Thread(target=write)
    writer.start()
    config = export_config(tmp_path, topic, **{"rotate.interval.ms": "500"})
    try:
        runtime = Connect("first", worker_props)
        runtime.start()
        try:
            runtime.add_connector("export", config)
            wait_until(lambda: len(exported(tmp_path, topic)[1]) >= 800, 60, "some files")
        finally:
            runtime.stop()
        runtime = Connect("second", worker_props)
        runtime.start()
        try:
            wait_until(lambda: len(exported(tmp_path, topic)[1]) >= total, 120, "all rows")
        finally:
            runtime.stop()
    finally:
        done.set()
        writer.join()
    ids = sorted(r["id"] for r in exported(tmp_path, topic)[1])
    assert ids == list(range(total))  # none lost, none twice


def test_bad_configs_name_their_fields(tmp_path: Path) -> None:
    with pytest.raises(ConfigValidationError) as e:
        ensure_valid({"name": "bad", **export_config(tmp_path, "t", **{"flush.size": "0"})})
    errors = {c["value"]["name"] for c in e.value.infos["configs"] if c["value"]["errors"]}
    assert errors == {"flush.size"}
