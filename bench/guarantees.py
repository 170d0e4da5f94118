"""What exactly-once costs: the file source path at-least-once beside exactly-once.

The same workload each time, in one process, on the embedded broker and local Spark: a file
of JSON lines of about 100 bytes is copied into a new topic by ``FileStreamSource``
(``StringConverter``); records/s between the first and the last commit before the end: a
committed offset is the moment its records are durably (and, exactly-once, visibly) in
Kafka under each guarantee. With a commit (or a transaction) a second, a run must last
several seconds (4,000,000 lines by default): runs of about a second measured anywhere
between half and all of the steady rate. Variants:

* at-least-once: offsets committed to the metadata store every second, after a flush;
* exactly-once, ``transaction.boundary=poll``: one transaction per poll (2,000 lines);
* exactly-once, ``transaction.boundary=interval`` (1 s): fewer, larger transactions.

Each figure is the median of ``--runs`` runs, with min and max; the ratio is exactly-once's
throughput over at-least-once's. For the exactly-once variants the table also gives how many
transactions a run committed (median), counted from the COMMIT markers in the topic's log:
a rate between the first and the last commit measures a steady state only when a run
commits many transactions, as its boundary says it should.

    python -m bench.guarantees [--lines N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import statistics
import tempfile
import uuid
from functools import partial
from pathlib import Path
from typing import Any

from airflow_provider_connect.runtime.executor.committed_log import CommittedLogReader
from bench.common import (
    broker,
    command_line,
    connector_run,
    files_progress,
    interleaved,
    new_topic,
    rate,
    ratio_table,
    write_json_lines,
)

VARIANTS: dict[str, dict[str, str]] = {
    "at-least-once": {},
    "exactly-once (poll)": {"transaction.boundary": "poll"},
    "exactly-once (interval 1 s)": {
        "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "1000",
    },
}


def committed_transactions(bootstrap: str, topic: str, lines: int) -> int:
    """How many transactions were committed into ``topic``'s one partition; raises unless
    they hold every line, once (what a timed run's last commit claims)."""
    reader = CommittedLogReader({"bootstrap.servers": bootstrap})
    try:
        sizes = reader.committed_transactions(topic, 0)
    finally:
        reader.close()
    if sum(sizes) != lines:
        raise RuntimeError(f"{topic} holds {sum(sizes):,} committed records, not {lines:,}")
    return len(sizes)


def variant_records_per_s(
    worker: dict[str, str],
    folder: Path,
    path: Path,
    lines: int,
    name: str,
    transactions: dict[str, list[int]],
) -> float:
    """One run's records/s; an exactly-once run's count of transactions is appended to
    ``transactions[name]``."""
    props = dict(worker)
    if name != "at-least-once":
        props["exactly.once.source.support"] = "enabled"
        props["offset.storage.topic"] = f"offsets-{uuid.uuid4().hex[:8]}"
        props["offset.storage.partitions"] = "1"
    config = {
        "connector.class": "FileStreamSource",
        "file": str(path),
        "topic": new_topic(worker["bootstrap.servers"]),  # one partition: one log to count
        "value.converter": "StringConverter",
        **VARIANTS[name],
    }
    run = connector_run(props, folder, config, lines, files_progress([path]))
    if name != "at-least-once":
        count = committed_transactions(worker["bootstrap.servers"], config["topic"], lines)
        transactions.setdefault(name, []).append(count)
    return run.records_per_s


def measure(lines: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    with broker(bootstrap) as servers, tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path = folder / "input.jsonl"
        write_json_lines(path, 0, lines)
        worker = {"bootstrap.servers": servers, "offset.flush.interval.ms": "1000"}
        transactions: dict[str, list[int]] = {}
        figures = interleaved(
            {
                variant: partial(
                    variant_records_per_s, worker, folder, path, lines, variant, transactions
                )
                for variant in VARIANTS
            },
            runs,
        )
        base = figures["at-least-once"]["median"]
        for name, figure in figures.items():
            figure["ratio"] = figure["median"] / base
            if name in transactions:
                figure["transactions"] = statistics.median(transactions[name])
        return {"lines": lines, "runs": runs, "records_per_s": figures}


def table(results: dict[str, Any]) -> str:
    rows = [
        [
            name,
            rate(f),
            f"{f['ratio']:.2f}x",
            f"{f['transactions']:,.0f}" if "transactions" in f else "-",
        ]
        for name, f in results["records_per_s"].items()
    ]
    return ratio_table(
        f"Guarantees: file source, {results['lines']:,} lines, median of {results['runs']} "
        "runs (min to max)",
        ["guarantee", "records/s", "vs at-least-once", "transactions a run"],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--lines", 4_000_000), measure, table)


if __name__ == "__main__":
    main()
