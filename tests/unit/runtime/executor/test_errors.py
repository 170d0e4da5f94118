"""The error handler's retry and tolerance rules, as pure logic (a message stand-in and a
recorded wait instead of sleeping)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from airflow_provider_connect.connect.errors import (
    ConnectException,
    DataException,
    RetriableException,
)
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connect.storage import StringConverter
from airflow_provider_connect.runtime.executor.errors import (
    ErrorHandler,
    Skipped,
    Stage,
    StoppedWhileRetrying,
)
from airflow_provider_connect.transforms.cast import CastValue


@dataclass
class Message:
    """What the handler reads of a consumed message."""

    value_bytes: bytes = b"secret payload"

    def topic(self) -> str:
        return "orders"

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return 41

    def key(self) -> bytes | None:
        return None

    def value(self) -> bytes:
        return self.value_bytes

    def headers(self) -> list[tuple[str, bytes]]:
        return []


@dataclass
class Waits:
    """Records the retry delays; says "stop" after ``stop_after`` of them."""

    stop_after: int = 1_000
    delays: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> bool:
        self.delays.append(seconds)
        return len(self.delays) >= self.stop_after


def flaky(failures: int, error: Exception) -> Any:
    calls = {"n": 0}

    def operation() -> str:
        calls["n"] += 1
        if calls["n"] <= failures:
            raise error
        return "converted"

    return operation


def test_retriable_errors_are_retried_with_growing_delays() -> None:
    waits = Waits()
    handler = ErrorHandler(
        {"errors.retry.timeout": "-1", "errors.retry.delay.max.ms": "1000"}, "c", 0, waits
    )
    result = handler.execute(
        Stage.VALUE_CONVERTER, Message(), StringConverter, flaky(4, RetriableException("busy"))
    )
    assert result == "converted"
    assert waits.delays == [0.3, 0.6, 1.0, 1.0]  # doubled, capped at the maximum


def test_no_retries_by_default_and_tolerance_none_fails_naming_the_record() -> None:
    waits = Waits()
    handler = ErrorHandler({}, "c", 0, waits)
    with pytest.raises(ConnectException, match="VALUE_CONVERTER failed for orders-2 at offset 41"):
        handler.execute(
            Stage.VALUE_CONVERTER, Message(), StringConverter, flaky(1, RetriableException("busy"))
        )
    assert waits.delays == []
    with pytest.raises(ConnectException, match="KEY_CONVERTER"):
        handler.execute(
            Stage.KEY_CONVERTER, Message(), StringConverter, flaky(1, DataException("bad"))
        )


def test_stopping_ends_the_retries_as_a_stop() -> None:
    """A stop between retries ends the run as a stop (not a failure); the record stays
    unprocessed."""
    handler = ErrorHandler({"errors.retry.timeout": "-1"}, "c", 0, Waits(stop_after=2))
    with pytest.raises(StoppedWhileRetrying, match="VALUE_CONVERTER") as stopped:
        handler.execute(
            Stage.VALUE_CONVERTER,
            Message(),
            StringConverter,
            flaky(100, RetriableException("busy")),
        )
    assert isinstance(stopped.value.__cause__, RetriableException)
    assert handler.metrics.snapshot()["total_record_failures"] == 0


def test_tolerance_all_skips_and_logs_coordinates_only(caplog: pytest.LogCaptureFixture) -> None:
    config = {"errors.tolerance": "all", "errors.log.enable": "true"}
    handler = ErrorHandler(config, "c", 0, Waits())
    caplog.set_level(logging.ERROR)
    with pytest.raises(Skipped):
        handler.execute(
            Stage.VALUE_CONVERTER, Message(), StringConverter, flaky(1, DataException("bad"))
        )
    assert handler.errors == 1
    assert "orders-2 at offset 41" in caplog.text and "secret payload" not in caplog.text
    verbose = ErrorHandler({**config, "errors.log.include.messages": "true"}, "c", 0, Waits())
    with pytest.raises(Skipped):
        verbose.execute(
            Stage.VALUE_CONVERTER, Message(), StringConverter, flaky(1, DataException("bad"))
        )
    assert "secret payload" in caplog.text


def test_a_source_record_is_logged_by_where_it_comes_from(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler = ErrorHandler(
        {"errors.tolerance": "all", "errors.log.enable": "true"}, "c", 0, Waits()
    )
    caplog.set_level(logging.ERROR)
    record = SourceRecord({"file": "in.txt"}, {"position": 12}, "lines", value="bad 5")
    with pytest.raises(Skipped):
        handler.execute(
            Stage.TRANSFORMATION, record, CastValue, flaky(1, DataException("not a number"))
        )
    # the executing class by the name Kafka's error context gives it
    assert "TRANSFORMATION (org.apache.kafka.connect.transforms.Cast$Value)" in caplog.text
    assert (
        "the source record for lines from partition {'file': 'in.txt'} at offset {'position': 12}"
        in caplog.text
    )
    strict = ErrorHandler({}, "c", 0, Waits())
    with pytest.raises(ConnectException, match="TRANSFORMATION failed for the source record"):
        strict.execute(Stage.TRANSFORMATION, record, CastValue, flaky(1, DataException("x")))


def test_a_retriable_error_past_the_retry_timeout_fails_the_task_even_under_tolerance_all() -> None:
    """The record is not at fault (a registry or database is away): skipping it would lose
    it, so the task fails, naming the stage and the record, whatever errors.tolerance says."""
    waits = Waits()
    handler = ErrorHandler(
        {"errors.tolerance": "all", "errors.retry.timeout": "1000"}, "c", 0, waits
    )
    with pytest.raises(ConnectException, match="Retries exhausted.*VALUE_CONVERTER.*busy"):
        handler.execute(
            Stage.VALUE_CONVERTER,
            Message(),
            StringConverter,
            flaky(100, RetriableException("busy")),
        )
    assert waits.delays == [0.3, 0.6]  # retried within the timeout first
    assert handler.errors == 0  # nothing tolerated
