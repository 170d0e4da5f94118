"""Log levels changed at run time (KIP-495, KIP-976): Kafka's level names, the process's
levels, the cluster-wide levels in the metadata database (SQLite) and the baseline before
which they are never applied, the heartbeat that applies them on executors and the admin
endpoints that write them."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from airflow_provider_connect.runtime.executor.task_control import Heartbeat
from airflow_provider_connect.runtime.logs import (
    KAFKA_LEVELS,
    LogLevels,
    kafka_level,
    python_level,
)
from airflow_provider_connect.runtime.rest.admin import admin_router
from airflow_provider_connect.store import LogLevelStore, MetadataStore, StoreUnavailable


@pytest.fixture
def namespace() -> Iterator[str]:
    """A logger namespace of this test's own, with two loggers under it (levels unset)."""
    name = f"kip976.{uuid.uuid4().hex[:8]}"
    loggers = [logging.getLogger(n) for n in (name, f"{name}.a", f"{name}.a.b")]
    yield name
    for logger in loggers:
        logger.setLevel(logging.NOTSET)


def effective(name: str) -> str:
    return kafka_level(logging.getLogger(name).getEffectiveLevel())


def unavailable(*_: object) -> None:
    raise StoreUnavailable("The metadata database is unreachable: test")


def test_kafka_level_names_map_to_python_levels_and_back() -> None:
    assert [python_level(name) for name in KAFKA_LEVELS] == [5, 10, 20, 30, 40, 50, 100]
    assert [kafka_level(python_level(name)) for name in KAFKA_LEVELS] == list(KAFKA_LEVELS)
    assert kafka_level(15) == "Level 15"  # between Kafka's levels: Python's own name
    with pytest.raises(ValueError, match="Invalid log level 'LOUD'"):
        python_level("LOUD")
    with pytest.raises(ValueError):
        python_level("debug")  # callers upper-case what they are sent


def test_a_namespace_is_set_with_every_logger_under_it(namespace: str) -> None:
    levels = LogLevels()
    other = logging.getLogger(f"{namespace}x")  # shares the prefix, not the namespace
    assert levels.set_level(namespace, "WARN") == [namespace, f"{namespace}.a", f"{namespace}.a.b"]
    assert {effective(n) for n in (namespace, f"{namespace}.a", f"{namespace}.a.b")} == {"WARN"}
    assert other.level == logging.NOTSET
    modified = levels.last_modified(f"{namespace}.a.b")
    assert modified is not None and modified > 0
    assert levels.last_modified(other.name) is None


def test_the_store_keeps_the_latest_level_of_each_logger_in_write_order(
    store: MetadataStore,
) -> None:
    levels = store.log_levels
    assert levels.changed_since() == []
    first = levels.set("a", "DEBUG")
    levels.set("b", "WARN")
    again = levels.set("a", "ERROR")
    assert (first.version, again.version) == (1, 3) and again.last_modified >= first.last_modified
    assert [(e.logger, e.level, e.version) for e in levels.changed_since()] == [
        ("b", "WARN", 2),
        ("a", "ERROR", 3),
    ]
    assert [e.logger for e in levels.changed_since(2)] == ["a"]
    assert levels.changed_since(3) == []
    assert levels.changed_since()[-1] == again  # last_modified as written, in ms


def test_sync_applies_what_changed_once_per_database(
    store: MetadataStore, tmp_path: Path, namespace: str
) -> None:
    levels = LogLevels()
    store.log_levels.set(namespace, "DEBUG")
    store.log_levels.set(f"{namespace}.a", "ERROR")
    levels.sync(store.log_levels)
    assert [effective(namespace), effective(f"{namespace}.a.b")] == ["DEBUG", "ERROR"]

    logging.getLogger(namespace).setLevel(logging.INFO)  # a worker-scope change since
    levels.sync(store.log_levels)  # nothing new: the worker-scope change stands
    levels.sync(store.log_levels, version=2)  # a heartbeat that saw nothing new
    assert effective(namespace) == "INFO"

    other = MetadataStore(f"sqlite:///{tmp_path / 'other.db'}", migrate=True)
    try:  # another database's versions are its own
        other.log_levels.set(f"{namespace}.a", "TRACE")
        levels.sync(other.log_levels, version=1)
        assert effective(f"{namespace}.a.b") == "TRACE"
    finally:
        other.close()


