"""What a demo command waits for, said while it waits, so that a slow start on a busy
machine does not look like a hang."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from tests_common.processes import Started

QUIET_S = 2.0
"""A wait shorter than this says nothing."""
LOG_EVERY_S = 15.0
"""Away from a terminal, how often a wait that goes on is said again."""


class Progress(Started):
    """While a ``with`` block runs, says what it waits for (``what``, read every second)
    and the seconds since the block began, once it has waited :data:`QUIET_S`. On a
    terminal the line counts the seconds up and is ended, kept, when ``what`` changes;
    elsewhere (a log) a line is written when ``what`` changes and every
    :data:`LOG_EVERY_S`. The counting line is erased when the block ends."""

    def __init__(self, what: str | Callable[[], str], out: TextIO | None = None) -> None:
        self.what = what if callable(what) else lambda: what
        self.out = out if out is not None else sys.stdout
        self.terminal = self.out.isatty()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
        self._began = 0.0

    def start(self) -> Progress:
        self._began = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        said, said_at, counting = None, 0.0, False
        while not self._done.wait(1.0):
            waited = time.monotonic() - self._began
            if waited < QUIET_S:
                continue
            what = self.what()
            line = f"   waiting for {what} ({waited:.0f} s)"
            if self.terminal:
                end = "\n" if counting and what != said else ""
                self.out.write(f"{end}\r\033[K{line}")
                counting = True
            elif what != said or waited - said_at >= LOG_EVERY_S:
                self.out.write(f"{line}\n")
                said_at = waited
            said = what
            self.out.flush()
        if counting:
            self.out.write("\r\033[K")
            self.out.flush()
