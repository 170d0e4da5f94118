"""Serves the REST API with uvicorn on a background thread of the driver."""

from __future__ import annotations

import threading
import time
from urllib.parse import urlparse

import uvicorn
from fastapi import FastAPI

DEFAULT_LISTENER = "http://127.0.0.1:8083"


class RestServer:
    """The REST API on ``listener`` (``http://host:port``, as Kafka's ``listeners``)."""

    def __init__(self, app: FastAPI, listener: str = DEFAULT_LISTENER) -> None:
        url = urlparse(listener)
        if url.scheme != "http" or not url.hostname:
            raise ValueError(f"Unsupported listener {listener!r}: expected http://host:port")
        self.host = url.hostname
        self.port = url.port or 8083
        config = uvicorn.Config(
            app, host=self.host, port=self.port, log_level="warning", lifespan="off"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="rest", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 30) -> None:
        """Starts serving; returns once the port accepts connections."""
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"The REST API could not listen on {self.url}")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
