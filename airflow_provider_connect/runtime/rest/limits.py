"""The REST API's limit on request bodies, enforced before a body is read into memory, and
the error answer of its ASGI middlewares."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    pass


class RequestBodyLimit:
    """ASGI middleware: a request whose body is longer than ``max_bytes`` (by its
    Content-Length, or counted as it arrives when it has none) gets a 400 in Kafka Connect's
    error shape, naming the limit; the app never sees it."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send, int(declared))
            return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge:
            if started:  # too late to answer otherwise
                raise
            await self._refuse(send, received)

    async def _refuse(self, send: Send, size: int) -> None:
        await send_error(
            send,
            400,
            f"Request body of {size} bytes or more is larger than the limit of "
            f"{self.max_bytes} bytes (rest.request.max.bytes)",
        )


async def send_error(
    send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """Answers with Kafka Connect's error body, from an ASGI middleware."""
    payload = json.dumps({"error_code": status, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
