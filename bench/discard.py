"""A sink that keeps nothing: what a benchmark of a sink path measures with it is the path
itself (consume, convert, put, commit), none of a destination's work."""

from __future__ import annotations

from airflow_provider_connect.connect.config import ConfigDef
from airflow_provider_connect.connect.connector import Task
from airflow_provider_connect.connect.sink import SinkConnector, SinkRecord, SinkTask


class DiscardSinkConnector(SinkConnector):
    def version(self) -> str:
        return "bench"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return DiscardSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def config(self) -> ConfigDef:
        return ConfigDef()


class DiscardSinkTask(SinkTask):
    def version(self) -> str:
        return "bench"

    def start(self, props: dict[str, str]) -> None:
        """Nothing to open."""

    def put(self, records: list[SinkRecord]) -> None:
        """Drops the records; their offsets commit as any sink's."""
