"""Connection bounds for uvicorn's h11 protocol: a cap refused at once, idle, request-read and write timeouts.

uvicorn starts its keep-alive timer only after a response, so a connection that never sends a byte
(or sends a header a byte at a time) is kept forever; `limit_concurrency` answers 503 but only after
reading a request. And it hands a whole response body to the transport at once: asyncio keeps what the
kernel does not take in memory, without bound and without a deadline, so clients that ask for a large
file and never read kept all of it. `guarded_protocol` returns an `H11Protocol` subclass that:
- closes a connection beyond `max_connections` the moment it is accepted (its file descriptor is freed
  at once; nothing is queued);
- closes a connection waiting for a request (new, or between keep-alive requests) after `idle_timeout`
  seconds without a byte, and one that started a request after `header_timeout` seconds unless the whole
  request (head and body) has arrived;
- writes a response body in pieces of `WRITE_PIECE` bytes, each only once everything before it is with the
  kernel, and returns from the final send only when the last byte is: the read budget (`budget.py`),
  held until then, counts the bytes of answers in flight, and at most one piece waits in user space;
- resets a connection whose client has not taken a piece within `write_timeout` seconds (RST, so the
  kernel drops what it holds for it too), which ends its request and gives back its budget;
- sends the head of a whole answer (one with a Content-Length) with the first piece of its body, in one write:
  uvicorn writes them apart, two system calls and, with TCP_NODELAY, two segments for every small answer.
`ResourceErrorThrottle` turns bursts of "Too many open files" and friends into one line per interval.

    config = uvicorn.Config(app, http=guarded_protocol(limits, stats))
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import struct
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import h11
from starlette.types import Message
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

from skillwire.service.limits import ServeLimits

logger = logging.getLogger(__name__)

RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
WRITE_PIECE = 64 * 1024
"""A response body is handed to the transport this much at a time (see the module docstring)."""
_RESET_ON_CLOSE = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends RST and drops unsent bytes


@dataclass(slots=True)
class ConnectionStats:
    """Counters one server's connections share (mutable by design: the protocol instances update it)."""

    refused: int = 0
    timed_out: int = 0
    write_timed_out: int = 0
    last_refusal_log: float = 0.0
    last_write_timeout_log: float = 0.0


