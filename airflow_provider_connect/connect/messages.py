"""The type of a message that carries a record.

confluent-kafka's ``Message`` types its getters as optional, because error events share the
class. A consumed or delivered message whose ``error()`` is None always has a topic, a
partition and an offset: the runtime's task loops, and connectors that consume or produce
with confluent-kafka themselves (the mirror source), view such messages as
:class:`DataMessage` (one ``cast`` a batch or a callback, nothing per record). A pure typing
protocol: importing it loads no Kafka client.
"""

from __future__ import annotations

from typing import Protocol


class DataMessage(Protocol):
    """A message with a record: ``error()`` was None."""

    def topic(self) -> str: ...

    def partition(self) -> int: ...

    def offset(self) -> int: ...

    def key(self) -> bytes | None: ...

    def value(self) -> bytes | None: ...

    def headers(self) -> list[tuple[str, bytes | None]] | None: ...

    def timestamp(self) -> tuple[int, int]: ...
