"""The records a sink task has put and not yet committed, per partition, so that a commit
says how many records it passed: records, not offsets. The offsets between two records the
consumer returned (the commit and abort markers of a topic written transactionally, the
records of aborted transactions) are not records.

The offsets are kept as spans of consecutive offsets, ``[first, end)``: one span per put and
partition on a topic written without transactions, one per transaction at most on one
written with them. An offset below those kept means the consumer reads them again (a
seek back): the kept offsets from it on are forgotten.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

Partition = TypeVar("Partition")


def add_offset(spans: list[list[int]], offset: int) -> None:
    """Adds ``offset`` to ``spans``."""
    if spans and spans[-1][1] == offset:
        spans[-1][1] = offset + 1
    else:
        extend_spans(spans, [[offset, offset + 1]])


def extend_spans(spans: list[list[int]], more: Iterable[list[int]]) -> None:
    """Adds the spans ``more`` to ``spans``."""
    for first, end in more:
        truncate(spans, first)
        if spans and spans[-1][1] == first:
            spans[-1][1] = end
        else:
            spans.append([first, end])


def truncate(spans: list[list[int]], offset: int) -> None:
    """Forgets the offsets at or above ``offset``."""
    while spans and spans[-1][1] > offset:
        if spans[-1][0] >= offset:
            spans.pop()
        else:
            spans[-1][1] = offset


class Delivered(Generic[Partition]):
    """The offsets of the records put and not yet committed, by partition."""

    def __init__(self) -> None:
        self._spans: dict[Partition, list[list[int]]] = {}

    def put(self, partition: Partition, spans: Iterable[list[int]]) -> None:
        """Records the spans of a put (above the partition's offsets put before)."""
        extend_spans(self._spans.setdefault(partition, []), spans)

    def commit(self, partition: Partition, offset: int) -> int:
        """The records put below ``offset`` (a committed offset: the next to read), which
        leave the partition's records."""
        spans = self._spans.get(partition, [])
        records = 0
        while spans and spans[0][0] < offset:
            first, end = spans[0]
            if end <= offset:
                records += end - first
                spans.pop(0)
            else:
                records += offset - first
                spans[0][0] = offset
        return records

    def rewind(self, partition: Partition, offset: int) -> None:
        """Forgets the records put at or above ``offset``: the consumer reads them again
        (a seek)."""
        truncate(self._spans.get(partition, []), offset)

    def drop(self, partition: Partition) -> None:
        """Forgets the partition (closed: its next owner reads what was not committed)."""
        self._spans.pop(partition, None)
