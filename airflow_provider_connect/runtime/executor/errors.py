"""Kafka Connect's error handling for the task loops: retries, tolerance, the error log and
the sink dead-letter queue (KIP-298), and the errant-record reporter (KIP-610).

An operation of a stage (a transformation, a converter, or ``put`` through the reporter) that
raises, for a record of a sink (the message as consumed) or of a source (the record as
polled), is:

* retried while it raises ``RetriableException``, with exponential backoff capped at
  ``errors.retry.delay.max.ms``, for up to ``errors.retry.timeout`` ms (-1: forever), then
  failing the task whatever ``errors.tolerance`` says: a retriable error says that something
  the operation depends on (a schema registry, a database) is unavailable, not that the
  record is bad, and skipping the record would lose it (Kafka Connect skips it under
  ``errors.tolerance=all``);
* on any other error, with ``errors.tolerance=none``, turned into a ConnectException naming the stage and
  where the record comes from, which fails the task (no offset past the record is
  committed);
* or, with ``errors.tolerance=all``, skipped: logged when ``errors.log.enable`` (where it
  comes from; its key and value only with ``errors.log.include.messages``) and, for sinks
  with ``errors.deadletterqueue.topic.name``, produced as it was consumed (raw key, value and
  headers) to the dead-letter queue, with ``__connect.errors.*`` context headers (the stage
  and the class that failed among them) when
  ``errors.deadletterqueue.context.headers.enable``.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from enum import Enum
from typing import Any, TypeVar

from confluent_kafka import Producer

from airflow_provider_connect.connect.connector_config import (
    DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
    DLQ_TOPIC_NAME_CONFIG,
    ERRORS_LOG_ENABLE_CONFIG,
    ERRORS_LOG_INCLUDE_MESSAGES_CONFIG,
    ERRORS_RETRY_MAX_DELAY_CONFIG,
    ERRORS_RETRY_TIMEOUT_CONFIG,
    ERRORS_TOLERANCE_CONFIG,
)
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.messages import DataMessage
from airflow_provider_connect.connect.plugins import class_name
from airflow_provider_connect.connect.sink import ErrantRecordReporter, SinkRecord
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.runtime.executor.task_metrics import TaskMetrics

log = logging.getLogger(__name__)
T = TypeVar("T")
HEADER_PREFIX = "__connect.errors."
FIRST_RETRY_DELAY_S = 0.3


class Stage(str, Enum):
    """Where in a task's pipeline an operation failed, with Kafka Connect's names."""

    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    TASK_PUT = "TASK_PUT"


Failed = DataMessage | SourceRecord
"""The record an operation failed for: a sink's message as consumed, a source's as polled."""


class Skipped(Exception):
    """A record was tolerated (logged, sent to the dead-letter queue) and is skipped."""


class RunAgain(Exception):
    """The run cannot go on, through no fault of its task (a transaction the broker aborted
    while the network was away): it ends as a stop, not a failure, and the herder starts
    the task again at once, from its committed offsets."""


class StoppedWhileRetrying(Exception):
    """The task was asked to stop while an operation was being retried: the run ends as a
    stop, not a failure. The record and the rest of its poll or batch stay uncommitted,
    for the next run to take again (records of it already produced by a source come twice
    under at-least-once delivery; an exactly-once source aborts its transaction), except
    under a source's at-most-once delivery, whose offsets were stored before producing."""


