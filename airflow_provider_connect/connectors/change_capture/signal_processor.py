"""What a change-capture task does with signals (Debezium's ``SignalProcessor`` and its
standard actions), whichever channel brought them (``signal.enabled.channels``):

- ``execute-snapshot``: ``{"data-collections": [...], "type": "incremental"}`` queues an
  incremental snapshot of the tables (names or regular expressions) whose notifications
  carry the signal's id; ``"type": "blocking"`` asks the coordinator to pause the stream,
  read the tables in a snapshot of their own and stream on (:meth:`take_blocking`);
- ``stop-snapshot``: ends the incremental snapshot of the tables named (all when none);
- ``pause-snapshot`` and ``resume-snapshot``: pause and resume the incremental snapshot;
- ``log``: writes ``data.message`` to the task's log.

Signals of the ``source`` channel are rows of the signal table, delivered by the stream in
their place among the changes (:meth:`on_source_row`), beside the incremental snapshots'
window rows; those of the ``kafka`` and ``file`` channels are read every
``signal.poll.interval.ms`` from the task's poll (:meth:`poll`). An unknown or malformed
signal, or a channel that cannot be read, is logged and skipped. Used from the task's poll
thread only."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from airflow_provider_connect.connect.signals import (
    BLOCKING,
    EXECUTE_SNAPSHOT,
    INCREMENTAL,
    LOG,
    PAUSE_SNAPSHOT,
    RESUME_SNAPSHOT,
    STOP_SNAPSHOT,
)
from airflow_provider_connect.connectors.change_capture.config import SignalReading
from airflow_provider_connect.connectors.change_capture.incremental import (
    IncrementalSnapshots,
    named,
)
from airflow_provider_connect.connectors.change_capture.signal_channels import (
    FileSignalChannel,
    KafkaSignalChannel,
    SignalChannelReader,
    SignalRecord,
)
from airflow_provider_connect.connectors.change_capture.signals import WINDOW_CLOSE, WINDOW_OPEN

log = logging.getLogger(__name__)


class BlockingSnapshot(NamedTuple):
    """A blocking snapshot asked for: the signal's id and the tables to read."""

    id: str
    tables: list[str]


