"""The PySpark daemon of the runtime's executors (``spark.python.daemon.module``).

PySpark's daemon forks one Python worker per running Spark task, and each task run of the
runtime is a long-lived Spark task. This daemon imports the task runtime once, before any
fork, and freezes the garbage collector's view of those objects, so that every worker
shares their pages instead of importing its own copy: with tens of tasks per executor that
is most of the workers' memory. Importing the task runtime starts no thread (forking
requires none); clients and their threads are created in the workers only.
"""

import gc

from pyspark.daemon import manager

import airflow_provider_connect.runtime.task_runner  # noqa: F401  preloaded for the workers

if __name__ == "__main__":
    gc.freeze()  # objects imported so far are never scanned, so their pages stay shared
    manager()
