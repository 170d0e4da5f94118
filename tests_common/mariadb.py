"""A private MariaDB 10.11 server for tests of binlog change capture (connectors/mysql).

The shared server on 127.0.0.1:3306 is never touched: each :class:`MariaDbServer` is a fresh
``mariadb-install-db`` in its own directory under /tmp, listening on its own loopback port (and
a Unix socket in that directory), with the binlog as change capture needs it (ROW format, FULL
row image and FULL row metadata) unless the test's ``settings`` say otherwise.

The server runs as the user running the tests (as root: ``--user=root``, which mariadbd
requires to say so). :func:`unavailable_reason` says why none can run here (binaries
missing); tests skip with it (:func:`mariadb_server_or_skip`).

The system tables are installed once per process (``mariadb-install-db``, 1-3 s here) and
copied into each server's directory. Measured here: start 0.3-1 s (the first one of a
process 2-4 s), stop ~0.6 s, crash ~0.1 s, restart ~0.5 s.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import pymysql
import pytest

from tests_common.broker import free_port
from tests_common.processes import Started, wait_until

MARIADBD = Path("/usr/sbin/mariadbd")
INSTALL_DB = Path("/usr/bin/mariadb-install-db")
TIMEOUT_S = 60
"""Upper bound for installing, starting or stopping a server."""

_SMALL_INNODB = {"innodb-buffer-pool-size": "16M", "innodb-log-file-size": "8M"}
"""Keeps the data directory (and the memory of a server per test) small."""

_connector_ids = itertools.count(5401)
"""``database.server.id`` of the connectors' configs: unique in the test process, and above
the servers' own ids (which tests keep small)."""


def unavailable_reason() -> str | None:
    """Why a server cannot be run here, or None when it can."""
    missing = [str(p) for p in (MARIADBD, INSTALL_DB) if not os.access(p, os.X_OK)]
    if missing:
        return f"MariaDB server binaries missing: {', '.join(missing)} (apt-get install mariadb-server)"
    return None


