"""The executor's side of the task contexts. The contexts themselves are the connector API's
(:class:`~airflow_provider_connect.connect.source.SimpleSourceTaskContext`,
:class:`~airflow_provider_connect.connect.sink.SimpleSinkTaskContext`), the same the test
harness gives; the runtime fills them with what only it has: the store's offset reader
here, the offsets topic's reader and the transaction context in ``exactly_once.py``, the
errant record reporter in ``errors.py`` (the connector context is the driver's, in
``driver/connector_context.py``)."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.source import OffsetStorageReader
from airflow_provider_connect.store import OffsetStore


class StoreOffsetReader(OffsetStorageReader):
    """Reads a connector's committed source offsets from the metadata store."""

    def __init__(self, offsets: OffsetStore, connector: str) -> None:
        self.offset_store = offsets
        self.connector = connector

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.offset_store.source_offset(self.connector, partition)