def guarded_protocol(limits: ServeLimits, stats: ConnectionStats | None = None) -> type[H11Protocol]:
    """An `H11Protocol` subclass enforcing `limits`' connection cap and timeouts (see the module docstring)."""
    shared = stats if stats is not None else ConnectionStats()

    class GuardedH11Protocol(H11Protocol):
        _limits = limits
        _stats = shared

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Few attributes: with uvicorn's 25, past 30 CPython 3.11 gives every connection a dict of its own
            # (measured: 7 MB more for 5,000 idle connections).
            self._refused = False
            self._timer: asyncio.TimerHandle | None = None
            self._reading_request = False  # a byte of the next request has arrived
            self._received: object = None  # the request cycle whose whole request has been read

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= self._limits.max_connections:
                self._refused = True
                self._stats.refused += 1
                _log_refusal(self._stats, self._limits.max_connections)
                transport.abort()  # frees the descriptor now; a queued connection would hold it
                return
            super().connection_made(transport)
            # Writing pauses whenever a byte waits in user space and resumes when none does: "drained" then
            # means "with the kernel", which is what the paced writer waits for.
            transport.set_write_buffer_limits(high=0, low=0)
            self._await_request()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            self._cancel_timer()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._timer is not None and not self._reading_request:
                self._reading_request = True  # the idle wait is over; the request must now arrive in time
                self._arm(self._limits.header_timeout)
            super().data_received(data)
            cycle = self.cycle
            if cycle is not None and cycle is not self._received and (not cycle.more_body or cycle.response_started):
                self._received = cycle
                self._cancel_timer()

        def handle_events(self) -> None:
            super().handle_events()
            cycle = self.cycle
            if cycle is not None and "send" not in vars(cycle):  # a new request: its task has not started yet
                cycle.send = _PacedSend(self._send_paced, cycle)  # type: ignore[method-assign,assignment]
                cycle.transport = _HeadWithBody(self.transport)  # type: ignore[assignment]

        async def _send_paced(self, cycle: RequestResponseCycle, message: Message) -> None:
            """`cycle.send`, a body handed over a piece at a time (see the module docstring)."""
            out = cycle.transport
            if message["type"] == "http.response.start" and isinstance(out, _HeadWithBody) and _sized(message):
                out.hold()  # the body follows at once: head and body leave in one write
            body = message.get("body", b"") if message["type"] == "http.response.body" else b""
            more = message.get("more_body", False)
            for start in range(0, len(body), WRITE_PIECE) if len(body) > WRITE_PIECE else (0,):
                if self.flow.write_paused and not await self._drained(cycle):
                    return  # gone or cut: nothing more will be taken
                if cycle.disconnected:
                    return
                end = start + WRITE_PIECE
                if end < len(body):
                    message = {"type": "http.response.body", "body": body[start:end], "more_body": True}
                elif start:
                    message = {"type": "http.response.body", "body": body[start:], "more_body": more}
                await RequestResponseCycle.send(cycle, message)  # type: ignore[arg-type]
                if message["type"] == "http.response.body" and isinstance(out, _HeadWithBody):
                    out.release()
            # The answer is sent once its last byte is with the kernel; then the wait for the next request starts
            # (on_response_complete started it if nothing was left to send).
            last = message["type"] == "http.response.body" and not more
            if last and await self._drained(cycle) and self._timer is None:
                self._await_next_request()

        async def _drained(self, cycle: RequestResponseCycle) -> bool:
            """Wait until no byte written so far waits in user space; False if the connection is gone or was cut
            because its client took nothing for `write_timeout` seconds."""
            if self.flow.write_paused and not cycle.disconnected:  # (paused: a byte waits; see connection_made)
                try:
                    await asyncio.wait_for(self.flow.drain(), self._limits.write_timeout)
                except TimeoutError:
                    self._cut(cycle)
                    return False
            return not cycle.disconnected

        def _cut(self, cycle: RequestResponseCycle) -> None:
            """Reset the connection: the client, the kernel and this process all let go of the answer at once."""
            self._stats.write_timed_out += 1
            _log_write_timeout(self._stats, self._limits.write_timeout)
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                with suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET_ON_CLOSE)
            self.transport.abort()
            if not cycle.response_complete:
                cycle.disconnected = True  # as connection_lost will say: the application's next send is dropped

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.flow.write_paused:  # else the client is still taking the answer: idle once it has
                self._await_next_request()

        def _await_next_request(self) -> None:
            if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
                self._await_request()

        def _await_request(self) -> None:
            self._reading_request = False
            self._arm(self._limits.idle_timeout)

        def _arm(self, seconds: float) -> None:
            self._cancel_timer()
            self._timer = self.loop.call_later(seconds, self._expire)

        def _cancel_timer(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _expire(self) -> None:
            self._timer = None
            cycle = self.cycle
            if cycle is not None and cycle is not self._received and cycle.response_started:
                return  # answered early (a 413, a 421): the response itself ends the request
            if cycle is not None and cycle is self._received and not cycle.response_complete:
                return  # a request in flight is the application's to finish
            if self.transport.is_closing():
                return
            self._stats.timed_out += 1
            with suppress(h11.LocalProtocolError):
                self.conn.send(h11.ConnectionClosed())
            self.transport.close()

    return GuardedH11Protocol


def _sized(start: Message) -> bool:
    """Whether a response head names its body's length (a whole answer, sent next; not a stream)."""
    return any(key.lower() == b"content-length" for key, _ in start.get("headers", ()))


class _HeadWithBody:
    """A request's view of its connection's transport that can hold the response head back until the first piece
    of the body, so that both leave in one write: one system call and one TCP segment instead of two (with
    TCP_NODELAY each write is a segment of its own). Held only for a head that names its length (`_sized`), whose
    body the application sends at once; a stream's head goes out as it comes. Anything else is the transport's."""

    __slots__ = ("_held", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._held: list[bytes] | None = None

    def hold(self) -> None:
        self._held = []

    def write(self, data: bytes) -> None:
        if self._held is None:
            self._transport.write(data)
        else:
            self._held.append(data)

    def release(self) -> None:
        """Write what was held, in one piece."""
        held, self._held = self._held, None
        if held:
            self._transport.write(b"".join(held))

    def close(self) -> None:
        self.release()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _PacedSend:
    """A request's `send`: its connection's paced writer, both held weakly. A strong hold would make a reference
    cycle (request -> send -> connection -> request) that only the garbage collector could free."""

    __slots__ = ("_cycle", "_write")

    def __init__(
        self, write: Callable[[RequestResponseCycle, Message], Awaitable[None]], cycle: RequestResponseCycle
    ) -> None:
        self._write = weakref.WeakMethod(write)
        self._cycle = weakref.ref(cycle)

    async def __call__(self, message: Message) -> None:
        write, cycle = self._write(), self._cycle()
        if write is not None and cycle is not None:  # else the connection or its request is gone already
            await write(cycle, message)


def _log_refusal(stats: ConnectionStats, cap: int) -> None:
    now = time.monotonic()
    if now - stats.last_refusal_log >= ResourceErrorThrottle.INTERVAL_S:
        stats.last_refusal_log = now
        logger.warning("%d connections open (the cap); refusing new ones (%d so far)", cap, stats.refused)


def _log_write_timeout(stats: ConnectionStats, seconds: float) -> None:
    now = time.monotonic()
    if now - stats.last_write_timeout_log >= ResourceErrorThrottle.INTERVAL_S:
        stats.last_write_timeout_log = now
        logger.warning(
            "reset a connection whose client took none of its answer for %.0f s (%d so far)",
            seconds,
            stats.write_timed_out,
        )


class ResourceErrorThrottle(logging.Filter):
    """At most one line per `INTERVAL_S` for out-of-resource errors (EMFILE, ENFILE, ENOBUFS, ENOMEM).

    Such an error repeats for every request while it lasts; a traceback each time fills a disk and hides
    the one line that matters. The line kept says how many were dropped since the last one.
    """

    INTERVAL_S = 10.0

    def __init__(self) -> None:
        super().__init__()
        self._last = float("-inf")
        self._dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        decided = getattr(record, "_skillwire_throttle", None)  # one decision per record, however many handlers
        if decided is not None:
            return bool(decided)
        keep = self._decide(record)
        record._skillwire_throttle = keep
        return keep

    def _decide(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not _is_resource_error(error, record):
            return True
        now = time.monotonic()
        if now - self._last < self.INTERVAL_S:
            self._dropped += 1
            return False
        self._last = now
        reason = error.strerror if isinstance(error, OSError) and error.strerror else "out of system resources"
        first = record.getMessage().splitlines()[0][:200] if record.getMessage() else "error"
        record.msg = "%s (%s); %d more like it in the last %.0fs not shown" if self._dropped else "%s (%s)"
        record.args = (first, reason, self._dropped, self.INTERVAL_S) if self._dropped else (first, reason)
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        self._dropped = 0
        return True


def _is_resource_error(error: BaseException | None, record: logging.LogRecord) -> bool:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in RESOURCE_ERRNOS:
            return True
        error = error.__cause__ or error.__context__
    return "out of system resource" in str(record.msg)


@contextmanager
def throttled_resource_errors() -> Iterator[ResourceErrorThrottle]:
    """One `ResourceErrorThrottle` on the root logger's handlers while the body runs.

    On the handlers, not on loggers: a logger's filter sees only records logged to that very logger,
    and these errors come from asyncio, uvicorn, the SDK and our own modules alike.
    """
    throttle = ResourceErrorThrottle()
    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(throttle)
    try:
        yield throttle
    finally:
        for handler in handlers:
            handler.removeFilter(throttle)
