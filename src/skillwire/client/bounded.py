"""SDK transports that stop reading an answer as soon as it passes the bound its request was given.

The SDK buffers a whole response before parsing it: a JSON body with `aread()`
over HTTP, and one stdout line with an unbounded string over stdio. A server
could answer a 101-byte file with gigabytes. Here each request gets a byte bound
(from `ResponseMeter`, which the client fills before it sends); the HTTP
transport counts a response's body bytes and fails it past its bound, and the
stdio transport bounds its line framing the same way. Everything else (process
handling, JSON-RPC parsing, sessions) stays the SDK's.

    meter = ResponseMeter(ClientLimits())
    with meter.expect("resources/read", uri, limit=66_000) as expectation:
        ...                                   # send; afterwards `expectation.passed` says if it was cut
    Client(bounded_http_client(url, meter)) / Client(bounded_stdio_client(params, sys.stderr, meter))
"""

from __future__ import annotations

import json
import logging
import urllib.parse
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import httpx2
import mcp_types as types

# The SDK's own stdio process handling and line parsing, reused as they are: only the line framing
# (`_bounded_lines`) differs from `mcp.client.stdio.stdio_client`. mcp is pinned to 2.3.x for this.
from mcp.client.stdio import (
    _WRITER_FLUSH_TIMEOUT,
    StdioServerParameters,
    _aclose_all,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _parse_line,
    _stop_server_process,
    get_default_environment,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
from mcp.shared.message import SessionMessage

from skillwire.core.hosting.limits import ClientLimits

logger = logging.getLogger(__name__)

# A JSON-RPC request we send is small; a body larger than this is not looked into for its method.
_REQUEST_PEEK_BYTES = 1024 * 1024


# -- which request gets which bound ------------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Expectation:
    """The bound one request's answer was given, the bytes its answer took, and (if cut off) where it stopped.

    Compared by identity: two requests with the same bound are still two expectations.
    """

    limit: int
    received: int = 0
    passed: int | None = None


class ResponseMeter:
    """One connection's bounds: the client states a bound before sending; the transport looks it up.

    A request is known by its method and the `uri` in its params (that is what `Mcp-Method` and
    `Mcp-Name` carry on the 2026 wire). Requests nobody stated a bound for (the handshake, pings)
    get `limits.max_response_bytes`.
    """

    def __init__(self, limits: ClientLimits) -> None:
        self.limits = limits
        self._expected: dict[tuple[str, str | None], list[Expectation]] = {}

    @contextmanager
    def expect(self, method: str, name: str | None, *, limit: int) -> Iterator[Expectation]:
        """State `limit` for the answer to the request (`method`, `name`) sent inside the block."""
        key = (method, name)
        expectation = Expectation(limit)
        self._expected.setdefault(key, []).append(expectation)
        try:
            yield expectation
        finally:
            waiting = self._expected[key]
            waiting.remove(expectation)
            if not waiting:
                del self._expected[key]

    def lookup(self, message: object) -> Expectation:
        """The expectation for a JSON-RPC request (a dict as sent); a fresh default one if none was stated."""
        method, name = _request_key(message)
        if method is not None:
            waiting = self._expected.get((method, name))
            if waiting:
                return waiting[-1]
        return Expectation(self.limits.max_response_bytes)


def _request_key(message: object) -> tuple[str | None, str | None]:
    if not isinstance(message, dict):
        return None, None
    method = message.get("method")
    params = message.get("params")
    uri = params.get("uri") if isinstance(params, dict) else None
    return (method if isinstance(method, str) else None), (uri if isinstance(uri, str) else None)


def _passed_message(expectation: Expectation) -> str:
    return f"the answer passed {expectation.limit:,} bytes; skillwire stopped reading it"


# -- streamable HTTP ---------------------------------------------------------------------------------------------------


class ResponseOverLimit(httpx2.StreamError):
    """A response body passed its request's bound.

    A `StreamError`, because that is what the SDK's JSON response path turns into an error answer
    for the one request (any other exception there would end the whole connection).
    """


class _CountedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, expectation: Expectation) -> None:
        self._inner = inner
        self._expectation = expectation

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            self._expectation.received = seen
            if seen > self._expectation.limit:
                self._expectation.passed = seen
                raise ResponseOverLimit(_passed_message(self._expectation))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedHTTPTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that counts each POST response's body bytes against its request's bound.

    It asks for identity encoding and hands back the body undecoded: a compressed body is counted
    as sent, so a small gzip bomb cannot expand past the bound (and fails to parse instead).
    """

    def __init__(
        self,
        meter: ResponseMeter,
        inner: httpx2.AsyncBaseTransport,
        *,
        challenges: list[httpx2.Response] | None = None,
    ) -> None:
        self._meter = meter
        self._inner = inner
        self._challenges = challenges

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        # The GET listen stream is long-lived and not counted; the SDK bounds each of its events
        # (max_sse_event_size). A POST's answer is counted against its request's bound.
        expectation = self._meter.lookup(_request_body(request)) if request.method == "POST" else None
        response = await self._inner.handle_async_request(request)
        if self._challenges is not None and response.status_code in (401, 403):
            # The SDK turns a 401/403 into a generic error; keep the status and WWW-Authenticate (no body).
            challenge = {k: v for k, v in response.headers.items() if k.lower() == "www-authenticate"}
            self._challenges.append(httpx2.Response(response.status_code, headers=challenge))
        headers = httpx2.Headers(response.headers)
        headers.pop("Content-Encoding", None)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=stream if expectation is None else _CountedStream(stream, expectation),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def _request_body(request: httpx2.Request) -> object:
    """The JSON-RPC message a POST carries (the SDK sends it as one small JSON body), or None."""
    try:
        body = request.content
    except httpx2.RequestNotRead:
        return None
    if len(body) > _REQUEST_PEEK_BYTES:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class _QuietOverLimit(logging.Filter):
    """Drops the SDK's traceback for an answer we cut off ourselves: the caller gets ResponseTooLarge instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ResponseOverLimit))


