"""What a task run writes to the metadata database beside its data, written on a thread
of its own so that the data path never waits on the database.

The loop offers writes and goes on; the writer merges what came while it was busy (the
latest source offset per partition, the latest sink progress per partition with the records
committed since the last write added up, the topics used, the run's latest state) and writes it, one transaction per kind. A write the
database refuses or does not answer (``StoreUnavailable``) is kept, merged with what comes
next, and tried again every ``retry_s`` until the database answers: offsets are stored late,
never lost, and never moved back (a later offer wins over an older one being retried, and a
run whose successor has started stores none). Any other failure is the run's: raised on
the loop thread by the next offer, ``flush`` or ``close``, it fails the task as a failing
write of the loop's own did.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_connect.runtime.logs import in_task_context
from airflow_provider_connect.store import (
    OffsetStore,
    State,
    StatusStore,
    StoreUnavailable,
    partition_key,
)

log = logging.getLogger(__name__)

SourceOffset = tuple[dict[str, Any], dict[str, Any] | None]
SinkProgressRow = tuple[str, int, int | None, int | None, int]
"""(topic, partition, committed offset, end offset, records committed since the last row)"""


@dataclass
class _Pending:
    """Writes not yet made, merged."""

    offsets: dict[str, SourceOffset] = field(default_factory=dict)
    progress: dict[tuple[str, int], SinkProgressRow] = field(default_factory=dict)
    topics: set[str] = field(default_factory=set)
    state: State | None = None

    def __bool__(self) -> bool:
        return bool(self.offsets or self.progress or self.topics or self.state)

    def merge_under(self, newer: _Pending) -> None:
        """Puts ``newer`` over these (what was offered while these were being written)."""
        self.offsets.update(newer.offsets)
        for key, row in newer.progress.items():
            self.progress[key] = _later_progress(self.progress.get(key), row)
        self.topics |= newer.topics
        self.state = newer.state or self.state


class StoreWrites:
    """The writer of one task run; see the module docstring. Offers come from the run's
    loop thread; ``flush`` and ``close`` from it too, after its last offer."""

    def __init__(
        self,
        statuses: StatusStore,
        offsets: OffsetStore,
        run: tuple[str, int, str],
        worker_id: str,
        retry_s: float,
    ) -> None:
        self.statuses = statuses
        self.offsets = offsets
        self.connector, self.task_id, self.run_id = run
        self.worker_id = worker_id
        self.retry_s = retry_s
        self._pending = _Pending()
        self._writing = _Pending()  # the batch being written
        self._offered = 0  # offers made
        self._written = 0  # offers written (all those made before the last write began)
        self._failing = False
        self._closed = False
        self._error: Exception | None = None  # a write's failure, for the loop thread
        self._superseded = False
        self._lock = threading.Condition()
        self._thread = threading.Thread(
            target=in_task_context(self._run),
            name=f"store-writes-{self.connector}-{self.task_id}",
            daemon=True,
        )
        self._thread.start()

    @property
    def failing(self) -> bool:
        """True while the last write could not reach the database."""
        return self._failing

    # -- offers (never block on the database) ------------------------------------------------
    def source_offsets(self, offsets: Iterable[SourceOffset]) -> None:
        self._offer(offsets={partition_key(p): (p, o) for p, o in offsets})

    def sink_progress(self, rows: Iterable[SinkProgressRow]) -> None:
        self._offer(progress={(r[0], r[1]): r for r in rows})

    def active_topics(self, topics: Iterable[str]) -> None:
        self._offer(topics=set(topics))

    def state(self, state: State) -> None:
        """The run's state (RUNNING, PAUSED); the last offered is what is written."""
        self._offer(state=state)

    def _offer(self, **parts: Any) -> None:
        offered = _Pending(**parts)
        if not offered:
            return
        self._raise_error()
        with self._lock:
            self._pending.merge_under(offered)
            self._offered += 1
            self._lock.notify_all()

    # -- waiting -------------------------------------------------------------------------------
    def flush(self, timeout_s: float) -> bool:
        """Waits up to ``timeout_s`` until everything offered so far is written; returns
        whether it is."""
        with self._lock:
            target = self._offered
            written = self._lock.wait_for(
                lambda: self._written >= target or self._error is not None, timeout_s
            )
        self._raise_error()
        return written

    def _raise_error(self) -> None:
        """Raises, once, what a write failed with (not the database being away)."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    def close(self, timeout_s: float, join_s: float) -> bool:
        """Writes what is pending within ``timeout_s`` and ends the writer, waiting up to
        ``join_s`` more for a write under way (the database's deadline); returns whether
        everything was written (offsets that were not are logged: the next run starts from
        the offsets stored before, and delivers what followed again)."""
        if self._closed:
            return not self._pending
        try:
            written = self.flush(timeout_s)
        finally:
            with self._lock:
                self._closed = True
                self._lock.notify_all()
            self._thread.join(join_s)
        with self._lock:
            left = len(self._pending.offsets) + len(self._writing.offsets)
        if left and not self._superseded:
            log.warning(
                "%s-%s: the offsets of %d source partitions could not be stored before the run "
                "ended (the metadata database is unreachable); the next run delivers the "
                "records after the last stored offsets again",
                self.connector,
                self.task_id,
                left,
            )
        return written

    # -- the writer ----------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: bool(self._pending) or self._closed)
                if self._closed:
                    return
                self._writing, self._pending = self._pending, _Pending()
                upto = self._offered
            try:
                self._write(self._writing)
            except StoreUnavailable:  # logged by the database, once per outage
                with self._lock:
                    self._writing.merge_under(self._pending)
                    self._pending, self._writing = self._writing, _Pending()
                    self._failing = True
                    self._lock.wait_for(lambda: self._closed, self.retry_s)
                continue
            except Exception as e:
                with self._lock:
                    self._error = e
                    self._writing = _Pending()
                    self._lock.notify_all()
                return
            with self._lock:
                self._failing = False
                self._written = upto
                self._lock.notify_all()

    def _write(self, batch: _Pending) -> None:
        """One transaction per kind; a kind written is dropped from ``batch`` (so a retry
        after a later kind failed does not write it again). Offsets of a run whose successor
        has started are dropped."""
        if batch.offsets:
            run = (self.task_id, self.run_id)
            if not self.offsets.commit_source_offsets(self.connector, batch.offsets.values(), run):
                if not self._superseded:
                    log.info(
                        "%s-%s: a newer run of the task has started, whose offsets stand: this "
                        "run's are not stored",
                        self.connector,
                        self.task_id,
                    )
                self._superseded = True
            batch.offsets = {}
        if batch.progress:
            self.offsets.record_sink_progress(self.connector, batch.progress.values())
            batch.progress = {}
        if batch.topics:
            self.statuses.record_active_topics(self.connector, sorted(batch.topics))
            batch.topics = set()
        if batch.state is not None:
            self.statuses.put_task_status(
                self.connector, self.task_id, self.run_id, batch.state, self.worker_id
            )
            batch.state = None


def _later_progress(older: SinkProgressRow | None, newer: SinkProgressRow) -> SinkProgressRow:
    """``newer``, keeping ``older``'s committed and end offsets where ``newer`` has none
    (as the store keeps a stored committed offset over a None), with the records of both."""
    if older is None:
        return newer
    topic, partition, committed, end, records = newer
    return (
        topic,
        partition,
        older[2] if committed is None else committed,
        older[3] if end is None else end,
        older[4] + records,
    )
