"""The executor's side of the task contexts. The contexts themselves are the connector API's
(:class:`~airflow_provider_connect.connect.source.SimpleSourceTaskContext`,
:class:`~airflow_provider_connect.connect.sink.SimpleSinkTaskContext`), the same the test
harness gives; the runtime fills them with what only it has: the store's offset reader and
a sink's coordination channel here, the offsets topic's reader and the transaction context in ``exactly_once.py``, the
errant record reporter in ``errors.py`` (the connector context is the driver's, in
``driver/connector_context.py``)."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

from airflow_provider_connect.connect.channel import ChannelMessage, TaskChannel
from airflow_provider_connect.connect.errors import RetriableException
from airflow_provider_connect.connect.source import OffsetStorageReader
from airflow_provider_connect.store import ChannelRun, ChannelStore, OffsetStore, StoreUnavailable


class StoreOffsetReader(OffsetStorageReader):
    """Reads a connector's committed source offsets from the metadata store."""

    def __init__(self, offsets: OffsetStore, connector: str) -> None:
        self.offset_store = offsets
        self.connector = connector

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.offset_store.source_offset(self.connector, partition)


class StoreTaskChannel(TaskChannel):
    """A sink task run's coordination channel on the metadata store, bound to the run
    (``ChannelStore`` holds the guarantees). Each call is one transaction on the caller's
    thread; an unreachable store raises ``RetriableException`` (naming the cause) to the
    caller."""

    def __init__(self, channels: ChannelStore, run: ChannelRun) -> None:
        self.channels = channels
        self.run = run
        self.task_id = run.task_id
        self.generation = run.generation

    def send(self, kind: str, payload: bytes) -> int:
        with _retriable():
            return self.channels.send(self.run, kind, payload)

    def messages(self, kinds: Collection[str] | None = None) -> list[ChannelMessage]:
        with _retriable():
            return self.channels.messages(self.run.connector, kinds)

    def remove(self, ids: Collection[int]) -> None:
        with _retriable():
            self.channels.remove(self.run, ids)

    def check_current(self) -> None:
        with _retriable():
            self.channels.check_current(self.run)


@contextmanager
def _retriable() -> Iterator[None]:
    """The store's ``StoreUnavailable`` as the connector API's ``RetriableException``."""
    try:
        yield
    except StoreUnavailable as e:
        raise RetriableException(str(e)) from e
