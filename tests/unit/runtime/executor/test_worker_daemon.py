"""The task workers' daemon: what it sets up before forking workers."""

from __future__ import annotations

import subprocess
import sys

CHURN = """
import resource, sys
if sys.argv[1] == "keep":
    from airflow_provider_connect.runtime.executor.worker_daemon import keep_heap_pages
    keep_heap_pages()

def faults_of_a_poll():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    held = [bytes(1000) for _ in range(16_000)]  # 16 MB from malloc's heap, as a poll's copies
    del held
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

faults_of_a_poll()  # the heap grows to its peak once
print(max(faults_of_a_poll() for _ in range(3)))
"""


def faults_per_poll(mode: str) -> int:
    result = subprocess.run(
        [sys.executable, "-c", CHURN, mode], capture_output=True, text=True, check=True
    )
    return int(result.stdout)


def test_a_worker_keeps_its_heap_pages_between_polls() -> None:
    """Once the heap has grown to a poll's size, the next polls take (almost) no page fault
    with the daemon's allocator settings; with glibc's defaults each poll faults its 16 MB
    in again (about 4,000 pages)."""
    assert faults_per_poll("default") > 2_000
    assert faults_per_poll("keep") < 200
