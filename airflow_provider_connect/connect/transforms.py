"""Single message transformations and predicates (KIP-66, KIP-585), as
``org.apache.kafka.connect.transforms.Transformation`` and ``…transforms.predicates.Predicate``.

A connector's ``transforms`` lists aliases; ``transforms.<alias>.type`` names a
:class:`Transformation` and the rest of ``transforms.<alias>.*`` configures it. A
transformation applies to every record, or, with ``transforms.<alias>.predicate`` naming an
alias of ``predicates`` (``predicates.<alias>.type`` and its keys), only to the records the
:class:`Predicate` matches (``transforms.<alias>.negate``: that it does not match).

The chain runs in the order of ``transforms``: on a source path after ``poll`` and before
conversion, on a sink path after conversion and before ``put``. Register a plugin under the
``airflow_provider_connect.transforms`` or ``airflow_provider_connect.predicates`` entry-point
group (see :mod:`airflow_provider_connect.connect.plugins`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from airflow_provider_connect.connect.config import ConfigDef
from airflow_provider_connect.connect.connector import ConnectRecord

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    """Changes, routes or drops one record at a time.

    Lifecycle: the runtime instantiates the class (no arguments), calls :meth:`configure`
    exactly once with the alias's keys (prefix stripped), then, when the transformation is
    :class:`~airflow_provider_connect.connect.metrics.Monitorable`, ``with_plugin_metrics``
    exactly once (metrics tagged ``connector``, ``task``, ``transformation=<alias>``), then
    :meth:`apply` for each record on one task's thread, and :meth:`close` exactly once when
    the task stops.
    """

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once, before any ``apply``, with the ``transforms.<alias>.`` keys."""

    @abstractmethod
    def apply(self, record: R) -> R | None:
        """The transformed record (possibly ``record`` itself), or None to drop it.

        Must not change ``record`` nor anything reachable from it (headers, structs, lists,
        dicts): build a new record with :meth:`ConnectRecord.new_record` instead.
        """

    @abstractmethod
    def config(self) -> ConfigDef:
        """The definition of this transformation's keys, for validation."""

    def close(self) -> None:
        """Called once when the task stops; no ``apply`` comes after it."""


class Predicate(ABC, Generic[R]):
    """Decides whether a transformation applies to a record.

    Lifecycle as :class:`Transformation`: ``configure`` once with the
    ``predicates.<alias>.`` keys, ``with_plugin_metrics`` once when it is
    :class:`~airflow_provider_connect.connect.metrics.Monitorable` (tagged ``connector``,
    ``task``, ``predicate=<alias>``), ``test`` per record, ``close`` once.
    """

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once, before any ``test``, with the ``predicates.<alias>.`` keys."""

    @abstractmethod
    def test(self, record: R) -> bool:
        """Whether ``record`` satisfies the predicate; must not change it."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The definition of this predicate's keys, for validation."""

    def close(self) -> None:
        """Called once when the task stops; no ``test`` comes after it."""
