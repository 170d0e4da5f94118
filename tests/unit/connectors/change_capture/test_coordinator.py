"""The change-capture core's coordinator (connectors/change_capture/coordinator.py) over an
in-memory database: a log of entries at positions 1, 2, ... whose connection can be made to
fail, streamed by a source that runs the core's incremental snapshots. A failed poll drops
its records and the next ones resume after the last record returned: nothing stored is sent
again, and no chunk of an incremental snapshot is lost."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from airflow_provider_connect.connect.errors import RetriableException
from airflow_provider_connect.connect.signals import EXECUTE_SNAPSHOT, execute_snapshot
from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.connectors.change_capture import coordinator
from airflow_provider_connect.connectors.change_capture.config import SignalReading
from airflow_provider_connect.connectors.change_capture.coordinator import (
    ChangeEventSourceCoordinator,
)
from airflow_provider_connect.connectors.change_capture.incremental import IncrementalSnapshots
from airflow_provider_connect.connectors.change_capture.notifications import Notifier
from airflow_provider_connect.connectors.change_capture.offsets import OffsetContext
from airflow_provider_connect.connectors.change_capture.signal_channels import SignalRecord
from airflow_provider_connect.connectors.change_capture.signal_processor import SignalProcessor
from tests.unit.connectors.change_capture.test_incremental import Rows

ITEMS = "public.items"


class ConnectionLost(Exception):
    """The database's retriable error."""


class Database(Rows):
    """The table ``public.items`` and the log (``("change", key)`` and ``("signal", id,
    kind, data)`` entries), where the window rows go; the connection fails once, right
    after the entry at ``fail_after`` is read."""

    def __init__(self, ids: list[int]) -> None:
        super().__init__(ids)
        self.log: list[tuple[Any, ...]] = []
        self.fail_after: int | None = None

    def signal(self, signal_id: str, kind: str) -> None:
        self.log.append(("signal", signal_id, kind, None))


class Offsets(OffsetContext[int]):
    def __init__(self, incremental: IncrementalSnapshots[Any] | None) -> None:
        super().__init__({"server": "db"}, 0, incremental)

    def position_keys(self, position: int) -> dict[str, Any]:
        return {"pos": position}

    def position_of(self, offset: Mapping[str, Any]) -> int:
        return int(offset["pos"])


class Streaming:
    """Reads the log after the offset context's position, 10 entries a poll."""

    def __init__(self, database: Database, offsets: Offsets, signals: SignalProcessor) -> None:
        self.database = database
        self.offsets = offsets
        self.signals = signals
        self.incremental = offsets.incremental
        assert self.incremental is not None
        self.next: int | None = None
        """The position last read (None: not connected)."""

    def poll(self) -> list[SourceRecord] | None:
        if self.next is None:
            self.next = self.offsets.position  # the stream starts after the position
        records: list[SourceRecord] = []
        while self.next < len(self.database.log) and len(records) < 10:
            self.next += 1
            entry = self.database.log[self.next - 1]
            if self.offsets.advance(self.next):
                records += self._records(entry, self.offsets.position_offset())
            if self.database.fail_after == self.next:
                self.database.fail_after = None
                raise ConnectionLost(f"lost after {self.next}")
        self.incremental.next_chunk()  # type: ignore[union-attr]
        return records or None

    def _records(self, entry: tuple[Any, ...], offset: dict[str, Any]) -> list[SourceRecord]:
        incremental = self.incremental
        assert incremental is not None
        if entry[0] == "change":
            incremental.on_change(ITEMS, (entry[1],))
            return [SourceRecord({"server": "db"}, offset, "changes", value=entry[1])]
        rows = self.signals.on_source_row(entry[1], entry[2], entry[3])
        return [SourceRecord({"server": "db"}, offset, "reads", value=r[0]) for _, r in rows]

    def save(self) -> Any:
        return None

    def restore(self, saved: Any) -> None:
        self.next = None


class BlockingSnapshot:
    """A blocking snapshot of ``tables``: one batch of one record a table."""

    def __init__(self, tables: list[str]) -> None:
        self.tables = tables
        self.done = False

    def poll(self) -> list[SourceRecord] | None:
        self.done = True
        return [
            SourceRecord({"server": "db"}, {"pos": 0}, "blocking", value=t) for t in self.tables
        ]


