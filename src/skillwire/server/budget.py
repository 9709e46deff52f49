"""A memory budget for large reads: concurrent `resources/read` of big files queue instead of piling up.

A read holds the file's bytes several times over while it is served (raw bytes, decoded text or base64,
the JSON body, the socket buffer): twenty concurrent reads of a 16 MiB file peaked near 700 MB. `ReadBudget`
looks at each MCP POST before it is dispatched; a `resources/read` of a served file of at least
`LARGE_READ_BYTES` waits until its size fits in the budget, and holds it until its response has been sent.

    app = ReadBudget(app, lambda uri: service.catalog.file(uri), mcp_path="/mcp", budget=ByteBudget(48 << 20))
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillwire.errors import InvalidSkillUri
from skillwire.server.limits import LARGE_READ_BYTES
from skillwire.uri import canonical_uri

_READ = b"resources/read"
_MAX_PEEK = 4 * 1024 * 1024  # the SDK's own body limit; anything larger is passed on for it to refuse


class ByteBudget:
    """At most `capacity` bytes held at once, granted first come, first served (a single larger ask gets all of it)."""

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError(f"a byte budget must be positive, not {capacity}")
        self.capacity = capacity
        self.used = 0
        self.peak = 0
        self._waiting: deque[tuple[int, anyio.Event]] = deque()

    @asynccontextmanager
    async def hold(self, size: int) -> AsyncIterator[None]:
        size = max(1, min(size, self.capacity))
        if not self._waiting and self.used + size <= self.capacity:
            self._take(size)
        else:
            entry = (size, anyio.Event())
            self._waiting.append(entry)
            try:
                await entry[1].wait()
            except BaseException:
                if entry in self._waiting:
                    self._waiting.remove(entry)
                else:  # granted while being cancelled: give it back
                    self._give(size)
                raise
        try:
            yield
        finally:
            self._give(size)

    def _take(self, size: int) -> None:
        self.used += size
        self.peak = max(self.peak, self.used)

    def _give(self, size: int) -> None:
        self.used -= size
        while self._waiting and self.used + self._waiting[0][0] <= self.capacity:
            granted, event = self._waiting.popleft()
            self._take(granted)
            event.set()


FileSize = Callable[[str], int | None]
"""The size of the file served at a canonical skill:// URI, or None if none is."""


class ReadBudget:
    """ASGI middleware: an MCP request reading large files waits for room in `budget` and holds it until answered."""

    def __init__(self, app: ASGIApp, size_of: FileSize, *, mcp_path: str, budget: ByteBudget) -> None:
        self.app = app
        self.size_of = size_of
        self.mcp_path = mcp_path
        self.budget = budget

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.mcp_path:
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > _MAX_PEEK:
            await self.app(scope, receive, send)  # not a read we could size; the SDK refuses what is too large
            return
        messages: list[Message] = []
        peeked = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            peeked += len(message.get("body", b""))
            if not message.get("more_body", False) or peeked > _MAX_PEEK:
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        size = self._large_read_bytes(body) if _READ in body and peeked <= _MAX_PEEK else 0
        if size == 0:
            await self.app(scope, replay, send)
            return
        async with self.budget.hold(size):
            await self.app(scope, replay, send)

    def _large_read_bytes(self, body: bytes) -> int:
        """Bytes of large files the JSON-RPC message (or batch) in `body` asks to read; 0 if none."""
        try:
            parsed = json.loads(body)
        except ValueError:
            return 0
        total = 0
        for message in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(message, dict) or message.get("method") != "resources/read":
                continue
            params = message.get("params")
            uri = params.get("uri") if isinstance(params, dict) else None
            if not isinstance(uri, str):
                continue
            try:
                size = self.size_of(canonical_uri(uri))
            except InvalidSkillUri:
                continue
            if size is not None and size >= LARGE_READ_BYTES:
                total += size
        return total
