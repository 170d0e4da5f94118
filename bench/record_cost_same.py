"""The check ``bench.record_cost`` runs after each path's project run and hand run: do both
write the same bytes?

Each side's output is read back where it went: the first and the last :data:`ENDS`
messages of its topic (topic, key and value), the first and last lines of its file, or the
first and last rows of its table by key. Names each side chooses for itself (its topic, or
the prefix of its topics, which change capture also writes into its events) are replaced by
one placeholder on both sides, and so are the spans a path names as unavoidably different
(:class:`Mask`); everything else must be equal, byte for byte.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from sqlalchemy import create_engine, text

ENDS = 50
"""Messages (lines, rows) compared at each end of an output."""
NAME = b"<name>"
NULL = b"<null>"
"""A null key or value (a tombstone), apart from any bytes a record can hold here."""
CONTEXT = 60
"""Bytes shown on each side of the first difference."""


@dataclass(frozen=True)
class Mask:
    """A span both sides' values are allowed to differ in: what matches ``pattern`` is
    replaced with ``replacement`` before comparing; ``why`` says why it cannot be equal."""

    pattern: bytes
    replacement: bytes
    why: str

    def apply(self, value: bytes) -> bytes:
        return re.sub(self.pattern, self.replacement, value)


@dataclass(frozen=True)
class TopicOutput:
    """The one topic of records whose name starts with ``name`` (unique to the run; the
    chain's router writes to another topic than the one made for it)."""

    name: str

    def part(self, index: int) -> str:
        return ("topic", "key", "value")[index]

    def sample(self, servers: str, records: int) -> list[tuple[bytes, ...]]:
        consumer = Consumer(
            {
                "bootstrap.servers": servers,
                "group.id": f"same-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "fetch.queue.backoff.ms": 0,
                "fetch.wait.max.ms": 10,
            }
        )
        try:
            topics = [
                t
                for t in consumer.list_topics(timeout=30).topics
                if t.startswith(self.name)
                and consumer.get_watermark_offsets(TopicPartition(t, 0), timeout=30)[1] > 0
            ]
            if len(topics) != 1:
                raise AssertionError(f"one topic {self.name}… of records expected: {topics}")
            if len(consumer.list_topics(topics[0], timeout=30).topics[topics[0]].partitions) != 1:
                raise AssertionError(f"{topics[0]} has more than one partition")
            # offsets, not the end offset: the test broker reports end offsets too low
            head = _read(consumer, topics[0], 0, min(ENDS, records))
            tail = _read(consumer, topics[0], max(ENDS, records - ENDS), records)
        finally:
            consumer.close()
        name = self.name.encode()
        return [tuple(part.replace(name, NAME) for part in message) for message in [*head, *tail]]


def _read(consumer: Consumer, topic: str, start: int, end: int) -> list[tuple[bytes, ...]]:
    """The messages of offsets ``start`` to ``end`` of ``topic``'s one partition."""
    if start >= end:
        return []
    consumer.assign([TopicPartition(topic, 0, start)])
    read: list[tuple[bytes, ...]] = []
    while len(read) < end - start:
        messages = consumer.consume(end - start - len(read), 30)
        if not messages:
            raise AssertionError(f"{topic}: {len(read)} of offsets {start} to {end} read in 30 s")
        for m in messages:
            if m.error() is not None:
                raise AssertionError(f"{topic}: {m.error()}")
            key, value = m.key(), m.value()
            read.append(
                (topic.encode(), NULL if key is None else key, NULL if value is None else value)
            )
    return read


@dataclass(frozen=True)
class FileOutput:
    """A file of lines."""

    path: str

    def part(self, index: int) -> str:
        return "line"

    def sample(self, servers: str, records: int) -> list[tuple[bytes, ...]]:
        lines = Path(self.path).read_bytes().splitlines()
        if len(lines) != records:
            raise AssertionError(f"{self.path}: {len(lines)} lines, {records} expected")
        return [(line,) for line in [*lines[:ENDS], *lines[max(ENDS, records - ENDS) :]]]


@dataclass(frozen=True)
class TableOutput:
    """A table's rows by ``key``, each as the text of its columns."""

    url: str
    table: str
    key: str = "id"

    def part(self, index: int) -> str:
        return f"column {index + 1}"

    def sample(self, servers: str, records: int) -> list[tuple[bytes, ...]]:
        engine = create_engine(self.url)
        try:
            with engine.connect() as c:
                count = c.execute(text(f'SELECT count(*) FROM "{self.table}"')).scalar_one()
                head, tail = (
                    list(
                        c.execute(
                            text(
                                f'SELECT * FROM "{self.table}" ORDER BY "{self.key}" {order} '
                                f"LIMIT {ENDS}"
                            )
                        )
                    )
                    for order in ("ASC", "DESC")
                )
        finally:
            engine.dispose()
        if count != records:
            raise AssertionError(f"{self.table}: {count} rows, {records} expected")
        return [tuple(repr(v).encode() for v in row) for row in [*head, *reversed(tail)]]


Output = TopicOutput | FileOutput | TableOutput


def same_bytes(
    servers: str,
    outputs: tuple[Output, Output],
    records: tuple[int, int],
    masks: tuple[Mask, ...] = (),
) -> str | None:
    """None when the project's output (first of ``outputs``) and the hand loop's are the
    same at both ends after masking, else where they first differ."""
    if records[0] != records[1]:
        return f"project wrote {records[0]} records, hand loop {records[1]}"
    mine, hand = (
        [tuple(_masked(part, masks) for part in m) for m in o.sample(servers, n)]
        for o, n in zip(outputs, records, strict=True)
    )
    return first_difference(mine, hand, records[0], outputs[0].part)


def _masked(part: bytes, masks: tuple[Mask, ...]) -> bytes:
    for mask in masks:
        part = mask.apply(part)
    return part


def first_difference(
    mine: list[tuple[bytes, ...]],
    hand: list[tuple[bytes, ...]],
    records: int,
    part_name: Callable[[int], str],
) -> str | None:
    """Where ``mine`` and ``hand`` (samples of ``records`` records) first differ: the
    record's number, the part (named by ``part_name``), the bytes around; else None."""
    for index, (a, b) in enumerate(zip(mine, hand, strict=True)):
        for part, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                at = next(
                    (i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q),
                    min(len(x), len(y)),
                )
                number = index if index < ENDS else max(ENDS, records - ENDS) + index - ENDS
                return (
                    f"record {number}, {part_name(part)}, byte {at}: project "
                    f"{_around(x, at)!r} vs hand {_around(y, at)!r}"
                )
    return None


def _around(value: bytes, at: int) -> bytes:
    return value[max(0, at - CONTEXT) : at + CONTEXT]
