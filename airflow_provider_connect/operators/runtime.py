"""``ConnectRuntimeSubmitOperator``: the Connect runtime (``connect-runtime serve``) as a
Spark application, submitted with the Spark provider's ``SparkSubmitOperator``.

The task runs as long as the runtime does: its driver runs the herder and the REST API, its
executors the connectors' tasks. Wait for it with ``ConnectRuntimeSensor`` in a parallel
task. Several such tasks may run against one metadata database: one driver holds the herder
lease and runs the connectors, the others stand by and take over when it stops or dies,
which is also how the runtime is upgraded (start the new one, stop the old one).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Context
from airflow.sdk.log import mask_secret
from jproperties import Properties

import airflow_provider_connect
from airflow_provider_connect.control.worker_keys import METADATA_URL, SPARK_PREFIX
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import load_config

RUNTIME_ENTRY = str(
    Path(airflow_provider_connect.__file__).parent / "runtime" / "entry" / "connect_runtime.py"
)
"""The spark-submit application: the runtime's entry script, as installed."""

SPARK_MASTER = "spark.master"
DEFAULT_STOP_TIMEOUT_S = 60.0


class ConnectRuntimeSubmitOperator(SparkSubmitOperator):
    """Submits the Connect runtime to the master of the Spark connection ``conn_id`` and
    runs until it stops.

    * Worker config: ``worker_config_file`` (Java ``.properties`` or ``.json``, relative to
      the DAG's folder) overlaid with ``worker_config``. Its ``metadata.url`` comes from the
      ``connect_conn_id`` connection (a different one in the worker config is refused, so
      sensors and operators on that connection watch this runtime). It reaches the driver
      as a file readable by the task's user alone (shipped with ``--files`` in cluster deploy
      mode), removed when the task ends; it never appears on the command line.
    * Spark: the worker config's ``spark.*`` keys become spark-submit ``conf`` (``conf``
      wins; ``spark.master`` is the Spark connection's). The executors' and the driver's
      Python is ``python`` (default: this interpreter), which must have this provider
      installed.
    * ``on_kill`` stops the driver as ``SIGTERM`` does: every task stops gracefully, offsets
      are committed and the lease is released for a standby, within ``stop_timeout``
      seconds; then the Spark provider's kill ends what is left. In cluster deploy mode
      (YARN, Kubernetes) the driver is not local: the provider's kill alone applies.

    All other arguments are ``SparkSubmitOperator``'s.
    """

    template_fields: Sequence[str] = (
        *SparkSubmitOperator.template_fields,
        "worker_config",
        "worker_config_file",
    )
    ui_color = "#f4e1c1"

    def __init__(
        self,
        *,
        worker_config: dict[str, Any] | None = None,
        worker_config_file: str | None = None,
        connect_conn_id: str = ConnectHook.default_conn_name,
        python: str | None = None,
        stop_timeout: float = DEFAULT_STOP_TIMEOUT_S,
        application: str = RUNTIME_ENTRY,
        name: str = "connect-runtime",
        **kwargs: Any,
    ) -> None:
        super().__init__(application=application, name=name, **kwargs)
        self.worker_config = worker_config
        self.worker_config_file = worker_config_file
        self.connect_conn_id = connect_conn_id
        self.python = python or sys.executable
        self.stop_timeout = stop_timeout

    def execute(self, context: Context) -> None:
        config = self.runtime_worker_config(context)
        worker = {k: v for k, v in config.items() if not k.startswith(SPARK_PREFIX)}
        spark = {k: v for k, v in config.items() if k.startswith(SPARK_PREFIX)}
        if spark.pop(SPARK_MASTER, None) is not None:
            self.log.info(
                "Ignoring %s of the worker config: the Spark connection's wins", SPARK_MASTER
            )
        self.conf = {
            **spark,
            "spark.pyspark.python": self.python,
            "spark.pyspark.driver.python": self.python,
            **(self.conf or {}),
        }
        with tempfile.TemporaryDirectory(prefix="connect-runtime-") as folder:
            path = Path(folder) / "worker.properties"
            properties = Properties()
            properties.properties = worker
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                properties.store(file, encoding="utf-8", timestamp=False)
            self.application_args = ["serve", "--config", str(path)]
            self._hook = self._get_hook()
            if self._hook._connection["deploy_mode"] == "cluster":  # the driver runs elsewhere
                self.files = ",".join(filter(None, [self.files, str(path)]))
                self.application_args = ["serve", "--config", path.name]
                self._hook = self._get_hook()
            self.log.info("Submitting the Connect runtime %s", self.application)
            super().execute(context)

    def runtime_worker_config(self, context: Context) -> dict[str, str]:
        """The worker config, with the connection's metadata URL (``spark.*`` included)."""
        dag = context.get("dag")
        base_dir = Path(dag.fileloc).parent if dag is not None and dag.fileloc else None
        worker = load_config(self.worker_config, self.worker_config_file, base_dir, "worker")
        url = ConnectHook(self.connect_conn_id).metadata_url
        mask_secret(url)
        given = worker.get(METADATA_URL)
        if given is not None and given != url:
            raise ValueError(
                f"{METADATA_URL} in the worker config differs from the metadata database of "
                f"connection {self.connect_conn_id!r}: set it on the connection only"
            )
        return {**worker, METADATA_URL: url}

    def on_kill(self) -> None:
        driver = self._local_driver()
        if driver is not None:
            self.log.info("Stopping the Connect runtime's driver (pid %d) gracefully", driver.pid)
            driver.terminate()
            try:
                driver.wait(self.stop_timeout)
                # spark-submit follows its driver out; killed before that, it would fail
                # the task (exit -9) after a clean stop.
                self._hook._submit_sp.wait(self.stop_timeout)  # type: ignore[union-attr]
            except (psutil.TimeoutExpired, subprocess.TimeoutExpired):
                self.log.warning("The runtime did not stop within %ss", self.stop_timeout)
        super().on_kill()

    def _local_driver(self) -> psutil.Process | None:
        """The runtime's Python driver under this task's spark-submit (client deploy mode);
        None when there is none here."""
        submit = getattr(self._hook, "_submit_sp", None)
        if submit is None or submit.poll() is not None:
            return None
        try:
            children = psutil.Process(submit.pid).children(recursive=True)
        except psutil.Error:
            return None
        for child in children:
            with contextlib.suppress(psutil.Error):  # short-lived helpers come and go
                if self.application in child.cmdline():
                    return child
        return None
