"""The converters of a task, chosen as Kafka Connect chooses them: the connector's own
``key.converter``/``value.converter``/``header.converter`` with its ``<name>.*`` keys, else
the worker's with the worker's keys. A converter that is ``Monitorable`` gets its metrics
(tagged ``converter=key|value|header``) right after ``configure`` (KIP-877)."""

from __future__ import annotations

from typing import Any, NamedTuple

from airflow_provider_connect.connect.config import originals_with_prefix
from airflow_provider_connect.connect.metrics import Monitorable
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.storage import Converter, HeaderConverter
from airflow_provider_connect.runtime.executor.task_metrics import PluginMetricsFactory
from airflow_provider_connect.runtime.worker_config import WorkerConfig


class TaskConverters(NamedTuple):
    key: Converter
    value: Converter
    header: HeaderConverter


def _plugin(
    name: str, connector_config: dict[str, str], worker: WorkerConfig
) -> tuple[type, dict[str, Any]]:
    """The class the connector (else the worker) names for ``name``, and its ``name.*`` keys."""
    source = connector_config if connector_config.get(name) else worker.originals
    cls = load_class(source[name]) if source is connector_config else worker[name]
    return cls, originals_with_prefix(source, f"{name}.")


def task_converters(
    connector_config: dict[str, str], worker: WorkerConfig, metrics: PluginMetricsFactory
) -> TaskConverters:
    key_class, key_configs = _plugin("key.converter", connector_config, worker)
    value_class, value_configs = _plugin("value.converter", connector_config, worker)
    header_class, header_configs = _plugin("header.converter", connector_config, worker)
    key: Converter = key_class()
    key.configure(key_configs, True)
    value: Converter = value_class()
    value.configure(value_configs, False)
    header: HeaderConverter = header_class()
    header.configure(header_configs)
    for role, converter in (("key", key), ("value", value), ("header", header)):
        if isinstance(converter, Monitorable):
            converter.with_plugin_metrics(metrics(converter=role))
    return TaskConverters(key, value, header)
