"""The metadata database away mid-stream: a ``FileStreamSource`` → topic → ``FileStreamSink``
pipeline on ``connect-runtime standalone`` with a PostgreSQL metadata database of its own (a
private cluster), fed at a steady rate (:data:`RATE`), while the database crashes (``pg_ctl
stop -m immediate``, restarted after the fault) or hangs (every server process SIGSTOPped,
resumed after it).

For each window (the database up, then each fault) it measures the lines that reached the
sink file, every REST answer (``GET /connectors`` and ``GET /health`` in turn: status,
latency) and, after a fault, how long until every task is RUNNING again; at the end every
line is counted in the sink file (a line there went through the topic). When the benchmark started the broker, a last window
freezes it (SIGSTOP) for as long, longer than the sink's consumer session: the data waits
for Kafka, and the window shows the recovery. ``tests/integration/runtime/test_faults.py`` runs it
short; ``make bench`` runs it with 60 s faults and reports the ratio of the lines moved
during each fault to the lines moved with the database up, in as long a window of the same
run.

    python -m bench.store_outage [--fault-s 60] [--runs 1]   (--runs: rounds of both faults)
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import command_line, ratio_table
from tests_common.broker import EmbeddedBroker
from tests_common.postgres_cluster import PostgresCluster, unavailable_reason
from tests_common.store_outage import RATE, Drill


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 1)


@contextmanager
def _broker(bootstrap: str | None) -> Iterator[tuple[str, EmbeddedBroker | None]]:
    """``bootstrap`` when given (not frozen: not ours), else a broker started here."""
    if bootstrap:
        yield bootstrap, None
        return
    with EmbeddedBroker() as embedded:
        yield embedded.bootstrap_servers, embedded


def measure(fault_s: int, rounds: int, bootstrap: str | None) -> dict[str, Any]:
    """The benchmark: lines/s during each fault against the database up, in one run."""
    reason = unavailable_reason()
    if reason is not None:
        return {"fault_s": fault_s, "skipped": reason}
    with (
        _broker(bootstrap) as (servers, embedded),
        PostgresCluster() as cluster,
        tempfile.TemporaryDirectory() as folder,
    ):
        outcome = Drill(servers, Path(folder), cluster, broker=embedded).run(fault_s, rounds)
    up = outcome.windows[0].rate
    return {
        "fault_s": fault_s,
        "windows": [
            {
                "window": w.name,
                "lines_per_s": round(w.rate),
                "ratio": round(w.rate / up, 2),
                "rest_statuses": sorted({status for status, _, _ in w.rest}),
                "rest_slowest_s": round(max(latency for _, latency, _ in w.rest), 2),
                "running_after_s": _rounded(w.running_after_s),
                "caught_up_after_s": _rounded(w.caught_up_after_s),
            }
            for w in outcome.windows
        ],
        "written": outcome.written,
        "lost": outcome.lost,
        "sink_twice": outcome.sink_twice,
    }


def table(results: dict[str, Any]) -> str:
    title = (
        f"The metadata database away for {results['fault_s']} s mid-stream (PostgreSQL, "
        f"FileStreamSource → FileStreamSink fed {RATE} lines/s)"
    )
    if "skipped" in results:
        return f"{title}\n\nNot measured: {results['skipped']}"
    rows = [
        [
            w["window"],
            str(w["lines_per_s"]),
            f"{w['ratio']:.2f}x",
            "/".join(map(str, w["rest_statuses"])),
            f"{w['rest_slowest_s']:.2f}",
            "" if w["running_after_s"] is None else f"{w['running_after_s']:.1f}",
            "" if w["caught_up_after_s"] is None else f"{w['caught_up_after_s']:.1f}",
        ]
        for w in results["windows"]
    ]
    footer = (
        f"\n\n{results['written']} lines written, {results['lost']} lost, "
        f"{results['sink_twice']} written twice to the sink."
    )
    header = ["window", "lines/s to the sink", "vs up", "REST", "slowest REST answer, s"]
    after = ["all RUNNING after, s", "sink caught up after, s"]
    return ratio_table(title, [*header, *after], rows) + footer


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--fault-s", 60), measure, table, runs=1)


if __name__ == "__main__":
    main()
