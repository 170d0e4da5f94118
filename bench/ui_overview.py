"""The Connectors page's read: how long ``api/connectors`` takes to gather every connector.

A metadata database (SQLite in a temporary folder, or ``--metadata-url``) is filled with
``--connectors`` connectors (half file sources with one offset each, half file sinks with
one progress row each) of ``--tasks`` tasks each, all RUNNING. Two ways to read them all,
each answered as the page's JSON:

* ``overview``: ``connectors_overview``, what the page's API runs: one query per table;
* ``per connector``: the peer, what a page built on the per-connector reads (Kafka Connect's
  REST shape: status, config, offsets, progress, deletion) would run: several queries each.

Reports the median latency of ``--runs`` reads, the queries each read ran, and the
ratio.

    python -m bench.ui_overview [--connectors 500] [--tasks 10] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from airflow_provider_connect.control.overview import connectors_overview
from airflow_provider_connect.control.secrets import masked_config
from airflow_provider_connect.control.status import connector_status
from airflow_provider_connect.store import MetadataStore
from bench.common import ratio_table
from tests_common.metadata import counting, populate


def per_connector(store: MetadataStore) -> dict[str, Any]:
    """The peer: every connector read as the per-connector calls read one."""
    found = []
    for connector in store.configs.connectors(include_deleted=True):
        name = connector.name
        found.append(
            {
                **connector_status(store, name),
                "config": masked_config(store.configs.connector(name).config),
                "source_offsets": store.offsets.source_offsets(name),
                "sink_progress": store.offsets.sink_progress(name),
                "deletion": store.configs.deletion(name),
            }
        )
    return {"connectors": found}


def measure(read: Callable[[], dict[str, Any]], store: MetadataStore, runs: int) -> dict[str, Any]:
    """Median seconds of ``runs`` reads (each serialized to JSON, as the API answers), and
    the queries one read ran."""
    with counting(store) as statements:
        orjson.dumps(read(), default=str)
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        orjson.dumps(read(), default=str)
        seconds.append(time.perf_counter() - started)
    return {"median_s": statistics.median(seconds), "queries": len(statements)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connectors", type=int, default=500)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--metadata-url", help="an empty database (default: SQLite in a temp dir)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        url = args.metadata_url or f"sqlite:///{folder}/metadata.db"
        store = MetadataStore(url, migrate=True)
        try:
            populate(store, args.connectors, args.tasks)
            figures = {
                "connectors": args.connectors,
                "tasks": args.connectors * args.tasks,
                "overview": measure(lambda: connectors_overview(store), store, args.runs),
                "per connector": measure(lambda: per_connector(store), store, args.runs),
            }
        finally:
            store.close()
    print(table(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return figures


def table(figures: dict[str, Any]) -> str:
    ours = figures["overview"]["median_s"]
    return ratio_table(
        f"Reading {figures['connectors']} connectors with {figures['tasks']} tasks "
        "(the Connectors page, `bench/ui_overview.py`)",
        ["read", "median", "queries", "time vs overview"],
        [
            [
                name,
                f"{figures[name]['median_s'] * 1000:,.0f} ms",
                str(figures[name]["queries"]),
                f"{figures[name]['median_s'] / ours:.1f}x",
            ]
            for name in ("overview", "per connector")
        ],
    )


if __name__ == "__main__":
    main()