class Sources:
    """No initial snapshot: the stream from the loaded position; blocking snapshots."""

    def __init__(self, streaming: Streaming) -> None:
        self.streaming = streaming
        self.closed = 0

    def prepare(self) -> None:
        pass

    def position_lost(self) -> bool:
        return False

    def snapshot(self, then_stream: bool) -> Any:
        raise AssertionError("no snapshot under no_data")

    def stream(self, resumed: bool) -> None:
        self.streaming.next = None

    def blocking_snapshot(self, tables: list[str]) -> BlockingSnapshot:
        assert self.streaming.next is None, "the stream is closed first"
        return BlockingSnapshot(tables)

    def close(self) -> None:
        self.closed += 1
        self.streaming.next = None


CHANNELS = SignalReading(frozenset({"source"}), 0.0, "t", {}, 0.0, "f")


def task(
    database: Database, stored: dict[str, Any] | None, notifications: bool = False
) -> tuple[ChangeEventSourceCoordinator, Offsets]:
    notifier = Notifier(frozenset({"sink"} if notifications else ()), "notes", "db")
    offsets = Offsets(IncrementalSnapshots(database, 2, notifier))
    signals = SignalProcessor(CHANNELS, "db", offsets.incremental, lambda: [ITEMS, "public.b"])
    return (
        ChangeEventSourceCoordinator(
            Sources(Streaming(database, offsets, signals)),
            offsets,
            "no_data",
            lambda: stored,
            ConnectionLost,
            0.0,
            threading.Event(),
            signals,
            notifier,
        ),
        offsets,
    )


def run(task: ChangeEventSourceCoordinator, polls: int) -> tuple[list[SourceRecord], int]:
    """The records of ``polls`` polls, and how many failed (retriably)."""
    records: list[SourceRecord] = []
    failed = 0
    for _ in range(polls):
        try:
            records += task.poll() or []
        except RetriableException:
            failed += 1
    return records, failed


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coordinator, "FIRST_RETRY_S", 0.0)


def test_a_failure_in_the_first_poll_resumes_at_the_stored_offset() -> None:
    database = Database([])
    database.log = [("change", str(i)) for i in range(1, 9)]
    database.fail_after = 7  # in the first poll, after the stored offset was loaded
    coordinator_, offsets = task(database, {"pos": 5})
    records, failed = run(coordinator_, 3)
    assert failed == 1
    assert [r.value for r in records] == ["6", "7", "8"]  # 1 to 5 were stored: not again
    assert offsets.recorded == 8


def test_a_failure_after_a_windows_close_row_reads_its_chunk_again() -> None:
    database = Database([1, 2, 3, 4, 5])
    database.log = [
        ("signal", "s1", EXECUTE_SNAPSHOT, execute_snapshot("s1", [ITEMS]).row()["data"])
    ]
    coordinator_, offsets = task(database, None)
    records, _ = run(coordinator_, 2)  # the request, then the first chunk
    assert [r.value for r in records] == ["1", "2"]
    assert database.log[-1][2] == "snapshot-window-close"
    database.fail_after = len(database.log)  # the second chunk's close row read, then lost
    more, failed = run(coordinator_, 6)
    assert failed == 1
    assert [r.value for r in records + more] == ["1", "2", "3", "4", "5"]
    assert offsets.incremental is not None and offsets.incremental.state is None
    positions = [offsets.position_of(r.source_offset or {}) for r in records + more]
    assert positions == sorted(positions)


def test_a_change_streamed_in_an_open_window_supersedes_the_chunks_row() -> None:
    database = Database([1, 2])
    database.log = [
        ("signal", "s1", EXECUTE_SNAPSHOT, execute_snapshot("s1", [ITEMS]).row()["data"])
    ]
    coordinator_, _ = task(database, None)
    run(coordinator_, 1)  # the request read; the chunk read between its window rows
    database.log.insert(-1, ("change", "2"))  # a change of row 2 between them
    records, failed = run(coordinator_, 2)
    assert failed == 0
    assert [(r.topic, r.value) for r in records] == [("changes", "2"), ("reads", "1")]