class ErrorHandler:
    """Runs a task's fallible operations under the connector's ``errors.*`` settings."""

    def __init__(
        self,
        config: dict[str, str],
        connector: str,
        task_id: int,
        wait: Callable[[float], bool],
        dlq_producer: Callable[[], Producer] | None = None,
        metrics: TaskMetrics | None = None,
    ) -> None:
        """``wait(seconds)`` sleeps between retries and returns True when the task must
        stop; ``dlq_producer`` makes the dead-letter queue's producer when first needed;
        ``metrics`` counts errors, failures, skipped and dead-letter records."""
        self.connector = connector
        self.task_id = task_id
        self.tolerate_all = config.get(ERRORS_TOLERANCE_CONFIG, "none") == "all"
        self.retry_timeout_ms = int(config.get(ERRORS_RETRY_TIMEOUT_CONFIG, "0"))
        self.max_delay_s = int(config.get(ERRORS_RETRY_MAX_DELAY_CONFIG, "60000")) / 1000
        self.log_errors = config.get(ERRORS_LOG_ENABLE_CONFIG, "false") == "true"
        self.log_messages = config.get(ERRORS_LOG_INCLUDE_MESSAGES_CONFIG, "false") == "true"
        self.dlq_topic = config.get(DLQ_TOPIC_NAME_CONFIG, "").strip()
        self.context_headers = config.get(DLQ_CONTEXT_HEADERS_ENABLE_CONFIG, "false") == "true"
        self._dlq_producer_factory = dlq_producer
        self._dlq: Producer | None = None
        self._wait = wait
        self.errors = 0  # tolerated failures so far
        self.metrics = metrics or TaskMetrics(sink=False)

    def execute(
        self,
        stage: Stage,
        failed: Failed,
        executing: type,
        operation: Callable[..., T],
        *args: Any,
    ) -> T:
        """``operation(*args)``, an operation of ``executing`` (the class that runs it) for
        the record ``failed``; raises Skipped when the record is tolerated,
        ConnectException (failing the task) when it is not, and StoppedWhileRetrying when
        the task is asked to stop between retries."""
        deadline = (
            None if self.retry_timeout_ms < 0 else time.monotonic() + self.retry_timeout_ms / 1000
        )
        delay = FIRST_RETRY_DELAY_S
        while True:
            try:
                return operation(*args)
            except RetriableException as e:
                if deadline is not None and time.monotonic() + delay > deadline:
                    raise self.unavailable(stage, failed, executing, e) from e
                if self._wait(delay):
                    raise StoppedWhileRetrying(f"{stage.value} for {_where(failed)}") from e
                delay = min(delay * 2, self.max_delay_s)
            except Exception as e:
                self.tolerate(stage, failed, executing, e)

    def unavailable(
        self, stage: Stage, failed: Failed, executing: type, error: RetriableException
    ) -> ConnectException:
        """The error that fails the task when an operation still raises RetriableException
        once ``errors.retry.timeout`` is over: whatever
        ``errors.tolerance`` says, as what it depends on is unavailable and the record is
        not at fault (skipping it would lose it)."""
        self.metrics.error(failed=True)
        return ConnectException(
            f"Retries exhausted in error handler: {stage.value} failed for {_where(failed)}, "
            f"executing class '{class_name(executing)}': {error}"
        )

    def tolerate(self, stage: Stage, failed: Failed, executing: type, error: Exception) -> None:
        """Raises ConnectException (tolerance none) or, having logged and queued the record,
        Skipped (tolerance all)."""
        where = _where(failed)
        self.metrics.error(failed=not self.tolerate_all)
        if not self.tolerate_all:
            raise ConnectException(
                f"Tolerance exceeded in error handler: {stage.value} failed for {where}, "
                f"executing class '{class_name(executing)}': {error}"
            ) from error
        self.errors += 1
        if self.log_errors:
            details = ""
            if self.log_messages:
                key, value = (
                    (failed.key, failed.value)
                    if isinstance(failed, SourceRecord)
                    else (failed.key(), failed.value())
                )
                details = f" (key={key!r}, value={value!r})"
            log.error(
                "Error in stage %s (%s) for %s%s: %s",
                stage.value,
                class_name(executing),
                where,
                details,
                error,
            )
        if not isinstance(failed, SourceRecord):
            self.send_to_dlq(stage, failed, executing, error)
        self.metrics.add("total_records_skipped")
        raise Skipped from error

    def send_to_dlq(
        self, stage: Stage, message: DataMessage, executing: type, error: Exception
    ) -> None:
        """Produces the record as it was consumed to the dead-letter queue, if one is set."""
        if not self.dlq_topic or self._dlq_producer_factory is None:
            return
        if self._dlq is None:
            self._dlq = self._dlq_producer_factory()
        headers: list[tuple[str, str | bytes | None]] = list(message.headers() or [])
        if self.context_headers:
            context = {
                "topic": message.topic(),
                "partition": str(message.partition()),
                "offset": str(message.offset()),
                "connector.name": self.connector,
                "task.id": str(self.task_id),
                "stage": stage.value,
                "class.name": class_name(executing),
                "exception.class.name": type(error).__name__,
                "exception.message": str(error),
                "exception.stacktrace": "".join(traceback.format_exception(error)),
            }
            headers += [(HEADER_PREFIX + k, v.encode()) for k, v in context.items()]
        self._dlq.produce(self.dlq_topic, message.value(), message.key(), headers=headers)
        self._dlq.poll(0)
        self.metrics.add("deadletterqueue_produce_requests")

    def flush(self) -> None:
        """Waits until the dead-letter records are acknowledged (before offsets commit)."""
        if self._dlq is not None and self._dlq.flush(30) != 0:
            raise ConnectException("Could not write to the dead-letter queue")


class WorkerErrantRecordReporter(ErrantRecordReporter):
    """KIP-610: a sink task reports records ``put`` cannot write; under tolerance ``all``
    they are logged and sent to the dead-letter queue, under ``none`` the task fails."""

    def __init__(
        self, handler: ErrorHandler, messages: Callable[[SinkRecord], DataMessage], task: type
    ) -> None:
        self.handler = handler
        self.messages = messages
        self.task = task

    def report(self, record: SinkRecord, error: Exception) -> Future[None]:
        with contextlib.suppress(Skipped):
            self.handler.tolerate(Stage.TASK_PUT, self.messages(record), self.task, error)
        done: Future[None] = Future()
        done.set_result(None)
        return done


def _where(failed: Failed) -> str:
    """Where the failed record comes from, for messages and logs."""
    if isinstance(failed, SourceRecord):
        return (
            f"the source record for {failed.topic} from partition {failed.source_partition} "
            f"at offset {failed.source_offset}"
        )
    return f"{failed.topic()}-{failed.partition()} at offset {failed.offset()}"
