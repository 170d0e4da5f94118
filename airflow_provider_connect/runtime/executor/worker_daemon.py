"""The PySpark daemon of the runtime's executors (``spark.python.daemon.module``).

PySpark's daemon forks one Python worker per running Spark task, and each task run of the
runtime is a long-lived Spark task. This daemon imports the task runtime once, before any
fork, and freezes the garbage collector's view of those objects, so that every worker
shares their pages instead of importing its own copy: with tens of tasks per executor that
is most of the workers' memory. Importing the task runtime starts no thread (forking
requires none); clients and their threads are created in the workers only.

The workers inherit a first-generation threshold far above any poll's size. A task loop
allocates a poll's records together and frees them together once they are produced (or
written); with Python's default threshold of 700, every poll of more than 700 records runs
young collections that walk the live records and promote them, and the promoted records
bring on full collections. Above a poll's size, reference counting frees the records before
a collection sees them; cyclic garbage is still collected, after more allocations.

The workers also keep the pages of their C heap (``keep_heap_pages``): a poll's produced
copies and buffers are allocated and freed by the megabyte, and glibc gives the top of the
heap back to the system whenever more than 128 KiB of it is free, to take a page fault for
every page when it grows again: with four tasks on two cores, 1,000 to 14,000 faults a
second per worker.
"""

import ctypes
import gc

from pyspark.daemon import manager

import airflow_provider_connect.runtime.executor.task_runner  # noqa: F401  preloaded for workers

YOUNG_COLLECTION_THRESHOLD = 50_000  # tracked objects; a file source polls 2,000 lines
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20  # glibc's own upper bound when it adjusts the threshold itself
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # glibc's rule when it adjusts the two itself


def keep_heap_pages() -> None:
    """Fixes glibc's thresholds where its own adjustment would end, so that a process keeps
    up to 64 MiB of free heap rather than 128 KiB (and allocations under 32 MiB come from
    the heap). Its peak memory barely moves (64 tasks: the task workers 5.60 → 5.74 GiB).
    Does nothing without glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except AttributeError:
        return
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)


if __name__ == "__main__":
    keep_heap_pages()  # inherited by every forked worker
    gc.freeze()  # objects imported so far are never scanned, so their pages stay shared
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
    manager()
