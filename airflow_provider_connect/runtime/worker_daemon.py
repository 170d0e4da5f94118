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
"""

import gc

from pyspark.daemon import manager

import airflow_provider_connect.runtime.task_runner  # noqa: F401  preloaded for the workers

YOUNG_COLLECTION_THRESHOLD = 50_000  # tracked objects; a file source polls 2,000 lines

if __name__ == "__main__":
    gc.freeze()  # objects imported so far are never scanned, so their pages stay shared
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
    manager()
