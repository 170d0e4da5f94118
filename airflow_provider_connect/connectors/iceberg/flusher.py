"""A tick's work off the task's poll thread: the chunks taken at the tick written as data
files and sent to the committer, then, in task 0, the round committed. The poll thread goes
on consuming meanwhile (Parquet's encoding and the catalog's commit mostly wait outside
Python), and waits only when the next tick comes before this one's work is done."""

from __future__ import annotations

import pickle
import threading
import time

from airflow_provider_connect.connect.channel import TaskChannel
from airflow_provider_connect.connectors.iceberg.committer import CHUNKS, Committer
from airflow_provider_connect.connectors.iceberg.writer import FrozenPartition

READY_POLL_S = 0.05
"""How often the committer asks whether every partition's chunk is in, while it waits."""


class Flush:
    """One tick's work, on a thread of its own, started at once. ``sent`` is set once the
    chunks reached the channel (then they are the committer's: a failure after that, in the
    round, loses nothing); ``error`` is what ended the work early, if anything."""

    def __init__(
        self,
        frozen: list[FrozenPartition],
        channel: TaskChannel,
        committer: Committer | None,
        timeout_s: float,
    ) -> None:
        self.frozen = frozen
        self.channel = channel
        self.committer = committer
        self.deadline = time.monotonic() + timeout_s
        self.sent = False
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="iceberg-flush", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            chunks = [frozen.write() for frozen in self.frozen]
            if chunks:
                self.channel.send(CHUNKS, pickle.dumps(chunks))
            self.sent = True
            committer = self.committer
            if committer is not None:
                while not committer.ready() and time.monotonic() < self.deadline:
                    time.sleep(READY_POLL_S)  # other tasks' chunks: polled, not signalled
                committer.commit()
        except BaseException as e:  # handed to the poll thread, which decides
            self.error = e

    def done(self) -> bool:
        return not self.thread.is_alive()

    def wait(self, timeout_s: float | None = None) -> None:
        self.thread.join(timeout_s)