_QUIET_OVER_LIMIT = _QuietOverLimit()


def environment_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY), as httpx2 would use it.

    A client given its own transport no longer reads these, so they are read here.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies_environment()
    return proxies.get(parts.scheme) or proxies.get("all")


@asynccontextmanager
async def bounded_http_client(
    url: str,
    meter: ResponseMeter,
    *,
    auth: httpx2.Auth | None = None,
    headers: Mapping[str, str] | None = None,
    challenges: list[httpx2.Response] | None = None,
) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport over an httpx2 client whose responses are bounded by `meter`.

    `auth` and `headers` (e.g. `Authorization: Bearer ...`) go on every request; the 401/403 answers seen are
    appended to `challenges` (status and `WWW-Authenticate` only), for `credentials.authentication_required`.
    """
    logging.getLogger(streamable_http_client.__module__).addFilter(_QUIET_OVER_LIMIT)  # adding it twice is a no-op
    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    transport = BoundedHTTPTransport(
        meter, httpx2.AsyncHTTPTransport(proxy=environment_proxy(url)), challenges=challenges
    )
    async with (
        httpx2.AsyncClient(timeout=timeout, transport=transport, auth=auth, headers=headers) as http,
        streamable_http_client(url, http_client=http, max_sse_event_size=meter.limits.largest_response) as streams,
    ):
        yield streams


# -- stdio -------------------------------------------------------------------------------------------------------------


@asynccontextmanager
async def bounded_stdio_client(
    server: StdioServerParameters, errlog: TextIO, meter: ResponseMeter
) -> AsyncGenerator[Any, None]:
    """`mcp.client.stdio.stdio_client`, with each stdout line bounded by the requests awaiting an answer.

    A line may be as long as the largest bound among the requests sent and not yet answered (or
    `max_response_bytes` when none is waiting). Past that, every waiting request is answered with
    an error and marked cut off, and the rest of the line is skipped without being kept; a line
    that goes on past twice the largest bound of all ends the connection.
    """
    command = await _get_executable_command(server.command)
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    waiting: dict[types.RequestId, Expectation] = {}
    writer_done = anyio.Event()

    async def deliver(line: bytes) -> None:
        try:
            text = line.decode(server.encoding, errors=server.encoding_error_handler)
        except UnicodeDecodeError as err:
            await read_stream_writer.send(err)
            return
        parsed = _parse_line(text)
        if isinstance(parsed, SessionMessage) and isinstance(
            parsed.message, types.JSONRPCResponse | types.JSONRPCError
        ):
            request_id = parsed.message.id
            answered = waiting.pop(request_id, None) if request_id is not None else None
            if answered is not None:
                answered.received = len(line)
        await read_stream_writer.send(parsed)

    async def cut_off(seen: int) -> None:
        for request_id, expectation in list(waiting.items()):
            expectation.passed = seen
            error = types.ErrorData(code=types.PARSE_ERROR, message=_passed_message(expectation))
            await read_stream_writer.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
        waiting.clear()

    def bound() -> int:
        return max((e.limit for e in waiting.values()), default=meter.limits.max_response_bytes)

    async def stdout_reader() -> None:
        assert process.stdout, "Opened process is missing stdout"
        try:
            # The session learns the connection ended (its waiting requests fail) before the drain,
            # which lasts as long as the server keeps writing.
            async with read_stream_writer:
                give_up = 2 * meter.limits.largest_response
                await _bounded_lines(process.stdout, bound, deliver, cut_off, give_up)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # the session is gone, our own shutdown closed the stream, or the server went away
        finally:
            await _drain_stdout(process)

    async def stdin_writer() -> None:
        assert process.stdin, "Opened process is missing stdin"
        try:
            async with write_stream_reader:
                async for session_message in write_stream_reader:
                    message = session_message.message
                    if isinstance(message, types.JSONRPCRequest):
                        waiting[message.id] = meter.lookup({"method": message.method, "params": message.params})
                    dumped = message.model_dump_json(by_alias=True, exclude_unset=True)
                    data = (dumped + "\n").encode(encoding=server.encoding, errors=server.encoding_error_handler)
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_stream_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, read_stream_writer, write_stream_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


async def _bounded_lines(
    stdout: AsyncIterable[bytes],
    bound: Callable[[], int],
    deliver: Callable[[bytes], Awaitable[None]],
    cut_off: Callable[[int], Awaitable[None]],
    give_up: int,
) -> None:
    """Split `stdout` into lines; a line longer than `bound()` is cut off (`cut_off(seen)`) and skipped.

    A line still going after `give_up` bytes ends the reading (and so the connection): nothing
    after it could arrive before it ends, and it may never end.
    """
    line = bytearray()
    skipping = False
    seen = 0
    async for chunk in stdout:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            seen += len(piece)
            if not skipping:
                line += piece
                if len(line) > bound():
                    line = bytearray()
                    skipping = True
                    await cut_off(seen)
            if skipping and seen > give_up:
                logger.warning("a line from the server passed %s bytes and did not end; the connection is closed", seen)
                return
            if end < 0:
                break
            if not skipping and line:
                await deliver(bytes(line))
            line = bytearray()
            skipping = False
            seen = 0
            start = end + 1
