"""A memory budget for file reads: the bytes of `resources/read` answers being built or sent are bounded.

A read holds its file several times over while the answer is built (raw bytes, text or base64, the JSON body)
and the body until the client has taken it: forty clients that asked for a 15 MiB file and read nothing took a
server from 74 to 877 MB. `ReadBudget` looks at each MCP POST before it is dispatched (after authentication:
`run.http_app` installs it inside the auth middleware): a request that reads a file the caller may see (a
`resources/read`, a read-cache hit too; with `serve --prompts` a `prompts/get`; with `serve --tools` a `tools/call` of
`read_skill` or `read_skill_file`, charged for each copy of the file its answer holds) waits until the file's size
fits in the budget and holds it until the answer's last byte is with the kernel, or the connection is gone. The
connection's writer (`connections.py`) returns from the final send only then, and resets a client that takes
nothing for the write timeout, so a client that never reads holds its share for that long and no longer.

Files of `LARGE_READ_BYTES` and up share one budget (`large`), smaller files another (`small`), so reads of large
files never hold up small ones. A read that finds no room within `wait` seconds is answered HTTP 503 with
`Retry-After` and JSON-RPC -32603 ("server busy"); one whose client leaves while it waits is dropped unanswered.

    app = ReadBudget(app, size_of, mcp_path="/mcp", large=ByteBudget(16 << 20), small=ByteBudget(16 << 20), wait=30)
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillwire.core.errors import InvalidSkillUri
from skillwire.core.uri import canonical_uri
from skillwire.core.wire import INTERNAL_ERROR, error_body, request_id_of
from skillwire.server.defaults import LARGE_READ_BYTES

_MAX_PEEK = 4 * 1024 * 1024  # the SDK's own body limit; anything larger is passed on for it to refuse
RETRY_AFTER_S = 5
PEEKED = "skillwire.peeked"
"""The ASGI scope key under which `ReadBudget` leaves a POST body it read whole, as `Peeked`, for the layers
inside it (`direct_reads.py`): a body is read and parsed once."""


@dataclass(frozen=True, slots=True)
class Peeked:
    """A request's whole body, and its JSON when it names a method that reads a file (else None: not parsed)."""

    body: bytes
    message: object


class ByteBudget:
    """At most `capacity` bytes held at once, granted first come, first served (a single larger ask gets all of it)."""

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError(f"a byte budget must be positive, not {capacity}")
        self.capacity = capacity
        self.used = 0
        self.peak = 0
        self._waiting: deque[tuple[int, anyio.Event]] = deque()

    @property
    def waiting(self) -> int:
        """How many asks are waiting for room."""
        return len(self._waiting)

    def try_acquire(self, size: int) -> int:
        """Take room for `size` bytes if there is some now and nobody waits; the amount taken, 0 if none."""
        size = max(1, min(size, self.capacity))
        if self._waiting or self.used + size > self.capacity:
            return 0
        self._take(size)
        return size

    async def acquire(self, size: int) -> int:
        """Wait for room for `size` bytes and take it; the amount taken (give exactly that to `release`).

        Cancelled while waiting, it takes nothing (an ask granted at the moment of cancellation is given back).
        """
        taken = self.try_acquire(size)
        if taken:
            return taken
        size = max(1, min(size, self.capacity))
        entry = (size, anyio.Event())
        self._waiting.append(entry)
        try:
            await entry[1].wait()
        except BaseException:
            if entry in self._waiting:
                self._waiting.remove(entry)
            else:  # granted while being cancelled: give it back
                self.release(size)
            raise
        return size

    def release(self, size: int) -> None:
        """Give back `size` bytes taken by `acquire`, and grant the asks that now fit, in order."""
        self.used -= size
        while self._waiting and self.used + self._waiting[0][0] <= self.capacity:
            granted, event = self._waiting.popleft()
            self._take(granted)
            event.set()

    def _take(self, size: int) -> None:
        self.used += size
        self.peak = max(self.peak, self.used)


FileSize = Callable[[str], Awaitable[int | None]]
"""The size of the file served at a canonical skill:// URI to the current caller, or None if none is (a file the
caller may not see is None, as a missing one: the budget must not tell them apart)."""

FileRead = tuple[str, int]
"""What a request reads: the canonical skill:// URI of the file, and how many copies of its bytes the answer holds."""

ReadTarget = Callable[[Mapping[str, Any]], FileRead | None]
"""The file a request's params ask to read (None: it reads none, or names no valid URI)."""


