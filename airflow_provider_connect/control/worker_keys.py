"""The worker config keys that the Airflow side reads or writes as well as the runtime:
``ConnectRuntimeSubmitOperator`` puts the connection's ``metadata.url`` into the worker
config it submits and turns its ``spark.*`` keys into spark-submit ``conf``. The runtime's
``worker_config`` defines every key (these among them) and parses them."""

from __future__ import annotations

METADATA_URL = "metadata.url"
"""The SQLAlchemy URL of the metadata database."""

SPARK_PREFIX = "spark."
"""The prefix of the keys passed to the SparkSession (or to spark-submit)."""
