"""Deadlines on the metadata database's sockets.

A PostgreSQL server that hangs (frozen, or behind a network that drops packets) never
answers, and neither libpq nor psycopg has a read timeout; the server's own
``statement_timeout`` cannot fire either. So a thread opens a :meth:`Deadlines.guard` around
each transaction, the connections it uses are :meth:`~Deadlines.attach`-ed to it, and a
watchdog thread shuts down their sockets once the deadline passes: the blocked call then
fails at once (psycopg raises ``OperationalError``) and the pool drops the connection.
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass(eq=False)
class Guard:
    """One guarded block: its deadline (``time.monotonic()``) and the sockets it uses.
    ``expired`` is set, once, when the watchdog shut them down."""

    deadline: float
    fds: list[tuple[int, int]] = field(default_factory=list)  # (fd, the socket's inode)
    expired: bool = False
    done: bool = False

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


class Deadlines:
    """Every guarded block of this process, and the watchdog that enforces them."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._heap: list[tuple[float, int, Guard]] = []
        self._order = itertools.count()
        self._local = threading.local()
        self._watchdog: threading.Thread | None = None

    def current(self) -> Guard | None:
        """The innermost guard of the calling thread, if any."""
        stack: list[Guard] = getattr(self._local, "stack", [])
        return stack[-1] if stack else None

    @contextmanager
    def guard(self, timeout_s: float) -> Iterator[Guard]:
        """Sockets attached inside the block are shut down if it is still running after
        ``timeout_s``; never after it has ended."""
        guard = Guard(time.monotonic() + timeout_s)
        stack = self._local.__dict__.setdefault("stack", [])
        stack.append(guard)
        with self._lock:
            heapq.heappush(self._heap, (guard.deadline, next(self._order), guard))
            if self._watchdog is None:
                self._watchdog = threading.Thread(
                    target=self._watch, name="metadata-db-deadlines", daemon=True
                )
                self._watchdog.start()
            self._lock.notify()
        try:
            yield guard
        finally:
            stack.pop()
            with self._lock:
                guard.done = True

    def attach(self, fd: int) -> None:
        """Puts the socket ``fd`` under the calling thread's guard (nothing without one);
        shut down at once when its deadline has passed already."""
        guard = self.current()
        if guard is None:
            return
        with self._lock:
            guard.fds.append((fd, os.fstat(fd).st_ino))
            if guard.expired:
                _shut_down(*guard.fds[-1])

    def detach(self, fd: int) -> None:
        """Takes the socket ``fd`` out of the calling thread's guard (its connection went
        back to the pool, where another thread may take it)."""
        guard = self.current()
        if guard is None:
            return
        with self._lock:
            guard.fds = [(f, inode) for f, inode in guard.fds if f != fd]

    def _watch(self) -> None:
        while True:
            with self._lock:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._lock.wait(wait)
                _, _, guard = heapq.heappop(self._heap)
                if not guard.done:
                    guard.expired = True
                    for fd, inode in guard.fds:
                        _shut_down(fd, inode)


def _shut_down(fd: int, inode: int) -> None:
    """Shuts down the socket behind ``fd`` unless ``fd`` names another file by now (the
    connection was closed and its number reused); a duplicate is closed, the original is
    left to its owner, whose next read or write fails."""
    try:
        duplicate = os.dup(fd)
    except OSError:  # closed meanwhile: nothing to stop
        return
    try:
        if os.fstat(duplicate).st_ino != inode:
            os.close(duplicate)
            return
        with socket.socket(fileno=duplicate) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # not connected meanwhile: nothing to stop
        pass


DEADLINES = Deadlines()
"""The process's one watchdog, shared by every :class:`~.database.Database`."""
