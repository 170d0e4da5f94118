"""The work of a task's ticks, off its poll thread: the chunks taken at a tick written as
data files and sent to the committer (:class:`Flush`), and, in task 0, the rounds committed
(:class:`Rounds`). The poll thread goes on consuming meanwhile (Parquet's encoding and the
catalog's commit mostly wait outside Python); it waits only when the next tick comes before
the last tick's chunks are sent, and never on a round (a round may wait for other tasks'
chunks, and they may wait on a rebalance that needs this task to poll)."""

from __future__ import annotations

import logging
import pickle
import threading
import time

from airflow_provider_connect.connect.channel import FencedException, TaskChannel
from airflow_provider_connect.connectors.iceberg.committer import CHUNKS, Committer
from airflow_provider_connect.connectors.iceberg.writer import FrozenPartition

log = logging.getLogger(__name__)

READY_POLL_S = 0.05
"""How often the committer asks whether every partition's chunk is in, while it waits."""


class Flush:
    """One tick's chunks written and sent, on a thread of its own, started at once.
    ``error`` is what stopped it, if anything (then nothing was sent)."""

    def __init__(self, frozen: list[FrozenPartition], channel: TaskChannel) -> None:
        self.frozen = frozen
        self.channel = channel
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="iceberg-flush", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            chunks = [frozen.write() for frozen in self.frozen]
            if chunks:
                self.channel.send(CHUNKS, pickle.dumps(chunks))
        except BaseException as e:  # handed to the poll thread, which decides
            self.error = e

    def done(self) -> bool:
        return not self.thread.is_alive()

    def wait(self, timeout_s: float | None = None) -> None:
        self.thread.join(timeout_s)


class Rounds:
    """Task 0's committer on a thread of its own: after each tick, a round once every
    partition's chunk is in or ``timeout_s`` passed since the tick. A round that fails is
    logged and made again after the next tick (the committer starts again from the channel
    and the tables); a fenced committer stops, and ``error`` says why."""

    def __init__(self, committer: Committer, timeout_s: float) -> None:
        self.committer = committer
        self.timeout_s = timeout_s
        self.ticked = threading.Event()
        self.stopping = threading.Event()
        self.since = 0.0
        self.error: FencedException | None = None
        self.thread = threading.Thread(target=self._run, name="iceberg-rounds", daemon=True)
        self.thread.start()

    def tick(self) -> None:
        """A tick's chunks are sent: a round is due."""
        if not self.ticked.is_set():
            self.since = time.monotonic()
            self.ticked.set()

    def _run(self) -> None:
        committer = self.committer
        while not self.stopping.is_set():
            if not self.ticked.wait(READY_POLL_S):
                continue
            deadline = self.since + self.timeout_s
            try:
                while not self.stopping.is_set() and time.monotonic() < deadline:
                    if committer.ready():
                        break
                    time.sleep(READY_POLL_S)  # other tasks' chunks: polled, not signalled
                self.ticked.clear()
                if not self.stopping.is_set():
                    committer.commit()
            except FencedException as e:
                self.error = e
                return
            except Exception:
                log.warning("A commit round failed; the next tick's round makes it", exc_info=True)

    def stop(self, timeout_s: float) -> None:
        """Ends the thread once a round under way is done (within ``timeout_s``)."""
        self.stopping.set()
        self.thread.join(timeout_s)