def resource_read(params: Mapping[str, Any]) -> FileRead | None:
    """`resources/read`: the file at `uri`, once."""
    uri = params.get("uri")
    if not isinstance(uri, str):
        return None
    try:
        return canonical_uri(uri), 1
    except InvalidSkillUri:
        return None


RESOURCE_READS: Mapping[str, ReadTarget] = {"resources/read": resource_read}
"""The requests that read a file, by method: `resources/read` (others are added where they are served)."""


class ReadBudget:
    """ASGI middleware: an MCP request reading files waits for room in a budget and holds it until answered."""

    def __init__(
        self,
        app: ASGIApp,
        size_of: FileSize,
        *,
        mcp_path: str,
        large: ByteBudget,
        small: ByteBudget,
        wait: float,
        reads: Mapping[str, ReadTarget] = RESOURCE_READS,
    ) -> None:
        """`reads`: the methods that read a file and which file each reads (`run.file_reads` adds prompts, tools)."""
        self.app = app
        self.reads = dict(reads)
        self._markers = tuple(method.encode() for method in self.reads)
        self.size_of = size_of
        self.mcp_path = mcp_path
        self.large = large
        self.small = small
        self.wait = wait
        self.busy = 0  # reads answered 503 for want of room

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.mcp_path:
            await self.app(scope, receive, send)
            return
        declared = next((value for key, value in scope["headers"] if key == b"content-length"), b"0")
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

        # A method name may be spelled with JSON escapes ("resources\/read"): a body with a backslash is parsed too.
        reads = peeked <= _MAX_PEEK and (b"\\" in body or any(marker in body for marker in self._markers))
        parsed = _parse(body) if reads else None
        if messages[-1]["type"] == "http.request" and not messages[-1].get("more_body", False):
            scope[PEEKED] = Peeked(body, parsed)
        size = await self._read_bytes(parsed) if parsed is not None else 0
        if size == 0:
            await self.app(scope, replay, send)
            return
        budget = self.large if size >= LARGE_READ_BYTES else self.small
        granted = budget.try_acquire(size)  # room now (the usual case): no need to watch the client meanwhile
        gone = False
        if not granted:
            granted, gone = await self._room(budget, size, receive, messages)
        if gone:
            return  # the client left while its read waited: nobody to answer
        if granted == 0:
            self.busy += 1
            await _busy(parsed, scope, replay, send)
            return
        try:
            await self.app(scope, replay, send)
        finally:
            budget.release(granted)

    async def _room(self, budget: ByteBudget, size: int, receive: Receive, stash: list[Message]) -> tuple[int, bool]:
        """Wait (at most `self.wait` s) for room for `size` bytes while watching for the client to leave.

        (bytes granted, 0 if none in time; whether the client left). A message that arrives meanwhile is put
        in `stash` for the application to receive in turn."""
        granted = 0
        gone = False

        async def watch() -> None:
            nonlocal gone
            message = await receive()  # the body was read whole: only a disconnect comes now
            stash.append(message)
            if message["type"] == "http.disconnect":
                gone = True
                group.cancel_scope.cancel()

        with anyio.move_on_after(self.wait):
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                granted = await budget.acquire(size)
                group.cancel_scope.cancel()
        if gone and granted:
            budget.release(granted)
            granted = 0
        return granted, gone

    async def _read_bytes(self, parsed: object) -> int:
        """Bytes of files the JSON-RPC message (or batch) `parsed` asks to read; 0 if none."""
        total = 0
        for message in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(message, dict):
                continue
            method, params = message.get("method"), message.get("params")
            target = self.reads.get(method) if isinstance(method, str) else None
            read = target(params) if target is not None and isinstance(params, dict) else None
            if read is None:
                continue
            uri, copies = read
            size = await self.size_of(uri)
            if size is not None:
                total += max(1, size) * copies
        return total


def _parse(body: bytes) -> object:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # as the SDK: a huge number or deep nesting is not JSON it takes
        return None


async def _busy(parsed: object, scope: Scope, receive: Receive, send: Send) -> None:
    """HTTP 503 with Retry-After and a JSON-RPC error for the request's id (null for a batch)."""
    message = "Server busy: too many file reads in flight; try again shortly"
    response = JSONResponse(
        error_body(request_id_of(parsed), INTERNAL_ERROR, message),
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )
    await response(scope, receive, send)