def test_a_blocking_snapshot_runs_between_polls_and_the_stream_resumes_after_it() -> None:
    database = Database([])
    database.log = [("change", "1"), ("change", "2")]
    coordinator_, _ = task(database, None)
    records, _ = run(coordinator_, 1)
    data = '{"data-collections": ["public\\\\..*"], "type": "blocking"}'
    coordinator_.signals.act(SignalRecord("b1", EXECUTE_SNAPSHOT, data))
    database.log.append(("change", "3"))
    more, failed = run(coordinator_, 2)
    assert failed == 0
    assert [(r.topic, r.value) for r in records + more] == [
        ("changes", "1"),
        ("changes", "2"),
        ("blocking", ITEMS),
        ("blocking", "public.b"),
        ("changes", "3"),
    ]


def test_notifications_follow_the_polls_records_at_the_last_ones_offset() -> None:
    database = Database([1, 2, 3])
    database.log = [
        ("signal", "s1", EXECUTE_SNAPSHOT, execute_snapshot("s1", [ITEMS]).row()["data"])
    ]
    coordinator_, _ = task(database, None, notifications=True)
    records, _ = run(coordinator_, 4)
    values = [(r.topic, r.value if r.topic != "notes" else r.value.get("type")) for r in records]
    assert values == [
        ("notes", "SKIPPED"),  # no initial snapshot under no_data
        ("notes", "STARTED"),
        ("reads", "1"),
        ("reads", "2"),
        ("notes", "IN_PROGRESS"),
        ("reads", "3"),
        ("notes", "IN_PROGRESS"),
        ("notes", "TABLE_SCAN_COMPLETED"),
        ("notes", "COMPLETED"),
    ]
    assert records[4].source_offset == records[3].source_offset
    assert {r.key.get("id") for r in records[1:] if r.topic == "notes"} == {"s1"}


class Channel:
    """A kafka or file channel holding ``signals`` until read."""

    def __init__(self, *signals: SignalRecord) -> None:
        self.signals = list(signals)

    def read(self) -> list[SignalRecord]:
        signals, self.signals = self.signals, []
        return signals

    def close(self) -> None:
        pass


def test_a_channels_signal_outlives_a_failed_poll_and_a_malformed_one_is_skipped() -> None:
    database = Database([1, 2, 3])
    database.log = [("change", "1")]
    database.fail_after = 1  # the poll that reads the signal fails after its first change
    coordinator_, offsets = task(database, None)
    coordinator_.signals.readers = [
        Channel(
            SignalRecord("bad", EXECUTE_SNAPSHOT, '{"data-collections": ["public.it["]}'),
            SignalRecord("odd", EXECUTE_SNAPSHOT, '["not", "an", "object"]'),
            SignalRecord("s1", EXECUTE_SNAPSHOT, execute_snapshot("s1", [ITEMS]).row()["data"]),
        )
    ]
    records, failed = run(coordinator_, 6)
    assert failed == 1
    assert [r.value for r in records] == ["1", "1", "2", "3"]  # the change, then the snapshot
    assert offsets.incremental is not None and offsets.incremental.state is None


def test_a_blocking_snapshot_whose_connection_fails_is_aborted_and_the_stream_goes_on() -> None:
    database = Database([])
    database.log = [("change", "1")]
    coordinator_, _ = task(database, None, notifications=True)
    failing = BlockingSnapshot([ITEMS])

    def lost() -> list[SourceRecord] | None:
        raise ConnectionLost("the snapshot's connection")

    failing.poll = lost  # type: ignore[method-assign]
    coordinator_.sources.blocking_snapshot = lambda tables: failing  # type: ignore[attr-defined]
    data = '{"data-collections": ["public\\\\.items"], "type": "blocking"}'
    records, _ = run(coordinator_, 1)
    coordinator_.signals.act(SignalRecord("b1", EXECUTE_SNAPSHOT, data))
    database.log.append(("change", "2"))
    more, failed = run(coordinator_, 3)
    assert failed == 1
    values = [
        (r.topic, r.value.get("type") if r.topic == "notes" else r.value) for r in records + more
    ]
    assert values == [
        ("changes", "1"),
        ("notes", "SKIPPED"),  # a poll's notifications follow its records
        ("changes", "2"),
        ("notes", "ABORTED"),
    ]
