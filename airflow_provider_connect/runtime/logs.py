"""Logs with task context, on the driver and on the executors.

While a task run is under way (``TaskLog``), every record logged by its thread, and by the
threads it starts with ``in_task_context``, carries ``connector``, ``task``, ``generation``
and ``run_id``; what the driver's herder logs for a connector carries ``connector``
(``connector_context``). Text logs print Kafka Connect's ``[name|task-0]`` (``[name|worker]``
on the driver) before the message;
``log.format=json`` prints one JSON object a line. Each run also writes its own log file on
the host that runs it, and keeps its last lines in memory: a FAILED run's trace in the
metadata database ends with them and with where the whole file is.

Log levels change at run time as in Kafka Connect (``LOG_LEVELS``): in one process
(KIP-495's ``PUT /admin/loggers/{logger}``, on the driver), or in every process of the
runtime (KIP-976's ``scope=cluster``): levels written to the metadata database, which the
drivers and every task run on the executors apply to their own process. As a Kafka worker
ignores the levels written before it completed startup, a runtime applies only those written
since its herder started: a restarted runtime starts from its configured levels."""

from __future__ import annotations

import collections
import contextlib
import contextvars
import json
import logging
import re
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_provider_connect.store import LogLevel, LogLevelStore, StoreUnavailable

log = logging.getLogger(__name__)

TEXT_FORMAT = "[%(asctime)s] %(levelname)s %(connector_context)s%(message)s (%(name)s)"
FORMATS = ("text", "json")
TAIL_LINES = 50
"""How many of a run's last log lines a FAILED trace carries."""
DEFAULT_LOG_DIR = str(Path(tempfile.gettempdir()) / "connect-task-logs")


@dataclass(frozen=True)
class TaskContext:
    """A task run's context, or a connector's on the driver (``task`` None: what the
    herder does for the connector itself)."""

    connector: str
    task: int | None = None
    generation: int | None = None
    run_id: str | None = None

    @property
    def label(self) -> str:
        """Kafka Connect's ``connector.context``: ``[name|task-0] `` or ``[name|worker] ``."""
        scope = "worker" if self.task is None else f"task-{self.task}"
        return f"[{self.connector}|{scope}] "


@contextlib.contextmanager
def connector_context(name: str) -> Iterator[None]:
    """Records logged inside carry the connector's context (the driver's work for it)."""
    token = CONTEXT.set(TaskContext(name))
    try:
        yield
    finally:
        CONTEXT.reset(token)


CONTEXT: contextvars.ContextVar[TaskContext | None] = contextvars.ContextVar(
    "connect_task", default=None
)


def in_task_context(target: Callable[..., Any]) -> Callable[..., Any]:
    """``target`` bound to the calling thread's task context, for a thread the run starts
    (whose records then carry the run's context too); the thread must be its only caller."""
    context = contextvars.copy_context()

    def run(*args: Any, **kwargs: Any) -> Any:
        return context.run(target, *args, **kwargs)

    return run


class ContextFilter(logging.Filter):
    """Adds the task context (empty outside a run) to every record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = CONTEXT.get()
        record.connector_context = context.label if context else ""
        record.task_context = context
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, the task context's fields, and
    the exception's trace when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        context: TaskContext | None = getattr(record, "task_context", None)
        if context is not None:
            fields = {
                "connector": context.connector,
                "task": context.task,
                "generation": context.generation,
                "run_id": context.run_id,
            }
            entry.update((k, v) for k, v in fields.items() if v is not None)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def formatter(log_format: str) -> logging.Formatter:
    if log_format not in FORMATS:
        raise ValueError(f"log.format must be text or json, not {log_format!r}")
    return JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)


def configure(log_format: str = "text", level: int = logging.INFO) -> None:
    """Logs of this process to stderr in ``log_format``, with task context; called once per
    process (the driver's CLI, each executor's Python worker), again only to change the
    format."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "connect_console", False)]:
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.connect_console = True  # type: ignore[attr-defined]
    handler.addFilter(ContextFilter())
    handler.setFormatter(formatter(log_format))
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    logging.getLogger("py4j").setLevel(logging.WARNING)


