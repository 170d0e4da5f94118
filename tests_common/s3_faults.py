"""An S3 endpoint that fails on demand: a threaded HTTP proxy on a free loopback port that
forwards every request to a real endpoint (moto's server, or ``S3_ENDPOINT_URL``) unless a
fault is switched on, for the faults moto cannot make:

* ``slow_down``: ``503 SlowDown`` (S3's throttling answer), as S3 words it;
* ``internal_error``: ``500 InternalError``;
* ``no_such_upload``: ``404 NoSuchUpload`` (what S3 and MinIO may answer a repeated
  CompleteMultipartUpload of an upload the first one completed; moto answers 200);
* ``delay``: the answer held back ``delay_s`` (longer than a read timeout: a hang);
* ``close``: the connection closed without an answer;
* ``close_after_forward``: the request forwarded (the endpoint acts on it), then the
  connection closed without its answer: an answer lost on the way back;
* :meth:`FaultyEndpoint.refuse`: nothing listens on the port (connections refused) until
  :meth:`FaultyEndpoint.accept`.

A fault lasts ``count`` requests, or until :meth:`FaultyEndpoint.heal`; with ``matching``
only requests whose ``METHOD /path?query`` contains that text get it (``partNumber=``:
UploadPart), the others are forwarded. :meth:`FaultyEndpoint.script` gives the next
requests one fault each, in order. The proxy counts
the requests it received (:attr:`requests`) and those it failed (:attr:`faults`), so a test
sees that its client met the fault and retried. Requests are forwarded with their own
``Host`` header: signatures stay valid for an endpoint that checks them against the host
the client signed for (moto, MinIO), not for AWS's.
"""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests_common.broker import free_port
from tests_common.processes import Started

ERRORS = {
    "slow_down": (503, "SlowDown", "Please reduce your request rate."),
    "internal_error": (500, "InternalError", "We encountered an internal error. Please try again."),
    "no_such_upload": (
        404,
        "NoSuchUpload",
        "The specified upload does not exist. The upload ID may be invalid, or the upload may "
        "have been aborted or completed.",
    ),
}
FAULTS = (*ERRORS, "delay", "close", "close_after_forward")
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection", "upgrade"}
)
_UPSTREAM_TIMEOUT_S = 60.0  # longer than any freeze of the upstream a test makes


@dataclass
class FaultyEndpoint(Started):
    """The proxy in front of ``upstream`` (an ``http://`` URL); :attr:`url` is its own."""

    upstream: str
    url: str = ""
    requests: int = 0
    faults: int = 0
    _fault: str | None = None
    _left: int | None = None
    _delay_s: float = 0.0
    _matching: str = ""
    _script: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    _server: ThreadingHTTPServer | None = field(default=None, repr=False)
    _port: int = 0

    def start(self) -> FaultyEndpoint:
        self._port = free_port()
        self.url = f"http://127.0.0.1:{self._port}"
        self.accept()
        return self

    def accept(self) -> None:
        """Listens (again) on the proxy's port."""
        proxy = self

        class Handler(_Forwarding):
            endpoint = proxy

        self._server = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def refuse(self) -> None:
        """Stops listening: connections to the port are refused until :meth:`accept`."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def inject(
        self, fault: str, count: int | None = None, delay_s: float = 0.0, matching: str = ""
    ) -> None:
        """Fails the next ``count`` requests (all of them until :meth:`heal` when None)
        containing ``matching`` with ``fault``, one of :data:`FAULTS`."""
        assert fault in FAULTS, fault
        with self._lock:
            self._fault, self._left, self._delay_s = fault, count, delay_s
            self._matching = matching

    def script(self, *faults: str, matching: str = "") -> None:
        """Fails the next ``len(faults)`` requests containing ``matching`` with ``faults``,
        one each, in order."""
        assert all(f in FAULTS for f in faults), faults
        self.inject(faults[0], count=1, matching=matching)
        with self._lock:
            self._script = list(faults[1:])

    def heal(self) -> None:
        """Forwards every request again."""
        with self._lock:
            self._fault = self._left = None
            self._script.clear()

    def take(self, request: str) -> tuple[str | None, float]:
        """Counts a request (``METHOD /path?query``); the fault it gets, if any, and its
        delay."""
        with self._lock:
            self.requests += 1
            fault = self._fault
            if fault is None or self._matching not in request:
                return None, 0.0
            self.faults += 1
            if self._left is not None:
                self._left -= 1
                if self._left <= 0:
                    self._fault = self._left = None
                    if self._script:
                        self._fault, self._left = self._script.pop(0), 1
            return fault, self._delay_s

    def stop(self) -> None:
        self.stopping.set()
        self.refuse()


class _Forwarding(BaseHTTPRequestHandler):
    """One request: read whole, then failed as the endpoint's fault says or forwarded."""

    protocol_version = "HTTP/1.1"
    endpoint: FaultyEndpoint

    def do_GET(self) -> None:
        self._serve()

    do_PUT = do_POST = do_DELETE = do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests' output stays theirs."""

    def _serve(self) -> None:
        self.close_connection = True
        body = self._body()
        fault, delay_s = self.endpoint.take(f"{self.command} {self.path}")
        if fault == "close":
            return
        if fault == "delay" and self.endpoint.stopping.wait(delay_s):
            return
        try:
            if fault in ERRORS:
                self._answer_error(*ERRORS[fault])
            elif fault == "close_after_forward":
                self._exchange(body)
            else:
                self._forward(body)
        except OSError:  # the client gave up (a timeout) before the answer
            pass

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0], 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _answer_error(self, status: int, code: str, message: str) -> None:
        xml = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{code}</Code><Message>{message}</Message>"
            "<RequestId>faulty-endpoint</RequestId></Error>"
        ).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(xml)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(xml)

    def _exchange(self, body: bytes) -> tuple[http.client.HTTPResponse, bytes]:
        """The request sent to the upstream endpoint: its answer, read whole."""
        target = urllib.parse.urlsplit(self.endpoint.upstream)
        upstream = http.client.HTTPConnection(
            target.hostname or "127.0.0.1", target.port or 80, timeout=_UPSTREAM_TIMEOUT_S
        )
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            headers["Content-Length"] = str(len(body))
            upstream.request(self.command, self.path, body, headers)
            answer = upstream.getresponse()
            return answer, answer.read()
        finally:
            upstream.close()

    def _forward(self, body: bytes) -> None:
        answer, data = self._exchange(body)
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        length = answer.getheader("Content-Length", "0") if self.command == "HEAD" else len(data)
        self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
