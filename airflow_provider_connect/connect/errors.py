"""The exceptions of the connector API, as in ``org.apache.kafka.connect.errors``."""

from __future__ import annotations


class ConnectException(Exception):
    """Base class of every error raised by the framework or by a connector."""


class DataException(ConnectException):
    """A value does not fit its schema, or bytes cannot be converted to or from Connect data.

    Raised on the per-record path. On the sink path the runtime applies
    ``errors.tolerance`` to it; on the source path it fails the task.
    """


class SchemaBuilderException(DataException):
    """A :class:`~airflow_provider_connect.connect.data.SchemaBuilder` call is invalid."""


class SchemaProjectorException(DataException):
    """A value cannot be projected from its schema onto a target schema."""


class RetriableException(ConnectException):
    """A failure that may succeed if the same operation is tried again.

    A task raises it from ``poll``/``put``/``flush`` to ask the runtime to retry the call
    (after ``context.timeout(ms)`` for sinks) instead of failing the task.
    """


class ConfigException(ConnectException):
    """A configuration value is missing or invalid.

    ``name`` is the offending key when there is one. Messages of invalid values follow
    Kafka's form, ``Invalid value X for configuration NAME: reason`` (see :meth:`invalid`);
    callers render password values as ``[hidden]``.
    """

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name

    @classmethod
    def invalid(cls, name: str, value: object, reason: str | None = None) -> ConfigException:
        """The error for ``value`` given to ``name``; ``reason`` says what was expected."""
        text = f"Invalid value {value} for configuration {name}"
        return cls(f"{text}: {reason}" if reason else text, name=name)


class NotFoundException(ConnectException):
    """The named connector, task or plugin does not exist (REST 404)."""


class AlreadyExistsException(ConnectException):
    """A connector with that name exists already, or is still being deleted (REST 409)."""
