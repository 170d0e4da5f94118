"""The writing transactions of one process on a SQLite file take turns in the process: one
at a time asks SQLite for its write lock, so that a slot host's hundred task threads never
crowd the file's lock (and SQLite's sleeping busy handler) against the herder's process."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from airflow_provider_connect.store import MetadataStore, StoreUnavailable
from airflow_provider_connect.store.database import Database


def test_while_a_writing_transaction_is_open_no_other_of_its_process_asks_sqlite(
    tmp_path: Path,
) -> None:
    """While one writing transaction is open, the process's other writers (of every Database
    of the file) wait for their turn: none begins one (asks SQLite for the lock, where it
    would wait in the busy handler) until it ends; then each has its turn."""
    url = f"sqlite:///{tmp_path / 'metadata.db'}"
    MetadataStore(url, migrate=True).close()
    holder, *others = [Database(url) for _ in range(4)]
    for db in others:
        db.check()  # a connection in its pool (a new one's setup waits for the lock)
    opened, crowded = threading.Event(), threading.Event()
    asking = 0
    counting = threading.Lock()

    def begins(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        nonlocal asking
        if statement != "BEGIN IMMEDIATE":  # where a writer waits for SQLite's lock
            return
        with counting:
            asking += 1
            if asking > 1:
                crowded.set()

    def ends(_connection: Any) -> None:
        nonlocal asking
        with counting:
            asking -= 1

    for db in (holder, *others):
        event.listen(db.engine, "before_cursor_execute", begins)
        event.listen(db.engine, "commit", ends)
        event.listen(db.engine, "rollback", ends)

    def write(db: Database) -> None:
        opened.wait(10)
        db.check()  # a writing transaction

    writers = [threading.Thread(target=write, args=(db,)) for db in others]
    for writer in writers:
        writer.start()
    with holder.tx() as session:
        session.execute(text("SELECT 1"))
        opened.set()
        # Before: each writer began at once and waited in SQLite's busy handler.
        assert not crowded.wait(1.0)
    for writer in writers:
        writer.join(10)
    assert not any(writer.is_alive() for writer in writers)
    assert asking == 0 and not crowded.is_set()
    for db in (holder, *others):
        db.close()


def test_a_sqlite_files_pool_takes_its_size_and_memory_keeps_working(tmp_path: Path) -> None:
    """A pool sized above SQLAlchemy's 5 + 10 lets 20 transactions of a file hold their
    connections at once (they meet at a barrier inside them); an in-memory database, which
    has no such pool, ignores the sizes and still works."""
    url = f"sqlite:///{tmp_path / 'metadata.db'}"
    MetadataStore(url, migrate=True).close()
    db = Database(url, pool_size=20, max_overflow=0)
    met = threading.Barrier(20, timeout=10)
    failures: list[BaseException] = []

    def hold() -> None:
        try:
            with db.tx(read_only=True) as session:
                session.execute(text("SELECT 1"))
                met.wait()
        except BaseException as e:
            failures.append(e)

    threads = [threading.Thread(target=hold) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    db.close()
    assert failures == []
    memory = Database("sqlite://", pool_size=20, max_overflow=0)
    memory.check()
    memory.close()


def test_a_transaction_begun_before_the_database_was_found_again_does_not_lose_it_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A transaction that began in an outage and failed after the database answered again
    (its connection attempt resent by TCP, backed off, after a partition healed) belongs to
    the outage already told: the database stays reachable and nothing more is logged."""
    db = Database(f"sqlite:///{tmp_path / 'db.sqlite'}")
    error = StoreUnavailable("The metadata database … is unreachable: no answer within 10 s")
    began_in_the_outage = time.monotonic()
    with caplog.at_level(logging.INFO, logger="airflow_provider_connect.store.database"):
        db._lost(error, began=began_in_the_outage)
        assert not db.reachable
        db._found()
        db._lost(error, began=began_in_the_outage)
        assert db.reachable
        db._lost(error, began=time.monotonic())  # a new outage
        assert not db.reachable
    told = [r.getMessage() for r in caplog.records]
    assert len(told) == 3 and told[0] == told[2] == str(error) and "reachable again" in told[1]
    db.close()
