"""The host's server connections, each held open in its own task so that any can close in any order.

Apart from `Host` because that task bookkeeping (anyio scopes exit in the task that entered them) is its own story.

    async with Connections(DEFAULT_LIMITS) as connections:
        server = await connections.open("docs", url, auth=None, headers=None, read_timeout_seconds=30, errlog=None)
        data = await server.read("skill://pdf-processing/SKILL.md")
"""

from __future__ import annotations

import gc
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from types import TracebackType
from typing import TextIO
from urllib.parse import unquote

import anyio
import httpx2
from anyio.abc import TaskGroup, TaskStatus

from skillwire.client.session import SkillsClient, Target
from skillwire.core.errors import AuthenticationRequired, HostError, InvalidEntry, ReadFailed, RequestFailed
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.limits import ClientLimits
from skillwire.core.hosting.results import IncompleteListing, ServerProblem
from skillwire.core.hosting.window import DirectoryItem

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Connection:
    """One connected server: its client, what its last listing left out, and the bytes its dynamic skills sent."""

    label: str
    client: SkillsClient
    close: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    dropped: tuple[InvalidEntry, ...] = ()
    incomplete: IncompleteListing | None = None
    dynamic_bytes: dict[str, int] = field(default_factory=dict)

    async def read(self, uri: str, size: int | None = None) -> bytes:
        """resources/read (its answer bounded by `size`, see `SkillsClient.read`), with a server error
        turned into ReadFailed (a refusal, not a crash)."""
        try:
            return await self.client.read(uri, size=size)
        except RequestFailed as err:
            raise ReadFailed(self.label, uri, err) from err

    async def read_directory(self, uri: str) -> tuple[DirectoryItem, ...]:
        """resources/directory/read of a dynamic skill's directory: its children by name (server errors: ReadFailed)."""
        try:
            children = await self.client.read_directory(uri)
        except RequestFailed as err:
            raise ReadFailed(self.label, uri, err) from err
        items = (
            DirectoryItem(unquote(c.uri.rsplit("/", 1)[-1]), c.uri, c.is_directory, None if c.is_directory else c.size)
            for c in children
        )
        return tuple(sorted(items, key=lambda i: i.name))

    async def list_entries(self) -> tuple[SkillEntry, ...]:
        """The server's skills/list walk: its valid entries; what it dropped or cut off is kept for `problems`."""
        listing = await self.client.list_entries()
        self.dropped = listing.problems
        self.incomplete = None if listing.cutoff is None else IncompleteListing(self.label, listing.cutoff)
        for problem in listing.problems:
            logger.warning("%s: dropped an invalid entry: %s", self.label, problem)
        if self.incomplete is not None:
            logger.info("%s", self.incomplete)  # a warning to act on is the caller's: it is in `problems()`
        return listing.entries

    def problems(self) -> tuple[ServerProblem, ...]:
        """Entries the last listing dropped as invalid, then `IncompleteListing` if the walk was cut off."""
        return self.dropped if self.incomplete is None else (*self.dropped, self.incomplete)


class Connections:
    """The servers connected under host-assigned labels; open it with `async with` before connecting any."""

    def __init__(self, limits: ClientLimits) -> None:
        self.limits = limits  # public: `Host.limits` sets it for the next connection
        self._servers: dict[str, Connection] = {}
        self._task_group: TaskGroup | None = None

    async def __aenter__(self) -> Connections:
        if self._task_group is not None:
            raise HostError("this Host is already open")
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            for label in list(self._servers):
                await self.close(label)
        finally:
            task_group, self._task_group = self._task_group, None
            if task_group is not None:
                # Every connection task has ended, so the group has nothing to report: an exception from the
                # body propagates as itself (not wrapped in a group). Cancellation is handed on for anyio to
                # account for it.
                if isinstance(exc, anyio.get_cancelled_exc_class()):
                    await task_group.__aexit__(exc_type, exc, tb)
                else:
                    await task_group.__aexit__(None, None, None)

    def __contains__(self, label: str) -> bool:
        return label in self._servers

    def get(self, label: str) -> Connection:
        """The server connected as `label`; HostError if there is none."""
        server = self._servers.get(label)
        if server is None:
            raise HostError(f"no server is connected as {label!r}")
        return server

    async def open(
        self,
        label: str,
        target: Target,
        *,
        auth: httpx2.Auth | None,
        headers: Mapping[str, str] | None,
        read_timeout_seconds: float | None,
        errlog: TextIO | None,
    ) -> Connection:
        """Connect to `target` in a new task (each argument as `Host.add_server`, which holds the defaults);
        HostError says why it could not."""
        if self._task_group is None:
            raise HostError("open the host first: `async with Host(...) as host:`")
        if label in self._servers:
            raise HostError(f"a server is already connected as {label!r}")
        connect = partial(
            SkillsClient.connect,
            target,
            limits=self.limits,
            auth=auth,
            headers=headers,
            read_timeout_seconds=read_timeout_seconds,
            errlog=errlog,
        )
        try:
            server: Connection = await self._task_group.start(self._hold, label, connect, read_timeout_seconds)
        except AuthenticationRequired:
            raise
        except Exception as err:
            raise HostError(f"cannot connect to the server for {label!r}: {_describe(err)}") from err
        self._servers[label] = server
        return server

    async def close(self, label: str) -> None:
        """Ask the connection's task to end, and wait until it has (nothing happens if `label` is not connected)."""
        server = self._servers.pop(label, None)
        if server is not None:
            server.close.set()
            await server.closed.wait()

    async def _hold(
        self,
        label: str,
        connect: Callable[[], AbstractAsyncContextManager[SkillsClient]],
        setup_timeout: float | None,
        *,
        task_status: TaskStatus[Connection],
    ) -> None:
        """Keep one connection open in its own task until `close` asks it to end.

        SDK connections own anyio task groups, whose cancel scopes must be exited in the task
        (and order) they were entered in; one task per connection makes any removal order safe.
        """
        server: Connection | None = None
        try:
            # The whole setup is bounded too: the SDK's server/discover probe has its own fixed 10 s timeout.
            with anyio.fail_after(setup_timeout) as setup:
                async with connect() as client:
                    setup.deadline = math.inf  # connected: from here each request has its own timeout
                    server = Connection(label, client)
                    task_status.started(server)
                    await server.close.wait()
        except Exception as err:
            if server is None:
                raise  # not connected yet: `start` hands the error to `open`
            logger.warning("the connection to %r ended with an error: %s", label, err)
        finally:
            if server is not None:
                server.closed.set()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a listing is read and becomes the registry (on after, if it was on).

    A listing keeps some ten objects per skill, and each few thousand new objects set off a collection that walks
    every object held so far: at 100,000 skills that was 3 of 10 CPU seconds. Entries, handles and the search index
    make no cycles, and 1,000 pages of SDK requests left 15 cyclic objects; cycles other tasks make meanwhile wait
    for the end of the listing, which the listing limits and request timeouts bound.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _describe(err: BaseException) -> str:
    """The innermost useful message of a connection failure (SDK errors arrive wrapped in exception groups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    if isinstance(err, TimeoutError):
        return "no answer while connecting (the read timeout passed)"
    if isinstance(err, RequestFailed):
        return err.message  # the server's words, as the SDK's error gave them
    return str(err) or type(err).__name__