def test_sync_is_best_effort(
    store: MetadataStore, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    levels = LogLevels()
    with monkeypatch.context() as patched:
        patched.setattr(LogLevelStore, "changed_since", unavailable)
        levels.sync(store.log_levels)  # nothing applied, nothing raised
        patched.setattr(LogLevelStore, "changed_since", lambda *_: 1 / 0)
        levels.sync(store.log_levels)
    store.log_levels.set(namespace, "LOUD")  # not a level: skipped, not read again
    store.log_levels.set(f"{namespace}.a", "ERROR")
    levels.sync(store.log_levels)
    assert logging.getLogger(namespace).level == logging.NOTSET
    assert effective(f"{namespace}.a") == "ERROR"


def test_a_level_that_fails_to_apply_is_applied_by_the_next_sync(
    store: MetadataStore,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    levels = LogLevels()
    store.log_levels.set(namespace, "DEBUG")
    apply = levels._set
    failures = [RuntimeError("dictionary changed size during iteration")]

    def fail_once(name: str, value: int) -> list[str]:
        if failures:
            raise failures.pop()
        return apply(name, value)

    monkeypatch.setattr(levels, "_set", fail_once)
    levels.sync(store.log_levels)  # returns: logged, not raised
    assert logging.getLogger(namespace).level == logging.NOTSET
    assert f"Applying the cluster-wide log level of {namespace} failed" in caplog.text
    assert [r.levelname for r in caplog.records if "Applying" in r.message] == ["WARNING"]

    levels.sync(store.log_levels, version=1)  # a heartbeat's: not applied yet, so read again
    assert effective(namespace) == "DEBUG"


def test_levels_written_up_to_the_baseline_are_never_applied(
    store: MetadataStore, namespace: str
) -> None:
    levels = LogLevels()
    store.log_levels.set(namespace, "DEBUG")  # before the runtime's herder started
    levels.sync(store.log_levels, since=1)
    assert logging.getLogger(namespace).level == logging.NOTSET
    levels.sync(store.log_levels)  # counted as applied in this process from then on
    assert logging.getLogger(namespace).level == logging.NOTSET

    store.log_levels.set(f"{namespace}.a", "WARN")  # while the runtime runs
    levels.sync(store.log_levels, version=2, since=1)
    assert effective(f"{namespace}.a.b") == "WARN"
    assert logging.getLogger(namespace).level == logging.NOTSET


def test_a_level_written_here_applies_at_once_and_again_only_after_others_writes(
    store: MetadataStore, namespace: str
) -> None:
    levels = LogLevels()
    levels.sync(store.log_levels)  # this process is caught up
    levels.apply_written(store.log_levels, store.log_levels.set(namespace, "DEBUG"))
    assert effective(f"{namespace}.a.b") == "DEBUG"
    logging.getLogger(namespace).setLevel(logging.WARNING)  # a worker-scope change since
    levels.sync(store.log_levels)  # nothing came between: not applied again
    assert effective(namespace) == "WARN"

    store.log_levels.set(f"{namespace}.a", "ERROR")  # another driver's, not applied here yet
    levels.apply_written(store.log_levels, store.log_levels.set(namespace, "INFO"))
    levels.sync(store.log_levels)  # both, in write order: the later one last
    assert {effective(n) for n in (namespace, f"{namespace}.a", f"{namespace}.a.b")} == {"INFO"}


def heartbeat(store: MetadataStore, name: str, log_levels_since: int = 0) -> Heartbeat:
    store.configs.create_connector(name, {"connector.class": "X"})
    generation = store.configs.write_task_configs(name, [{}])
    run_id = store.statuses.assign_task(name, 0, generation, "test")
    return Heartbeat(
        store.statuses, name, 0, run_id, 1.0, 60.0, lambda _: None, None, log_levels_since
    )


def test_a_task_run_applies_levels_when_it_starts_and_at_heartbeats(
    store: MetadataStore, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.log_levels.set(namespace, "DEBUG")  # before the run
    beats = heartbeat(store, "c")
    beats.apply_log_levels()
    assert effective(namespace) == "DEBUG"

    reads: list[int] = []
    changed_since = LogLevelStore.changed_since
    monkeypatch.setattr(
        LogLevelStore, "changed_since", lambda s, v=0: reads.append(v) or changed_since(s, v)
    )
    assert beats.beat().log_levels_version == 1
    assert reads == []  # nothing changed: the beat's own transaction said so
    store.log_levels.set(f"{namespace}.a", "WARN")
    assert beats.beat().log_levels_version == 2
    assert reads == [1] and effective(f"{namespace}.a.b") == "WARN"


def test_a_task_run_applies_only_the_levels_written_since_its_herder_started(
    store: MetadataStore, namespace: str
) -> None:
    store.log_levels.set(namespace, "DEBUG")  # before the runtime's herder started
    beats = heartbeat(store, "c", log_levels_since=1)
    beats.apply_log_levels()
    assert logging.getLogger(namespace).level == logging.NOTSET
    store.log_levels.set(f"{namespace}.a", "WARN")
    assert beats.beat().log_levels_version == 2
    assert effective(f"{namespace}.a.b") == "WARN"
    assert logging.getLogger(namespace).level == logging.NOTSET


def test_a_beat_does_not_fail_when_the_levels_cannot_be_read(
    store: MetadataStore, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    beats = heartbeat(store, "c")
    store.log_levels.set(namespace, "DEBUG")
    monkeypatch.setattr(LogLevelStore, "changed_since", unavailable)
    assert beats.beat().current
    assert logging.getLogger(namespace).level == logging.NOTSET
    monkeypatch.undo()
    beats.beat()  # read by the next beat
    assert effective(namespace) == "DEBUG"


@pytest.fixture
def admin(store: MetadataStore) -> TestClient:
    app = FastAPI()
    app.include_router(admin_router(store))
    return TestClient(app)


def test_scope_cluster_writes_applies_here_and_answers_no_content(
    admin: TestClient, store: MetadataStore, namespace: str
) -> None:
    answer = admin.put(f"/admin/loggers/{namespace}?scope=cluster", json={"level": "debug"})
    assert (answer.status_code, answer.content) == (204, b"")
    ((written,),) = [store.log_levels.changed_since()]
    assert (written.logger, written.level) == (namespace, "DEBUG")
    assert effective(f"{namespace}.a.b") == "DEBUG"  # this process: at once
    listed = admin.get("/admin/loggers").json()[namespace]
    assert listed["level"] == "DEBUG" and listed["last_modified"] >= written.last_modified
    assert (
        admin.put(f"/admin/loggers/{namespace}?scope=CLUSTER", json={"level": "INFO"}).status_code
        == 204
    )
    assert [e.level for e in store.log_levels.changed_since()] == ["INFO"]


def test_scope_worker_is_the_default_and_an_unknown_scope_is_worker(
    admin: TestClient, store: MetadataStore, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    affected = [namespace, f"{namespace}.a", f"{namespace}.a.b"]
    for query in ("", "?scope=worker", "?scope=everywhere"):
        answer = admin.put(f"/admin/loggers/{namespace}{query}", json={"level": "WARN"})
        assert (answer.status_code, answer.json()) == (200, affected)
    assert "Received invalid scope 'everywhere'" in caplog.text
    assert store.log_levels.changed_since() == []


def test_a_missing_or_invalid_level_is_refused_as_kafka_does_before_anything_is_written(
    admin: TestClient, store: MetadataStore, namespace: str
) -> None:
    for scope in ("cluster", "worker"):
        url = f"/admin/loggers/{namespace}?scope={scope}"
        for body in ({"lvl": "DEBUG"}, {"level": None}, None, ["DEBUG"]):
            answer = admin.put(url, json=body)
            assert (answer.status_code, answer.json()) == (
                400,
                {
                    "error_code": 400,
                    "message": "Desired 'level' parameter was not specified in request.",
                },
            )
        answer = admin.put(url, json={"level": "loud"})
        assert (answer.status_code, answer.json()) == (
            404,
            {"error_code": 404, "message": "invalid log level 'loud'."},
        )
    assert store.log_levels.changed_since() == []
    assert logging.getLogger(namespace).level == logging.NOTSET
