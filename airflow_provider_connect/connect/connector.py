"""Connectors, tasks and records, as ``org.apache.kafka.connect.connector``.

A :class:`Connector` divides a job into task configurations; each :class:`Task` moves one
share of the data. Subclass :class:`~airflow_provider_connect.connect.source.SourceConnector`
or :class:`~airflow_provider_connect.connect.sink.SinkConnector` and their tasks, never these
classes directly. Base classes take no constructor arguments: the runtime instantiates them
and then calls ``initialize``.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from airflow_provider_connect.connect.data.schema import Schema
from airflow_provider_connect.connect.header import Header, Headers
from airflow_provider_connect.connect.metrics import PluginMetrics, own_plugin_metrics

if TYPE_CHECKING:
    from airflow_provider_connect.connect.config import Config, ConfigDef
    from airflow_provider_connect.connect.datasets import ConnectorData


_Record = TypeVar("_Record", bound="ConnectRecord")


class ConnectRecord:
    """What every record has: its Kafka topic and partition, key and value with their
    schemas, a timestamp (milliseconds since the epoch) and headers.

    ``kafka_partition`` None lets the producer choose the partition (by key).
    """

    __slots__ = (
        "_headers",
        "kafka_partition",
        "key",
        "key_schema",
        "timestamp",
        "topic",
        "value",
        "value_schema",
    )

    def __init__(
        self,
        topic: str,
        partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | Iterable[Header | tuple[str, Any]] | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = (
            headers if headers is None or isinstance(headers, Headers) else Headers(headers)
        )

    @property
    def headers(self) -> Headers:
        """The record's headers (created empty on first access)."""
        if self._headers is None:
            self._headers = Headers()
        return self._headers

    def new_record(
        self: _Record,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
        headers: Headers | Iterable[Header | tuple[str, Any]] | None = None,
    ) -> _Record:
        """A record of the same kind with these parts and everything else of this one (as
        Kafka's ``newRecord``); ``headers`` None copies this record's headers. This is how a
        transformation changes a record without changing the one it was given."""
        return type(self)(
            topic,
            kafka_partition,
            key_schema,
            key,
            value_schema,
            value,
            timestamp,
            self._headers_for_copy(headers),
        )

    def _headers_for_copy(
        self, headers: Headers | Iterable[Header | tuple[str, Any]] | None
    ) -> Headers | None:
        """The headers of a record made by :meth:`new_record`: ``headers`` as Headers, else
        a copy of this record's (none made when it has none)."""
        if headers is None:
            return None if not self._headers else self._headers.copy()
        return headers if isinstance(headers, Headers) else Headers(headers)

    def _core(self) -> tuple[Any, ...]:
        return (
            self.topic,
            self.kafka_partition,
            self.key_schema,
            self.key,
            self.value_schema,
            self.value,
            self.timestamp,
            list(self._headers or ()),
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ConnectRecord)
            and type(self) is type(other)
            and (self._core() == other._core())
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable: mutable, compared by value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(topic={self.topic!r}, partition={self.kafka_partition}, "
            f"key={self.key!r}, value={self.value!r}, timestamp={self.timestamp})"
        )


class ConnectorContext(ABC):
    """What a connector can ask of the runtime. Implemented by the runtime."""

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Asks the runtime to call ``task_configs`` again and restart the tasks with the result
        if it differs (for example when the source system gained tables). Any thread may call it."""

    @abstractmethod
    def raise_error(self, error: Exception) -> None:
        """Reports an error the connector cannot recover from, from any thread: the connector
        is marked FAILED with the error's trace and its tasks are stopped."""

    def plugin_metrics(self) -> PluginMetrics:
        """The connector's metrics (KIP-877), tagged ``connector=<name>``; the same object at
        every call, usable from any thread from ``initialize`` until ``stop`` returns, after
        which the runtime removes them. A context the runtime did not make (a test's) answers
        an untagged :class:`~airflow_provider_connect.connect.metrics.SimplePluginMetrics`
        of its own."""
        return own_plugin_metrics(self)


class Connector(ABC):
    """Divides a job into task configurations; does not move data itself.

    Lifecycle, driven by the runtime on one thread: ``initialize`` once, then ``start``,
    then any number of ``task_configs`` and ``validate`` calls, then ``stop`` exactly once.
    A reconfiguration stops this instance and starts a new one.
    """

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        """Called once, before ``start``; keeps the context as ``self.context``."""
        self.context = context

    @abstractmethod
    def version(self) -> str:
        """The connector's version, shown by the REST API."""

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Starts the connector with its configuration (string values, as submitted)."""

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The :class:`Task` subclass that runs this connector's work."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """At most ``max_tasks`` task configurations, one per task to run."""

    def stop(self, is_deleted: bool = False) -> None:
        """Stops the connector; called exactly once per started instance.

        ``is_deleted`` (KIP-883) is true only when the connector is stopped because it was
        deleted, so it can drop what it provisioned; pause, stop, reconfiguration and runtime
        shutdown pass false. A subclass may override ``stop(self)`` with no argument: the
        runtime then calls it without the flag (see :func:`call_stop`).
        """

    @abstractmethod
    def config(self) -> ConfigDef:
        """The definition of this connector's own configuration."""

    def validate(self, connector_configs: dict[str, str]) -> Config:
        """Validates a configuration before it is used; by default against :meth:`config`.

        Override to add checks that span several keys; add errors to the returned values.
        """
        from airflow_provider_connect.connect.config import Config

        return Config(self.config().validate(connector_configs))

    def datasets(self, config: Mapping[str, str], cluster: str | None) -> ConnectorData | None:
        """What a ``config`` of this connector reads and writes
        (:mod:`airflow_provider_connect.connect.datasets`), for the Airflow assets and the
        OpenLineage datasets of its operators; None (the default) when the connector does
        not say, and then its ``topics`` are what it reads, when set (a sink).

        Called on an instance that is neither initialized nor started, when a DAG is parsed:
        read only ``config`` (never a database or a broker), and leave out what it leaves
        open. ``cluster`` is the Kafka cluster the runtime's topics are on
        (:func:`~airflow_provider_connect.connect.datasets.kafka_cluster`), None when
        unknown. Reading a value that holds a Jinja template or a config provider's
        placeholder raises: the config then has no datasets until it is rendered.
        """
        return None


class Task(ABC):
    """Moves one share of a connector's data. See the source and sink task classes."""

    @abstractmethod
    def version(self) -> str:
        """The task's version, usually its connector's."""

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Starts the task with one of the connector's task configurations."""

    def stop(self, connector_deleted: bool = False) -> None:
        """Signals the task to stop.

        ``connector_deleted`` (KIP-901) is true only when the task stops because its
        connector was deleted, so it can drop what it provisioned (queues, audit tables,
        triggers, accounts); reconfiguration, pause, stop, rebalance and runtime shutdown
        pass false. A subclass may override ``stop(self)`` with no argument: the runtime
        then calls it without the flag (see :func:`call_stop`).
        """


def call_stop(component: Connector | Task, deleted: bool) -> None:
    """Calls ``component.stop`` with the deleted flag when its ``stop`` takes one.

    This is how the runtime stops every connector and task, so implementations of either
    signature work: ``stop(self)`` (the flag is not passed) and ``stop(self, deleted)``.
    """
    stop = component.stop
    if _takes_an_argument(stop):
        stop(deleted)
    else:
        stop()


def _takes_an_argument(method: Any) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume the new form
        return True
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params
    )
