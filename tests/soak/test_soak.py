"""The soak (``make test-soak``; ``SOAK_MINUTES``, 60 unless set): ``tests_common.soak``'s two
pipelines for the whole run, a fault every 5 minutes (``SOAK_FAULT_EVERY_S``; kill -9 of the driver or an executor;
the metadata database crashed, frozen or cut off; the broker frozen or cut off, in turn),
then: every record arrived (each once in the exactly-once topics and in the table), every
fault was recovered from (every task RUNNING, both sinks caught up; the runs an executor's
kill ended are started again by the herder, as in the fault tests), and the runtime's memory
(RSS of the driver, its JVM, the executors and their Python workers), open files and threads
grew by 10 % at most from the 10th minute to the last. Writes ``results.json``,
``faults.md`` (the table per fault kind), ``soak.png`` (throughput and memory) and
``committed-reads.log`` (each fetch of the final reads of the topics, read twice) to
``SOAK_OUT`` (or the test's folder)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from airflow_provider_connect.runtime.executor import committed_log
from tests_common import netns
from tests_common.postgres_cluster import unavailable_reason
from tests_common.soak import Soak, SoakSettings, fault_table, growth, plot

pytestmark = [
    pytest.mark.integration,
    pytest.mark.soak,
    pytest.mark.skipif(
        (netns.unavailable_reason() or unavailable_reason()) is not None,
        reason=str(netns.unavailable_reason() or unavailable_reason()),
    ),
]
GROWTH_BOUND = 0.10


def test_an_hour_under_load_with_a_fault_every_five_minutes(tmp_path: Path) -> None:
    minutes = float(os.environ.get("SOAK_MINUTES", "60"))
    out = Path(os.environ.get("SOAK_OUT") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    every_s = float(os.environ.get("SOAK_FAULT_EVERY_S", "300"))
    settings = SoakSettings(minutes=minutes, fault_every_s=every_s)
    fetches = logging.FileHandler(out / "committed-reads.log", mode="w")  # the final reads'
    fetches.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    reader_log = logging.getLogger(committed_log.__name__)
    level = reader_log.level
    reader_log.addHandler(fetches)
    reader_log.setLevel(logging.DEBUG)
    try:
        with Soak(tmp_path, settings) as soak:
            outcome = soak.run()
    finally:
        reader_log.removeHandler(fetches)
        reader_log.setLevel(level)
        fetches.close()
    (out / "results.json").write_text(outcome.to_json())
    table = fault_table(outcome.faults)
    (out / "faults.md").write_text(table + "\n")
    plot(outcome, out / "soak.png")
    grew = {
        "memory (RSS)": growth(outcome.samples, minutes, lambda s: s.rss_bytes),
        "open files": growth(outcome.samples, minutes, lambda s: s.open_files),
        "threads": growth(outcome.samples, minutes, lambda s: s.threads),
    }
    print(table)
    print(
        f"{minutes:g} min: {outcome.lines} lines ({outcome.lines_lost} lost, "
        f"{outcome.lines_twice_in_topic} twice in the topic), {outcome.changes} changes "
        f"({outcome.changes_lost} lost, {outcome.changes_twice_in_topic} twice in the topic, "
        f"{outcome.changes_twice_in_file} twice in the file); growth from minute "
        f"{minutes / 6:g} to the last: "
        + ", ".join(f"{name} {ratio:+.1%}" for name, ratio in grew.items())
        + f"; written to {out}"
    )
    assert outcome.faults, "no fault ran: the soak is shorter than its first fault"
    assert all(f.recovered_s is not None for f in outcome.faults), table
    assert not outcome.reads_differ, "two reads of the topics differ: see committed-reads.log"
    assert outcome.lines_lost == outcome.changes_lost == 0
    assert outcome.lines_twice_in_topic == outcome.changes_twice_in_topic == 0
    assert all(ratio <= GROWTH_BOUND for ratio in grew.values()), grew
