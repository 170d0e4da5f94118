"""The limit on request bodies of the REST API and of the Connectors page's API, enforced
before a body is read into memory (answered 413 by ``control.error_answers``)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from airflow_provider_connect.control.error_answers import error_answer
from airflow_provider_connect.control.errors import RequestBodyTooLarge

DRAIN_MAX_BYTES = 64 * 1024 * 1024
"""How much of a refused body is read (and thrown away) before the answer, so that a client
still sending it gets the answer: a server that closes a connection it has not read to the
end resets it, and the client sees no status at all. A larger body is answered as soon as
this much has come, and the connection closed."""


class RequestBodyLimit:
    """ASGI middleware: a request whose body is longer than ``max_bytes`` (by its
    Content-Length, or counted as it arrives when it has none) gets a 413 in Kafka Connect's
    error shape, naming the limit (and ``setting``, the key that sets it, when given); the
    app never sees it. The answer comes once the client has sent the body (up to
    :data:`DRAIN_MAX_BYTES`), or at once to a client that waits for ``100 Continue``."""

    def __init__(self, app: ASGIApp, max_bytes: int, setting: str | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.setting = setting

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            if headers.get(b"expect", b"").lower() != b"100-continue":  # sending it already
                await _drain(receive, 0)
            await error_answer(self._too_large(int(declared))).send(send)
            return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    if message.get("more_body", False):
                        await _drain(receive, received)
                    raise self._too_large(received)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except RequestBodyTooLarge as e:
            if started:  # too late to answer otherwise
                raise
            await error_answer(e).send(send)

    def _too_large(self, size: int) -> RequestBodyTooLarge:
        named = f" ({self.setting})" if self.setting else ""
        return RequestBodyTooLarge(
            f"Request body of {size} bytes or more is larger than the limit of "
            f"{self.max_bytes} bytes{named}"
        )


async def _drain(receive: Receive, read: int) -> None:
    """Reads the rest of the request body, ``read`` bytes of it read already, throwing it
    away, until it ends, the client goes, or :data:`DRAIN_MAX_BYTES` have been read."""
    while read <= DRAIN_MAX_BYTES:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        read += len(message.get("body", b""))
