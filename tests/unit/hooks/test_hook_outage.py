"""What a wait does while the metadata database is away, as pure logic (``WaitWatch``: the
loss and the return logged once each, the time away not counted as a stall), and the
deadline the hook gives the store (``metadata_timeout``), read from the connection as
Airflow reads it."""

from __future__ import annotations

import json
import logging

import pytest

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.control.progress import Waiting, WaitWatch
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.store import StoreUnavailable

PAUSED = "connector c is PAUSED and makes no progress until resumed"
DOWN = StoreUnavailable(
    "The metadata database postgresql+psycopg://connect:***@db:5432/connect is unreachable: "
    "connection failed: Connection refused"
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_outage_is_logged_once_each_way_and_is_what_the_wait_last_waited_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("test.outage")
    caplog.set_level(logging.INFO, "test.outage")
    clock = Clock()
    watch = WaitWatch(None, clock)
    watch.follow(Waiting(PAUSED, "p"), log)
    for _ in range(5):  # five polls while it is away: one line
        watch.unreachable(DOWN, log)
        clock.now += 2
    assert watch.database_away
    assert watch.last_waited_on("Gave up after 60s") == f"Gave up after 60s; last waited on: {DOWN}"
    watch.reachable(log)
    watch.reachable(log)  # a second poll that reaches it: nothing more to say
    watch.follow(Waiting(PAUSED, "p"), log)  # what it waits on, said again after the outage
    assert not watch.database_away
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", f"Still waiting: {PAUSED}"),
        ("WARNING", f"Still waiting: {DOWN}"),
        ("INFO", "The metadata database is reachable again (after 10.0 s)"),
        ("INFO", f"Still waiting: {PAUSED}"),
    ]


def test_the_time_the_database_was_away_is_no_stall() -> None:
    log = logging.getLogger("test.outage")
    clock = Clock()
    watch = WaitWatch(300, clock)
    assert watch.observe(Waiting(PAUSED, "p")).stalled is None
    clock.now += 100
    watch.unreachable(DOWN, log)
    clock.now += 1000  # away far longer than the stall timeout
    watch.reachable(log)
    assert watch.observe(Waiting(PAUSED, "p")).stalled is None  # 100 s of standing still
    clock.now += 199
    assert watch.observe(Waiting(PAUSED, "p")).stalled is None
    clock.now += 1
    assert watch.observe(Waiting(PAUSED, "p")).stalled == f"no progress for 300 s: {PAUSED}"


def connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, **extra: object) -> ConnectHook:
    monkeypatch.setenv(
        f"AIRFLOW_CONN_{conn_id.upper()}",
        json.dumps({"conn_type": "connect", "extra": {"metadata_url": "sqlite:///x.db", **extra}}),
    )
    return ConnectHook(conn_id)


def test_the_deadline_comes_from_the_hook_the_connection_or_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert connection(monkeypatch, "plain").metadata_timeout_s == 10.0
    assert connection(monkeypatch, "typed", metadata_timeout="2.5").metadata_timeout_s == 2.5
    assert connection(monkeypatch, "number", metadata_timeout=4).metadata_timeout_s == 4.0
    form = connection(monkeypatch, "form", extra__connect__metadata_timeout="3")
    assert form.metadata_timeout_s == 3.0  # as a connection form of Airflow before 3.2 saves it
    page = ConnectHook("typed", metadata_timeout=1.5, fail_fast=True)
    assert (page.metadata_timeout_s, page.fail_fast) == (1.5, True)
    for bad in ("soon", "0", "-1"):
        hook = connection(monkeypatch, f"bad{bad.strip('-')}", metadata_timeout=bad)
        with pytest.raises(ConnectException, match="metadata_timeout .*positive number"):
            _ = hook.metadata_timeout_s
