"""A sink connector's coordination channel: durable messages its tasks exchange (a project
extension; Kafka Connect has no such thing, Apache Iceberg's sink uses a control topic).

The runtime implements :class:`TaskChannel` on its metadata database and offers one to each
sink task through ``SinkTaskContext.channel()``; the test harness offers an in-memory one
(:class:`~airflow_provider_connect.connect.testing.InMemoryChannels`). Every task of a
connector sees the same messages, whatever their generation: a message stays until some task
removes it, or until the connector is deleted (after its tasks' ``stop(connector_deleted=True)``
ran). Pausing, resuming, restarting and reconfiguring the connector keep them.

Writes are fenced: ``send`` and ``remove`` change nothing and raise :class:`FencedException`
once the calling run is no longer its task's current run (a restart, a rebalance of runs or a
reassignment started another) or its generation is no longer the connector's latest (the
connector was reconfigured). The check and the write are one atomic step, so a run superseded
while it writes cannot slip a write in after its successor started.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import dataclass

from airflow_provider_connect.connect.errors import ConnectException


@dataclass(frozen=True)
class ChannelMessage:
    """One message as sent: its id (ids grow with every send of the connector), the task and
    generation of the run that sent it, its kind (the sender's label, used to filter) and its
    payload."""

    id: int
    task_id: int
    generation: int
    kind: str
    payload: bytes


class FencedException(ConnectException):
    """This run is no longer its task's current run: a newer run of the task, or a newer
    generation of the connector's task configs, has started. The run should stop writing
    (its successor takes over)."""


class TaskChannel(ABC):
    """The channel as one run of one task sees it (``task_id`` of ``generation``).

    Calls are synchronous and each is one short transaction; an unreachable store raises
    :class:`~airflow_provider_connect.connect.errors.RetriableException` (the outcome of a
    write that raised it is unknown), and nothing is retried for the caller.
    Payloads of a few MB are fine; the channel is not for bulk data.
    """

    task_id: int
    generation: int

    @abstractmethod
    def send(self, kind: str, payload: bytes) -> int:
        """Appends a message; returns its id, greater than every id sent before it by the
        connector's tasks. Raises :class:`FencedException`, having appended nothing, unless
        this run is its task's current run of the connector's latest generation."""

    @abstractmethod
    def messages(self, kinds: Collection[str] | None = None) -> list[ChannelMessage]:
        """Every message of the connector (of every task and generation) not removed yet, of
        the given kinds (all when None), in id order. Not fenced. A message whose send has
        not returned yet may show up after messages of higher ids did."""

    @abstractmethod
    def remove(self, ids: Collection[int]) -> None:
        """Removes the connector's messages with these ids (ids not there are ignored), all
        at once. Fenced as :meth:`send` is: raises :class:`FencedException`, having removed
        nothing, unless this run is current."""

    @abstractmethod
    def check_current(self) -> None:
        """Raises :class:`FencedException` unless this run is its task's current run of the
        connector's latest generation (as of the call: a later write may still be fenced)."""