class _RunLogs(logging.Handler):
    """The one handler of a process that hands each record of a task run to that run's own
    handlers (its file and its tail): the run is the record's context, so a record costs
    one lookup however many runs share the process (a slot host runs up to
    ``tasks.per.slot``)."""

    def __init__(self) -> None:
        super().__init__()
        self.addFilter(ContextFilter())
        self.runs: dict[int, list[logging.Handler]] = {}
        """Each recording run's handlers, by its context's ``id``."""

    def handle(self, record: logging.LogRecord) -> bool:
        """As ``Handler.handle`` without this handler's lock: the runs' own handlers take
        theirs, so runs sharing the process never wait for each other's writes."""
        if self.filter(record):
            self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        for handler in self.runs.get(id(getattr(record, "task_context", None)), ()):
            handler.handle(record)


_RUN_LOGS = _RunLogs()


class _Tail(logging.Handler):
    def __init__(self, lines: int) -> None:
        super().__init__()
        self.lines: collections.deque[str] = collections.deque(maxlen=lines)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class TaskLog:
    """The log of one task run, while ``recording``: the context of its records, its own
    file (``{log_dir}/{connector}-{task}-{run_id}.log``) and its last lines."""

    def __init__(self, context: TaskContext, log_dir: str, log_format: str = "text") -> None:
        self.context = context
        assert context.task is not None, "a task run's log needs its task"
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", context.connector)
        self.path = Path(log_dir) / f"{safe}-{context.task}-{context.run_id}.log"
        self.location = f"{socket.gethostname()}:{self.path}"
        self._format = formatter(log_format)
        self._tail = _Tail(TAIL_LINES)

    @contextlib.contextmanager
    def recording(self) -> Iterator[TaskLog]:
        """Sets the context and records to the file and the tail while inside."""
        token = CONTEXT.set(self.context)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handlers = [logging.FileHandler(self.path, encoding="utf-8"), self._tail]
        for handler in handlers:
            handler.setFormatter(self._format)
        logging.getLogger().addHandler(_RUN_LOGS)  # once: a handler is added only once
        _RUN_LOGS.runs[id(self.context)] = handlers
        try:
            yield self
        finally:
            del _RUN_LOGS.runs[id(self.context)]
            for handler in handlers:
                handler.close()
            CONTEXT.reset(token)

    def tail(self) -> str:
        """The run's last log lines, and where its whole log is."""
        lines = "\n".join(self._tail.lines)
        return f"Last log lines of this task run (whole log at {self.location}):\n{lines}"


# -- log levels (KIP-495, KIP-976) -------------------------------------------------------------
KAFKA_LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")
"""Kafka's level names, as the admin endpoints take and show them."""
_PYTHON_LEVELS = {
    "TRACE": 5,  # below DEBUG
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": 100,  # above every level
}
_KAFKA_NAMES = {value: name for name, value in _PYTHON_LEVELS.items()}
ROOT_LOGGER = "root"
"""Kafka's name of the root logger."""


def python_level(kafka_level: str) -> int:
    """Python's level for one of :data:`KAFKA_LEVELS`; ValueError for any other name."""
    try:
        return _PYTHON_LEVELS[kafka_level]
    except KeyError:
        raise ValueError(f"Invalid log level '{kafka_level}'") from None


def kafka_level(level: int) -> str:
    """Kafka's name of a Python level; Python's own name for one between Kafka's."""
    return _KAFKA_NAMES.get(level) or logging.getLevelName(level)


def named_logger(name: str) -> logging.Logger:
    """The logger of that name, the root logger for :data:`ROOT_LOGGER`."""
    return logging.getLogger() if name == ROOT_LOGGER else logging.getLogger(name)