class SignalProcessor:
    """The signals of one task; see the module docstring."""

    def __init__(
        self,
        channels: SignalReading,
        connector_name: str,
        incremental: IncrementalSnapshots[Any] | None,
        captured: Callable[[], list[str]],
    ) -> None:
        """``connector_name``: the ``topic.prefix``, the kafka channel's key;
        ``incremental``: None without a signal table; ``captured()``: the tables a snapshot
        may read."""
        self.enabled = channels.enabled
        self.incremental = incremental
        self.captured = captured
        self.poll_interval_s = channels.poll_interval_s
        self.readers: list[SignalChannelReader] = []
        if "kafka" in self.enabled:
            self.readers.append(
                KafkaSignalChannel(
                    channels.kafka_topic,
                    channels.kafka_consumer,
                    connector_name,
                    channels.kafka_poll_timeout_s,
                )
            )
        if "file" in self.enabled:
            self.readers.append(FileSignalChannel(channels.file))
        self.next_read = time.monotonic()
        self.pending: list[SignalRecord] = []
        """Signals read from the kafka and file channels, not yet acted on."""
        self.blocking: BlockingSnapshot | None = None

    def poll(self) -> None:
        """Reads the kafka and file channels, when ``signal.poll.interval.ms`` has passed
        since the last read, and acts on the signals read. A signal whose action fails (the
        database's connection) stays pending: it is acted on at the next poll."""
        if self.readers and time.monotonic() >= self.next_read:
            self.next_read = time.monotonic() + self.poll_interval_s
            for reader in self.readers:
                try:
                    self.pending.extend(reader.read())
                except Exception as e:  # a channel's failure never fails the task
                    log.warning("Reading signals from %s failed: %s", type(reader).__name__, e)
        while self.pending:
            self.act(self.pending[0])
            self.pending.pop(0)

    def on_source_row(self, signal_id: Any, kind: Any, data: Any) -> list[tuple[Any, Any]]:
        """A row inserted into the signal table, as the stream delivers it: a window row of
        an incremental snapshot (the chunk rows to emit now, with their table,
        :meth:`IncrementalSnapshots.on_window`) or, with the ``source`` channel enabled, a
        signal."""
        if kind in (WINDOW_OPEN, WINDOW_CLOSE):
            if self.incremental is None:
                return []
            return self.incremental.on_window(str(signal_id), str(kind))
        if "source" in self.enabled:
            self.act(SignalRecord(str(signal_id), str(kind), data))
        return []

    def take_blocking(self) -> BlockingSnapshot | None:
        """The blocking snapshot asked for since the last call, if any."""
        blocking, self.blocking = self.blocking, None
        return blocking

    def act(self, signal: SignalRecord) -> None:
        """Runs the action of ``signal`` (logged and skipped when unknown or malformed; only
        a failure of the database's connection is raised)."""
        try:
            data = _data(signal.data)
            wanted = _collections(data)
        except (ValueError, TypeError, re.error) as e:
            log.warning("Signal '%s' has been received but its data is invalid: %s", signal.id, e)
            return
        log.info(
            "Received signal id = '%s', type = '%s', data = '%s'", signal.id, signal.type, data
        )
        if signal.type == LOG:
            log.info("Signal message: %s", data.get("message"))
        elif signal.type == EXECUTE_SNAPSHOT:
            self._execute(signal.id, data, wanted)
        elif signal.type in (STOP_SNAPSHOT, PAUSE_SNAPSHOT, RESUME_SNAPSHOT):
            if self.incremental is None:
                log.warning(
                    "Signal %s ignored: incremental snapshots need signal.data.collection",
                    signal.type,
                )
            elif signal.type == STOP_SNAPSHOT:
                self.incremental.stop(wanted)
            elif signal.type == PAUSE_SNAPSHOT:
                self.incremental.pause()
            else:
                self.incremental.resume()
        else:
            log.warning(
                "Signal '%s' has been received but the type '%s' is not recognized",
                signal.id,
                signal.type,
            )

    def _execute(self, signal_id: str, data: dict[str, Any], wanted: list[str]) -> None:
        kind = str(data.get("type") or INCREMENTAL).lower()
        if not wanted:
            log.warning("Signal %s ignored: execute-snapshot names no data-collections", signal_id)
        elif data.get("additional-conditions") or data.get("additional-condition"):
            log.warning(
                "Signal %s ignored: additional-conditions are not supported; snapshot the "
                "whole tables or filter downstream",
                signal_id,
            )
        elif kind == BLOCKING:
            self.blocking = BlockingSnapshot(signal_id, named(self.captured(), wanted))
        elif kind != INCREMENTAL:
            log.warning("Signal %s ignored: unknown snapshot type %s", signal_id, kind)
        elif self.incremental is None:
            log.warning(
                "Signal %s ignored: incremental snapshots need signal.data.collection", signal_id
            )
        else:
            self.incremental.request(wanted, self.captured(), signal_id)

    def close(self) -> None:
        """Closes every channel, whatever each does; called once, at the task's end."""
        for reader in self.readers:
            try:
                reader.close()
            except Exception as e:
                log.debug("closing a signal channel failed: %s", e)


def _data(data: Any) -> dict[str, Any]:
    """A signal's data: JSON text (or an object a channel decoded already), an object."""
    parsed = json.loads(data) if isinstance(data, (str, bytes)) and data else data or {}
    if not isinstance(parsed, dict):
        raise ValueError("data is not a JSON object")
    return parsed


def _collections(data: dict[str, Any]) -> list[str]:
    """The ``data-collections`` of a signal's data, each a regular expression that
    compiles (else :class:`re.error`)."""
    wanted = data.get("data-collections") or []
    if not isinstance(wanted, list):
        raise ValueError("data-collections is not a list")
    for pattern in wanted:
        re.compile(str(pattern))
    return [str(w) for w in wanted]
