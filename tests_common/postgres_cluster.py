"""A private PostgreSQL 15 cluster for tests and benchmarks that crash or freeze the metadata
database.

The shared server on 127.0.0.1:5432 is never touched: each :class:`PostgresCluster` is a
fresh ``initdb`` in its own directory under /tmp, listening on its own loopback port (and a
Unix socket in that directory), and every command names that directory.

``initdb`` refuses to run as root, so the cluster runs as the ``postgres`` user through
``runuser``, which needs root: :func:`unavailable_reason` says why it cannot run (not root,
binaries or user missing), and tests skip with it (:func:`postgres_cluster_or_skip`).

Measured here: first start (initdb + start) 0.5-0.9 s, crash ~0.1 s, restart after a crash
(with recovery) ~0.1 s, freeze and resume a few milliseconds.

What a frozen cluster does to clients: the kernel still completes TCP handshakes (the listen
socket's backlog), so a connect attempt does not fail: it waits for the server's first
answer until libpq's ``connect_timeout`` (forever without one). Queries on connections
opened before the freeze block until :meth:`PostgresCluster.resume`, then complete. Always
give clients of a frozen cluster a ``connect_timeout``, and resume in a ``finally`` (or use
:meth:`PostgresCluster.frozen`): a stopped postmaster must never outlive the test.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from tests_common.broker import free_port
from tests_common.netns import NetworkHost
from tests_common.processes import Started, wait_until

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PG_USER = "postgres"
TIMEOUT_S = 60
"""Upper bound for any single pg_ctl command (start, stop) and for processes to exit."""


def unavailable_reason() -> str | None:
    """Why a cluster cannot be run here, or None when it can."""
    if os.geteuid() != 0:
        return (
            f"needs root: tests_common/postgres_cluster.py runs PostgreSQL as the {PG_USER!r} user "
            "(initdb refuses root) through runuser, which only root may use"
        )
    missing = [p for p in (PG_BIN / "initdb", PG_BIN / "pg_ctl") if not p.exists()]
    if missing:
        return f"PostgreSQL 15 binaries missing: {', '.join(map(str, missing))}"
    if shutil.which("runuser") is None:
        return "runuser (util-linux) is not installed"
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        return f"no {PG_USER!r} user to run PostgreSQL as"
    return None


class PostgresCluster(Started):
    """A PostgreSQL 15 cluster of its own on ``127.0.0.1:port`` (a free port unless given),
    user ``postgres``, trust authentication; in ``host`` when given, listening on its
    address, so that cutting the host's link partitions it from its clients; else on
    ``address`` (a host's gateway, for clients in the host).

    Guarantees: it only ever starts, signals or stops the processes of its own data
    directory; :meth:`stop` (also on leaving a ``with`` block, and at interpreter exit if a
    test forgot) resumes a frozen cluster, stops it and removes its directory. Data survives
    :meth:`crash` / :meth:`restart`; :meth:`stop` discards it.
    """

    def __init__(
        self, port: int | None = None, host: NetworkHost | None = None, address: str = "127.0.0.1"
    ) -> None:
        self.port: int = port or free_port()
        self.host = host
        self.address = host.address if host else address
        self.url: str = f"postgresql+psycopg://{PG_USER}@{self.address}:{self.port}/postgres"
        """SQLAlchemy URL (psycopg 3) of the ``postgres`` database."""
        self.dsn: str = f"postgresql://{PG_USER}@{self.address}:{self.port}/postgres"
        """libpq URI of the ``postgres`` database, for ``psycopg.connect``."""
        self.directory: Path | None = None
        """Holds ``data/``, ``log`` and the Unix socket; None before start and after stop."""
        self._postmaster: psutil.Process | None = None
        self._frozen: list[psutil.Process] = []

    # -- state -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """The postmaster is alive (frozen or not)."""
        p = self._postmaster
        try:
            return p is not None and p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    @property
    def is_frozen(self) -> bool:
        return bool(self._frozen)

    def processes(self) -> list[psutil.Process]:
        """The postmaster and every process below it (empty when not running)."""
        if not self.running:
            return []
        assert self._postmaster is not None
        with contextlib.suppress(psutil.NoSuchProcess):
            return [self._postmaster, *self._postmaster.children(recursive=True)]
        return []

    @property
    def log(self) -> Path | None:
        """The server's log file."""
        return self.directory / "log" if self.directory else None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> PostgresCluster:
        """Runs ``initdb`` on the first start, then ``pg_ctl start -w``; returns once the
        server accepts connections (checked with a real connection). No-op when running."""
        if self.running:
            return self
        if self.directory is None:
            self._init()
        assert self.directory is not None
        options = (
            f"-p {self.port} -k {self.directory} -c listen_addresses={self.address}"
            # fsync only matters when the OS crashes; crash() kills processes, whose writes
            # stay in the page cache, so recovery sees the same data either way.
            " -c fsync=off"
            # Logical replication, for change capture (connectors/postgres).
            " -c wal_level=logical -c max_replication_slots=10 -c max_wal_senders=10"
        )
        self._pg_ctl("-l", str(self.directory / "log"), "-w", "start", "-o", options)
        pid = int((self.directory / "data" / "postmaster.pid").read_text().split("\n", 1)[0])
        self._postmaster = psutil.Process(pid)
        wait_until(self._accepts_connections, TIMEOUT_S, f"the cluster on {self.port} answers")
        return self

    def crash(self) -> None:
        """``pg_ctl stop -m immediate``: every server process quits at once, without a
        checkpoint (the next start runs crash recovery). Returns once all of them have exited:
        connecting then fails at once with "connection refused". Resumes a frozen cluster
        first (a stopped process cannot quit)."""
        self._halt("immediate")

    def restart(self) -> None:
        """Starts the cluster again on the same data and port (stopping it fast first if it
        is running); returns once it accepts connections."""
        if self.running:
            self._halt("fast")
        self.start()

    def stop(self) -> None:
        """Resumes if frozen, ``pg_ctl stop -m fast`` (SIGKILL if that fails), waits for every
        server process to exit and removes the directory. Idempotent; never raises for a
        cluster that is already gone."""
        if self.directory is None:
            return
        self.resume()
        try:
            if self.running:
                try:
                    self._halt("fast")
                except (RuntimeError, AssertionError, subprocess.TimeoutExpired):
                    self._kill()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
            atexit.unregister(self.stop)

    # -- freezing ----------------------------------------------------------------------------

    def freeze(self) -> None:
        """SIGSTOP the postmaster, then every process below it; returns once all of them are
        stopped. The postmaster is stopped first, so no process can appear afterwards: only it
        forks (backends, workers; archiving is off, so nothing below it forks), and a fork it
        was in the middle of shows among the children listed once it has stopped. Always :meth:`resume` in a ``finally``."""
        if self._frozen:
            return
        postmaster = self._require_postmaster()
        postmaster.suspend()
        self._frozen = [postmaster]
        wait_until(
            lambda: _stopped(postmaster), TIMEOUT_S, "the postmaster stops", interval_s=0.005
        )
        for child in postmaster.children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                child.suspend()
                self._frozen.append(child)
        wait_until(
            lambda: all(_stopped(p) for p in self._frozen),
            TIMEOUT_S,
            "every process stops",
            interval_s=0.005,
        )

    def resume(self) -> None:
        """SIGCONT every process :meth:`freeze` stopped (children first). No-op when not
        frozen."""
        frozen, self._frozen = self._frozen, []
        for process in reversed(frozen):
            with contextlib.suppress(psutil.NoSuchProcess):
                process.resume()

    @contextlib.contextmanager
    def frozen(self) -> Iterator[PostgresCluster]:
        """Frozen for the block; resumed when it ends, however it ends."""
        self.freeze()
        try:
            yield self
        finally:
            self.resume()

    @contextlib.contextmanager
    def crashed(self) -> Iterator[PostgresCluster]:
        """Down (crashed) for the block; restarted when it ends, however it ends."""
        self.crash()
        try:
            yield self
        finally:
            self.restart()

    # -- helpers -----------------------------------------------------------------------------

    def __enter__(self) -> PostgresCluster:
        try:
            return self.start()
        except BaseException:  # a half-made cluster goes too
            self.stop()
            raise

    def _init(self) -> None:
        # mkdtemp makes a 0700 folder in /tmp; the postgres user must reach and own it (pytest's
        # tmp_path lives under a 0700 folder of root's, out of its reach).
        directory = Path(tempfile.mkdtemp(prefix="pg-cluster-", dir="/tmp"))
        self.directory = directory
        atexit.register(self.stop)
        user = pwd.getpwnam(PG_USER)
        directory.chmod(0o755)
        os.chown(directory, user.pw_uid, user.pw_gid)
        self._run(
            "initdb", "-D", str(directory / "data"), "-A", "trust", "-U", PG_USER, "--no-sync"
        )
        # initdb trusts 127.0.0.1 alone; a cluster in a test host sees its clients come from
        # the other end of its link (tests_common.netns: 127.201.0.0/16).
        with (directory / "data" / "pg_hba.conf").open("a") as hba:
            hba.write("host all all 127.0.0.0/8 trust\nhost replication all 127.0.0.0/8 trust\n")

    def _halt(self, mode: str) -> None:
        """``pg_ctl stop -m mode``, then waits for every server process to exit."""
        self.resume()
        postmaster = self._require_postmaster()
        processes = [postmaster, *postmaster.children(recursive=True)]
        self._pg_ctl("-m", mode, "-w", "-t", str(TIMEOUT_S), "stop")
        # pg_ctl returns when postmaster.pid is gone, a moment before the process is.
        _wait_gone(processes, "server processes exit after pg_ctl stop")
        self._postmaster = None

    def _kill(self) -> None:
        """SIGKILL the postmaster and everything below it: the last resort of :meth:`stop`."""
        self._frozen = []
        postmaster = self._postmaster
        if postmaster is None:
            return
        with contextlib.suppress(psutil.NoSuchProcess):
            processes = [postmaster, *postmaster.children(recursive=True)]
            for process in processes:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
            _wait_gone(processes, "server processes exit after SIGKILL")
        self._postmaster = None

    def _require_postmaster(self) -> psutil.Process:
        if self._postmaster is None or not self.running:
            raise RuntimeError(f"the cluster on port {self.port} is not running")
        return self._postmaster

    def _accepts_connections(self) -> bool:
        try:
            with psycopg.connect(self.dsn, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True

    def _pg_ctl(self, *args: str) -> None:
        assert self.directory is not None
        self._run("pg_ctl", "-D", str(self.directory / "data"), *args)

    def _run(self, program: str, *args: str) -> None:
        """Runs a PostgreSQL program as the postgres user, in the cluster's directory (the
        postgres user may not be able to enter the test's working directory)."""
        assert self.directory is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        command = ["runuser", "-u", PG_USER, "--", str(PG_BIN / program), *args]
        if self.host is not None:  # the server it starts runs in the host's namespace
            command = self.host.command(command)
        result = subprocess.run(
            command,
            cwd=self.directory,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S + 30,
            check=False,
        )
        if result.returncode != 0:
            log = self.directory / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{program} {' '.join(args)} failed ({result.returncode}): "
                f"{result.stdout}{result.stderr}\nserver log tail:\n{tail}"
            )


def _stopped(process: psutil.Process) -> bool:
    """Stopped by SIGSTOP, or gone (a zombie too: a backend that was exiting when the
    postmaster, which reaps it, stopped)."""
    try:
        return process.status() in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def _gone(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(processes: list[psutil.Process], message: str) -> None:
    """Waits for processes that are not ours to wait for (psutil.wait_procs polls them with
    a backoff that took ~1.8 s here)."""
    wait_until(lambda: all(_gone(p) for p in processes), TIMEOUT_S, message, interval_s=0.01)


def postgres_cluster_or_skip(
    port: int | None = None, host: NetworkHost | None = None, address: str = "127.0.0.1"
) -> PostgresCluster:
    """For tests: a new, not yet started cluster (start it with ``with`` or
    :meth:`~PostgresCluster.start`); skips the calling test, saying why, when one cannot run
    here."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"private PostgreSQL cluster unavailable: {reason}")
    return PostgresCluster(port, host, address)