class MariaDbServer(Started):
    """A MariaDB server of its own on ``127.0.0.1:port`` (a free port), user ``root`` with an
    empty password, the binlog on (``D/bin.*``, ROW format, FULL row image, FULL row metadata).

    ``settings`` override mariadbd's options (names as on its command line, without ``--``):
    a value replaces the default, ``""`` gives the option without a value, ``None`` leaves it
    out (``{"log-bin": None}``: no binlog).

    Guarantees: it only ever starts, signals or stops the process it started (by PID);
    :meth:`stop` (also on leaving a ``with`` block, and at interpreter exit if a test forgot)
    stops it and removes its directory. Data survives :meth:`crash` and :meth:`restart`;
    :meth:`stop` discards it.
    """

    user = "root"
    password = ""
    host = "127.0.0.1"

    def __init__(
        self, *, server_id: int = 1, settings: dict[str, str | None] | None = None
    ) -> None:
        self.server_id = server_id
        self.port: int = free_port()
        self.directory: Path | None = None
        """Holds ``data/``, ``tmp/``, the binlog, the socket and the ``log``; None before
        start and after stop."""
        self.settings: dict[str, str | None] = {**_SMALL_INNODB, **(settings or {})}
        self._process: subprocess.Popen[bytes] | None = None

    # -- state -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self.running and self._process else None

    @property
    def log(self) -> Path | None:
        """The server's error log (what it printed at start and stop)."""
        return self.directory / "log" if self.directory else None

    def options(self) -> list[str]:
        """mariadbd's command line options for this server (without the program)."""
        assert self.directory is not None
        d = self.directory
        options: dict[str, str | None] = {
            "datadir": str(d / "data"),
            "tmpdir": str(d / "tmp"),
            "socket": str(d / "sock"),
            "pid-file": str(d / "pid"),
            "port": str(self.port),
            "bind-address": self.host,
            "server-id": str(self.server_id),
            "log-bin": str(d / "bin"),
            "binlog-format": "ROW",
            "binlog-row-image": "FULL",
            "binlog-row-metadata": "FULL",
            # Debian's packaged configuration's (mariadbd's own default is latin1).
            "character-set-server": "utf8mb4",
            "collation-server": "utf8mb4_general_ci",
            # Commits reach the OS at once, the disk once a second: crash() kills the process,
            # whose writes stay in the page cache, so recovery sees the same data either way.
            "innodb-flush-log-at-trx-commit": "2",
            **self.settings,
        }
        if os.geteuid() == 0:
            options["user"] = "root"
        return [f"--{k}" if v == "" else f"--{k}={v}" for k, v in options.items() if v is not None]

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> MariaDbServer:
        """Makes the data directory on the first start (a copy of the installed one), then
        starts mariadbd; returns once it answers a query. No-op when running."""
        if self.running:
            return self
        if self.directory is None:
            self._install()
        assert self.directory is not None
        with open(self.directory / "log", "ab") as log:
            self._process = subprocess.Popen(
                [str(MARIADBD), "--no-defaults", *self.options()],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
            )
        wait_until(self._answers, TIMEOUT_S, f"the MariaDB server on {self.port} answers")
        return self

    def stop(self) -> None:
        """Stops the server (SIGTERM: a clean shutdown; SIGKILL if that takes too long) and
        removes its directory. Idempotent."""
        if self.directory is None:
            return
        try:
            self._halt(signal.SIGTERM)
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
            atexit.unregister(self.stop)

    def crash(self) -> None:
        """SIGKILL: the server quits at once (the next start runs crash recovery). Returns once
        it has exited."""
        self._halt(signal.SIGKILL)

    def restart(self) -> None:
        """Starts the server again on the same data and port (shutting it down cleanly first
        if it is running); returns once it answers."""
        self._halt(signal.SIGTERM)
        self.start()

    def __enter__(self) -> MariaDbServer:
        try:
            return self.start()
        except BaseException:  # a half-made server goes too
            self.stop()
            raise

    # -- SQL ---------------------------------------------------------------------------------

    def connect(self, database: str | None = None, **kwargs: Any) -> Any:
        """A new PyMySQL connection as root over TCP, in autocommit."""
        return pymysql.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            database=database,
            autocommit=True,
            connect_timeout=10,
            **kwargs,
        )

    def execute(self, *statements: str, database: str | None = None) -> None:
        """Runs ``statements`` in order on one connection, in autocommit."""
        with self.connect(database) as connection, connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)

    def query(self, statement: str, database: str | None = None) -> list[tuple[Any, ...]]:
        """The rows ``statement`` returns."""
        with self.connect(database) as connection, connection.cursor() as cursor:
            cursor.execute(statement)
            return list(cursor.fetchall())

    def purge_binlogs(self) -> None:
        """Starts a new binlog file and removes every older one (``PURGE BINARY LOGS TO``);
        returns once only the new one is left. MariaDB keeps a file until InnoDB has
        checkpointed the transactions it holds (crash recovery may need them), which it does
        in the background after the flush: the purge is repeated until it has happened."""
        self.execute("FLUSH BINARY LOGS")
        newest = self.query("SHOW BINARY LOGS")[-1][0]

        def purged() -> bool:
            self.execute(f"PURGE BINARY LOGS TO '{newest}'")
            return [row[0] for row in self.query("SHOW BINARY LOGS")] == [newest]

        wait_until(purged, TIMEOUT_S, f"binlogs before {newest} are purged")

    def connector_config(self, **overrides: str) -> dict[str, str]:
        """The connection part of a connector's config for this server: hostname, port, user,
        password, a ``database.server.id`` no other config of this test process has, and
        ``topic.prefix``; ``overrides`` (pass dotted names as ``**{"a.b": "v"}``) win."""
        return {
            "database.hostname": self.host,
            "database.port": str(self.port),
            "database.user": self.user,
            "database.password": self.password,
            "database.server.id": str(next(_connector_ids)),
            "topic.prefix": "srv",
            **overrides,
        }

    # -- helpers -----------------------------------------------------------------------------

    def _install(self) -> None:
        directory = Path(tempfile.mkdtemp(prefix="mariadb-", dir="/tmp"))
        self.directory = directory
        atexit.register(self.stop)
        (directory / "tmp").mkdir()
        shutil.copytree(_installed_datadir(), directory / "data", symlinks=True)

    def _answers(self) -> bool:
        if not self.running:
            assert self._process is not None
            raise RuntimeError(
                f"mariadbd exited with {self._process.returncode} at start; log tail:\n"
                f"{self._log_tail()}"
            )
        try:
            self.query("SELECT 1")
        except pymysql.err.OperationalError:
            return False
        return True

    def _halt(self, how: signal.Signals) -> None:
        """Sends ``how`` to the server and waits for it to exit (SIGKILL after the timeout)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(how)
        try:
            process.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(TIMEOUT_S)

    def _log_tail(self) -> str:
        log = self.log
        return log.read_text(errors="replace")[-2000:] if log and log.exists() else ""


_installed: Path | None = None
_installing = threading.Lock()


def _installed_datadir() -> Path:
    """A data directory with the system tables, installed once per process (it takes 1-3
    s here) and copied by every server; removed at exit. No server ever runs on it."""
    global _installed
    with _installing:
        if _installed is None:
            directory = Path(tempfile.mkdtemp(prefix="mariadb-installed-", dir="/tmp"))
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
            command = [
                str(INSTALL_DB),
                "--no-defaults",
                f"--datadir={directory / 'data'}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                *(f"--{k}={v}" for k, v in _SMALL_INNODB.items()),
            ]
            if os.geteuid() == 0:
                command.append("--user=root")
            result = subprocess.run(
                command,
                cwd=directory,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
            if result.returncode != 0:
                raise RuntimeError(
                    f"mariadb-install-db failed ({result.returncode}): "
                    f"{result.stdout}{result.stderr}"
                )
            _installed = directory / "data"
        return _installed


def mariadb_server_or_skip(
    *, server_id: int = 1, settings: dict[str, str | None] | None = None
) -> MariaDbServer:
    """For tests: a new, not yet started server (start it with ``with`` or
    :meth:`~MariaDbServer.start`); skips the calling test, saying why, when none can run here."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"private MariaDB server unavailable: {reason}")
    return MariaDbServer(server_id=server_id, settings=settings)
