"""The guarded connection's writes (`service/connections.py`, issue 23): a whole answer's head and body leave in one
write (one system call, one segment), and a stream's head is never held back waiting for its body.

A real uvicorn server with the guarded protocol on a loopback socket, in process, with small ASGI apps; the server's
writes are seen by recording what its transports are asked to write.
"""

from __future__ import annotations

import asyncio
import contextlib
from asyncio.selector_events import _SelectorSocketTransport  # type: ignore[attr-defined]
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import uvicorn
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from skillwire.service.connections import guarded_protocol
from skillwire.service.limits import ServeLimits
from skillwire.service.run import bind

BODY = b'{"answer": "' + b"x" * 600 + b'"}'


@asynccontextmanager
async def _serving(app: Callable[[Scope, Receive, Send], Any]) -> AsyncIterator[int]:
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(app, http=guarded_protocol(ServeLimits()), lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task


def test_a_whole_answer_leaves_in_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[bytes] = []
    original = _SelectorSocketTransport.write

    def write(self: Any, data: bytes) -> None:
        if data and not data.startswith(b"GET "):  # the server's writes, not this client's request
            writes.append(bytes(data))
        original(self, data)

    monkeypatch.setattr(_SelectorSocketTransport, "write", write)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await Response(BODY, media_type="application/json")(scope, receive, send)

    async def main() -> bytes:
        async with _serving(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(2):  # and again on the same keep-alive connection
                writer.write(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
                head = await reader.readuntil(b"\r\n\r\n")
                body = await reader.readexactly(len(BODY))
            writer.close()
            return head + body

    answer = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.1 200")
    assert answer.endswith(BODY)
    assert len(writes) == 2
    assert all(w.startswith(b"HTTP/1.1 200") and w.endswith(BODY) for w in writes)


def test_a_streams_head_goes_out_before_its_body() -> None:
    head_seen = asyncio.Event()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        with contextlib.suppress(TimeoutError):  # the body comes once the client has the head (or never would)
            await asyncio.wait_for(head_seen.wait(), 3)
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": False})

    async def main() -> bytes:
        async with _serving(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 2)
            head_seen.set()
            rest = await asyncio.wait_for(reader.readuntil(b"0\r\n\r\n"), 5)
            writer.close()
            return head + rest

    answer = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.1 200")
    assert b"data: 1" in answer
