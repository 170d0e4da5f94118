"""The converters of a task, chosen as Kafka Connect chooses them: the connector's own
``key.converter``/``value.converter``/``header.converter`` with its ``<name>.*`` keys, else
the worker's with the worker's keys."""

from __future__ import annotations

from typing import NamedTuple

from airflow_provider_connect.connect.config import originals_with_prefix
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.storage import Converter, HeaderConverter
from airflow_provider_connect.runtime.worker_config import WorkerConfig


class TaskConverters(NamedTuple):
    key: Converter
    value: Converter
    header: HeaderConverter


def _configured(name: str, connector_config: dict[str, str], worker: WorkerConfig) -> object:
    source = connector_config if connector_config.get(name) else worker.originals
    cls = load_class(source[name]) if source is connector_config else worker[name]
    instance = cls()
    configs = originals_with_prefix(source, f"{name}.")
    if name == "header.converter":
        instance.configure(configs)
    else:
        instance.configure(configs, name == "key.converter")
    return instance


def task_converters(connector_config: dict[str, str], worker: WorkerConfig) -> TaskConverters:
    return TaskConverters(
        _configured("key.converter", connector_config, worker),  # type: ignore[arg-type]
        _configured("value.converter", connector_config, worker),  # type: ignore[arg-type]
        _configured("header.converter", connector_config, worker),  # type: ignore[arg-type]
    )
