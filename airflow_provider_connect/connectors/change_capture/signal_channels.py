"""The signal channels read apart from the stream (Debezium's ``KafkaSignalChannel`` and
``FileSignalChannel``); the ``source`` channel's signals are rows of the signal table,
which arrive through the stream itself.

- ``kafka``: records of the single partition of ``signal.kafka.topic``, keyed by the
  connector's ``topic.prefix`` (others are skipped, logged), each value a JSON document
  ``{"id", "type", "data": {...}}``. The consumer is of the group ``signal.kafka.groupId``
  (default ``kafka-signal-<topic.prefix>``: a group of its own) and commits its position
  after each read, also when nothing came, so the group's offset does not expire while
  the connector runs: a signal is acted on at most once, and one whose effect was not yet
  stored in an offset when the task failed is not read again.
- ``file``: the JSON lines of ``signal.file``; the file is emptied once read, as Debezium
  does, so each line is acted on at most once. Reading and emptying hold an exclusive
  ``flock`` of the file, as the snapshot operators' appends do, so no line they add is
  lost in between (a writer that takes no lock may still lose one, as in Debezium).

Malformed signals are skipped with a warning, never failing the task."""

from __future__ import annotations

import fcntl
import json
import logging
import os
from typing import Any, NamedTuple, Protocol

log = logging.getLogger(__name__)


class SignalRecord(NamedTuple):
    """A signal: its id, its type (``execute-snapshot``, ...), its data as JSON text."""

    id: str
    type: str
    data: str | None


class SignalChannelReader(Protocol):
    def read(self) -> list[SignalRecord]:
        """The signals that arrived since the last read."""

    def close(self) -> None:
        """Releases what the channel holds; called once, at the task's end."""


def parse_signal(text: str, channel: str) -> SignalRecord | None:
    """The signal of the JSON document ``text`` (None, logged, when it is not one)."""
    try:
        document = json.loads(text)
        data = document.get("data")
        return SignalRecord(
            str(document.get("id") or ""),
            str(document["type"]),
            data if data is None or isinstance(data, str) else json.dumps(data),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        log.warning("Skipped a %s signal that could not be parsed (%s): %s", channel, e, text)
        return None


class KafkaSignalChannel:
    """The ``kafka`` channel: a consumer of the signal topic's partition 0, made at the
    first read."""

    def __init__(
        self, topic: str, consumer: dict[str, str], key: str, poll_timeout_s: float
    ) -> None:
        self.topic = topic
        self.config = {
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            **consumer,
        }
        self.key = key
        self.poll_timeout_s = poll_timeout_s
        self.consumer: Any = None

    def read(self) -> list[SignalRecord]:
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        if self.consumer is None:
            consumer = Consumer(self.config)
            try:
                committed = consumer.committed([TopicPartition(self.topic, 0)], timeout=10)
                consumer.assign(committed)
            except BaseException:
                consumer.close()
                raise
            self.consumer = consumer
        signals = []
        for message in self.consumer.consume(500, timeout=self.poll_timeout_s):
            if message.error() is not None:
                log.warning("Reading the signal topic %s failed: %s", self.topic, message.error())
                continue
            key = (message.key() or b"").decode("utf-8", "replace")
            if key != self.key:
                log.info("Signal key '%s' doesn't match the connector's name '%s'", key, self.key)
                continue
            if message.value() and (
                signal := parse_signal(message.value().decode("utf-8", "replace"), "kafka")
            ):
                signals.append(signal)
        position = [p for p in self.consumer.position(self.consumer.assignment()) if p.offset >= 0]
        if position:
            try:
                self.consumer.commit(offsets=position, asynchronous=False)
            except KafkaException as e:  # the signals read are acted on all the same
                log.warning("Committing the signal topic's position failed: %s", e)
        return signals

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None


class FileSignalChannel:
    """The ``file`` channel: the lines of ``path``, which is emptied once read."""

    def __init__(self, path: str) -> None:
        self.path = path
        log.info("File signal channel is active, reading signals from '%s'", os.path.abspath(path))

    def read(self) -> list[SignalRecord]:
        try:
            with open(self.path, "r+", encoding="utf-8", errors="replace") as file:
                fcntl.flock(file, fcntl.LOCK_EX)  # released when the file closes
                lines = file.readlines()
                if lines:
                    file.truncate(0)
        except (FileNotFoundError, IsADirectoryError):
            return []
        return [s for line in lines if line.strip() and (s := parse_signal(line, "file"))]

    def close(self) -> None:
        """Nothing held between reads."""