class LogLevels:
    """The log levels of this process, changed as Kafka's ``Loggers`` changes a worker's:
    a namespace and every logger under it, each stamped with when it was last set here.

    Cluster-wide levels (KIP-976) come from a metadata database: :meth:`sync` applies those
    written after a baseline (``since``: the latest version when the runtime's herder
    started) that this process has yet to apply, in the order they were written, so a
    process that starts (or a task run that starts in a reused process) ends at the levels
    of a process that saw every write since the baseline. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._modified: dict[str, int] = {}  # logger → when its level was last set (ms)
        self._applied: dict[str, int] = {}  # database URL → the latest version applied

    def set_level(self, namespace: str, level: str) -> list[str]:
        """Sets ``namespace`` and every logger under it (all of them for the root) to
        ``level``, one of :data:`KAFKA_LEVELS` (ValueError otherwise); returns their names,
        the namespace first."""
        value = python_level(level)
        log.info("Setting level of namespace %s and children to %s", namespace, level)
        with self._lock:
            return self._set(namespace, value)

    def _set(self, namespace: str, value: int) -> list[str]:
        prefix = "" if namespace == ROOT_LOGGER else namespace + "."  # the root's: all
        loggers = logging.root.manager.loggerDict
        # One C call, atomic under the GIL: other threads may create loggers meanwhile.
        names = list(loggers)
        descendants = sorted(
            name
            for name in names
            if name.startswith(prefix) and isinstance(loggers.get(name), logging.Logger)
        )
        affected = [namespace, *descendants]
        now = int(time.time() * 1000)
        for name in affected:
            named_logger(name).setLevel(value)
            self._modified[name] = now
        return affected

    def last_modified(self, name: str) -> int | None:
        """When the logger's level was last set in this process (ms); None if never."""
        return self._modified.get(name)

    def sync(self, levels: LogLevelStore, version: int | None = None, since: int = 0) -> None:
        """Applies the cluster-wide levels written to ``levels`` that this process has yet to
        apply, those after version ``since`` only: versions up to ``since`` count as applied
        here from then on. With ``version``, the latest the database has as a heartbeat read
        it, reads nothing unless this process is behind it. Never raises: levels are best
        effort, and what could not be read (the database away) or applied is tried again,
        in order, by the next call."""
        url = levels.db.url
        with self._lock:
            applied = self._applied[url] = max(self._applied.get(url, 0), since)
        if version is not None and version <= applied:
            return
        try:
            changed = levels.changed_since(applied)
        except StoreUnavailable:  # the database logged it
            return
        except Exception:
            log.warning("Reading the cluster-wide log levels failed", exc_info=True)
            return
        with self._lock:
            for entry in changed:
                if entry.version <= self._applied[url]:  # another thread applied it
                    continue
                if entry.level not in _PYTHON_LEVELS:
                    log.warning("Ignoring invalid log level %r of %s", entry.level, entry.logger)
                else:
                    log.info(
                        "Setting level of namespace %s and children to %s (cluster scope)",
                        entry.logger,
                        entry.level,
                    )
                    try:
                        self._set(entry.logger, _PYTHON_LEVELS[entry.level])
                    except Exception:
                        log.warning(
                            "Applying the cluster-wide log level of %s failed; trying again "
                            "at the next sync",
                            entry.logger,
                            exc_info=True,
                        )
                        return
                self._applied[url] = entry.version

    def apply_written(self, levels: LogLevelStore, entry: LogLevel) -> None:
        """Applies at once ``entry``, a cluster-wide level this process just wrote to
        ``levels`` (one of :data:`KAFKA_LEVELS`). When this process had applied every
        version before it, :meth:`sync` skips it; otherwise :meth:`sync` applies it again,
        in write order after those."""
        url = levels.db.url
        log.info(
            "Setting level of namespace %s and children to %s (cluster scope)",
            entry.logger,
            entry.level,
        )
        with self._lock:
            self._set(entry.logger, python_level(entry.level))
            if self._applied.get(url, 0) == entry.version - 1:
                self._applied[url] = entry.version


LOG_LEVELS = LogLevels()
"""This process's log levels."""
