"""Hosts of a test's own on one machine, for network faults: a :class:`NetworkHost` is a
network namespace joined to the test's by a veth link, with an address at each end in the
loopback range (127.201.0.0/16, ``route_localnet`` on both ends of the link, so the kernel
routes them over it). A service started in it (:meth:`NetworkHost.command`) is reached at
:attr:`NetworkHost.address`, and only over the link, which :meth:`NetworkHost.cut` cuts the way
a partition does: every packet either way dropped by nftables inside the namespace, silently
(no reset, no ICMP error; connections stay open on both sides and their data goes
unacknowledged), until :meth:`NetworkHost.heal`.

Needs root, ``ip`` (iproute2) and ``nft``: :func:`unavailable_reason` says what is missing.
The namespaces are named ``pc-<pid>-<n>``; one left by a test process that no longer runs is
removed by the next host made.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests_common.processes import Started

PREFIX = "pc-"
NETWORK = "127.201"
"""Each host takes a /30 of 127.201.0.0/16: the test's end at .1 of it, the host's at .2."""
LOCK = Path("/tmp/airflow-provider-connect-netns.lock")
_numbers = itertools.count()


def unavailable_reason() -> str | None:
    """Why no host can be made here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def _run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return done.stdout


def _remove_orphans() -> None:
    """Removes the namespaces of test processes that ended without removing theirs (their
    links go with them), and a link whose inner end never left this namespace (a process
    killed while making its host; deleting that end deletes the pair)."""
    for line in _run("ip", "netns", "list").splitlines():
        found = re.match(rf"{PREFIX}(\d+)-\d+\b", line)
        if found and not Path(f"/proc/{found.group(1)}").exists():
            _run("ip", "netns", "delete", found.group(0))
    for link in re.findall(r"^\d+: (pci\d+)[@:]", _run("ip", "-o", "link"), re.MULTILINE):
        subprocess.run(["ip", "link", "delete", link], capture_output=True, check=False)


def _free_subnet() -> int:
    """The first /30 of 127.201.0.0/16 that no interface holds (under :data:`LOCK`)."""
    taken = set(re.findall(rf"inet {re.escape(NETWORK)}\.(\d+)\.(\d+)/", _run("ip", "-o", "addr")))
    for k in range(0, 256 * 64):
        third, fourth = divmod(k * 4, 256)
        if (str(third), str(fourth + 1)) not in taken:
            return k
    raise RuntimeError(f"no free /30 left in {NETWORK}.0.0/16")


class NetworkHost(Started):
    """A namespace of the test's own, joined to it by a veth link (see the module's
    docstring). :meth:`start` makes it, :meth:`stop` removes it (stop what runs in it
    first)."""

    def __init__(self) -> None:
        self.namespace = f"{PREFIX}{os.getpid()}-{next(_numbers)}"
        self.outer = ""  # the link's end in the test's namespace, named after its subnet
        self.inner = "eth0"
        self.address = self.gateway = ""
        self.is_cut = False

    def start(self) -> NetworkHost:
        LOCK.touch(exist_ok=True)
        with LOCK.open() as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _remove_orphans()
            subnet = _free_subnet()
            third, fourth = divmod(subnet * 4, 256)
            self.gateway = f"{NETWORK}.{third}.{fourth + 1}"
            self.address = f"{NETWORK}.{third}.{fourth + 2}"
            self.outer, peer = f"pco{subnet}", f"pci{subnet}"  # unique: one subnet a link
            _run("ip", "netns", "add", self.namespace)
            try:
                _run("ip", "link", "add", self.outer, "type", "veth", "peer", "name", peer)
                _run("ip", "link", "set", peer, "netns", self.namespace, "name", self.inner)
                _run("ip", "addr", "add", f"{self.gateway}/30", "dev", self.outer)
                _run("ip", "link", "set", self.outer, "up")
                _run("sysctl", "-q", "-w", f"net.ipv4.conf.{self.outer}.route_localnet=1")
                inside = ["ip", "netns", "exec", self.namespace]
                _run(*inside, "ip", "addr", "add", f"{self.address}/30", "dev", self.inner)
                _run(*inside, "ip", "link", "set", self.inner, "up")
                _run(*inside, "ip", "link", "set", "lo", "up")
                _run(*inside, "sysctl", "-q", "-w", f"net.ipv4.conf.{self.inner}.route_localnet=1")
            except RuntimeError:
                self.stop()
                raise
        return self

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the host (``ip netns exec`` execs it: the PID is the
        command's own)."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def cut(self) -> None:
        """From now on every packet over the link is dropped, both ways, silently."""
        rules = (
            "table inet partition {\n"
            f'  chain in {{ type filter hook input priority 0; iifname "{self.inner}" drop; }}\n'
            f'  chain out {{ type filter hook output priority 0; oifname "{self.inner}" drop; }}\n'
            "}\n"
        )
        done = subprocess.run(
            self.command(["nft", "-f", "-"]),
            input=rules,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if done.returncode != 0:
            raise RuntimeError(f"nft failed: {done.stderr.strip()}")
        self.is_cut = True

    def heal(self) -> None:
        """The link carries packets again (what was sent meanwhile was lost: TCP sends it
        again)."""
        if self.is_cut:
            _run(*self.command(["nft", "delete", "table", "inet", "partition"]))
            self.is_cut = False

    @contextlib.contextmanager
    def partitioned(self) -> Iterator[NetworkHost]:
        """Cut for the block; healed when it ends, however it ends."""
        self.cut()
        try:
            yield self
        finally:
            self.heal()

    def stop(self) -> None:
        """Removes the namespace and its link (the processes in it should be stopped
        first: one still running keeps the namespace's network alive without the link)."""
        subprocess.run(["ip", "netns", "delete", self.namespace], capture_output=True, check=False)
        subprocess.run(["ip", "link", "delete", self.outer], capture_output=True, check=False)
